"""The JSON Schema draft 2020-12 meta-schema as one schema, without dynamic references.

The official meta-schema is an ``allOf`` of seven vocabulary schemas that point back at the whole
through ``$dynamicRef: "#meta"``. jsonschema spends most of a validation resolving those dynamic
references: about a second for the ACP schema, the slowest step of a run on new schema bytes.

A schema acpgen reads is validated as a plain draft 2020-12 schema (its own ``$schema`` is not
followed), so every ``#meta`` resolves to the top of the official meta-schema. Merging the
vocabularies' keywords into one schema and writing each ``$dynamicRef: "#meta"`` as ``$ref: "#"``
therefore accepts and rejects the same documents with the same messages at the same places (a
reference into a vocabulary's ``$defs`` points into the merged ``$defs``); the
tests compare the two on corpus releases and on hundreds of broken documents. It validates about
four times faster. If jsonschema ever ships a meta-schema of another shape, the official one is used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from .pointers import SCHEMA_MAPS

#: Keywords that identify a vocabulary schema rather than constrain the instance.
_IDENTITY = frozenset({"$schema", "$id", "$vocabulary", "$dynamicAnchor", "title", "$comment"})


class _Unexpected(Exception):
    """The official meta-schema is not of the shape this module knows how to merge."""


@functools.cache
def meta_schema() -> dict[str, Any]:
    """The meta-schema acpgen validates with: the merged one, else the official one."""
    import jsonschema
    import jsonschema_specifications

    official: dict[str, Any] = jsonschema.Draft202012Validator.META_SCHEMA
    try:
        return merged_meta_schema(official, jsonschema_specifications.REGISTRY.contents)
    except (_Unexpected, LookupError):
        return official


def merged_meta_schema(official: dict[str, Any], contents: Callable[[str], Any]) -> dict[str, Any]:
    """``official`` with its ``allOf`` vocabularies (fetched by URI through ``contents``) merged in."""
    base = official["$id"].rsplit("/", 1)[0] + "/"
    parts = [official] + [contents(base + entry["$ref"]) for entry in official.get("allOf", ())]
    merged: dict[str, Any] = {"$schema": official["$schema"]}
    for part in parts:
        for key, value in part.items():
            if key in _IDENTITY or (part is official and key == "allOf"):
                continue
            value = _static(value, key)
            if key in ("properties", "$defs"):
                target = merged.setdefault(key, {})
                for name, schema in value.items():
                    if name in target and target[name] != schema:
                        raise _Unexpected(f"{key}/{name} differs between vocabularies")
                    target[name] = schema
            elif key in merged and merged[key] != value:
                raise _Unexpected(f"{key} differs between vocabularies")
            else:
                merged[key] = value
    for ref in _refs(merged):
        name = ref.removeprefix("#/$defs/")
        if ref != "#" and (name == ref or name not in merged.get("$defs", {})):
            raise _Unexpected(f"$ref {ref!r}")
    return merged


#: A reference from the official meta-schema into a vocabulary's ``$defs``
#: (``meta/validation#/$defs/stringArray``, for the deprecated ``dependencies``).
_VOCABULARY_REF = re.compile(r"meta/[a-z-]+#(/\$defs/[A-Za-z0-9]+)")


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def _static(node: Any, key: str = "") -> Any:
    """``node`` (the value of keyword ``key``) with ``$dynamicRef: "#meta"`` made ``$ref: "#"``."""
    if key in SCHEMA_MAPS and isinstance(node, dict):
        return {name: _static(schema) for name, schema in node.items()}
    if isinstance(node, list):
        return [_static(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for name, value in node.items():
        if name == "$dynamicRef":
            if value != "#meta" or "$ref" in node:
                raise _Unexpected(f"$dynamicRef {value!r}")
            out["$ref"] = "#"
        elif name == "$ref" and isinstance(value, str) and _VOCABULARY_REF.fullmatch(value):
            out["$ref"] = "#" + value.partition("#")[2]  # the merged $defs hold the vocabulary's
        elif name == "$dynamicAnchor":
            raise _Unexpected("a nested $dynamicAnchor")
        else:
            out[name] = _static(value, name)
    return out
