"""An agent as a new user writes one with the official Python SDK (``agent-client-protocol``):
it answers ``initialize`` with the version it was asked for, names no implementation, and answers
each prompt with its text. What the SDK does for the rest (the methods it serves by default, the
lines it drops) is the SDK's. With ``--keeps-the-text`` it answers the version it speaks and names
itself: its only lapses are then ones the text does not forbid."""

import asyncio
import sys
import uuid
from typing import Any

import acp
from acp.schema import TextContentBlock


class NewUserAgent:
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        if "--keeps-the-text" in sys.argv:
            info = acp.schema.Implementation(name="new-user-agent", version="1.0.0")
            return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION, agent_info=info)
        return acp.InitializeResponse(protocol_version=protocol_version)  # whatever was asked

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id=uuid.uuid4().hex)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        for block in prompt:
            if isinstance(block, TextContentBlock):
                update = acp.update_agent_message_text(block.text)
                await self.conn.session_update(session_id=session_id, update=update)
        return acp.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(NewUserAgent()))
