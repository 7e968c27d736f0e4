"""The remote interop scenario's client (see remote_client.py), written with the official Python
SDK (``acp.ws``, ``acp.http``).

Usage: python remote_sdk_client.py URL CWD [--echo]

``--echo``: against a stub agent, one turn only: the texts it streams back and its stop reason,
with the protocol version ``initialize`` answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import acp
from acp.schema import AllowedOutcome, ClientCapabilities, FileSystemCapabilities


class ScenarioClient:
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.texts: list[str] = []
        self.reads: list[str] = []
        self.ticked = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.texts.append(update.content.text)
        if update.content.text.startswith("tick"):
            self.ticked.set()

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        return acp.RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=options[-1].option_id))

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> acp.ReadTextFileResponse:
        self.reads.append(path)
        if os.path.dirname(path) != self.cwd:
            raise acp.RequestError.invalid_params({"path": path})
        content = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
        return acp.ReadTextFileResponse(content=content)


async def main(url: str, cwd: str, echo: bool = False) -> dict[str, Any]:
    client = ScenarioClient(cwd)
    token = os.environ.get("ACP_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else None
    if url.startswith("ws"):
        from acp.ws import create_websocket_stream

        transport = await create_websocket_stream(url, headers=headers)
    else:
        from acp.http import create_http_stream

        transport = create_http_stream(url, headers=headers)
    conn = acp.connect_to_agent(client, transport)
    try:
        answered = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True)),
        )
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        if echo:
            done = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hello remote")])
            return {"protocolVersion": answered.protocol_version, "texts": client.texts, "stopReason": done.stop_reason}
        done = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hello remote")])
        summary: dict[str, Any] = {"texts": client.texts[:], "stopReason": done.stop_reason, "reads": client.reads}
        client.texts.clear()
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[acp.text_block("cancel")]))
        await asyncio.wait_for(client.ticked.wait(), 10)
        await conn.cancel(session_id=session.session_id)
        try:
            summary["cancelStopReason"] = (await asyncio.wait_for(turn, 30)).stop_reason
        except asyncio.TimeoutError:  # the agent answers within 30 s even if the cancel is lost
            raise SystemExit(f"no answer to the cancelled turn in 30 s; {len(client.texts)} updates seen, the last {client.texts[-1:]}") from None
        summary["ticked"] = bool(client.texts) and all(t.startswith("tick") for t in client.texts)
    finally:
        await conn.close()
        await transport.close()
    return summary


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], "--echo" in sys.argv[3:]))))
