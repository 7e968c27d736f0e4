"""An ACP client written with the official Python SDK, for the interop tests.

Usage: python sdk_client.py CWD AGENT_CMD [ARGS...]

Spawns the agent, runs initialize -> session/new -> session/prompt (text plus a resource_link
to CWD/hello.txt), serves fs/read_text_file for CWD, calls an extension method the agent does
not have, and prints one JSON summary line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import acp
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation


class InteropClient:
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.updates: list[dict[str, Any]] = []
        self.reads: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append({"sessionId": session_id, "update": update.model_dump(by_alias=True, exclude_none=True)})

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> acp.ReadTextFileResponse:
        self.reads.append(path)
        if os.path.dirname(path) != self.cwd:
            raise acp.RequestError.invalid_params({"path": path})
        return acp.ReadTextFileResponse(content=await asyncio.to_thread(Path(path).read_text, encoding="utf-8"))

    async def request_permission(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


async def main(cwd: str, command: str, *args: str) -> dict[str, Any]:
    client = InteropClient(cwd)
    summary: dict[str, Any] = {}
    async with acp.spawn_agent_process(client, command, *args, env=dict(os.environ)) as (conn, _process):
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True)),
            client_info=Implementation(name="interop-sdk-client", version="1.0.0"),
        )
        summary["initialize"] = init.model_dump(by_alias=True, exclude_none=True)
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        summary["sessionId"] = session.session_id
        response = await conn.prompt(
            session_id=session.session_id,
            prompt=[
                acp.text_block("Hello from the Python SDK client"),
                acp.resource_link_block("hello.txt", f"file://{os.path.join(cwd, 'hello.txt')}"),
            ],
        )
        summary["stopReason"] = response.stop_reason
        summary["updatesBeforeStop"] = len(client.updates)
        try:
            await conn.ext_method("interop/missing", {"probe": True})
            summary["missing"] = {"ok": True}
        except acp.RequestError as exc:
            summary["missing"] = {"code": exc.code}
    summary["updates"] = client.updates
    summary["reads"] = client.reads
    return summary


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:]))))
