"""What the session module can offer for a schema: which ``session/update`` variants it has, and
which of their fields the session state and the tool-call tracker read.

Its types come from the method table: the params type of the ``session/update`` notification
(``SessionNotification``), its one field of a tagged union type (``update: SessionUpdate``), and
the ``$def`` the union's ``tool_call_update`` variant is made of (``ToolCallUpdate``, what a
permission request names). A schema with ``session/update`` but without one of these gets a
warning naming what is missing, and a session module without what needs it.

The module's code is written against the bundled schema's updates; each part is emitted only
when the schema has what it reads (a variant, by its tag, and the fields named here), so an
older release gets a smaller :class:`SessionState` and maybe no tracker, never code that fails.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..diagnostics import Diagnostic, warning
from .calls import TYPING_NAMES, annotation_names
from .classes import ClassDef, Field
from .decisions import Dispatch
from .naming import import_order
from .typedefs import DefKind, TypeDef
from .types import Nullable, Ref


class Method(Protocol):
    """What this module reads of a :class:`acpgen.model.spec.Method` (spec.py imports this module)."""

    @property
    def wire_name(self) -> str: ...
    @property
    def py_name(self) -> str: ...
    @property
    def params_type(self) -> str: ...
    @property
    def pointer(self) -> str: ...
    @property
    def is_request(self) -> bool: ...

#: The notification whose params the module folds and sends.
UPDATE_METHOD = "session/update"
#: The tag of the update variant that changes a tool call, made of the type a permission request names.
TOOL_CALL_UPDATE = "tool_call_update"

#: What each part of the state reads: the tag of the update and the fields it needs.
PARTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "user_message": ("user_message_chunk", ("content",)),
    "agent_message": ("agent_message_chunk", ("content",)),
    "agent_thought": ("agent_thought_chunk", ("content",)),
    "tool_call": ("tool_call", ("tool_call_id", "title")),
    "tool_call_update": ("tool_call_update", ("tool_call_id",)),
    "plan": ("plan", ("entries",)),
    "available_commands": ("available_commands_update", ("available_commands",)),
    "current_mode": ("current_mode_update", ("current_mode_id",)),
    "config_options": ("config_option_update", ("config_options",)),
    "session_info": ("session_info_update", ()),
    "usage": ("usage_update", ()),
}

#: The fields whose annotations the module prints, by part.
PRINTED = {
    "user_message": ("content",),
    "plan": ("entries",),
    "available_commands": ("available_commands",),
    "current_mode": ("current_mode_id",),
    "config_options": ("config_options",),
    "tool_call": ("status",),
}


@dataclass(frozen=True)
class SessionUpdates:
    """The ``SessionUpdate`` variants a schema has, by part (see :data:`PARTS`)."""

    notification: str | None  # the params class of session/update: SessionNotification
    union: str | None  # SessionUpdate
    parts: dict[str, ClassDef]  # part -> the variant class that carries it
    tool_call_update_class: str | None  # the ToolCallUpdate $def, what a permission request names
    update_field: str = "update"  # the notification's field of the union type
    sender: str = "session_update"  # the proxy method that sends the notification (its py_name)

    def has(self, part: str) -> bool:
        return part in self.parts

    def cls(self, part: str) -> str:
        return self.parts[part].name

    def field(self, part: str, name: str) -> bool:
        """The part's variant has the field ``name``."""
        return part in self.parts and any(f.py_name == name for f in self.parts[part].fields)

    def _field(self, part: str, name: str) -> Field:
        return next(f for f in self.parts[part].fields if f.py_name == name)

    def annotation(self, part: str, name: str) -> str:
        """The annotation of the part's field ``name``, without ``| None``."""
        expr = self._field(part, name).type
        return (expr.inner if isinstance(expr, Nullable) else expr).annotation

    def wire_keys(self, part: str) -> tuple[str, ...]:
        """The wire names of the part's fields, its tag aside: what a patch of it may replace."""
        return tuple(sorted(f.wire_name for f in self.parts[part].fields))

    def placeholders(self, part: str) -> tuple[str, ...]:
        """The required string fields of ``part``'s variant besides its id, which a tool call
        first seen in a ``tool_call_update`` gets empty (its title)."""
        return tuple(f.py_name for f in self.parts[part].fields if f.required and f.py_name != "tool_call_id")

    def placeholder_arguments(self, part: str) -> list[str]:
        return [f'{name}=""' for name in self.placeholders(part)]

    @property
    def tool_calls(self) -> bool:
        """The state can fold tool calls: both variants, every placeholder a string."""
        return (
            self.has("tool_call")
            and self.has("tool_call_update")
            and all(self.annotation("tool_call", n) == "str" for n in self.placeholders("tool_call"))
        )

    @property
    def tracker(self) -> bool:
        """The schema has what the tool-call tracker sends: both variants, with a status."""
        return self.tool_calls and self.field("tool_call", "status") and self.field("tool_call_update", "status")

    @property
    def literal(self) -> bool:
        """A printed annotation is an inline ``Literal[...]``."""
        return any(
            "Literal" in annotation_names(self._field(part, name).type)
            for part, fields in PRINTED.items()
            for name in fields
            if self.field(part, name) and (part != "tool_call" or self.tracker)
        )

    @property
    def imports(self) -> tuple[str, ...]:
        """The model names the module imports, in import order."""
        folded = {part for part in self.parts if self.tool_calls or part not in ("tool_call", "tool_call_update")}
        names = {self.parts[part].name for part in folded}
        names |= {self.notification} if self.notification else set()
        names |= {self.tool_call_update_class} if self.tracker and self.tool_call_update_class else set()
        for part, fields in PRINTED.items():
            for name in fields:
                if self.field(part, name) and (part != "tool_call" or self.tracker):
                    names |= annotation_names(self._field(part, name).type)
        return import_order(names - TYPING_NAMES)

    @property
    def folded(self) -> dict[str, str]:
        """The variant class the state folds each part with, in the order it tries them: the
        tool calls' two only when it can fold tool calls."""
        return {
            part: cls.name for part, cls in self.parts.items() if self.tool_calls or part not in ("tool_call", "tool_call_update")
        }

    @property
    def target(self) -> str | None:
        """The type the tracker names a tool call by for a permission request, when it has one."""
        return self.tool_call_update_class if self.tracker else None

    @property
    def aliases(self) -> tuple[tuple[str, str], ...]:
        """The types the runtime's session state and tracker annotate with, as this schema names
        them (``Any`` for a part it lacks): (alias, annotation), for ``_session_data``."""
        def printed(part: str, name: str, missing: str = "Any") -> str:
            return self.annotation(part, name) if self.field(part, name) else missing

        aliases = (
            ("Notification", self.notification or "Any"),
            ("Content", printed("user_message", "content")),
            ("ToolCall", self.cls("tool_call") if self.tool_calls else "Any"),
            ("ToolCallStatus", self.annotation("tool_call", "status") if self.tracker else "Any"),
            ("ToolCallTarget", self.target or "Any"),
            ("PlanEntries", printed("plan", "entries", "list[Any]")),
            ("AvailableCommands", printed("available_commands", "available_commands", "list[Any]")),
            ("ModeId", printed("current_mode", "current_mode_id")),
            ("ConfigOptions", printed("config_options", "config_options", "list[Any]")),
            ("SessionInfo", self.cls("session_info") if self.has("session_info") else "Any"),
            ("Usage", self.cls("usage") if self.has("usage") else "Any"),
        )
        return tuple((name, qualified(annotation, self.imports)) for name, annotation in aliases)


def qualified(annotation: str, names: Iterable[str]) -> str:
    """``annotation`` with each of the models' ``names`` in it read from the module ``models``
    (``list[models.PlanEntry]``), so that no name of the schema's meets a name of the module
    that prints it; a name inside a string (a ``Literal``'s value) stays as it is."""
    wanted = set(names)
    out, end = [], 0
    for token in tokenize.generate_tokens(io.StringIO(annotation).readline):
        if token.type == tokenize.NAME and token.string in wanted:
            start = token.start[1]
            out += [annotation[end:start], "models.", token.string]
            end = token.end[1]
    return "".join(out) + annotation[end:]


NONE = SessionUpdates(None, None, {}, None)


def session_updates(types: tuple[TypeDef, ...], methods: tuple[Method, ...]) -> tuple[SessionUpdates, tuple[Diagnostic, ...]]:
    """What the session module offers, read from the method table (see the module docstring),
    and a warning when ``session/update`` lacks a structure the module is built on."""
    method = next((m for m in methods if m.wire_name == UPDATE_METHOD and not m.is_request), None)
    if method is None:
        return NONE, ()
    by_name = {t.name: t for t in types}
    params = by_name.get(method.params_type)
    if params is None or params.kind is not DefKind.CLASS:
        return NONE, (_missing(method, f"its params type {method.params_type} is not an object type"),)
    own = params.classes[0].fields
    unions = [(f, by_name[f.type.name]) for f in own if isinstance(f.type, Ref) and _tagged_union(by_name.get(f.type.name))]
    if len(unions) != 1:
        found = f"{len(unions)} fields" if unions else "no field"
        return NONE, (_missing(method, f"its params type {params.name} has {found} of a tagged union type"),)
    if not any(f.py_name == "session_id" for f in own):
        return NONE, (_missing(method, f"its params type {params.name} has no sessionId"),)
    (field, union), = unions
    variants = {c.tags[0].value: c for c in union.classes if len(c.tags) == 1}
    parts = {}
    for part, (tag, needed) in PARTS.items():
        cls = variants.get(tag)
        if cls is not None and set(needed) <= {f.py_name for f in cls.fields}:
            parts[part] = cls
    problems: tuple[Diagnostic, ...] = ()
    tool_call_update = None
    if TOOL_CALL_UPDATE in variants:
        tool_call_update = _made_of(variants[TOOL_CALL_UPDATE], union, by_name)
        if tool_call_update is None:
            problems = (_missing(method, f"{union.name}'s {TOOL_CALL_UPDATE!r} variant is made of no object type of"
                                         " its own (what session/request_permission names)"),)
    return SessionUpdates(params.name, union.name, parts, tool_call_update, field.py_name, method.py_name), problems


def _tagged_union(typedef: TypeDef | None) -> bool:
    return typedef is not None and typedef.kind is DefKind.UNION and isinstance(typedef.decision, Dispatch)


def _made_of(variant: ClassDef, union: TypeDef, by_name: dict[str, TypeDef]) -> str | None:
    """The object ``$def`` whose fields, required or not, are the variant's: the ``allOf`` it is made
    of (``ToolCall`` has the same fields as ``ToolCallUpdate``, but requires a title), or for an
    inline variant the one object type with its fields."""
    keys = {(f.wire_name, f.required) for f in variant.fields}

    def alike(names: Iterable[str]) -> list[str]:
        return [
            name for name in names
            if (t := by_name.get(name)) is not None and t.kind is DefKind.CLASS
            and {(f.wire_name, f.required) for f in t.classes[0].fields} == keys
        ]

    found = alike(union.refs) or alike(sorted(by_name))  # an inline variant (before v0.4) is alike one
    return found[0] if len(found) == 1 else None


def _missing(method: Method, what: str) -> Diagnostic:
    return warning(method.pointer, f"{UPDATE_METHOD}: {what}; the session module leaves out what needs it")
