"""Minimal valid JSON instances of schema types, built from the schema and checked by jsonschema.

Used to call every method of the table with params the schema accepts, independently of the
generated models (the oracle is the schema itself).
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import jsonschema

from support import BUNDLED

SCHEMA_PATH = BUNDLED


@functools.cache
def _document() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text())


def validator(name: str) -> jsonschema.protocols.Validator:
    document = _document()
    schema = {"$schema": document.get("$schema"), "$defs": document["$defs"], "$ref": f"#/$defs/{name}"}
    return jsonschema.Draft202012Validator(schema)


def is_valid(name: str, instance: Any) -> bool:
    return validator(name).is_valid(instance)


def minimal(name: str) -> Any:
    """The smallest instance of ``$defs/name`` this builder finds, checked valid against the schema."""
    instance = _build(_document()["$defs"][name], depth=0)
    errors = list(validator(name).iter_errors(instance))
    assert not errors, f"minimal {name} is invalid: {errors[0].message}"
    return copy.deepcopy(instance)


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node and len(node) <= 2:
        node = _document()["$defs"][node["$ref"].split("/")[-1]]
    return node


def _build(node: Any, depth: int) -> Any:
    if depth > 30:
        raise RecursionError("schema too deep for a minimal instance")
    if not isinstance(node, dict):
        return {}
    if "$ref" in node:
        target = _document()["$defs"][node["$ref"].split("/")[-1]]
        rest = {k: v for k, v in node.items() if k not in ("$ref", "description")}
        base = _build(target, depth + 1)
        if rest and isinstance(base, dict):
            extra = _build(rest, depth + 1)
            if isinstance(extra, dict):
                return {**base, **extra}
        return base
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    for key in ("oneOf", "anyOf"):
        if key in node:
            shared = {k: v for k, v in node.items() if k not in (key, "description", "discriminator")}
            for option in node[key]:
                option = _resolve(option) if isinstance(option, dict) else option
                if isinstance(option, dict) and option.get("type") == "null":
                    continue
                candidate = _build(option, depth + 1)
                if shared.get("properties") or shared.get("required"):
                    base = _build({**shared, "type": "object"}, depth + 1)
                    if isinstance(candidate, dict):
                        candidate = {**base, **candidate}
                if jsonschema.Draft202012Validator({"$defs": _document()["$defs"], **node}).is_valid(candidate):
                    return candidate
            return None
    if "allOf" in node:
        values = [_build(part, depth + 1) for part in node["allOf"]]
        if not all(isinstance(v, dict) for v in values):
            return values[-1]
        merged: dict[str, Any] = {}
        for value in values:
            merged.update(value)
        own = {k: v for k, v in node.items() if k != "allOf"}
        if own.get("properties") or own.get("required"):
            merged.update(_build(own, depth + 1))
        return merged
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        return {key: _build(props.get(key, {}), depth + 1) for key in node.get("required", [])}
    if kind == "array":
        return [_build(node.get("items", {}), depth + 1) for _ in range(node.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, node.get("minLength", 1))
    if kind == "integer":
        return max(0, node.get("minimum", 0))
    if kind == "number":
        return max(0, node.get("minimum", 0))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return {}
