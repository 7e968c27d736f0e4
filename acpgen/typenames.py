"""Names of generated classes and fields, and the user's names file that pins or overrides them.

The rules (documented in README.md, section "Generated names"):

* A ``$def`` keeps its name.
* A union variant the schema writes inline is named from what identifies it on the wire: its tag
  value, else its ``title``, else the one ``$def`` it extends, in PascalCase
  (``agent_message_chunk`` -> ``AgentMessageChunk``). A variant of a variant joins both
  (``form`` + ``Session`` -> ``FormSession``).
* A variant with none of those is named from the properties it requires that not every object
  variant of its union requires (``{id, result}`` beside ``{id, error}`` -> ``Result``); when it
  has none, or requires exactly what another variant requires, it is an error.
* When that name is taken (by a ``$def``, a name the generated code uses, or another variant),
  every variant wanting it gets the union's name appended (``ToolCall`` -> ``ToolCallSessionUpdate``).
* Nothing depends on where a definition or variant sits in the schema.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from .diagnostics import DiagnosticError, error
from .naming import python_identifier, snake_case

#: Names the generated modules use themselves; a type or variant never takes one of them.
RESERVED_TYPE_NAMES = frozenset(
    {
        "Any", "Callable", "ClassVar", "Literal", "Optional", "Union", "dataclass", "field", "annotations",
        "DecodeError", "decode", "encode", "str", "int", "float", "bool", "list", "dict", "tuple", "type",
        "object", "set", "frozenset", "len", "isinstance", "classmethod", "staticmethod", "property", "super",
        "Exception", "ValueError", "TypeError", "KeyError", "NoneType", "print", "enumerate", "id", "hash",
    }
)

#: Field names a class uses itself; a property with one of these names gets a ``_`` suffix.
RESERVED_FIELD_NAMES = frozenset(
    {"extra", "to_json", "from_json", "self", "cls", "_nulls", "Any", "Optional", "Union", "Literal", "ClassVar",
     "str", "int", "float", "bool", "list", "dict", "field", "dataclass", "_codec"}
)


def pascal_case(label: str) -> str:
    """``agent_message_chunk`` -> ``AgentMessageChunk``, ``searchAndReplace`` -> ``SearchAndReplace``."""
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", label) if p]
    return "".join(p[:1].upper() + p[1:] for p in parts)


def field_name(wire_name: str) -> str:
    """``sessionId`` -> ``session_id``, ``_meta`` -> ``meta``, ``class`` -> ``class_``, ``1st`` -> ``_1st``."""
    stripped = wire_name.lstrip("_") or wire_name
    return python_identifier(snake_case(stripped), RESERVED_FIELD_NAMES)


def type_name(def_name: str) -> str:
    """The Python name of a ``$def``: its name, made an identifier, never a reserved name."""
    return python_identifier(def_name, RESERVED_TYPE_NAMES)


def unique_field_names(wire_names: list[str], taken: frozenset[str] = frozenset()) -> dict[str, str]:
    """Python names for one class's properties; a clash gets ``_`` suffixes, in wire-name order."""
    result: dict[str, str] = {}
    used = set(taken)
    for wire in sorted(wire_names):
        name = field_name(wire)
        while name in used:
            name += "_"
        used.add(name)
        result[wire] = name
    return result


def load_names_file(path: Path | None) -> dict[str, str]:
    """Read a names file: a JSON object ``{"Union/label": "ClassName"}``. Raises DiagnosticError."""
    if path is None:
        return {}
    source = path.name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DiagnosticError([error("", f"cannot read names file: {exc.strerror or exc}").in_source(source)])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DiagnosticError([error("", f"names file is not valid JSON: {exc}").in_source(source)])
    if not isinstance(data, dict):
        raise DiagnosticError([error("", "names file must be a JSON object of \"Union/label\": \"Name\"").in_source(source)])
    problems = []
    for key, value in data.items():
        if not isinstance(value, str) or not value.isidentifier() or value in RESERVED_TYPE_NAMES:
            problems.append(error("", f"names file: {key!r} maps to {value!r}, which is not a usable class name"))
    if problems:
        raise DiagnosticError([p.in_source(source) for p in problems])
    return dict(data)


def variant_names(
    wanted: dict[tuple[str, tuple[str, ...]], str],
    taken: frozenset[str],
    overrides: dict[str, str],
    names_source: str = "names file",
) -> dict[tuple[str, tuple[str, ...]], str]:
    """Name every generated variant class.

    ``wanted`` maps (union name, labels) to nothing in particular (its values are ignored); the
    result maps each to its class name. ``taken`` holds the ``$def`` names.
    """
    keys = sorted(wanted)
    key_text = {k: "/".join((k[0], *k[1])) for k in keys}
    unknown = sorted(set(overrides) - set(key_text.values()))
    if unknown:
        raise DiagnosticError(
            [error("", f"names file: {u!r} names no generated class (keys look like 'SessionUpdate/tool_call')")
             .in_source(names_source) for u in unknown]
        )
    pinned = {k: overrides[key_text[k]] for k in keys if key_text[k] in overrides}
    candidates: dict[str, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)
    for k in keys:
        if k not in pinned:
            candidates[type_name(pascal_case("_".join(k[1])) or "Variant")].append(k)
    result = dict(pinned)
    blocked = taken | RESERVED_TYPE_NAMES | set(pinned.values())
    for name, owners in sorted(candidates.items()):
        if len(owners) == 1 and name not in blocked:
            result[owners[0]] = name
        else:
            for k in owners:
                result[k] = name + k[0]
    by_name: dict[str, list[str]] = defaultdict(list)
    for k, name in result.items():
        by_name[name].append(key_text[k])
    for name in taken:
        by_name[name].append(name)
    clashes = sorted((name, sorted(owners)) for name, owners in by_name.items() if len(owners) > 1)
    if clashes:
        raise DiagnosticError(
            [error("", f"two types would be named {name!r} ({', '.join(owners)}); pin one in a names file")
             .in_source(names_source if any(o in overrides for o in owners) else "schema") for name, owners in clashes]
        )
    return result
