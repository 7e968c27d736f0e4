"""The session module and the builders degrade with the schema: a release without an update
gets no part that reads it, and a schema without ``session/update`` gets neither class."""

from __future__ import annotations

import copy
import importlib
import json

from support import CORPUS, bundled_document, generate_and_import, mini_schema

from acpgen.pipeline import Options, build_spec


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


def _renamed(document: dict, renames: dict[str, str]) -> dict:
    """``document`` with ``$defs`` renamed, every ``$ref`` to them too: a release that renames its types."""
    text = json.dumps(document)
    for old, new in renames.items():
        text = text.replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    renamed = json.loads(text)
    renamed["$defs"] = {renames.get(k, k): v for k, v in renamed["$defs"].items()}
    return renamed


def test_the_session_types_are_read_from_the_method_table_not_named(tmp_path):
    """session/update's params type, its union and the tool-call update type, all renamed: the session
    module folds and tracks the same, under the new names."""
    renames = {"SessionNotification": "SessionEvent", "SessionUpdate": "EventBody", "ToolCallUpdate": "ToolCallDelta"}
    spec, warnings = build_spec(Options(schema=write(tmp_path, _renamed(bundled_document(), renames))))
    updates = spec.session_updates
    assert warnings == ()
    assert (updates.notification, updates.union, updates.tool_call_update_class, updates.update_field) == (
        "SessionEvent", "EventBody", "ToolCallDelta", "update"
    )
    package = generate_and_import(_renamed(bundled_document(), renames), tmp_path)
    session = importlib.import_module(f"{package.__name__}.session")
    models = importlib.import_module(f"{package.__name__}.models")
    state = session.SessionState()
    for update in (
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read", "status": "pending"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"},
    ):
        state.apply(models.SessionEvent.from_json({"sessionId": "s", "update": update}))
    assert [m.text for m in state.messages] == ["hi"] and state.tool_calls["c1"].status == "completed"
    assert isinstance(session.ToolCallTracker(None, "s").target("c1"), models.ToolCallDelta)


def test_a_session_update_without_its_union_is_said_and_gets_no_session_state(tmp_path, cli):
    document = copy.deepcopy(bundled_document())
    document["$defs"]["SessionNotification"]["properties"]["update"] = {"type": "object"}
    schema = write(tmp_path, document)
    spec, warnings = build_spec(Options(schema=schema))
    assert [w.format() for w in warnings] == [
        (f"{schema}: warning: #/$defs/SessionNotification: session/update: its params type SessionNotification"
         " has no field of a tagged union type; the session module leaves out what needs it")
    ]
    assert spec.session_updates.notification is None
    result = cli("generate", "--schema", schema, "--out", tmp_path / "out")
    assert result.exit_code == 0 and warnings[0].format() in result.stderr.splitlines()
    assert "__all__: list[str] = []" in (tmp_path / "out" / "acp_bindings" / "session.py").read_text()


def write(tmp_path, document: dict):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(document))
    return path
