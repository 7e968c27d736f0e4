"""The session module and the builders degrade with the schema: a release without an update
gets no part that reads it, and a schema without ``session/update`` gets neither class."""

from __future__ import annotations

import importlib
import json

from support import CORPUS, generate_and_import, mini_schema


def test_the_first_release_folds_what_it_has_and_nothing_more(tmp_path):
    package = generate_and_import(json.loads((CORPUS / "v0.0.33--schema.json").read_text()), tmp_path)
    session = importlib.import_module(f"{package.__name__}.session")
    models = importlib.import_module(f"{package.__name__}.models")
    builders = importlib.import_module(f"{package.__name__}.builders")
    state = session.SessionState()
    for update in (
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read", "kind": "read", "status": "pending"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"},
        {"sessionUpdate": "plan", "entries": [{"content": "x", "priority": "low", "status": "pending"}]},
    ):
        state.apply(models.SessionNotification.from_json({"sessionId": "s", "update": update}))
    assert [m.text for m in state.messages] == ["hi"]
    assert state.tool_calls["c1"].status == "completed" and [e.content for e in state.plan] == ["x"]
    for later in ("usage", "session_info", "config_options", "current_mode_id", "available_commands"):
        assert not hasattr(state, later), later  # v0.0.33 has none of these updates
    assert hasattr(session, "ToolCallTracker")
    assert builders.session_update.plan([]).to_json() == {"sessionUpdate": "plan", "entries": []}


def test_a_schema_without_session_updates_gets_an_empty_session_module(tmp_path):
    package = generate_and_import(mini_schema(), tmp_path)
    session = importlib.import_module(f"{package.__name__}.session")
    builders = importlib.import_module(f"{package.__name__}.builders")
    assert session.__all__ == [] and builders.__all__ == []
