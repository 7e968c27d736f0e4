"""The spec's duties of every agent, read from a schema into what the ``Agent`` base does by default.

The spec asks every agent to name itself in ``initialize`` (``agentInfo``; ``info`` in the v2
drafts), to give each ``session/new`` a unique session id, and lets it answer a request naming a
session that is not open with an error (v1.7.0's session-setup.mdx: "Agents MAY return an error if
the session does not exist or is not currently active"), which the errors page of the drafts after
it names: -32002 with ``data.sessionId``. The base class does each by default where the schema
has what it takes (an ``initialize`` result that needs nothing else, a ``session/new`` result
that is its id), so an agent that says its name and answers prompts is conformant; each default
is a method or attribute its subclass overrides.

Which requests open, name or close a session is read from the method table: the wire names the
spec gives each part (below), where the request's params (or result) carry a required
``sessionId``, so a draft that drops or renames a method drops it here too.
"""

from __future__ import annotations

from collections.abc import Mapping

from .agent_defaults import AgentDefaults
from .classes import ClassDef
from .spec import Method
from .typedefs import DefKind, TypeDef
from .types import Nullable, Ref

#: The requests whose result's session is open once answered: a new one, or a fork.
CREATES = ("session/new", "session/fork")
#: The requests that name an open session (the errors page of the later drafts lists prompt,
#: set_mode and set_config_option; close takes "the ID of the active session to close").
NAMES = ("session/prompt", "session/set_mode", "session/set_config_option", "session/set_model")
#: The requests whose params' session is open once answered: a stored session, loaded or resumed.
OPENS = ("session/load", "session/resume")
#: The requests that close the open session they name, and that forget one that may not be open.
CLOSES = ("session/close",)
FORGETS = ("session/delete",)
USES = (("NAMES", NAMES), ("OPENS", OPENS), ("CLOSES", CLOSES), ("FORGETS", FORGETS))
#: The field naming the agent in ``initialize``'s result, newest first.
INFO_FIELDS = ("info", "agentInfo")


def agent_defaults(methods: tuple[Method, ...], types: tuple[TypeDef, ...]) -> AgentDefaults:
    """The defaults of the agent side of a schema with these methods and types."""
    table = {m.wire_name: m for m in methods if m.side == "agent" and m.is_request}
    classes = {c.name: c for t in types for c in t.classes}
    unions = {t.name: t.classes for t in types if t.kind is DefKind.UNION}
    sessions: list[tuple[str, str]] = []
    for wire_name, method in sorted(table.items()):
        result = classes.get(method.result_type or "")
        if wire_name in CREATES and result is not None and _session_field(result) == "session_id":
            sessions.append((wire_name, "CREATES"))
            continue
        params = unions.get(method.params_type) or tuple(filter(None, [classes.get(method.params_type)]))
        if not params or any(_session_field(c) != "session_id" for c in params):
            continue  # the runtime reads ``params.session_id``
        sessions += [(wire_name, use) for use, names in USES if wire_name in names]
    if not any(use in ("CREATES", "OPENS") for _, use in sessions):
        sessions = []  # no request opens a session: none can be checked against the open ones
    return AgentDefaults(
        initialize=_initialize(table.get("initialize"), classes),
        session_new=_session_new(table.get("session/new"), classes),
        sessions=tuple(sessions),
    )


def _initialize(method: Method | None, classes: Mapping[str, ClassDef]) -> tuple[str, str, str] | None:
    """``initialize``'s result, its field naming the agent and that field's class, when the result
    needs nothing but the protocol version and that field, and the class a name and a version."""
    result = classes.get(method.result_type or "") if method is not None else None
    if result is None:
        return None
    info = next((f for name in INFO_FIELDS for f in result.fields if f.wire_name == name), None)
    kind = info.type.inner if info is not None and isinstance(info.type, Nullable) else info.type if info else None
    implementation = classes.get(kind.name) if isinstance(kind, Ref) else None
    if info is None or implementation is None or result.tags:
        return None
    needed = {f.wire_name for f in result.fields if f.required}
    named = {f.wire_name for f in implementation.fields if f.required}
    has = {f.wire_name for f in implementation.fields}
    if needed - {"protocolVersion", info.wire_name} or named - {"name", "version"} or not {"name", "version"} <= has:
        return None
    return result.name, info.py_name, implementation.name


def _session_new(method: Method | None, classes: Mapping[str, ClassDef]) -> tuple[str, str] | None:
    """``session/new``'s result and its session id field, when the result needs nothing else."""
    result = classes.get(method.result_type or "") if method is not None else None
    if result is None or result.tags or {f.wire_name for f in result.fields if f.required} != {"sessionId"}:
        return None
    field = _session_field(result)
    return (result.name, field) if field is not None else None


def _session_field(cls: ClassDef) -> str | None:
    """The Python name of the class's required ``sessionId`` field; None: it has none."""
    return next((f.py_name for f in cls.fields if f.wire_name == "sessionId" and f.required), None)
