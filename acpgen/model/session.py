"""What the session module can offer for a schema: which ``session/update`` variants it has, and
which of their fields the session state and the tool-call tracker read.

The module's code is written against the bundled schema's updates; each part is emitted only
when the schema has what it reads (a variant, by its tag, and the fields named here), so an
older release gets a smaller :class:`SessionState` and maybe no tracker, never code that fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from .calls import annotation_names
from .classes import ClassDef, Field
from .decisions import Dispatch
from .naming import import_order
from .typedefs import DefKind, TypeDef
from .types import Nullable, Ref

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
        return import_order(names - {"Literal"})


def session_updates(types: tuple[TypeDef, ...]) -> SessionUpdates:
    by_name = {t.name: t for t in types}
    notification = by_name.get("SessionNotification")
    union = by_name.get("SessionUpdate")
    if (
        notification is None
        or union is None
        or union.kind is not DefKind.UNION
        or not isinstance(union.decision, Dispatch)
        or not any(f.py_name == "update" and f.type == Ref("SessionUpdate") for f in notification.classes[0].fields)
    ):
        return SessionUpdates(None, None, {}, None)
    variants = {c.tags[0].value: c for c in union.classes if len(c.tags) == 1}
    parts = {}
    for part, (tag, fields) in PARTS.items():
        cls = variants.get(tag)
        if cls is not None and set(fields) <= {f.py_name for f in cls.fields}:
            parts[part] = cls
    update = by_name.get("ToolCallUpdate")
    tool_call_update = "ToolCallUpdate" if update is not None and update.kind is DefKind.CLASS else None
    return SessionUpdates("SessionNotification", "SessionUpdate", parts, tool_call_update)
