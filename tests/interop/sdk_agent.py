"""An ACP agent written with the official Python SDK, for the interop tests.

On ``session/prompt`` it calls the client back and reports each outcome as one
``agent_message_chunk`` text update: it reads ``hello.txt`` in the session's cwd, tries to
read ``../outside.txt`` (the client must refuse), asks for permission, calls an extension
method the client does not have (expects -32601), then echoes the prompt's text word by word
and ends the turn with ``end_turn``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Any

import acp
from acp.schema import PermissionOption, ToolCallUpdate


async def outcome(call: Any) -> dict[str, Any]:
    try:
        result = await call
    except acp.RequestError as exc:
        return {"code": exc.code, "message": str(exc)}
    return {"ok": result.model_dump(by_alias=True, exclude_none=True) if hasattr(result, "model_dump") else result}


class InteropAgent:
    def __init__(self) -> None:
        self.sessions: dict[str, str] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION, auth_methods=[])

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        session_id = f"sdk-session-{len(self.sessions) + 1}"
        self.sessions[session_id] = cwd
        return acp.NewSessionResponse(session_id=session_id)

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(text))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        cwd = self.sessions[session_id]
        read = await outcome(self.conn.read_text_file(session_id=session_id, path=os.path.join(cwd, "hello.txt")))
        await self.say(session_id, f"read: {json.dumps(read)}")
        outside_path = os.path.join(os.path.dirname(cwd), "outside.txt")
        outside = await outcome(self.conn.read_text_file(session_id=session_id, path=outside_path))
        await self.say(session_id, f"outside: {json.dumps(outside)}")
        permission = await outcome(
            self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id="call-1", title="Read hello.txt", kind="read", status="pending"),
                options=[
                    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                ],
            )
        )
        await self.say(session_id, f"permission: {json.dumps(permission)}")
        missing = await outcome(self.conn.ext_method("interop/missing", {"probe": True}))
        await self.say(session_id, f"missing: {json.dumps(missing)}")
        text = "".join(block.text for block in prompt if getattr(block, "type", None) == "text")
        for word in re.findall(r"\S+\s*", text):
            await self.say(session_id, f"echo: {word}")
        return acp.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


if __name__ == "__main__":
    asyncio.run(acp.run_agent(InteropAgent()))
