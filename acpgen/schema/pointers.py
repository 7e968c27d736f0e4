"""JSON pointers and local ``$ref`` values inside a schema document."""

from __future__ import annotations

from typing import Any

#: Keywords whose value maps names (not keywords) to subschemas.
SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})

_DEFS = "#/$defs/"


def unescape(token: str) -> str:
    """One reference token of a JSON pointer, decoded (``~1`` is ``/``, ``~0`` is ``~``)."""
    return token.replace("~1", "/").replace("~0", "~")


def def_name(ref: Any) -> str | None:
    """The ``$def`` a ref names (``#/$defs/Session~1Id`` -> ``Session/Id``); None for any other ref."""
    if isinstance(ref, str) and ref.startswith(_DEFS) and "/" not in ref[len(_DEFS) :]:
        return unescape(ref[len(_DEFS) :])
    return None


def resolve_ref(document: Any, ref: str) -> Any | None:
    """Resolve a local ``#/...`` ref; None when it is external or points nowhere."""
    if not ref.startswith("#"):
        return None
    node = document
    fragment = ref[1:]
    if not fragment:
        return node
    if not fragment.startswith("/"):
        return None
    for token in fragment[1:].split("/"):
        token = unescape(token)
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node
