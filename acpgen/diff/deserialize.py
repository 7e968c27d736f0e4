"""The ``x-deserialize-*`` annotations gained and lost, weighed by what the generated decoders do
with each (docs/reference/models.md, Leniency).

The decoders read them on a class's properties (:func:`acpgen.model.exprs.leniency` and
``_skipping_invalid_items``), and only where they can act:

* ``x-deserialize-default-on-error``: a bad value of an optional field becomes absent, of a
  required array or map the empty one; a required value of any other type stays an error;
* ``x-deserialize-default-on-null``: a ``null`` of an array or map field reads as the empty value,
  unless the field is optional and may be ``null`` (then the ``null`` is kept);
* ``x-deserialize-skip-invalid-items``: a bad item of an array is dropped (a field's, or an array
  nested in one: removed from one that is not a field's, it is taken to break old senders).

So a removed annotation breaks old senders only where the decoder relied on it and a message it
repaired is now refused; where it did nothing, or the value is still accepted (a ``null`` the field
allows anyway, a bad item the field's ``default-on-error`` still catches), it breaks nobody.
"""

from __future__ import annotations

import json
from typing import Any

from ..model.classes import ClassDef, Field
from .comparison import Comparison
from .facts import Facts

ON_ERROR = "x-deserialize-default-on-error"
ON_NULL = "x-deserialize-default-on-null"
SKIP_INVALID = "x-deserialize-skip-invalid-items"

#: A field the annotation sits on, by its JSON pointer: its class and the field.
Located = tuple[ClassDef, Field]


def compare_annotations(c: Comparison) -> None:
    old_defs, new_defs = c.old.schema.defs, c.new.schema.defs
    old_fields, new_fields = _fields(c.old), _fields(c.new)
    for name in sorted(old_defs.keys() & new_defs.keys()):
        c.owner = name
        before, after = _annotations(old_defs[name], name), _annotations(new_defs[name], name)
        t = c.new.types.get(f"defs/{name}")
        tier = c.tier(c.new, t) if t is not None else "stable"
        for where, key, text in sorted(after - before):
            found = new_fields.get(where)
            effect = _effect(found, key)
            python = f"{_named(found)}: {effect}" if found is not None and effect else f"none: {_idle(found, key)}"
            c.add("annotation-added", where, f"{text} added", "nobody", tier, python)
        for where, key, text in sorted(before - after):
            _removed(c, where, key, text, tier, old_fields.get(where), new_fields.get(where))


def _removed(c: Comparison, where: str, key: str, text: str, tier: str, old: Located | None,
             new: Located | None) -> None:
    effect = _effect(old, key)
    if old is None and key == SKIP_INVALID:  # an array's items inside a property: read there too
        c.add("annotation-removed", where, f"{text} removed", "sender", tier,
              "the generated decoder dropped a bad item of the array there; it refuses it now", True)
        return
    if old is None or effect is None:
        c.add("annotation-removed", where, f"{text} removed", "nobody", tier, f"none: {_idle(old, key)}")
        return
    if new is None:
        c.add("annotation-removed", where, f"{text} removed", "nobody", tier,
              f"none: the field {_named(old)} is gone (see its own record)")
        return
    field = new[1]
    if key == ON_NULL and field.nullable:
        c.add("annotation-removed", where, f"{text} removed", "nobody", tier,
              f"{_named(new)}: a null is kept as None (was: {effect})", True)
    elif key == SKIP_INVALID and field.salvage_with is not None:
        c.add("annotation-removed", where, f"{text} removed", "nobody", tier,
              f"{_named(new)}: a bad item drops the whole value ({ON_ERROR}) (was: {effect})", True)
    else:
        c.add("annotation-removed", where, f"{text} removed", "sender", tier,
              f"{_named(new)}: the decoder refuses what it repaired (was: {effect})", True)


def _effect(found: Located | None, key: str) -> str | None:
    """What the generated decoder does because of ``key`` on the field ``found`` (None: nothing)."""
    if found is None:
        return None
    field = found[1]
    if key == ON_ERROR and field.salvage_with is not None:
        return "a bad value " + ("becomes absent" if field.salvage_with == "None" else f"reads as {field.salvage_with}")
    if key == ON_NULL and field.null_read_as_empty is not None:
        return f"a null reads as {field.null_read_as_empty}"
    if key == SKIP_INVALID and field.skips_invalid_items:
        return "a bad item is dropped"
    return None


def _idle(found: Located | None, key: str) -> str:
    """Why the generated decoders do nothing with ``key`` where it sits."""
    if found is None:
        return "the generated decoders read it on a class's property (skip-invalid-items: on any array)"
    if key == ON_ERROR:
        return f"the generated decoder keeps {_named(found)} an error when bad (a required value, not an array or map)"
    if key == ON_NULL:
        return f"the generated decoder keeps a null of {_named(found)} (not an array or map, or optional and nullable)"
    if key == SKIP_INVALID:
        return f"{_named(found)} is not an array"
    return "the generated decoders do not read it"


def _named(found: Located) -> str:
    cls, field = found
    return f"{cls.name}.{field.py_name}"


def _fields(facts: Facts) -> dict[str, Located]:
    """Each class field, by the place its property sits in the schema (``Name/properties/wire``,
    as :func:`_annotations` names it)."""
    found: dict[str, Located] = {}
    for t in facts.model.types:
        for cls in t.classes:
            if not cls.pointer.startswith("/$defs/"):
                continue
            for field in cls.fields:
                found.setdefault(f"{cls.pointer[len('/$defs/'):]}/properties/{field.wire_name}", (cls, field))
    return found


def _annotations(node: Any, name: str) -> set[tuple[str, str, str]]:
    """(where, annotation key, how it reads) for every ``x-deserialize-*`` key inside a $def."""
    found: set[tuple[str, str, str]] = set()

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and key.startswith("x-deserialize-"):
                    found.add((path, key, f"{key}: {json.dumps(item)}"))
                else:
                    walk(item, f"{path}/{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}/{index}")

    walk(node, name)
    return found
