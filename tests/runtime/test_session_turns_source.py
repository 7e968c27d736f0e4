"""The v2 session state unit-tested where it lives (acpgen/runtime/_runtime/session/_session_turns.py), on plain
notifications: what a patch does, how turns end, and what it keeps of each update."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from acpgen.runtime._runtime.session import _session_turns


def note(update: dict, session_id: str = "s-1") -> SimpleNamespace:
    """A notification as the state reads it: its session id and its update (a JSON object here)."""
    return SimpleNamespace(session_id=session_id, update=update)


def test_a_patch_keeps_what_it_omits_clears_nulls_and_patches_meta_key_by_key():
    current = {"a": 1, "b": 2, "_meta": {"x": 1, "y": 2}}
    assert _session_turns.patched(current, {"b": None, "c": 3, "_meta": {"y": None, "z": 3}}) == {
        "a": 1, "c": 3, "_meta": {"x": 1, "z": 3}}
    assert current == {"a": 1, "b": 2, "_meta": {"x": 1, "y": 2}}  # a new object


def test_a_turn_ends_at_idle_after_another_state_and_messages_fold_by_id():
    state = _session_turns.SessionState()
    assert not state.apply(note({"sessionUpdate": "state_update", "state": "running"}))
    state.apply(note({"sessionUpdate": "user_message", "messageId": "u", "content": [{"type": "text", "text": "hi"}]}))
    for chunk in ("Hel", "lo"):
        state.apply(note({"sessionUpdate": "agent_message_chunk", "messageId": "a",
                          "content": {"type": "text", "text": chunk}}))
    state.apply(note({"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": "x", "status": "pending"}))
    state.apply(note({"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": None, "status": "done"}))
    state.apply(note({"sessionUpdate": "something_new", "value": 1}))
    assert state.apply(note({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))
    assert not state.apply(note({"sessionUpdate": "state_update", "state": "idle"}))  # already idle
    assert [(m.role, m.message_id, m.text) for m in state.messages] == [("user", "u", "hi"), ("agent", "a", "Hello")]
    assert state.tool_calls == {"t": {"toolCallId": "t", "status": "done"}}
    assert state.other == [{"sessionUpdate": "something_new", "value": 1}]
    assert (state.session_id, state.turns_ended, state.stop_reason, state.updates) == ("s-1", 1, None, 9)


def test_an_update_of_another_session_is_refused():
    state = _session_turns.SessionState("s-1")
    with pytest.raises(ValueError, match="an update of session 's-2', not 's-1'"):
        state.apply(note({"sessionUpdate": "state_update", "state": "running"}, "s-2"))
