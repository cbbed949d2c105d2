"""The real Python `agent-client-protocol` package as the editor driving `robota acp`.

Run by tests/acp_python.rs: `python acp_scenarios.py core` in the project directory, with
ROBOTA_BIN set to the robota binary and the environment pointing robota at the loopback
mock model. Prints one JSON object with what the client saw; the Rust test asserts on it.
"""

import asyncio
import json
import os
import sys

import acp
from acp import spawn_agent_process, text_block
from acp.schema import AllowedOutcome, ClientCapabilities, RequestPermissionResponse


class Editor(acp.Client):
    """Records every update and answers permission questions from a list of option ids."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.updates = []
        self.questions = []
        self.first_chunk = asyncio.Event()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.questions.append(
            {
                "tool_call": tool_call.model_dump(by_alias=True, exclude_none=True, mode="json"),
                "options": [o.option_id for o in options],
            }
        )
        choice = self.answers.pop(0)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=choice))

    async def session_update(self, session_id, update, **kwargs):
        dumped = update.model_dump(by_alias=True, exclude_none=True, mode="json")
        self.updates.append(dumped)
        if dumped.get("sessionUpdate") == "agent_message_chunk":
            self.first_chunk.set()

    async def write_text_file(self, *args, **kwargs):
        raise acp.RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, *args, **kwargs):
        raise acp.RequestError.method_not_found("fs/read_text_file")


def texts(updates, kind):
    return "".join(
        u.get("content", {}).get("text", "") for u in updates if u.get("sessionUpdate") == kind
    )


async def core():
    cwd = os.getcwd()
    robota = os.environ["ROBOTA_BIN"]
    out = {}
    editor = Editor(["allow_once"])
    async with spawn_agent_process(editor, robota, "acp", env=dict(os.environ), cwd=cwd) as (conn, _proc):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities())
        out["load_session"] = init.agent_capabilities.load_session
        out["agent_name"] = init.agent_info.name if init.agent_info else None
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        out["modes"] = [m.id for m in session.modes.available_modes]
        sid = session.session_id
        out["session_id"] = sid

        fixed = await conn.prompt(session_id=sid, prompt=[text_block("fix add")])
        out["fix_stop"] = fixed.stop_reason
        out["questions"] = editor.questions
        out["updates"] = editor.updates
        out["answer"] = texts(editor.updates, "agent_message_chunk")

        # A turn cancelled once its first words arrive.
        editor.updates = []
        editor.first_chunk.clear()
        story = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("tell me a story")]))
        await asyncio.wait_for(editor.first_chunk.wait(), 30)
        await conn.cancel(session_id=sid)
        cancelled = await asyncio.wait_for(story, 30)
        out["cancel_stop"] = cancelled.stop_reason

    # The editor reopens the thread in a new process.
    loader = Editor([])
    async with spawn_agent_process(loader, robota, "acp", env=dict(os.environ), cwd=cwd) as (conn, _proc):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities())
        await conn.load_session(cwd=cwd, session_id=sid, mcp_servers=[])
        out["replayed_user"] = texts(loader.updates, "user_message_chunk")
        out["replayed_agent"] = texts(loader.updates, "agent_message_chunk")
        out["replayed_kinds"] = [u.get("sessionUpdate") for u in loader.updates]
    return out


SCENARIOS = {"core": core}

if __name__ == "__main__":
    result = asyncio.run(SCENARIOS[sys.argv[1]]())
    print(json.dumps(result))
