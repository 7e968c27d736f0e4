"""A client: starts an agent, sends it one prompt, allows (or cancels) the tool call it asks
permission for, and prints what the session came to as one JSON line.

Usage: python echo_client.py [--cancel] TEXT AGENT_COMMAND [ARGS...]
"""

import asyncio
import json
import os
import sys

import acp_bindings as acp
from acp_bindings import models
from acp_bindings.builders import content_block as content
from acp_bindings.builders import request_permission_outcome as outcome
from acp_bindings.session import SessionState


class EchoClient(acp.Client):
    def __init__(self, cancel: bool) -> None:
        self.cancel = cancel
        self.state = SessionState()

    async def session_update(self, params: models.SessionNotification) -> None:
        self.state.apply(params)

    async def session_request_permission(
        self, params: models.RequestPermissionRequest
    ) -> models.RequestPermissionResponse:
        allow = next((option for option in params.options if option.kind.startswith("allow")), None)
        if self.cancel or allow is None:  # cancel the turn: the pending request is answered "cancelled"
            await self.agent.session_cancel(session_id=params.session_id)
            return models.RequestPermissionResponse(outcome=outcome.cancelled())
        return models.RequestPermissionResponse(outcome=outcome.selected(allow.option_id))


async def main(text: str, command: list[str], cancel: bool) -> None:
    client = EchoClient(cancel)
    async with acp.spawn_agent(client, *command) as conn:
        await conn.agent.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.agent.session_new(cwd=os.getcwd(), mcp_servers=[])
        done = await conn.agent.session_prompt(
            session_id=session.session_id, prompt=[content.text(text)]
        )
    state = client.state
    summary = {
        "stopReason": done.stop_reason,
        "thoughts": [m.text for m in state.messages if m.role == "thought"],
        "reply": "".join(m.text for m in state.messages if m.role == "agent"),
        "toolCalls": {call_id: call.status for call_id, call in state.tool_calls.items()},
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    cancel = sys.argv[1:2] == ["--cancel"]
    text, *command = sys.argv[2:] if cancel else sys.argv[1:]
    asyncio.run(main(text, command, cancel))
