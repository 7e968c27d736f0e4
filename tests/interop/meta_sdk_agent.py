"""An agent written with the official Python SDK that streams back, as JSON text, the ``_meta``
keys its prompt handler was given (the SDK passes them as keyword arguments)."""

import asyncio
import json
from typing import Any

import acp


class MetaAgent:
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id="meta-1")

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> acp.PromptResponse:
        text = json.dumps({k: v for k, v in kwargs.items() if k != "message_id"}, sort_keys=True)
        await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(text))
        return acp.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(MetaAgent()))
