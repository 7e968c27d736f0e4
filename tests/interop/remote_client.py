"""The remote interop scenario's client (see remote_agent.py), written with the generated package.

Usage: python remote_client.py URL CWD [--http2] [--reconnect]

Runs initialize -> session/new -> session/prompt ``hello remote`` (allowing the permission asked,
serving ``fs/read_text_file`` inside CWD), then session/prompt ``cancel`` and session/cancel after
the first update; with ``--reconnect``, a new connection that loads the session (session/load) and
prompts it once more; prints one JSON summary line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp_bindings import models
from acp_bindings._runtime.wire._codec import decode, encode
from acp_bindings.client import Client, connect_agent
from acp_bindings.methods import PROTOCOL_VERSION


class ScenarioClient(Client):
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.texts: list[str] = []
        self.reads: list[str] = []
        self.ticked = asyncio.Event()

    async def session_update(self, params: models.SessionNotification) -> None:
        text = encode(params)["update"]["content"]["text"]
        self.texts.append(text)
        if text.startswith("tick"):
            self.ticked.set()

    async def session_request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        options = [option["optionId"] for option in encode(params)["options"]]
        return decode(models.RequestPermissionResponse, {"outcome": {"outcome": "selected", "optionId": options[-1]}})

    async def fs_read_text_file(self, params: models.ReadTextFileRequest) -> models.ReadTextFileResponse:
        path = encode(params)["path"]
        self.reads.append(path)
        if os.path.dirname(path) != self.cwd:
            raise ValueError(path)
        content = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
        return decode(models.ReadTextFileResponse, {"content": content})


async def outcome(turn: Any, texts: list[str]) -> Any:
    """The cancelled turn's answer, which the agent gives within 30 s even if the cancel is lost;
    if none comes, the updates seen say where it stopped: ticks still coming, the cancel was lost."""
    try:
        return await asyncio.wait_for(turn, 30)
    except asyncio.TimeoutError:
        raise SystemExit(f"no answer to the cancelled turn in 30 s; {len(texts)} updates seen, the last {texts[-1:]}") from None


async def main(url: str, cwd: str, http2: bool) -> dict[str, Any]:
    client = ScenarioClient(cwd)
    capabilities = {"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": False}
    async with connect_agent(client, url, token=os.environ.get("ACP_TOKEN"), http2=http2) as conn:
        await conn.agent.initialize(decode(models.InitializeRequest, {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities}))
        session = encode(await conn.agent.session_new(decode(models.NewSessionRequest, {"cwd": cwd, "mcpServers": []})))
        session_id = session["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello remote"}]}
        done = encode(await conn.agent.session_prompt(decode(models.PromptRequest, prompt)))
        summary: dict[str, Any] = {"texts": client.texts[:], "stopReason": done["stopReason"], "reads": client.reads}
        client.texts.clear()
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "cancel"}]}
        turn = asyncio.ensure_future(conn.agent.session_prompt(decode(models.PromptRequest, prompt)))
        await asyncio.wait_for(client.ticked.wait(), 10)
        await conn.agent.session_cancel(decode(models.CancelNotification, {"sessionId": session_id}))
        summary["cancelStopReason"] = encode(await outcome(turn, client.texts))["stopReason"]
        summary["ticked"] = bool(client.texts) and all(t.startswith("tick") for t in client.texts)
        summary["httpVersion"] = getattr(conn.transport, "http_version", None)
    if "--reconnect" in sys.argv[3:]:  # a new connection, then session/load
        client.texts.clear()
        async with connect_agent(client, url, token=os.environ.get("ACP_TOKEN"), http2=http2) as conn:
            init = {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities}
            answer = encode(await conn.agent.initialize(decode(models.InitializeRequest, init)))
            assert answer["agentCapabilities"]["loadSession"] is True
            load = {"sessionId": session_id, "cwd": cwd, "mcpServers": []}
            await conn.agent.session_load(decode(models.LoadSessionRequest, load))
            summary["replayed"] = client.texts[:]
            client.texts.clear()
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello again"}]}
            again = encode(await conn.agent.session_prompt(decode(models.PromptRequest, prompt)))
            summary["afterReload"] = [again["stopReason"], client.texts[-2:]]
    return summary


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], "--http2" in sys.argv[3:]))))
