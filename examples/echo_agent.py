"""An echo agent: thinks, asks permission to run its tool, streams the prompt back, can be cancelled."""

import asyncio

import acp_bindings as acp
from acp_bindings import models
from acp_bindings.builders import content_block as content
from acp_bindings.builders import session_update as update
from acp_bindings.builders import tool_call_content
from acp_bindings.session import ToolCallTracker

ALLOW = models.PermissionOption(option_id="allow", name="Allow", kind="allow_once")
REJECT = models.PermissionOption(option_id="reject", name="Reject", kind="reject_once")


class EchoAgent(acp.Agent):
    def __init__(self) -> None:
        self.cancelled: set[str] = set()

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return models.NewSessionResponse(session_id="echo-1")

    async def session_cancel(self, params: models.CancelNotification) -> None:
        self.cancelled.add(params.session_id)

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        sid, say = params.session_id, self.client.session_update
        self.cancelled.discard(sid)
        text = " ".join(block.text for block in params.prompt if isinstance(block, models.Text))
        await say(
            session_id=sid,
            update=update.agent_thought_chunk(content.text(f"Echoing {len(text)} chars")),
        )
        tools = ToolCallTracker(self.client, sid)
        call = await tools.start("Echo the prompt", kind="other")
        answer = await self.client.session_request_permission(
            session_id=sid, tool_call=tools.target(call), options=[ALLOW, REJECT]
        )
        if not isinstance(answer.outcome, models.Selected) or answer.outcome.option_id != "allow":
            await tools.finish(call, status="failed")
            return models.PromptResponse(
                stop_reason=(
                    "cancelled" if isinstance(answer.outcome, models.Cancelled) else "refusal"
                )
            )
        await tools.finish(call, content=[tool_call_content.content(content.text(text))])
        for word in text.split():
            if sid in self.cancelled:
                return models.PromptResponse(stop_reason="cancelled")
            await say(session_id=sid, update=update.agent_message_chunk(content.text(word + " ")))
        return models.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(EchoAgent()))
