"""One example of every ``session/update`` kind a schema defines: what a stub agent sends in a
turn asked for everything (``--all-updates``, or the prompt word ``everything``), so that a client
tested against it meets each kind its schema has, a kind added by a new release included.

Each example is built from the type model: the variant's tag, its required fields, and its
optional ones at the first two levels (a tool call's content and locations, a plan's entries),
each value the first fitting one of its type (a union's first variant, but a text content block
where there is one; a set's first value), a string named after its field (ids shared across
kinds, so a ``tool_call_update`` updates the ``tool_call`` before it). The state updates that a v2
turn sends of itself (``state_update``) are left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from .classes import ClassDef
from .spec import Method, StubValue
from .stubs import update_variants
from .typedefs import DefKind, TypeDef
from .types import (
    AnyValue,
    JsonKind,
    ListOf,
    Literals,
    MapOf,
    Nullable,
    Ref,
    Scalar,
    TypeExpr,
)

__all__ = ["TURN_UPDATES", "every_update", "update_examples"]

#: The kinds a turn reports itself (v2's state updates): not among the examples.
TURN_UPDATES = ("state_update",)
#: How deep optional fields are filled in (0: the update itself).
_OPTIONAL_DEPTH = 1
#: How deep an example goes at all (a type that refers to itself ends there).
_MAX_DEPTH = 8
#: Strings by field name; others are ``"example <name>"``.
_STRINGS = {
    "toolCallId": "everything-tool-call",
    "terminalId": "everything-terminal",
    "messageId": "everything-message",
    "planId": "everything-plan",
    "compactionId": "everything-compaction",
    "title": "Everything the schema defines",
    "path": "/everything/hello.txt",
    "uri": "file:///everything/hello.txt",
    "text": "everything",
    "content": "Send one update of every kind",
    "currentModeId": "ask",
    "modeId": "ask",
    "mimeType": "text/plain",
    "currency": "USD",
    "updatedAt": "2026-01-01T00:00:00Z",
}
#: The value a set's example prefers, where it has it (a tool call that reads, in progress).
_PREFERRED_VALUES = ("read", "in_progress")
#: The tag value a union's example prefers, where it has it.
_PREFERRED_TAGS = ("text", "content", "select", "completed", "in_progress")


def update_examples(methods: tuple[Method, ...], types: tuple[TypeDef, ...]) -> tuple[tuple[str, str], ...]:
    """Each ``session/update`` kind of the schema and the JSON text of an example of it, in the
    schema's order (none: the schema has no such notification)."""
    defs = {t.name: t for t in types}
    classes = {c.name: c for t in types for c in t.classes}
    unions = {t.name: t for t in types if t.kind is DefKind.UNION}
    params = next((m.params_type for m in methods if m.wire_name == "session/update"), None)
    notification = classes.get(params or "")
    if notification is None:
        return ()
    builder = _Builder(defs, classes)
    return tuple((kind, json.dumps(builder.of_class(cls, 0), separators=(",", ":"), sort_keys=True))
                 for kind, cls in update_variants(notification, unions).items() if kind not in TURN_UPDATES)


def every_update(methods: tuple[Method, ...], types: tuple[TypeDef, ...]) -> StubValue:
    """The ``_stub_data`` value of the examples (:func:`update_examples`)."""
    return StubValue("EVERY_UPDATE", "An example of each session/update kind the schema defines (its JSON text), by"
                     " kind: what a turn asked for everything sends (the turn's own state updates aside).",
                     entries=update_examples(methods, types), annotation="dict[str, str]")


class _Builder:
    def __init__(self, defs: Mapping[str, TypeDef], classes: Mapping[str, ClassDef]) -> None:
        self.defs = defs
        self.classes = classes

    def of_class(self, cls: ClassDef, depth: int) -> dict[str, object]:
        value: dict[str, object] = {tag.wire_name: tag.value for tag in cls.tags}
        for field in cls.fields:
            if field.wire_name in value or field.wire_name.startswith("_"):
                continue
            if field.required or (depth <= _OPTIONAL_DEPTH and depth < _MAX_DEPTH):
                value[field.wire_name] = self.of(field.type, field.wire_name, depth + 1)
        return value

    def of(self, kind: TypeExpr, name: str, depth: int) -> object:
        if isinstance(kind, Nullable):
            return self.of(kind.inner, name, depth)
        if isinstance(kind, ListOf):
            return [self.of(kind.item, name, depth)] if depth < _MAX_DEPTH else []
        if isinstance(kind, (MapOf, AnyValue)):
            return {}
        if isinstance(kind, Literals):
            return next((v for v in _PREFERRED_VALUES if v in kind.values), kind.values[0])
        if isinstance(kind, Scalar):
            return _scalar(kind, name)
        if isinstance(kind, Ref):
            return self.of_ref(kind.name, name, depth)
        return {}

    def of_ref(self, ref: str, name: str, depth: int) -> object:
        found = self.defs.get(ref)
        if found is None or found.kind is DefKind.CLASS:
            cls = self.classes.get(ref) if found is None else found.classes[0]
            return self.of_class(cls, depth) if cls is not None and depth < _MAX_DEPTH else {}
        if found.kind is DefKind.UNION:
            tagged = [c for c in found.classes if c.tags]
            preferred = [c for tag in _PREFERRED_TAGS for c in tagged if c.tags[0].value == tag]
            if preferred or tagged:
                return self.of_class((preferred or tagged)[0], depth)
            return self.of(found.options[0], name, depth) if found.options else {}
        return self.of(found.target, name, depth) if found.target is not None else {}


def _scalar(kind: Scalar, name: str) -> object:
    if kind.kind is JsonKind.STRING:
        text = _STRINGS.get(name, f"example {name}")
        if kind.format in ("uri", "uri-reference") and ":" not in text:
            text = "file:///everything/" + name
        if kind.pattern is not None and re.search(kind.pattern, text) is None:
            text = "everything"
        return text
    if kind.kind is JsonKind.INTEGER:
        return int(kind.minimum) if kind.minimum is not None and kind.minimum > 1 else 1
    if kind.kind is JsonKind.NUMBER:
        return 1.0
    if kind.kind is JsonKind.BOOLEAN:
        return True
    return None
