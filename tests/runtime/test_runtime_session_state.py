"""SessionState over a multi-turn transcript, and the ToolCallTracker's messages.

``tests/data/transcripts/multi_turn_session.ndjson`` is a three-prompt session in the form
``acpgen validate`` reads (JSON-RPC messages with a ``direction``): commands, mode changes,
thoughts and messages by message id (and without), three tool calls with their updates, plan
updates, usage, session info and config options. The test checks it is valid first.

Every test runs on both flavours of the models (dataclasses and pydantic): the helpers are one
set of code for both.
"""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from support import DATA, ROOT
from support.flavours import FLAVOURS, flavour_package, submodule
from support.runtime import run_async_tests

TRANSCRIPT = DATA / "transcripts" / "multi_turn_session.ndjson"


@pytest.fixture(params=FLAVOURS)
def p(request) -> SimpleNamespace:
    """The package of one flavour: ``p.acp`` its root, ``p.models``, ``p.session``, ``p.builders``."""
    package = flavour_package(request.param)
    return SimpleNamespace(acp=package, **{name: submodule(package, name) for name in ("models", "session", "builders")})


def _notifications(p: SimpleNamespace) -> list[Any]:
    lines = [json.loads(line) for line in TRANSCRIPT.read_text().splitlines()]
    return [p.acp.decode(p.models.SessionNotification, m["params"]) for m in lines if m.get("method") == "session/update"]


def test_the_transcript_is_valid():
    done = subprocess.run(
        [sys.executable, "-m", "acpgen", "validate", "--strict", str(TRANSCRIPT)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_replaying_the_transcript_ends_in_the_sessions_state(p):
    acp, models = p.acp, p.models
    state = p.session.SessionState()
    for notification in _notifications(p):
        state.apply(notification)
    assert state.session_id == "sess-7" and state.updates == 29
    assert [(m.role, m.message_id, m.text) for m in state.messages] == [
        ("user", "u1", "The test in test_range.py fails. Why?"),
        ("thought", "t1", "I should run the test and read its output."),
        ("agent", "m1", "range_end stops one short: an off-by-one."),
        ("user", "u2", "Fix it."),
        ("agent", "m2", "Fixed: range_end returns n."),
        ("user", "u3", "Run the tests again."),
        ("agent", None, "All 41 tests pass now."),
    ]
    calls = state.tool_calls
    assert list(calls) == ["call-1", "call-2", "call-3"]
    assert [(c.title, c.kind, c.status) for c in calls.values()] == [
        ("Run pytest test_range.py", "execute", "completed"),
        ("Edit range.py", "edit", "completed"),
        ("Run pytest (all 41 tests)", "execute", "completed"),
    ]
    assert calls["call-1"].raw_input == {"command": "pytest test_range.py"}
    assert calls["call-1"].raw_output == {"exitCode": 1}
    assert acp.encode(calls["call-1"].content[0]) == {
        "type": "content", "content": {"type": "text", "text": "1 failed: assert range_end(3) == 3"}}
    assert isinstance(calls["call-2"].content[0], models.DiffToolCallContent)
    assert calls["call-2"].content[0].new_text == "return n"
    assert [loc.path for loc in calls["call-2"].locations] == ["/home/dev/project/range.py"]
    assert [(e.content, e.status) for e in state.plan] == [
        ("Run the failing test", "completed"), ("Find the cause", "completed"), ("Fix range_end", "completed")]
    assert [c.name for c in state.available_commands] == ["test", "review"]
    assert state.current_mode_id == "code"
    assert [(o.id, o.current_value) for o in state.config_options] == [("model", "fast")]
    assert state.usage is not None and (state.usage.used, state.usage.size) == (2300, 200000)
    assert state.usage.cost is not None and state.usage.cost.amount == 0.04
    assert state.session_info is not None
    assert (state.session_info.title, state.session_info.updated_at) == (
        "Fix the off-by-one in range_end", "2026-11-30T17:02:11Z")


def test_a_tool_call_update_for_an_unknown_call_starts_it_and_another_session_is_refused(p):
    models = p.models
    state = p.session.SessionState("s")
    state.apply(models.SessionNotification(
        session_id="s", update=models.ToolCallUpdateSessionUpdate(tool_call_id="late", status="failed")))
    assert (state.tool_calls["late"].title, state.tool_calls["late"].status) == ("", "failed")
    with pytest.raises(ValueError, match="an update of session 'other', not 's'"):
        state.apply(models.SessionNotification(session_id="other", update=models.PlanSessionUpdate(entries=[])))


class Recorder:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def session_update(self, params: Any, /) -> None:
        self.sent.append(params)


async def test_the_tracker_turns_start_progress_finish_into_tool_call_messages(p):
    acp, models = p.acp, p.models
    content_block, tool_call_content = p.builders.content_block, p.builders.tool_call_content
    recorder = Recorder()
    tools = p.session.ToolCallTracker(recorder, "s")
    first = await tools.start("Read a file", kind="read", locations=[models.ToolCallLocation(path="a.txt")])
    second = await tools.start("Write", tool_call_id="mine", status="in_progress")
    await tools.progress(first, raw_output={"bytes": 3})
    await tools.finish(first, content=[tool_call_content.content(content_block.text("abc"))])
    await tools.finish(second, status="failed")
    assert (first, second) == ("call-1", "mine")
    assert [acp.encode(n) for n in recorder.sent] == [
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Read a file",
                                      "kind": "read", "status": "pending", "locations": [{"path": "a.txt"}]}},
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "mine", "title": "Write",
                                      "status": "in_progress"}},
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
                                      "status": "in_progress", "rawOutput": {"bytes": 3}}},
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
                                      "status": "completed",
                                      "content": [{"type": "content", "content": {"type": "text", "text": "abc"}}]}},
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "mine", "status": "failed"}},
    ]
    assert (tools.calls["call-1"].status, tools.calls["call-1"].raw_output) == ("completed", {"bytes": 3})
    assert acp.encode(tools.target(first)) == {"toolCallId": "call-1"}
    # the client folds what the tracker sent into the same calls
    state = p.session.SessionState()
    for notification in recorder.sent:
        state.apply(notification)
    assert state.tool_calls == tools.calls


async def test_a_connected_agent_reports_through_the_tracker_and_the_client_folds_it(p):
    acp, models, builders = p.acp, p.models, p.builders
    state = p.session.SessionState()

    class Folding(acp.Client):
        async def session_update(self, params: Any) -> None:
            state.apply(params)

    class Working(acp.Agent):
        async def session_prompt(self, params: Any) -> Any:
            tools = p.session.ToolCallTracker(self.client, params.session_id)
            call = await tools.start("Think", kind="think")
            await tools.progress(call, raw_input={"depth": 1})
            done = builders.tool_call_content.content(builders.content_block.text("thought"))
            await tools.finish(call, content=[done])
            return models.PromptResponse(stop_reason="end_turn")

    async with acp.in_memory_pair(Working(), Folding()) as (_, client_side):
        session = await client_side.agent.session_new(cwd="/", mcp_servers=[])
        await client_side.agent.session_prompt(session_id=session.session_id, prompt=[builders.content_block.text("go")])
    (call,) = state.tool_calls.values()
    assert type(call) is models.ToolCallSessionUpdate
    assert acp.encode(call) == {
        "sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Think", "kind": "think", "status": "completed",
        "rawInput": {"depth": 1}, "content": [{"type": "content", "content": {"type": "text", "text": "thought"}}],
    }


def test_a_session_info_update_lays_what_it_sends_over_the_last(p):
    models = p.models
    state = p.session.SessionState("s")
    for update in (models.SessionInfoUpdateSessionUpdate(title="First", updated_at="2026-01-01T00:00:00Z"),
                   models.SessionInfoUpdateSessionUpdate(title="Second")):
        state.apply(models.SessionNotification(session_id="s", update=update))
    assert (state.session_info.title, state.session_info.updated_at) == ("Second", "2026-01-01T00:00:00Z")


run_async_tests(globals())
