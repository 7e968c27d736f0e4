"""Type expressions: what a schema that is not a named object says a value looks like.

:class:`ExprReader` reads a property's (or an alias's) schema into a
:data:`~acpgen.model.types.TypeExpr`: a scalar with its bounds, a set of ``const`` values, a list,
a map, a nullable value, a named type. A union or an object with properties written inline is
*lifted* out as a type of its own, named after its owner and the property
(``AgentRequestParams``); :meth:`ExprReader.lifted` lists those for the type builder to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ..diagnostics import error, pointer
from ..schema.pointers import SCHEMA_MAPS
from .namelock import NameLock, inline_key
from .names import pascal_case, type_name
from .shapes import STRUCTURAL, ShapeReader, text
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

#: Bounds implied by integer formats.
FORMAT_BOUNDS: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "uint8": (0, 2**8 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}

#: The JSON kind of each scalar ``type`` keyword value.
TYPE_KINDS = {
    "null": JsonKind.NULL,
    "boolean": JsonKind.BOOLEAN,
    "integer": JsonKind.INTEGER,
    "number": JsonKind.NUMBER,
    "string": JsonKind.STRING,
}


@dataclass(frozen=True)
class Lifted:
    """A union or an object written inline in a property, to become a type of its own."""

    pointer: str  # where it is first written
    node: Any  # its schema
    variants: tuple[tuple[Any, str], ...] | None = None  # a union's non-null variants with their pointers
    description: str = ""


class ExprReader:
    """Reads type expressions, each schema node once; problems go to the shape reader's list."""

    def __init__(self, shapes: ShapeReader, def_names: dict[str, str], lock: NameLock) -> None:
        self.shapes = shapes
        self.def_names = def_names  # $def -> its Python name
        self.lock = lock
        self._exprs: dict[str, TypeExpr] = {}
        self._lifted: dict[str, Lifted] = {}
        self._lifted_shapes: dict[str, Any] = {}  # name -> its schema, without descriptions
        self._lifted_keys: dict[str, str] = {}  # name -> its names-lock key

    def lifted(self) -> dict[str, Lifted]:
        """Every inline type lifted so far, by name."""
        return dict(self._lifted)

    def lifted_keys(self) -> dict[str, str]:
        """The names-lock key of every name an inline type was given (the first, for a shared name)."""
        return dict(self._lifted_keys)

    def texpr(self, node: Any, ptr: str, owner: str, hint: str) -> TypeExpr:
        """The type expression of a schema that is not a named object (read once per pointer).

        ``owner`` and ``hint`` name an inline type lifted out of it: the owning type's name and
        the property's (``Item`` added for an array's items, ``Value`` for a map's values)."""
        if ptr not in self._exprs:
            expr = self._texpr(node, ptr, owner, hint)
            if isinstance(node, dict) and node.get("x-deserialize-skip-invalid-items") is True:
                expr = _skipping_invalid_items(expr)
            self._exprs[ptr] = expr
        return self._exprs[ptr]

    def _problem(self, ptr: str, message: str) -> None:
        self.shapes.problems.append(error(ptr, message))

    def _texpr(self, node: Any, ptr: str, owner: str, hint: str) -> TypeExpr:
        if node is True or (isinstance(node, dict) and not (STRUCTURAL & node.keys())):
            return AnyValue()
        if not isinstance(node, dict):
            self._problem(ptr, f"unsupported schema {node!r}")
            return AnyValue()
        if "$ref" in node:
            name = self.shapes.ref_name(node["$ref"], ptr)
            return Ref(self.def_names[name]) if name is not None else AnyValue()
        if "const" in node:
            return self.literals([node["const"]], None, ptr)
        if "enum" in node and isinstance(node["enum"], list):
            return self.literals(list(node["enum"]), None, ptr)
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and not (STRUCTURAL - {"allOf"}) & node.keys():
            return self.texpr(all_of[0], ptr + "/allOf/0", owner, hint)
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                return self.union_expr(node, key, ptr, owner, hint)
        types = node.get("type")
        if isinstance(types, list):
            rest = [t for t in types if t != "null"]
            inner = self.texpr({**node, "type": rest[0]}, ptr, owner, hint) if len(rest) == 1 else None
            if inner is None:
                if rest:
                    self._problem(ptr + "/type", f"a type list {types!r} is not supported")
                return Scalar(JsonKind.NULL)
            return Nullable(inner) if "null" in types else inner
        if types in TYPE_KINDS:
            return self.scalar(node, ptr)
        if types == "array":
            items = node.get("items", True)
            min_items = node.get("minItems")
            min_items = min_items if isinstance(min_items, int) and not isinstance(min_items, bool) and min_items > 0 else None
            return ListOf(self.texpr(items, ptr + "/items", owner, hint + "Item"), min_items=min_items)
        if types == "object" or types is None:
            if "properties" in node:
                return Ref(self.lift(owner, hint, node, ptr))
            extra = node.get("additionalProperties", True)
            return MapOf(self.texpr(extra, ptr + "/additionalProperties", owner, hint + "Value"))
        self._problem(ptr, f"unsupported schema type {types!r}")
        return AnyValue()

    def lift(self, owner: str, hint: str, node: Any, ptr: str, variants: tuple[tuple[Any, str], ...] | None = None) -> str:
        """The name of a type written inline at ``ptr``: its owner's name and the property's.

        The same schema written at two places with one name (a property the variants of a union
        share) is one type, read at the first of its pointers; two different schemas wanting one
        name are an error."""
        key = inline_key(owner, hint)
        name = self.lock.type_name(key, type_name(owner + pascal_case(hint)))
        self._lifted_keys.setdefault(name, key)
        shape = _without_descriptions(node)
        lifted = Lifted(ptr, node, variants, text(node.get("description")))
        if name not in self._lifted:
            self._lifted[name], self._lifted_shapes[name] = lifted, shape
        elif self._lifted_shapes[name] == shape:
            if ptr < self._lifted[name].pointer:
                self._lifted[name] = lifted
        else:
            first, second = sorted((self._lifted[name].pointer, ptr))
            self._problem(second, f"the inline type here would be named {name}, like the different one at #{first}")
        return name

    def scalar(self, node: dict[str, Any], ptr: str) -> Scalar:
        kind = TYPE_KINDS[node["type"]]
        fmt = node.get("format") if isinstance(node.get("format"), str) else None
        low: int | float | None = None
        high: int | float | None = None
        if kind is JsonKind.INTEGER and fmt in FORMAT_BOUNDS:
            low, high = FORMAT_BOUNDS[fmt]
        for key, pick in (("minimum", max), ("maximum", min)):
            value = node.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and kind in (JsonKind.INTEGER, JsonKind.NUMBER):
                if key == "minimum":
                    low = value if low is None else pick(low, value)
                else:
                    high = value if high is None else pick(high, value)
        if kind is not JsonKind.STRING:
            return Scalar(kind, fmt, low, high)
        min_length = node.get("minLength")
        min_length = min_length if isinstance(min_length, int) and not isinstance(min_length, bool) and min_length > 0 else None
        pattern = node.get("pattern") if isinstance(node.get("pattern"), str) else None
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                self._problem(ptr + "/pattern", f"pattern {pattern!r} is not a regular expression Python can check: {exc}")
                pattern = None
        return Scalar(kind, fmt, low, high, min_length, pattern)

    def literals(self, values: list[Any], free: Scalar | None, ptr: str) -> TypeExpr:
        """A set of ``const`` values; an open one when ``free`` accepts any other value too."""
        kinds = {_json_kind(v) for v in values}
        if free is not None:
            kinds.add(free.kind)
        if len(kinds) != 1 or JsonKind.ARRAY in kinds or JsonKind.OBJECT in kinds:
            self._problem(ptr, "const values must all be strings, or all integers, or all booleans")
            return AnyValue()
        kind = kinds.pop()
        ordered = tuple(sorted(set(values), key=lambda v: (str(type(v)), v)))
        if kind is JsonKind.NULL:
            return Scalar(JsonKind.NULL)
        return Literals(ordered, free or Scalar(kind), open=free is not None)

    def union_expr(self, node: dict[str, Any], key: str, ptr: str, owner: str, hint: str) -> TypeExpr:
        """An inline ``anyOf`` / ``oneOf``: a nullable value, a literal set, or a lifted union."""
        variants = node[key]
        nullable = any(_is_null(v) for v in variants)
        rest = [(v, ptr + pointer(key, i)) for i, v in enumerate(variants) if not _is_null(v)]
        inner: TypeExpr
        if not rest:
            return Scalar(JsonKind.NULL)
        if len(rest) == 1:
            inner = self.texpr(rest[0][0], rest[0][1], owner, hint)
        else:
            consts = [v for v, _ in rest if isinstance(v, dict) and "const" in v]
            free = [v for v, _ in rest if isinstance(v, dict) and "const" not in v]
            free_expr = self.texpr(free[0], ptr, owner, hint) if len(free) == 1 else None
            if consts and len(consts) == len(rest):
                inner = self.literals([v["const"] for v in consts], None, ptr)
            elif consts and len(free) == 1 and isinstance(free_expr, Scalar) and free_expr.kind is not JsonKind.NULL:
                inner = self.literals([v["const"] for v in consts], free_expr, ptr)
            else:
                inner = Ref(self.lift(owner, hint, node, ptr, tuple(rest)))
        return Nullable(inner) if nullable else inner


def _skipping_invalid_items(expr: TypeExpr) -> TypeExpr:
    """An array (maybe nullable) whose bad items are dropped; anything else as it is."""
    if isinstance(expr, ListOf):
        return replace(expr, skip_invalid=True)
    if isinstance(expr, Nullable) and isinstance(expr.inner, ListOf):
        return Nullable(replace(expr.inner, skip_invalid=True))
    return expr


def leniency(node: Any, t: TypeExpr, required: bool) -> tuple[str | None, str | None]:
    """What a property's ``x-deserialize-default-on-error`` / ``-on-null`` annotations let a
    decoder do with a bad value or a ``null`` of type ``t``: (the Python literal a bad value is
    replaced by, the empty value a ``null`` reads as), each None where it does not apply.

    A bad optional value becomes absent (``"None"``); a bad required one the empty value of its
    array or map type. A required value of any other type stays an error, as does a missing one.
    """
    if not isinstance(node, dict):
        return None, None
    base = t.inner if isinstance(t, Nullable) else t
    empty = "[]" if isinstance(base, ListOf) else "{}" if isinstance(base, MapOf) else None
    on_error = None
    if node.get("x-deserialize-default-on-error") is True:
        on_error = empty if required else "None"
    on_null = empty if node.get("x-deserialize-default-on-null") is True else None
    return on_error, on_null


def is_literal_union(variants: list[Any]) -> bool:
    """``const`` values only, or ``const`` values and one free scalar of the same kind (an open set)."""
    consts = [v for v in variants if isinstance(v, dict) and "const" in v]
    free = [v for v in variants if not (isinstance(v, dict) and "const" in v)]
    if not consts or len(free) > 1:
        return False
    return not free or (isinstance(free[0], dict) and free[0].get("type") in TYPE_KINDS)


def _is_null(variant: Any) -> bool:
    """A ``{"type": "null"}`` variant (a title or description aside)."""
    return isinstance(variant, dict) and variant.get("type") == "null" and len(variant.keys() - {"title", "description"}) == 1


def _without_descriptions(node: Any) -> Any:
    """A schema without its ``description`` keywords; a property named ``description``, and
    values (``const``, ``default``, ...), stay as they are."""
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    if not isinstance(node, dict):
        return node
    kept = {}
    for key, value in node.items():
        if key in _VALUE_KEYWORDS:
            kept[key] = value
        elif key in SCHEMA_MAPS and isinstance(value, dict):
            kept[key] = {name: _without_descriptions(v) for name, v in value.items()}
        elif key != "description":
            kept[key] = _without_descriptions(value)
    return kept


_VALUE_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def _json_kind(value: Any) -> JsonKind:
    if value is None:
        return JsonKind.NULL
    if isinstance(value, bool):
        return JsonKind.BOOLEAN
    if isinstance(value, int):
        return JsonKind.INTEGER
    if isinstance(value, float):
        return JsonKind.NUMBER
    if isinstance(value, str):
        return JsonKind.STRING
    if isinstance(value, list):
        return JsonKind.ARRAY
    return JsonKind.OBJECT
