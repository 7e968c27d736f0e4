"""The v1 session state and tool-call tracker unit-tested where they live
(acpgen/runtime/_runtime/session/_session_state.py), over a ``_session_data`` module written here: a schema of a
few plain classes stands for the generated models, so what the runtime takes from the schema
(the parts it folds, the wire names an update replaces) is all it knows."""

from __future__ import annotations

import asyncio
import importlib
import sys
import types
from typing import Any

import pytest

from acpgen.runtime._runtime.wire import _codec


def model(name: str, wire: dict[str, str]) -> type:
    """A class as the codec reads one: keyword fields (``wire``: Python name -> wire name),
    ``to_json`` leaving out what is None, and a decoder registered for it."""

    def __init__(self: Any, **fields: Any) -> None:
        for key in wire:
            setattr(self, key, fields.pop(key, None))
        assert not fields, fields
        self._extra = None

    def to_json(self: Any) -> dict[str, Any]:
        return {w: getattr(self, p) for p, w in wire.items() if getattr(self, p) is not None}

    cls = type(name, (_codec.Model,), {"__slots__": tuple(wire), "__init__": __init__, "to_json": to_json})
    _codec.register({cls: lambda data: cls(**{p: data.get(w) for p, w in wire.items()})})
    return cls


Chunk = model("Chunk", {"content": "content", "message_id": "messageId"})
Thought = model("Thought", {"content": "content"})  # a chunk variant without a message id
ToolCall = model("ToolCall", {"tool_call_id": "toolCallId", "title": "title", "status": "status", "kind": "kind"})
ToolCallUpdate = model("ToolCallUpdate", {"tool_call_id": "toolCallId", "title": "title", "status": "status", "kind": "kind"})
Plan = model("Plan", {"entries": "entries"})
Info = model("Info", {"title": "title", "updated_at": "updatedAt"})
Notification = model("Notification", {"session_id": "sessionId", "update": "update"})
Target = model("Target", {"tool_call_id": "toolCallId"})


@pytest.fixture
def runtime(monkeypatch):
    """``_session_state`` over a ``_session_data`` of the classes above: chunks, tool calls, the
    plan and session info, but no usage, mode, commands or config options."""
    data = types.ModuleType("acpgen.runtime._session_data")
    data.__dict__.update(
        NOTIFICATION=Notification, UPDATE_FIELD="update", TARGET=Target, PLACEHOLDERS=["title"],
        FOLDED={"agent_message": Chunk, "agent_thought": Thought, "tool_call": ToolCall,
                "tool_call_update": ToolCallUpdate, "plan": Plan, "session_info": Info},
        TOOL_CALL_KEYS=["kind", "status", "title", "toolCallId"], SESSION_INFO_KEYS=["title", "updatedAt"],
    )
    monkeypatch.setitem(sys.modules, data.__name__, data)
    monkeypatch.delitem(sys.modules, "acpgen.runtime._runtime.session._session_state", raising=False)
    return importlib.import_module("acpgen.runtime._runtime.session._session_state")


def text(value: str) -> Any:
    """A text content block as a model of it reads."""
    return types.SimpleNamespace(type="text", text=value)


def note(update: Any, session_id: str = "s") -> Any:
    return Notification(session_id=session_id, update=update)


def test_it_folds_the_parts_the_schema_has_and_has_no_attribute_for_the_others(runtime):
    state = runtime.SessionState()
    for update in (
        Chunk(content=text("Hel"), message_id="m1"),
        Thought(content=text("hmm")),
        Chunk(content=text("lo"), message_id="m1"),
        ToolCallUpdate(tool_call_id="c1", status="in_progress"),  # first seen in an update: a blank title
        ToolCall(tool_call_id="c2", title="Read", status="pending"),
        ToolCallUpdate(tool_call_id="c2", status="completed", title=None),  # null: left as it was
        Plan(entries=["a"]),
        Info(title="One"),
        Info(updated_at="today"),
    ):
        state.apply(note(update))
    assert [(m.role, m.message_id, m.text) for m in state.messages] == [("agent", "m1", "Hello"), ("thought", None, "hmm")]
    assert {k: v.to_json() for k, v in state.tool_calls.items()} == {
        "c1": {"toolCallId": "c1", "title": "", "status": "in_progress"},
        "c2": {"toolCallId": "c2", "title": "Read", "status": "completed"},
    }
    assert state.plan == ["a"] and state.session_info.to_json() == {"title": "One", "updatedAt": "today"}
    assert (state.session_id, state.updates) == ("s", 9)
    for absent in ("usage", "current_mode_id", "available_commands", "config_options"):
        assert not hasattr(state, absent), absent
    with pytest.raises(ValueError, match="an update of session 'other', not 's'"):
        state.apply(note(Plan(entries=[]), "other"))


def test_the_tracker_numbers_calls_per_session_and_sends_what_changed(runtime):
    sent: list[Any] = []

    class Client:
        async def session_update(self, params: Any) -> None:
            sent.append(params)

    client = Client()

    async def run() -> None:
        tools = runtime.ToolCallTracker(client, "s")
        first = await tools.start("Read", kind="read")
        await tools.progress(first)
        await tools.finish(first, status="failed")
        assert await runtime.ToolCallTracker(client, "s").start("Write") == "call-2"
        assert tools.calls[first].to_json() == {"toolCallId": "call-1", "title": "Read", "status": "failed", "kind": "read"}
        assert tools.target(first).to_json() == {"toolCallId": "call-1"}

    asyncio.run(run())
    assert [(type(n.update).__name__, n.update.status, n.session_id) for n in sent] == [
        ("ToolCall", "pending", "s"), ("ToolCallUpdate", "in_progress", "s"), ("ToolCallUpdate", "failed", "s"),
        ("ToolCall", "pending", "s")]
