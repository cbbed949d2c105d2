# A tiny MCP server over stdio (newline-delimited JSON-RPC) for robota's tests.
# Modes (argv[1]): "serve" answers; "hang" reads stdin and never answers; "crash" exits at
# once; "stall-call" answers everything but tools/call, which it never answers;
# "ignore-eof" serves, then outlives its stdin's end (a `sleep` child in its process group)
# until it is killed, ignoring SIGTERM but noting it in `<pid file>.term`. Every mode first writes its pid to argv[2] (when given), so a test can check it is
# gone after the run. Tools: shout (upper-cases `text`), fail (an isError result), touch
# (creates the file `path` — an effect a test can count).
import json
import os
import signal
import subprocess
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "serve"
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write(str(os.getpid()))
if mode == "crash":
    sys.stderr.write("fake server: cannot start (configured to crash)\n")
    sys.exit(3)
if mode == "hang":
    for _ in sys.stdin:
        pass
    sys.exit(0)

TOOLS = [
    {"name": "shout", "description": "Upper-cases text",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "fail", "description": "Always fails", "inputSchema": {"type": "object"}},
    {"name": "touch", "description": "Creates a file",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
]


def reply(id_, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    method, id_ = msg.get("method"), msg.get("id")
    if id_ is None:
        continue
    if method == "initialize":
        reply(id_, {"protocolVersion": msg["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1"}})
    elif method == "tools/list":
        reply(id_, {"tools": TOOLS})
    elif method == "tools/call" and mode == "stall-call":
        continue
    elif method == "tools/call":
        name, args = msg["params"]["name"], msg["params"].get("arguments") or {}
        if name == "shout":
            reply(id_, {"content": [{"type": "text", "text": args.get("text", "").upper()}]})
        elif name == "fail":
            reply(id_, {"content": [{"type": "text", "text": "it went wrong"}], "isError": True})
        elif name == "touch":
            open(args["path"], "w").close()
            reply(id_, {"content": [{"type": "text", "text": "touched"}]})
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "error": {"code": -32602, "message": "no such tool"}}) + "\n")
            sys.stdout.flush()
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "method not found"}}) + "\n")
        sys.stdout.flush()

def note_sigterm(_signum, _frame):
    if len(sys.argv) > 2:
        open(sys.argv[2] + ".term", "w").close()


if mode == "ignore-eof":
    subprocess.Popen(["sleep", "1000"])
    signal.signal(signal.SIGTERM, note_sigterm)
    while True:
        time.sleep(1000)
