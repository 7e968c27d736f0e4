"""An echo agent: thinks, asks permission to run its tool, streams the prompt back, can be cancelled."""

import asyncio
from typing import Any

import acp
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    TextContentBlock,
    ToolCallUpdate,
)

ALLOW = PermissionOption(option_id="allow", name="Allow", kind="allow_once")
REJECT = PermissionOption(option_id="reject", name="Reject", kind="reject_once")


class EchoAgent:
    def __init__(self) -> None:
        self.cancelled: set[str] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id="echo-1")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.add(session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        sid, say = session_id, self.conn.session_update
        self.cancelled.discard(sid)
        text = " ".join(block.text for block in prompt if isinstance(block, TextContentBlock))
        await say(
            session_id=sid, update=acp.update_agent_thought_text(f"Echoing {len(text)} chars")
        )
        await say(
            session_id=sid,
            update=acp.start_tool_call("call-1", "Echo the prompt", kind="other", status="pending"),
        )
        answer = await self.conn.request_permission(
            session_id=sid, tool_call=ToolCallUpdate(tool_call_id="call-1"), options=[ALLOW, REJECT]
        )
        if not isinstance(answer.outcome, AllowedOutcome) or answer.outcome.option_id != "allow":
            await say(session_id=sid, update=acp.update_tool_call("call-1", status="failed"))
            return acp.PromptResponse(
                stop_reason="cancelled" if isinstance(answer.outcome, DeniedOutcome) else "refusal"
            )
        content = [acp.tool_content(acp.text_block(text))]
        await say(
            session_id=sid,
            update=acp.update_tool_call("call-1", status="completed", content=content),
        )
        for word in text.split():
            if sid in self.cancelled:
                return acp.PromptResponse(stop_reason="cancelled")
            await say(session_id=sid, update=acp.update_agent_message_text(word + " "))
        return acp.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(EchoAgent()))
