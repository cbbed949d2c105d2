"""The real Python `agent-client-protocol` package as the editor driving `robota acp`.

Run by tests/acp_python.rs: `python acp_scenarios.py core|editor_files` in the project directory, with
ROBOTA_BIN set to the robota binary and the environment pointing robota at the loopback
mock model. Prints one JSON object with what the client saw; the Rust test asserts on it.
"""

import asyncio
import json
import os
import sys

import acp
from acp import spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)


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


class EditorWithFiles(Editor):
    """An editor offering its file system and terminal: unsaved buffers (path -> text) are
    served instead of the disk, writes land in the buffers (the disk is left alone), and
    terminals are real `asyncio` subprocesses. Every request is counted."""

    def __init__(self, answers, buffers):
        super().__init__(answers)
        self.buffers = dict(buffers)
        self.reads = []
        self.writes = []
        self.terminal_calls = []
        self.terminals = {}

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.reads.append(path)
        if path in self.buffers:
            text = self.buffers[path]
        else:
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except FileNotFoundError:
                raise acp.RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.writes.append({"path": path, "content": content})
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(self, session_id, command, args=None, env=None, cwd=None, output_byte_limit=None, **kwargs):
        self.terminal_calls.append({"method": "create", "command": command, "cwd": cwd})
        environment = dict(os.environ)
        for var in env or []:
            environment[var.name] = var.value
        proc = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=environment,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = {"proc": proc, "output": b"", "reader": asyncio.create_task(self._drain(terminal_id, proc))}
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _drain(self, terminal_id, proc):
        while chunk := await proc.stdout.read(4096):
            self.terminals[terminal_id]["output"] += chunk

    def _status(self, proc):
        if proc.returncode is None:
            return None
        if proc.returncode < 0:
            return TerminalExitStatus(signal=f"SIG{-proc.returncode}")
        return TerminalExitStatus(exit_code=proc.returncode)

    async def wait_for_terminal_exit(self, session_id, terminal_id, **kwargs):
        self.terminal_calls.append({"method": "wait_for_exit", "terminal": terminal_id})
        term = self.terminals[terminal_id]
        await term["proc"].wait()
        await term["reader"]
        status = self._status(term["proc"])
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def terminal_output(self, session_id, terminal_id, **kwargs):
        self.terminal_calls.append({"method": "output", "terminal": terminal_id})
        term = self.terminals[terminal_id]
        status = self._status(term["proc"])
        return TerminalOutputResponse(output=term["output"].decode(), truncated=False, exit_status=status)

    async def kill_terminal(self, session_id, terminal_id, **kwargs):
        self.terminal_calls.append({"method": "kill", "terminal": terminal_id})
        self.terminals[terminal_id]["proc"].kill()
        return KillTerminalResponse()

    async def release_terminal(self, session_id, terminal_id, **kwargs):
        self.terminal_calls.append({"method": "release", "terminal": terminal_id})
        term = self.terminals.pop(terminal_id)
        if term["proc"].returncode is None:
            term["proc"].kill()
        return ReleaseTerminalResponse()


async def editor_files():
    """Read, Edit, Bash and denied writes against an editor that offers files and a terminal."""
    cwd = os.getcwd()
    robota = os.environ["ROBOTA_BIN"]
    calc = os.path.join(cwd, "calc.py")
    unsaved = "def add(a, b):\n    return a - b  # unsaved in the editor\n"
    editor = EditorWithFiles(["allow_once"] * 2, {calc: unsaved})
    capabilities = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
    )
    out = {}
    async with spawn_agent_process(editor, robota, "acp", env=dict(os.environ), cwd=cwd) as (conn, _proc):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities)
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        sid = session.session_id
        for name, text in [("fix", "fix add"), ("run", "run it"), ("secret", "write the secret")]:
            editor.updates = []
            done = await conn.prompt(session_id=sid, prompt=[text_block(text)])
            out[name] = {"stop": done.stop_reason, "updates": editor.updates}
    out["reads"] = editor.reads
    out["writes"] = editor.writes
    out["terminal_calls"] = editor.terminal_calls
    out["questions"] = editor.questions
    out["buffers"] = editor.buffers
    return out


SCENARIOS = {"core": core, "editor_files": editor_files}

if __name__ == "__main__":
    result = asyncio.run(SCENARIOS[sys.argv[1]]())
    print(json.dumps(result))
