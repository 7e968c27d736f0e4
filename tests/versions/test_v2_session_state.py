"""v2's session state: upserts by id, omitted / null / a value in a patch, turns ended by state
updates, and an update of an unknown kind kept; over every v2 draft whose turns end that way."""

from __future__ import annotations

import importlib
import sys

import pytest
from support.versions import V2_SCHEMAS, v2_package


def package(release: str):
    folder, name = v2_package(release)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(f"{name}.session"), importlib.import_module(f"{name}.models")


def fold(release: str, updates: list[dict]):
    session, models = package(release)
    notification = getattr(models, _notification(models))
    state = session.SessionState()
    ended = [state.apply(notification.from_json({"sessionId": "s", "update": u})) for u in updates]
    return state, ended


def _notification(models) -> str:
    return "UpdateSessionNotification" if hasattr(models, "UpdateSessionNotification") else "SessionNotification"


@pytest.mark.parametrize("release", sorted(V2_SCHEMAS))
def test_a_turn_ends_with_the_idle_state_after_running(release):
    state, ended = fold(release, [
        {"sessionUpdate": "state_update", "state": "idle"},  # a new session's idle: no turn ended
        {"sessionUpdate": "state_update", "state": "running"},
        {"sessionUpdate": "user_message", "messageId": "u1", "content": [{"type": "text", "text": "hi"}]},
        {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": {"type": "text", "text": "he"}},
        {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": {"type": "text", "text": "llo"}},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    ])
    assert ended == [False, False, False, False, False, True]
    assert (state.state, state.stop_reason, state.turns_ended, state.updates) == ("idle", "end_turn", 1, 6)
    assert [(m.role, m.message_id, m.text) for m in state.messages] == [("user", "u1", "hi"), ("agent", "a1", "hello")]


@pytest.mark.parametrize("release", ["v1.7.0", "sdk"])
def test_a_tool_call_is_upserted_and_patched_omitted_null_and_value_apart(release):
    state, _ = fold(release, [
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Read", "kind": "read",
         "status": "pending", "_meta": {"a": 1, "b": 2}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "title": None,
         "_meta": {"a": None, "c": 3}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c2"},
    ])
    assert state.tool_calls == {
        # kind omitted: kept; title null: cleared; status: replaced; _meta patched key by key
        "c1": {"toolCallId": "c1", "kind": "read", "status": "completed", "_meta": {"b": 2, "c": 3}},
        "c2": {"toolCallId": "c2"},
    }


@pytest.mark.parametrize("release", ["v1.7.0", "sdk"])
def test_a_message_update_patches_the_message_with_its_id(release):
    state, _ = fold(release, [
        {"sessionUpdate": "agent_message", "messageId": "a1", "content": [{"type": "text", "text": "draft"}]},
        {"sessionUpdate": "agent_message", "messageId": "a1"},  # content omitted: kept
        {"sessionUpdate": "agent_message", "messageId": "a2", "content": [{"type": "text", "text": "x"}]},
        {"sessionUpdate": "agent_message", "messageId": "a2", "content": None},  # null: cleared
    ])
    assert [(m.message_id, m.text, m.content) for m in state.messages] == [
        ("a1", "draft", [{"type": "text", "text": "draft"}]), ("a2", "", [])]


def test_an_update_of_an_unknown_kind_is_kept_not_dropped():
    state, ended = fold("sdk", [{"sessionUpdate": "_vendor_progress", "percent": 40}])
    assert state.other == [{"sessionUpdate": "_vendor_progress", "percent": 40}] and ended == [False]
    with pytest.raises(ValueError, match="an update of session 'other', not 's'"):
        _, models = package("sdk")
        state.apply(models.UpdateSessionNotification.from_json(
            {"sessionId": "other", "update": {"sessionUpdate": "state_update", "state": "running"}}))


def test_the_builders_make_v2_updates_the_state_folds():
    """(The TypeScript SDK's draft has a variant per stop reason, ``state_update_idle_end_turn``;
    v1.7.0's an optional ``stopReason``: its builder is ``state_update_idle``.)"""
    session, models = package("sdk")
    builders = importlib.import_module(f"{session.__name__.rsplit('.', 1)[0]}.builders")
    notification = getattr(models, _notification(models))
    updates = [
        builders.session_update.state_update_running(),
        builders.session_update.agent_message_chunk(
            message_id="a1", content=builders.content_block.text("hi")),
        builders.session_update.state_update_idle_end_turn(),
    ]
    assert [u.to_json() for u in updates] == [
        {"sessionUpdate": "state_update", "state": "running"},
        {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": {"type": "text", "text": "hi"}},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    ]
    state = session.SessionState("s")
    ended = [state.apply(notification(session_id="s", update=u)) for u in updates]
    assert ended == [False, False, True] and state.messages[0].text == "hi"
