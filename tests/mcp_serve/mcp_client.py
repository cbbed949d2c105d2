"""The Python `mcp` package (PyPI) as an MCP client of `robota mcp serve`.

Run by tests/mcp_serve.rs with ROBOTA_BIN set and robota pointed at the loopback mock model:
lists the tools, runs a task with `robota`, continues it with `robota-reply`, and prints one
JSON object with what it saw.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def result_of(call):
    return {
        "is_error": bool(call.is_error),
        "text": "".join(getattr(c, "text", "") for c in call.content),
        "structured": call.structured_content,
    }


async def main(work_dir):
    params = StdioServerParameters(
        command=os.environ["ROBOTA_BIN"], args=["mcp", "serve"], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            first = await session.call_tool(
                "robota", {"prompt": "what does calc.py do?", "cwd": work_dir}
            )
            session_id = first.structured_content["session_id"]
            second = await session.call_tool(
                "robota-reply",
                {"session_id": session_id, "prompt": "and how to fix it?", "cwd": work_dir},
            )
            bad = await session.call_tool("robota", {"prompt": "x", "cwd": "/nonexistent/dir"})
            return {
                "server_info": {"name": init.server_info.name, "version": init.server_info.version},
                "tools": sorted(t.name for t in tools.tools),
                "schemas": {t.name: t.input_schema for t in tools.tools},
                "first": result_of(first),
                "second": result_of(second),
                "bad": result_of(bad),
            }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1]))))
