"""The remote interop scenario's agent (see remote_agent.py), written with the official Python
SDK: ``app`` is its ASGI application (``acp.http.asgi``)."""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

import acp
from acp.http.asgi import create_asgi_app
from acp.schema import PermissionOption, ToolCallUpdate


class ScenarioAgent:
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.sessions: dict[str, str] = {}
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION, auth_methods=[])

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        session_id = f"sdk-{len(self.sessions) + 1}-{os.getpid()}"
        self.sessions[session_id] = cwd
        return acp.NewSessionResponse(session_id=session_id)

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(text))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        text = "".join(block.text for block in prompt if getattr(block, "type", None) == "text")
        if text == "cancel":
            event = self.cancelled[session_id] = asyncio.Event()
            for tick in range(1500):
                await self.say(session_id, f"tick {tick}")
                try:
                    await asyncio.wait_for(event.wait(), 0.02)
                except asyncio.TimeoutError:
                    continue
                return acp.PromptResponse(stop_reason="cancelled")
            return acp.PromptResponse(stop_reason="end_turn")
        await self.say(session_id, "start")
        answer = await self.conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="call-1", title="Read hello.txt", kind="read", status="pending"),
            options=[
                PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
            ],
        )
        outcome = answer.outcome.model_dump(by_alias=True)
        await self.say(session_id, f"permission: {outcome.get('optionId', outcome.get('outcome'))}")
        read = await self.conn.read_text_file(session_id=session_id, path=os.path.join(self.sessions[session_id], "hello.txt"))
        await self.say(session_id, f"read: {read.content}")
        for word in re.findall(r"\S+\s*", text):
            await self.say(session_id, f"echo: {word}")
        return acp.PromptResponse(stop_reason="end_turn")


app = create_asgi_app(ScenarioAgent)
