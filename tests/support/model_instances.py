"""Hypothesis strategies for JSON instances of a JSON Schema (the subset ACP schemas use).

Written from the schema alone (not from acpgen's type model), so the round-trip tests do not
check acpgen against itself. Every instance a test uses is also checked by ``jsonschema``.
Objects get, besides their properties, unknown properties (``x-...``) a newer peer might send.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import strategies as st

BOUNDS = {
    "int8": (-(2**7), 2**7 - 1),
    "uint8": (0, 2**8 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}

json_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=6)
any_json = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
extra_keys = st.dictionaries(st.sampled_from(["x-ext", "x-vendor", "zz_new"]), any_json, max_size=2)


class InstanceStrategies:
    """Strategies for the ``$defs`` of one schema document."""

    def __init__(self, document: dict[str, Any], max_depth: int = 5) -> None:
        self.defs: dict[str, Any] = document.get("$defs", {})
        self.max_depth = max_depth
        #: (``$ref``, depth) -> its strategy: built once, so a type many others refer to is one
        #: strategy whose properties hypothesis works out once, not one per place it is used.
        self._refs: dict[tuple[str, int], st.SearchStrategy[Any]] = {}

    def for_def(self, name: str) -> st.SearchStrategy[Any]:
        return self.node({"$ref": f"#/$defs/{name}"}, 0)

    def resolve(self, ref: str) -> Any:
        return self.defs[ref.split("/")[-1]]

    # object shapes: a node is a list of alternatives, each (properties, required)

    def shapes(self, node: Any) -> list[tuple[dict[str, Any], set[str]]]:
        if "$ref" in node:
            return self.shapes(self.resolve(node["$ref"]))
        parts: list[list[tuple[dict[str, Any], set[str]]]] = []
        for item in node.get("allOf", []):
            parts.append(self.shapes(item))
        parts.append([(dict(node.get("properties", {})), set(node.get("required", [])))])
        for key in ("oneOf", "anyOf"):
            if key in node:
                parts.append([s for variant in node[key] for s in self.shapes(variant)])
        result = []
        for combo in itertools.product(*parts):
            props: dict[str, Any] = {}
            required: set[str] = set()
            for p, r in combo:
                for k, v in p.items():
                    # a variant's const tag wins over the shared property it narrows
                    if k not in props or (isinstance(v, dict) and "const" in v):
                        props[k] = v
                required |= r
            result.append((props, required))
        return result

    def is_object(self, node: Any) -> bool:
        if not isinstance(node, dict):
            return False
        if "$ref" in node:
            return self.is_object(self.resolve(node["$ref"]))
        if "properties" in node:
            return True
        if any(self.is_object(p) for p in node.get("allOf", [])):
            return True
        return any(key in node and all(self.is_object(v) for v in node[key]) for key in ("oneOf", "anyOf"))

    def obj(self, props: dict[str, Any], required: set[str], depth: int) -> st.SearchStrategy[Any]:
        fixed = {k: self.node(props[k], depth + 1) for k in sorted(required) if k in props}
        optional = {k: self.node(v, depth + 1) for k, v in sorted(props.items()) if k not in required}
        if depth >= self.max_depth:
            optional = {}
        base = st.fixed_dictionaries(fixed, optional=optional)

        def add_extra(value: dict[str, Any]) -> st.SearchStrategy[Any]:
            return extra_keys.map(lambda extra: {**extra, **value})

        return base.flatmap(add_extra)

    def node(self, node: Any, depth: int) -> st.SearchStrategy[Any]:
        if node is True or node == {} or (isinstance(node, dict) and not {k for k in node if not k.startswith("x-")} - {"description", "title"}):
            return any_json
        if "$ref" in node and len(node) == 1:
            key = (node["$ref"], depth)
            if key not in self._refs:
                self._refs[key] = self.node(self.resolve(node["$ref"]), depth)
            return self._refs[key]
        if "const" in node:
            return st.just(node["const"])
        if "enum" in node:
            return st.sampled_from(node["enum"])
        if self.is_object(node):
            shapes = self.shapes(node)
            return st.one_of([self.obj(p, r, depth) for p, r in shapes])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return st.one_of([self.node(v, depth) for v in node[key]])
        if "allOf" in node:
            return self.node(node["allOf"][0], depth)
        if "$ref" in node:
            return self.node(self.resolve(node["$ref"]), depth)
        types = node.get("type")
        if isinstance(types, list):
            return st.one_of([self.node({**node, "type": t}, depth) for t in types])
        if types == "null":
            return st.none()
        if types == "boolean":
            return st.booleans()
        if types == "string":
            if node.get("format") == "uri":
                return st.sampled_from(["file:///a.txt", "https://example.com/x?y=1", "urn:isbn:0451450523"])
            return st.text(max_size=10)
        if types == "integer":
            low, high = BOUNDS.get(node.get("format", ""), (None, None))
            if "minimum" in node:
                low = node["minimum"] if low is None else max(low, node["minimum"])
            if "maximum" in node:
                high = node["maximum"] if high is None else min(high, node["maximum"])
            edges = [v for v in (low, high) if v is not None]
            return st.integers(low, high) | st.sampled_from(edges or [0])
        if types == "number":
            return st.floats(allow_nan=False, allow_infinity=False) | st.integers(-1000, 1000)
        if types == "array":
            items = node.get("items", True)
            if depth >= self.max_depth:
                return st.just([])
            return st.lists(self.node(items, depth + 1), max_size=3)
        if types == "object":
            extra = node.get("additionalProperties", True)
            values = any_json if extra is True else self.node(extra, depth + 1)
            if depth >= self.max_depth:
                return st.just({})
            return st.dictionaries(st.text(max_size=6), values, max_size=3)
        raise ValueError(f"no strategy for {node!r}")
