"""The agent bench_remote.py serves, written twice: ``ours`` (the generated package's ASGI app) and
``sdk`` (the official Python SDK's ``acp.http.asgi``). On ``session/prompt`` with the text ``N``
both send N ``agent_message_chunk`` updates of the same text, then end the turn.

``ours_probed`` and ``sdk_probed`` also answer ``GET /memory`` with the bytes Python has allocated
(tracemalloc, when the server runs with ``PYTHONTRACEMALLOC=1``), after a collection."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import acp
from acp.http.asgi import create_asgi_app
from acp_bindings import models
from acp_bindings._runtime.wire._codec import decode, encode
from acp_bindings.agent import Agent, asgi_app
from acp_bindings.methods import PROTOCOL_VERSION

TEXT = "a streamed chunk of an answer, "


class Ours(Agent):
    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return decode(models.InitializeResponse, {"protocolVersion": PROTOCOL_VERSION})

    async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return decode(models.NewSessionResponse, {"sessionId": "bench"})

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        request = encode(params)
        update = decode(
            models.SessionNotification,
            {
                "sessionId": request["sessionId"],
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": TEXT}},
            },
        )
        for _ in range(int(request["prompt"][0]["text"])):
            await self.client.session_update(update)
        return decode(models.PromptResponse, {"stopReason": "end_turn"})


class Sdk:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id="bench")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        for _ in range(int(prompt[0].text)):
            await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(TEXT))
        return acp.PromptResponse(stop_reason="end_turn")


ours = asgi_app(Ours)
sdk = create_asgi_app(Sdk)


def probed(app: Any) -> Any:
    async def with_probe(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/memory":
            gc.collect()
            body = str(tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else -1)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": body.encode()})
            return
        await app(scope, receive, send)

    return with_probe


ours_probed = probed(ours)
sdk_probed = probed(sdk)
