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
    """The base answers initialize with these, gives each session/new a fresh id, and refuses a
    request naming a session that is not open."""

    name, version = "echo-agent", "1.0.0"

    def __init__(self) -> None:
        self.cancelled: dict[str, bool] = {}  # session id -> its running turn was cancelled

    async def session_cancel(self, params: models.CancelNotification) -> None:
        if params.session_id in self.cancelled:  # a notification: nothing to answer otherwise
            self.cancelled[params.session_id] = True

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        sid, say = params.session_id, self.client.session_update
        self.cancelled[sid] = False
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
        chosen = answer.outcome.option_id if isinstance(answer.outcome, models.Selected) else None
        if self.cancelled[sid] or chosen != "allow":
            await tools.finish(call, status="failed")
            refused = chosen is not None and not self.cancelled[sid]
            return models.PromptResponse(stop_reason="refusal" if refused else "cancelled")
        await tools.finish(call, content=[tool_call_content.content(content.text(text))])
        for word in text.split():
            if self.cancelled[sid]:
                return models.PromptResponse(stop_reason="cancelled")
            await say(session_id=sid, update=update.agent_message_chunk(content.text(word + " ")))
        return models.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(EchoAgent()))
