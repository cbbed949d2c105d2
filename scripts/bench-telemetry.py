#!/usr/bin/env python3
"""What OpenTelemetry export costs robota (issue 29): start-up (`robota -p hi` against a
loopback Anthropic mock) and per-turn time, with telemetry off, on with a live OTLP receiver
(tests/telemetry/otlp_receiver.py, needs the `opentelemetry-proto` package), on with a
collector port that refuses connections, and on with one that accepts and never answers.

    scripts/bench-telemetry.py [ROBOTA_BIN] [--runs 15] [--rounds 20] [--protocol grpc]

ROBOTA_BIN defaults to target/debug/robota. For each mode: the median time until the
answer is on stdout and until the process has exited, for `-p hi` (`--runs` times) and for a
prompt that makes `--rounds` tool calls (Glob) before answering (per provider call).
`--protocol grpc` exports over OTLP/gRPC (the receiver's --grpc mode, needs `grpcio`)."""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sse(kind, value):
    return f"event: {kind}\ndata: {json.dumps(value)}\n\n".encode()


def answer(tool_round):
    """A whole Anthropic stream: a Glob call when `tool_round`, else a text answer."""
    out = [sse("message_start", {"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1}}})]
    if tool_round:
        block = {"type": "tool_use", "id": f"toolu_{time.monotonic_ns()}", "name": "Glob", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps({"pattern": "*.md"})}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": "Done."}
        stop = "end_turn"
    out.append(sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}))
    out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}))
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(sse("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 7}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


class Mock(BaseHTTPRequestHandler):
    rounds = 0

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        results = sum(
            1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
            for b in m["content"] if b.get("type") == "tool_result")
        payload = answer(results < Mock.rounds)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def serve(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_once(binary, env, prompt):
    """(seconds until the answer is on stdout, seconds until exit)."""
    started = time.perf_counter()
    proc = subprocess.Popen([binary, "-p", prompt, "--output-format", "json"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    first = proc.stdout.read(1)
    answered = time.perf_counter() - started
    rest = proc.stdout.read()
    proc.wait()
    exited = time.perf_counter() - started
    result = json.loads(first + rest)
    assert result.get("result") == "Done.", result
    return answered, exited


def median_ms(samples, index):
    return statistics.median(s[index] for s in samples) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=os.path.join(ROOT, "target/debug/robota"))
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--protocol", default="http/protobuf", choices=["http/protobuf", "http/json", "grpc"])
    args = parser.parse_args()
    mock = serve(Mock)
    work = tempfile.mkdtemp()
    base = {"PATH": os.environ["PATH"], "HOME": work, "ROBOTA_HOME": os.path.join(work, "home"),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{mock.server_address[1]}",
            "ANTHROPIC_API_KEY": "sk-ant-bench-0000000000000000"}
    out = os.path.join(work, "otlp.jsonl")
    receiver_args = [sys.executable, os.path.join(ROOT, "tests/telemetry/otlp_receiver.py"), out]
    if args.protocol == "grpc":
        receiver_args.append("--grpc")
    receiver = subprocess.Popen(receiver_args, stdout=subprocess.PIPE)
    live_port = int(receiver.stdout.readline())
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    modes = {
        "off": None,
        "live receiver": live_port,
        "refused port": free_port(),
        "silent port": silent.getsockname()[1],
    }
    envs = {}
    for name, port in modes.items():
        env = dict(base)
        if port is not None:
            env.update({"CLAUDE_CODE_ENABLE_TELEMETRY": "1",
                        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
                        "OTEL_EXPORTER_OTLP_PROTOCOL": args.protocol})
        envs[name] = env
    # The modes take turns, run by run, so that a machine's changing load falls on all alike.
    hi = {name: [] for name in modes}
    loop = {name: [] for name in modes}
    for run in range(args.runs):
        for name, env in envs.items():
            Mock.rounds = 0
            hi[name].append(run_once(args.binary, env, "hi"))
            if run < max(3, args.runs // 3):
                Mock.rounds = args.rounds
                loop[name].append(run_once(args.binary, env, "glob away"))
    calls = args.rounds + 1
    print(f"{args.binary} ({args.protocol}); median of {args.runs} runs (tool loop: {len(loop['off'])}); ms")
    print(f"{'mode':15} {'-p hi answer':>13} {'-p hi exit':>11} {'per call':>9} {'per call exit':>14}")
    for name in modes:
        print(f"{name:15} {median_ms(hi[name], 0):13.1f} {median_ms(hi[name], 1):11.1f} "
              f"{median_ms(loop[name], 0) / calls:9.2f} {median_ms(loop[name], 1) / calls:14.2f}")
    receiver.kill()
    with open(out, encoding="utf-8") as f:
        arrived = sum(1 for line in f if '"kind": "request"' in line)
    print(f"live receiver took {arrived} OTLP requests")


if __name__ == "__main__":
    main()
