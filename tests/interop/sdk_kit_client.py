"""An ACP client written with the official Python SDK that does what a client must: the client
kit's tests run it against the stub agent's checking mode (``stub_agent --check``).

Usage: python sdk_kit_client.py [--null-write] AGENT_CMD [ARGS...]

Spawns the agent, runs initialize (advertising file reads and writes) -> session/new (in the
current folder) -> one session/prompt, answers each permission request with the first option
offered, serves fs/write_text_file and fs/read_text_file from memory, and prints the stop reason.
With ``--null-write`` its write handler returns None, as the SDK's ``Client`` interface allows,
which answers ``result: null`` (the client kit's ``fs.write`` fails).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
)


class KitClient:
    def __init__(self, null_write: bool = False) -> None:
        self.files: dict[str, str] = {}
        self.null_write = null_write

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> acp.RequestPermissionResponse:
        return acp.RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", optionId=options[0].option_id))

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> acp.WriteTextFileResponse | None:
        self.files[path] = content
        if self.null_write:
            return None
        return acp.WriteTextFileResponse()  # returning None (the SDK allows it) answers ``result: null``

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> acp.ReadTextFileResponse:
        if path not in self.files:
            raise acp.RequestError.resource_not_found(path)
        return acp.ReadTextFileResponse(content=self.files[path])


async def main(*argv: str) -> dict[str, Any]:
    null_write = argv[0] == "--null-write"
    command, *args = argv[null_write:]
    async with acp.spawn_agent_process(KitClient(null_write), command, *args, env=dict(os.environ)) as (conn, _process):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)),
            client_info=Implementation(name="sdk-kit-client", version="1.0.0"),
        )
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id,
                                     prompt=[acp.text_block("Hello from the Python SDK kit client")])
    return {"stopReason": response.stop_reason}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:]))))
