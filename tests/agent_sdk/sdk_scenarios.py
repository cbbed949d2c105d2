"""Scenarios of the official Python Claude Agent SDK driving robota.

Run by tests/agent_sdk_python.rs: `python sdk_scenarios.py <scenario>` with ROBOTA_BIN set to
the robota binary and the environment pointing robota at the loopback mock model. Prints one
JSON object with what the scenario observed; the Rust test asserts on it.
"""

import asyncio
import json
import os
import sys

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    query,
)

try:
    from claude_agent_sdk import StreamEvent
except ImportError:  # older SDKs
    StreamEvent = None


def options(**kw):
    return ClaudeAgentOptions(cli_path=os.environ["ROBOTA_BIN"], cwd=os.getcwd(), **kw)


def summary(messages):
    """What the Rust side asserts on: the kinds of messages and the results."""
    out = {"types": [], "results": [], "texts": [], "tools": [], "stream_types": []}
    for m in messages:
        out["types"].append(type(m).__name__)
        if isinstance(m, ResultMessage):
            out["results"].append(
                {
                    "subtype": m.subtype,
                    "is_error": m.is_error,
                    "result": m.result,
                    "session_id": m.session_id,
                    "num_turns": m.num_turns,
                    "total_cost_usd": m.total_cost_usd,
                    "structured_output": getattr(m, "structured_output", None),
                }
            )
        elif isinstance(m, AssistantMessage):
            for b in m.content:
                if isinstance(b, TextBlock):
                    out["texts"].append(b.text)
                elif isinstance(b, ToolUseBlock):
                    out["tools"].append(b.name)
        elif isinstance(m, SystemMessage) and m.subtype == "init":
            out["init_model"] = m.data.get("model")
            out["session_id"] = m.data.get("session_id")
        elif StreamEvent is not None and isinstance(m, StreamEvent):
            out["stream_types"].append(m.event.get("type"))
    return out


async def collect(prompt, opts):
    return [m async for m in query(prompt=prompt, options=opts)]


async def query_text():
    return summary(await collect("say hello", options()))


async def tool_loop():
    return summary(
        await collect(
            "read calc.py then run the test",
            options(allowed_tools=["Read", "Bash"]),
        )
    )


async def client_two_turns():
    messages = []
    async with ClaudeSDKClient(options=options()) as client:
        for prompt in ["first question", "second question"]:
            await client.query(prompt)
            async for m in client.receive_response():
                messages.append(m)
    return summary(messages)


async def can_use_tool():
    asked = []

    async def decide(tool_name, tool_input, context):
        asked.append(tool_input.get("command"))
        if "allowed" in tool_input.get("command", ""):
            return PermissionResultAllow()
        return PermissionResultDeny(message="not this one")

    messages = []
    async with ClaudeSDKClient(options=options(can_use_tool=decide)) as client:
        await client.query("make two files")
        async for m in client.receive_response():
            messages.append(m)
    out = summary(messages)
    out["asked"] = asked
    return out


async def interrupt():
    messages = []
    async with ClaudeSDKClient(options=options(include_partial_messages=True)) as client:
        await client.query("tell me a long story")
        interrupted = False
        async for m in client.receive_messages():
            messages.append(m)
            if not interrupted and StreamEvent is not None and isinstance(m, StreamEvent):
                # The story is streaming (the mock holds it): stop it.
                interrupted = True
                await client.interrupt()
            if isinstance(m, ResultMessage):
                break
        await client.query("and now something short")
        async for m in client.receive_response():
            messages.append(m)
    return summary(messages)


async def hook_blocks():
    seen = []

    async def pre_tool_use(input_data, tool_use_id, context):
        seen.append({"tool": input_data.get("tool_name"), "id": tool_use_id})
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "blocked by the SDK hook",
            }
        }

    opts = options(
        allowed_tools=["Bash"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[pre_tool_use])]},
    )
    messages = []
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("touch the canary")
        async for m in client.receive_response():
            messages.append(m)
    out = summary(messages)
    out["hook_calls"] = seen
    return out


async def bash_allowed():
    return summary(await collect("write the file", options(allowed_tools=["Bash"])))


async def resume():
    first = summary(await collect("remember the number 42", options()))
    session = first["results"][0]["session_id"]
    second = summary(await collect("what was the number?", options(resume=session)))
    return {"first": first, "second": second}


async def partial_messages():
    return summary(await collect("stream please", options(include_partial_messages=True)))


async def mode_and_model():
    messages = []
    async with ClaudeSDKClient(options=options()) as client:
        await client.set_permission_mode("acceptEdits")
        await client.set_model("claude-opus-4-6")
        await client.query("after the switch")
        async for m in client.receive_response():
            messages.append(m)
    return summary(messages)


async def json_schema():
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }
    return summary(
        await collect(
            "what is 2+2?",
            options(output_format={"type": "json_schema", "schema": schema}),
        )
    )


async def max_budget():
    # As Claude Code, robota exits 1 after an error result: the SDK yields the result,
    # then raises ResultError carrying it.
    from claude_agent_sdk import ResultError

    messages = []
    raised = None
    try:
        opts = options(allowed_tools=["Bash"], max_budget_usd=0.00000001)
        async for m in query(prompt="spend", options=opts):
            messages.append(m)
    except ResultError as e:
        raised = e.subtype
    out = summary(messages)
    out["raised"] = raised
    return out


async def sdk_mcp_server():
    # An in-process MCP server of the program: robota reaches it by mcp_message control
    # requests; `calls` records what reached the tool inside this process.
    from claude_agent_sdk import create_sdk_mcp_server, tool

    calls = []

    @tool("add", "Adds two numbers", {"a": int, "b": int})
    async def add(args):
        calls.append(args)
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    server = create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])
    opts = options(mcp_servers={"calc": server}, allowed_tools=["mcp__calc__add"])
    messages = await collect("add 2 and 3", opts)
    out = summary(messages)
    out["calls"] = calls
    out["init_mcp"] = next(
        (m.data.get("mcp_servers") for m in messages if isinstance(m, SystemMessage) and m.subtype == "init"),
        None,
    )
    return out


async def stdio_mcp_server():
    # An ordinary stdio server passed through the SDK's mcp_servers (--mcp-config).
    server = {"command": sys.executable, "args": [sys.argv[2], "serve"]}
    opts = options(mcp_servers={"fake": server}, allowed_tools=["mcp__fake__shout"])
    messages = await collect("shout hello", opts)
    out = summary(messages)
    out["init_mcp"] = next(
        (m.data.get("mcp_servers") for m in messages if isinstance(m, SystemMessage) and m.subtype == "init"),
        None,
    )
    return out


SCENARIOS = {f.__name__: f for f in [
    query_text, tool_loop, client_two_turns, can_use_tool, interrupt, hook_blocks,
    bash_allowed, resume, partial_messages, mode_and_model, json_schema, max_budget, sdk_mcp_server,
    stdio_mcp_server,
]}

if __name__ == "__main__":
    result = asyncio.run(SCENARIOS[sys.argv[1]]())
    print(json.dumps(result))
