"""Build the type model (:mod:`acpgen.model.types`) from a loaded schema.

Each ``$def`` is read into one of four kinds:

* an object with ``properties`` (and maybe ``allOf`` parts): one class;
* an object whose ``oneOf`` / ``anyOf`` variants are objects: a union of classes. Properties the
  union shares are copied into every variant (a "flattened" union), and a variant that is itself
  a union contributes one class per inner variant. A variant that is exactly another ``$def``
  (a bare ``$ref`` with nothing added) is that ``$def``'s class;
* a set of ``const`` values (closed), or ``const`` values plus one free value of the same kind
  (open): literals;
* anything else (a string, an integer with a ``format``, an array, a union of those): an alias.

A union or an object with properties written inline in a property is lifted out as a type of its
own, named after its owner and the property (``AgentRequestParams``).

Unions are decoded by a :data:`~acpgen.model.types.Decision`: by the JSON kind of the value, then
by a tag property when the variants carry ``const`` values for one, else by trying each variant
(most required properties first).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError, error, pointer
from ..schema.loader import LoadedSchema
from ..schema.pointers import SCHEMA_MAPS, def_name
from .cycles import alias_cycles
from .names import pascal_case, type_name, unique_field_names, variant_names
from .types import (
    KIND_WORDS,
    AnyValue,
    ByKind,
    ClassDef,
    Decision,
    DefKind,
    Dispatch,
    Encoding,
    Field,
    JsonKind,
    Leaf,
    ListOf,
    Literals,
    MapOf,
    Nullable,
    Ref,
    Scalar,
    Tag,
    TryEach,
    TypeDef,
    TypeExpr,
    TypeModel,
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

_TYPE_KINDS = {
    "null": JsonKind.NULL,
    "boolean": JsonKind.BOOLEAN,
    "integer": JsonKind.INTEGER,
    "number": JsonKind.NUMBER,
    "string": JsonKind.STRING,
}

#: Python classes in the order a kind-dispatching decoder tests them.
_PY_CLASSES = ("dict", "str", "int", "float", "bool", "list", "NoneType")
_PY_CLASS_KINDS = {
    "NoneType": JsonKind.NULL,
    "bool": JsonKind.BOOLEAN,
    "int": JsonKind.INTEGER,
    "float": JsonKind.NUMBER,
    "str": JsonKind.STRING,
    "list": JsonKind.ARRAY,
    "dict": JsonKind.OBJECT,
}


@dataclass
class _Shape:
    """One object shape: what a union variant (or a plain object) looks like on the wire."""

    labels: tuple[str, ...] = ()
    props: dict[str, tuple[Any, str]] = field(default_factory=dict)  # wire name -> (schema, pointer)
    required: frozenset[str] = frozenset()
    tags: dict[str, Any] = field(default_factory=dict)
    origin: str | None = None  # the $def this shape is exactly, when nothing was added to it
    description: str = ""
    pointer: str = ""

    def empty(self) -> bool:
        return not self.props and not self.tags and not self.required and self.origin is None


def _merge(a: _Shape, b: _Shape) -> _Shape:
    props = dict(a.props)
    for key, value in b.props.items():
        props.setdefault(key, value)
    tags = {**a.tags, **b.tags}
    for key in tags:
        props.pop(key, None)
    origin = b.origin if a.empty() else a.origin if b.empty() else None
    return _Shape(
        labels=a.labels + b.labels,
        props=props,
        required=a.required | b.required,
        tags=tags,
        origin=origin,
        description=b.description or a.description,
        pointer=b.pointer if b.labels or not a.pointer else a.pointer,
    )


class TypeBuilder:
    def __init__(self, schema: LoadedSchema, overrides: dict[str, str], names_source: str = "names file") -> None:
        self.document = schema.document
        self.defs: dict[str, Any] = schema.defs
        self.overrides = overrides
        self.names_source = names_source
        self.problems: list[Diagnostic] = []
        self._shapes: dict[str, list[_Shape]] = {}
        self._exprs: dict[str, TypeExpr] = {}
        # types written inline in a property, named after their owner and property: name -> pointer
        self.lifted: dict[str, str] = {}
        self._lifted_nodes: dict[str, Any] = {}  # name -> its schema, without descriptions
        self.lifted_unions: dict[str, tuple[list[tuple[Any, str]], str]] = {}  # name -> (options, description)
        self.lifted_objects: dict[str, Any] = {}  # name -> the object's schema

    # -- reading schema nodes -----------------------------------------------------------------

    def ref_name(self, ref: Any, ptr: str) -> str | None:
        name = def_name(ref)
        if name is not None and name in self.defs:
            return name
        self.problems.append(error(ptr + "/$ref", f"only refs to '#/$defs/<name>' are supported, found {ref!r}"))
        return None

    def is_object_like(self, node: Any, stack: tuple[str, ...] = ()) -> bool:
        """Does ``node`` describe an object with properties (or a union of such objects)?"""
        if not isinstance(node, dict):
            return False
        if "$ref" in node:
            name = self.ref_name(node["$ref"], "")
            return name is not None and name not in stack and self.is_object_like(self.defs[name], (*stack, name))
        if "properties" in node and node.get("type", "object") in ("object", ["object"]):
            return True
        parts = node.get("allOf")
        if isinstance(parts, list) and parts and any(self.is_object_like(p, stack) for p in parts):
            return True
        for key in ("oneOf", "anyOf"):
            variants = node.get(key)
            if isinstance(variants, list) and variants and all(self.is_object_like(v, stack) for v in variants):
                return True
        return False

    def def_shapes(self, name: str, stack: tuple[str, ...] = ()) -> list[_Shape]:
        if name in self._shapes:
            return self._shapes[name]
        if name in stack:
            self.problems.append(error(pointer("$defs", name), f"{name} contains itself through allOf"))
            return [_Shape()]
        shapes = self.shapes(self.defs[name], pointer("$defs", name), (*stack, name))
        if len(shapes) == 1 and not shapes[0].labels:
            shapes = [replace(shapes[0], origin=name, pointer=pointer("$defs", name))]
        self._shapes[name] = shapes
        return shapes

    def shapes(self, node: dict[str, Any], ptr: str, stack: tuple[str, ...] = ()) -> list[_Shape]:
        own = _Shape(description=_text(node.get("description")), pointer=ptr)
        required = node.get("required", [])
        own.required = frozenset(r for r in required if isinstance(r, str)) if isinstance(required, list) else frozenset()
        props = node.get("properties", {})
        for key, prop in props.items() if isinstance(props, dict) else ():
            if isinstance(prop, dict) and "const" in prop and isinstance(prop["const"], str) and key in own.required:
                own.tags[key] = prop["const"]
            else:
                own.props[key] = (prop, ptr + pointer("properties", key))
        own.required -= own.tags.keys()
        parts: list[list[_Shape]] = []
        if "$ref" in node:
            name = self.ref_name(node["$ref"], ptr)
            if name is not None:
                parts.append(self.def_shapes(name, stack))
        for index, item in enumerate(node.get("allOf", []) or []):
            if isinstance(item, dict) and self.is_object_like(item):
                parts.append(self.shapes(item, ptr + pointer("allOf", index), stack))
        parts.append([own])
        discriminator = node.get("discriminator", {})
        tag_key = discriminator.get("propertyName") if isinstance(discriminator, dict) else None
        for key in ("oneOf", "anyOf"):
            variants = node.get(key)
            if not isinstance(variants, list) or not variants:
                continue
            found: list[_Shape] = []
            siblings = [(variant, ptr + pointer(key, index)) for index, variant in enumerate(variants)]
            for variant, vptr in siblings:
                if not self.is_object_like(variant) and not _is_tag_only(variant):
                    self.problems.append(error(vptr, "a variant of an object union must be an object"))
                    continue
                label = self.variant_label(variant, tag_key, vptr, siblings, stack)
                for shape in self.shapes(variant, vptr, stack):
                    found.append(replace(shape, labels=(label, *shape.labels)))
            parts.append(found)
        result = []
        for combo in itertools.product(*parts):
            merged = _Shape(pointer=ptr)
            for shape in combo:
                merged = _merge(merged, shape)
            result.append(merged)
        return result

    def variant_label(
        self,
        variant: dict[str, Any],
        tag_key: str | None,
        ptr: str,
        siblings: list[tuple[Any, str]],
        stack: tuple[str, ...] = (),
    ) -> str:
        """What names a variant: its tag value, else its title, else the one ``$def`` it extends,
        else the required properties that set it apart from the other variants (``siblings``: every
        variant of its union, itself included, with their pointers)."""
        props = variant.get("properties", {})
        if isinstance(props, dict):
            keys = [tag_key] if tag_key in props else sorted(props)
            for key in keys:
                prop = props.get(key)
                if isinstance(prop, dict) and isinstance(prop.get("const"), str):
                    return str(prop["const"])
        if isinstance(variant.get("title"), str) and variant["title"]:
            return str(variant["title"])
        refs = [variant.get("$ref")] + [p.get("$ref") for p in variant.get("allOf", []) if isinstance(p, dict)]
        refs = [r for r in refs if isinstance(r, str)]
        if len(refs) == 1:
            name = self.ref_name(refs[0], ptr)
            if name is not None:
                return name
        label = self.required_label(ptr, siblings, stack)
        if label is not None:
            return label
        self.problems.append(error(ptr, "cannot name this union variant: give it a tag (const) or a title "
                                        "(no required property sets it apart from the other variants)"))
        return "Variant"

    def required_label(self, ptr: str, siblings: list[tuple[Any, str]], stack: tuple[str, ...]) -> str | None:
        """The label of an untagged, untitled variant: the properties it requires that not every
        object variant of its union requires, in wire-name order, joined with ``+`` (``result``;
        ``id+method``). None when there are none, or when another variant requires the same set."""
        required: dict[str, frozenset[str]] = {}
        for node, vptr in siblings:
            shapes = self.shapes(node, vptr, stack) if self.is_object_like(node) else []
            if shapes:
                required[vptr] = frozenset.intersection(*(s.required.union(s.tags) for s in shapes))
        mine = required.get(ptr)
        if mine is None or len(required) < 2:
            return None
        own = mine - frozenset.intersection(*required.values())
        if not own or any(other == mine for vptr, other in required.items() if vptr != ptr):
            return None
        return "+".join(sorted(own))

    def texpr(self, node: Any, ptr: str, owner: str, hint: str) -> TypeExpr:
        """The type expression of a schema that is not a named object (read once per pointer)."""
        if ptr not in self._exprs:
            self._exprs[ptr] = self._texpr(node, ptr, owner, hint)
        return self._exprs[ptr]

    def _texpr(self, node: Any, ptr: str, owner: str, hint: str) -> TypeExpr:
        if node is True or (isinstance(node, dict) and not (_STRUCTURAL & node.keys())):
            return AnyValue()
        if not isinstance(node, dict):
            self.problems.append(error(ptr, f"unsupported schema {node!r}"))
            return AnyValue()
        if "$ref" in node:
            name = self.ref_name(node["$ref"], ptr)
            return Ref(type_name(name)) if name is not None else AnyValue()
        if "const" in node:
            return self.literals([node["const"]], None, ptr)
        if "enum" in node and isinstance(node["enum"], list):
            return self.literals(list(node["enum"]), None, ptr)
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and not (_STRUCTURAL - {"allOf"}) & node.keys():
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
                    self.problems.append(error(ptr + "/type", f"a type list {types!r} is not supported"))
                return Scalar(JsonKind.NULL)
            return Nullable(inner) if "null" in types else inner
        if types in _TYPE_KINDS:
            return self.scalar(node, ptr)
        if types == "array":
            items = node.get("items", True)
            return ListOf(self.texpr(items, ptr + "/items", owner, hint + "Item"))
        if types == "object" or types is None:
            if "properties" in node:
                name = self.lift(owner, hint, node, ptr)
                if self.lifted[name] == ptr:
                    self.lifted_objects[name] = node
                return Ref(name)
            extra = node.get("additionalProperties", True)
            return MapOf(self.texpr(extra, ptr + "/additionalProperties", owner, hint + "Value"))
        self.problems.append(error(ptr, f"unsupported schema type {types!r}"))
        return AnyValue()

    def lift(self, owner: str, hint: str, node: Any, ptr: str) -> str:
        """The name of a type written inline at ``ptr``: its owner's name and the property's.

        The same schema written at two places with one name (a property the variants of a union
        share) is one type, read at the first of its pointers; two different schemas wanting one
        name are an error."""
        name = type_name(owner + pascal_case(hint))
        shape = _without_descriptions(node)
        if name not in self.lifted:
            self.lifted[name], self._lifted_nodes[name] = ptr, shape
        elif self._lifted_nodes[name] == shape:
            self.lifted[name] = min(self.lifted[name], ptr)
        else:
            first, second = sorted((self.lifted[name], ptr))
            self.problems.append(error(second, f"the inline type here would be named {name}, "
                                               f"like the different one at #{first}"))
        return name

    def scalar(self, node: dict[str, Any], ptr: str) -> Scalar:
        kind = _TYPE_KINDS[node["type"]]
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
        return Scalar(kind, fmt, low, high)

    def literals(self, values: list[Any], free: Scalar | None, ptr: str) -> TypeExpr:
        kinds = {_json_kind(v) for v in values}
        if free is not None:
            kinds.add(free.kind)
        if len(kinds) != 1 or JsonKind.ARRAY in kinds or JsonKind.OBJECT in kinds:
            self.problems.append(error(ptr, "const values must all be strings, or all integers, or all booleans"))
            return AnyValue()
        kind = kinds.pop()
        ordered = tuple(sorted(set(values), key=lambda v: (str(type(v)), v)))
        if kind is JsonKind.NULL:
            return Scalar(JsonKind.NULL)
        return Literals(ordered, free or Scalar(kind), open=free is not None)

    def union_expr(self, node: dict[str, Any], key: str, ptr: str, owner: str, hint: str) -> TypeExpr:
        variants = node[key]
        nullable = any(isinstance(v, dict) and v.get("type") == "null" and len(v.keys() - {"title", "description"}) == 1 for v in variants)
        rest = [(v, ptr + pointer(key, i)) for i, v in enumerate(variants)
                if not (isinstance(v, dict) and v.get("type") == "null" and len(v.keys() - {"title", "description"}) == 1)]
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
                name = self.lift(owner, hint, node, ptr)
                if self.lifted[name] == ptr:
                    self.lifted_unions[name] = (rest, _text(node.get("description")))
                inner = Ref(name)
        return Nullable(inner) if nullable else inner


_STRUCTURAL = frozenset(
    {"$ref", "type", "const", "enum", "allOf", "anyOf", "oneOf", "properties", "items", "additionalProperties"}
)


def _pure_ref(node: Any) -> str | None:
    """The ref of ``{"$ref": X}`` or ``{"allOf": [{"$ref": X}]}`` with nothing else that matters."""
    if not isinstance(node, dict) or (_STRUCTURAL - {"$ref", "allOf"}) & node.keys():
        return None
    if "$ref" in node and "allOf" not in node:
        return node["$ref"] if isinstance(node["$ref"], str) else None
    parts = node.get("allOf")
    if "$ref" not in node and isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict):
        return _pure_ref(parts[0])
    return None


def _is_literal_union(variants: list[Any]) -> bool:
    """``const`` values only, or ``const`` values and one free scalar of the same kind (an open set)."""
    consts = [v for v in variants if isinstance(v, dict) and "const" in v]
    free = [v for v in variants if not (isinstance(v, dict) and "const" in v)]
    if not consts or len(free) > 1:
        return False
    return not free or (isinstance(free[0], dict) and free[0].get("type") in _TYPE_KINDS)


def _is_tag_only(node: Any) -> bool:
    return isinstance(node, dict) and isinstance(node.get("properties"), dict)


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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


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


# -- assembling the model -------------------------------------------------------------------------


@dataclass
class _Union:
    name: str
    description: str
    pointer: str
    shapes: list[_Shape]  # object variants
    others: list[TypeExpr]  # non-object variants
    tag_key: str | None


def build_types(schema: LoadedSchema, overrides: dict[str, str] | None = None, names_source: str = "names file") -> TypeModel:
    """Read every ``$def`` of ``schema`` into the type model. Raises DiagnosticError."""
    b = TypeBuilder(schema, overrides or {}, names_source)
    classes: dict[str, _Shape] = {}  # class def name -> shape
    unions: dict[str, _Union] = {}
    exprs: dict[str, tuple[TypeExpr, str, str]] = {}  # alias/literal def name -> (expr, description, ptr)
    def_names = {name: type_name(name) for name in b.defs}
    same_name: dict[str, list[str]] = {}
    for name in sorted(b.defs):
        same_name.setdefault(def_names[name], []).append(pointer("$defs", name))
    for py_name, ptrs in sorted(same_name.items()):
        if len(ptrs) > 1:
            listed = ", ".join("#" + p for p in ptrs)
            b.problems.append(error(ptrs[-1], f"two types would be named {py_name!r} ({listed}); rename one"))

    def read_union(py_name: str, node: dict[str, Any], ptr: str, variants: list[tuple[Any, str]], description: str) -> None:
        shapes: list[_Shape] = []
        others: list[TypeExpr] = []
        discriminator = node.get("discriminator", {}) if isinstance(node, dict) else {}
        tag_key = discriminator.get("propertyName") if isinstance(discriminator, dict) else None
        for variant, vptr in variants:
            pure = _pure_ref(variant)
            target = b.ref_name(pure, vptr) if pure is not None else None
            if target is not None and b.is_object_like(b.defs[target]) and len(b.def_shapes(target)) > 1:
                others.append(Ref(def_names[target]))
            elif b.is_object_like(variant):
                label = b.variant_label(variant, tag_key, vptr, variants)
                for shape in b.shapes(variant, vptr):
                    shapes.append(replace(shape, labels=(label, *shape.labels)))
            else:
                others.append(b.texpr(variant, vptr, py_name, "Option"))
        unions[py_name] = _Union(py_name, description, ptr, shapes, others, tag_key)

    for name in sorted(b.defs):
        node = b.defs[name]
        ptr = pointer("$defs", name)
        py_name = def_names[name]
        if b.is_object_like(node):
            shapes = b.def_shapes(name)
            if len(shapes) == 1 and not shapes[0].labels:
                classes[py_name] = replace(shapes[0], origin=None)
            elif len(shapes) == 1 and shapes[0].origin is not None:
                exprs[py_name] = (Ref(def_names[shapes[0].origin]), _text(node.get("description")), ptr)
            else:
                discriminator = node.get("discriminator", {})
                tag_key = discriminator.get("propertyName") if isinstance(discriminator, dict) else None
                unions[py_name] = _Union(py_name, _text(node.get("description")), ptr, shapes, [], tag_key)
        else:
            key = "oneOf" if isinstance(node.get("oneOf"), list) else "anyOf" if isinstance(node.get("anyOf"), list) else None
            if key is not None and not _is_literal_union(node[key]):
                variants = [(v, ptr + pointer(key, i)) for i, v in enumerate(node[key])]
                read_union(py_name, node, ptr, variants, _text(node.get("description")))
            else:
                exprs[py_name] = (b.texpr(node, ptr, py_name, ""), _text(node.get("description")), ptr)
    def read_properties(owner: str, shapes: list[_Shape]) -> None:
        for shape in shapes:
            for wire, (prop, pptr) in shape.props.items():
                b.texpr(prop, pptr, owner, wire)

    for name, shape in sorted(classes.items()):
        read_properties(name, [shape])
    for name, u in sorted(unions.items()):
        read_properties(name, u.shapes)
    # inline unions and objects lifted out of properties, named after their owner and property
    done: set[str] = set()
    while set(b.lifted) - done:
        for lname in sorted(set(b.lifted) - done):
            done.add(lname)
            lptr = b.lifted[lname]
            what = "union" if lname in b.lifted_unions else "object"
            if lname in unions or lname in classes or lname in exprs:
                b.problems.append(error(lptr, f"the inline {what} here would be named {lname}, which is taken"))
                continue
            if lname in b.lifted_unions:
                variants, description = b.lifted_unions[lname]
                read_union(lname, {}, lptr, variants, description)
                read_properties(lname, unions[lname].shapes)
                continue
            node = b.lifted_objects[lname]
            shapes = b.shapes(node, lptr)
            if len(shapes) == 1 and not shapes[0].labels:
                classes[lname] = replace(shapes[0], origin=None, pointer=lptr)
                read_properties(lname, [classes[lname]])
            else:
                unions[lname] = _Union(lname, _text(node.get("description")), lptr, shapes, [], None)
                read_properties(lname, shapes)
    if b.problems:
        raise DiagnosticError(sorted(set(b.problems), key=lambda d: (d.pointer, d.message)))

    # name the generated variant classes
    wanted: dict[tuple[str, tuple[str, ...]], str] = {}  # (union, labels) -> the variant's pointer
    class_defs = {k for k, v in def_names.items() if v in classes}
    for u in unions.values():
        for shape in u.shapes:
            if shape.origin is None or shape.origin not in class_defs:
                key = (u.name, shape.labels)
                if wanted.setdefault(key, shape.pointer) != shape.pointer:
                    first, second = sorted((wanted[key], shape.pointer))
                    label = "/".join(shape.labels)
                    b.problems.append(error(second, f"this variant of {u.name} is labelled {label!r} like the one at "
                                                    f"#{first}: give one another tag or title"))
    if b.problems:
        raise DiagnosticError(sorted(set(b.problems), key=lambda d: (d.pointer, d.message)))
    taken = {def_names[name]: pointer("$defs", name) for name in b.defs}
    taken.update((name, ptr) for name, ptr in b.lifted.items() if name not in taken)
    names = variant_names(wanted, taken, b.overrides, b.names_source)

    assembler = _Assembler(b, classes, unions, exprs, names, def_names)
    model = assembler.model()
    cycles = alias_cycles(model.types)
    if cycles:
        raise DiagnosticError(cycles)
    return model


class _Assembler:
    def __init__(self, b: TypeBuilder, classes: dict[str, _Shape], unions: dict[str, _Union],
                 exprs: dict[str, tuple[TypeExpr, str, str]], names: dict[tuple[str, tuple[str, ...]], str],
                 def_names: dict[str, str]) -> None:
        self.b = b
        self.classes = classes
        self.unions = unions
        self.exprs = exprs
        self.names = names
        self.def_names = def_names
        self._accepts: dict[str, frozenset[str]] = {}
        self._encoding: dict[str, Encoding] = {}

    def leaf_name(self, union: str, shape: _Shape) -> str:
        if (union, shape.labels) in self.names:
            return self.names[(union, shape.labels)]
        assert shape.origin is not None
        return self.def_names[shape.origin]

    # what a named type accepts and how it encodes

    def accepts(self, t: TypeExpr) -> frozenset[str]:
        """The Python classes of JSON values a type accepts."""
        if isinstance(t, Scalar):
            return frozenset(t.classes)
        if isinstance(t, Literals):
            return frozenset(t.base.classes)
        if isinstance(t, AnyValue):
            return frozenset(_PY_CLASSES)
        if isinstance(t, ListOf):
            return frozenset({"list"})
        if isinstance(t, MapOf):
            return frozenset({"dict"})
        if isinstance(t, Nullable):
            return self.accepts(t.inner) | {"NoneType"}
        name = t.name
        if name in self._accepts:
            return self._accepts[name]
        self._accepts[name] = frozenset()  # a cycle accepts nothing more
        if name in self.classes or any(name == n for n in self.names.values()):
            found = frozenset({"dict"})
        elif name in self.unions:
            u = self.unions[name]
            found = frozenset({"dict"} if u.shapes else set()).union(*(self.accepts(o) for o in u.others))
        else:
            found = self.accepts(self.exprs[name][0])
        self._accepts[name] = found
        return found

    def encoding(self, t: TypeExpr) -> Encoding:
        if isinstance(t, (Scalar, Literals, AnyValue)):
            return Encoding.AS_IS
        if isinstance(t, ListOf):
            inner = self.encoding(t.item)
            return {Encoding.AS_IS: Encoding.AS_IS, Encoding.METHOD: Encoding.LIST}.get(inner, Encoding.GENERIC)
        if isinstance(t, MapOf):
            inner = self.encoding(t.value)
            return {Encoding.AS_IS: Encoding.AS_IS, Encoding.METHOD: Encoding.MAP}.get(inner, Encoding.GENERIC)
        if isinstance(t, Nullable):
            return Encoding.AS_IS if self.encoding(t.inner) is Encoding.AS_IS else Encoding.GENERIC
        name = t.name
        if name in self._encoding:
            return self._encoding[name]
        self._encoding[name] = Encoding.METHOD
        if name in self.classes or any(name == n for n in self.names.values()):
            found = Encoding.METHOD
        elif name in self.unions:
            u = self.unions[name]
            kinds = {self.encoding(o) for o in u.others} | ({Encoding.METHOD} if u.shapes else set())
            found = kinds.pop() if len(kinds) == 1 and kinds <= {Encoding.AS_IS, Encoding.METHOD} else Encoding.GENERIC
        else:
            found = self.encoding(self.exprs[name][0])
        self._encoding[name] = found
        return found

    def resolve_scalar(self, t: TypeExpr) -> TypeExpr:
        """A Ref to an alias of a scalar is decoded as that scalar, inline."""
        original = t
        seen = set()
        while isinstance(t, Ref) and t.name in self.exprs and t.name not in seen:
            seen.add(t.name)
            target = self.exprs[t.name][0]
            if not isinstance(target, (Scalar, Ref)):
                break
            t = target
        return t if isinstance(t, Scalar) else original

    # building definitions

    def make_class(self, name: str, shape: _Shape, labels: tuple[str, ...] = (), union: str | None = None) -> ClassDef:
        tag_names = unique_field_names(list(shape.tags))
        field_names = unique_field_names(list(shape.props), frozenset(tag_names.values()))
        fields = []
        for wire, (node, ptr) in shape.props.items():
            t = self.b.texpr(node, ptr, name, wire)
            nullable = "NoneType" in self.accepts(t)
            codec = t.inner if isinstance(t, Nullable) else t
            codec = self.resolve_scalar(codec)
            has_default = isinstance(node, dict) and "default" in node
            fields.append(
                Field(
                    wire_name=wire,
                    py_name=field_names[wire],
                    type=t,
                    codec=codec,
                    encoding=self.encoding(codec),
                    required=wire in shape.required,
                    nullable=nullable,
                    description=_text(node.get("description")) if isinstance(node, dict) else "",
                    default=node.get("default") if has_default else None,
                    has_default=has_default,
                )
            )
        tags = tuple(Tag(k, tag_names[k], v) for k, v in sorted(shape.tags.items()))
        return ClassDef(name, shape.description, tuple(fields), tags, shape.pointer, labels, union)

    def model(self) -> TypeModel:
        types: list[TypeDef] = []
        made: set[str] = set()
        for name, shape in self.classes.items():
            cls = self.make_class(name, shape)
            types.append(TypeDef(name, DefKind.CLASS, shape.description, shape.pointer, (), classes=(cls,),
                                 encoding=Encoding.METHOD))
        for name, u in self.unions.items():
            variant_classes = []
            for shape in u.shapes:
                leaf = self.leaf_name(name, shape)
                if (name, shape.labels) in self.names and leaf not in made:
                    made.add(leaf)
                    variant_classes.append(self.make_class(leaf, shape, shape.labels, name))
            options = tuple(dict.fromkeys([*(Ref(self.leaf_name(name, s)) for s in u.shapes), *u.others]))
            decision, helpers = self.union_decision(u)
            types.append(TypeDef(name, DefKind.UNION, u.description, u.pointer, (), classes=tuple(variant_classes),
                                 options=options, decision=decision, helpers=helpers,
                                 encoding=self.encoding(Ref(name))))
        for name, (expr, description, ptr) in self.exprs.items():
            kind = DefKind.LITERALS if isinstance(expr, Literals) else DefKind.ALIAS
            types.append(TypeDef(name, kind, description, ptr, (), target=expr, encoding=self.encoding(expr)))
        py_by_def = self.def_names
        known = set(self.def_names.values()) | set(self.unions)
        finished = []
        for t in types:
            in_schema = {py_by_def[d] for d in _schema_refs(self.b.defs.get(t.name)) if d in py_by_def}
            refs = sorted((_refs_of(t) | in_schema) & known - {t.name})
            finished.append(replace(t, refs=tuple(refs)))
        finished.sort(key=lambda t: t.name)
        return TypeModel(types=tuple(finished))

    def union_decision(self, u: _Union) -> tuple[Decision, tuple[Dispatch | TryEach | ByKind, ...]]:
        nodes: list[Dispatch | TryEach | ByKind] = []
        counter = itertools.count()

        def fn_name() -> str:
            n = next(counter)
            return f"_d_{u.name}" if n == 0 else f"_d_{u.name}__{n}"

        def objects(shapes: list[_Shape], used: frozenset[str], fn: str | None) -> Decision:
            if len(shapes) == 1:
                leaf = self.leaf_name(u.name, shapes[0])
                return Leaf("_d_" + leaf, leaf)
            keys = sorted({k for s in shapes for k in s.tags} - used, key=lambda k: (k != u.tag_key, k))
            best = max(keys, key=lambda k: sum(k in s.tags for s in shapes), default=None) if keys else None
            if best is not None and u.tag_key in keys and sum(u.tag_key in s.tags for s in shapes) == max(
                sum(k in s.tags for s in shapes) for k in keys
            ):
                best = u.tag_key
            if best is not None:
                groups: dict[str, list[_Shape]] = {}
                untagged = []
                for s in shapes:
                    if best in s.tags:
                        groups.setdefault(s.tags[best], []).append(s)
                    else:
                        untagged.append(s)
                if len(groups) + (1 if untagged else 0) >= 2 or (groups and not untagged):
                    own = fn or fn_name()
                    node_index = len(nodes)
                    nodes.append(None)  # type: ignore[arg-type]
                    cases = tuple(
                        (value, objects(group, used | {best}, None)) for value, group in sorted(groups.items())
                    )
                    default = objects(untagged, used | {best}, None) if untagged else None
                    d = Dispatch(own, best, cases, default)
                    nodes[node_index] = d
                    return d
            ordered = sorted(shapes, key=lambda s: (-len(s.required), -len(s.props), self.leaf_name(u.name, s)))
            own = fn or fn_name()
            shared = frozenset.intersection(*(frozenset(s.required | s.tags.keys()) for s in shapes))
            leaves = tuple(
                Leaf("_d_" + self.leaf_name(u.name, s), self.leaf_name(u.name, s),
                     tuple(sorted((s.required | s.tags.keys()) - shared)[:2]))  # a necessary condition
                for s in ordered
            )
            t = TryEach(own, leaves, check_object=fn is not None and any(leaf.guard for leaf in leaves))
            nodes.append(t)
            return t

        if not u.others:
            root = objects(u.shapes, frozenset(), fn_name())
            if isinstance(root, Leaf):  # a single variant: still give the union its own decoder
                t = TryEach(f"_d_{u.name}", (root,))
                nodes.append(t)
                return t, tuple(nodes)
            return root, tuple(nodes)
        root_fn = fn_name()
        branches = []
        index = len(nodes)
        nodes.append(None)  # type: ignore[arg-type]
        for py_class in _PY_CLASSES:
            options: list[Decision] = []
            if py_class == "dict" and u.shapes:
                options.append(objects(u.shapes, frozenset(), None))
            ranked = sorted(
                (o for o in u.others if py_class in self.accepts(o)),
                key=lambda o: (3 if len(self.accepts(o)) == len(_PY_CLASSES) else _rank(o, py_class), o.token),
            )
            options.extend(Leaf(o.fn, _label(o)) for o in ranked)
            if not options:
                continue
            if len(options) == 1:
                branches.append((py_class, options[0]))
            else:
                t = TryEach(fn_name(), tuple(options))
                nodes.append(t)
                branches.append((py_class, t))
        expected = " or ".join(dict.fromkeys(KIND_WORDS[_PY_CLASS_KINDS[k]] for k, _ in branches))
        root = ByKind(root_fn, tuple(branches), expected)
        nodes[index] = root
        return root, tuple(nodes)


def _rank(t: TypeExpr, py_class: str) -> int:
    if isinstance(t, Literals) and not t.open:
        return 0
    if isinstance(t, AnyValue):
        return 3
    if isinstance(t, Scalar) and t.kind is JsonKind.NUMBER and py_class == "int":
        return 2
    return 1


def _label(t: TypeExpr) -> str:
    if isinstance(t, Ref):
        return t.name
    if isinstance(t, Scalar):
        return t.expected
    if isinstance(t, ListOf):
        return "an array"
    if isinstance(t, MapOf):
        return "an object"
    if isinstance(t, Literals):
        return "one of " + ", ".join(repr(v) for v in t.values)
    return "a value"


def _schema_refs(node: Any) -> set[str]:
    """The ``$def`` names a schema node refers to, anywhere inside it."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            name = def_name(item.get("$ref"))
            if name is not None:
                found.add(name)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _refs_of(t: TypeDef) -> set[str]:
    found: set[str] = set()

    def visit(e: TypeExpr | None) -> None:
        if isinstance(e, Ref):
            found.add(e.name)
        elif isinstance(e, ListOf):
            visit(e.item)
        elif isinstance(e, MapOf):
            visit(e.value)
        elif isinstance(e, Nullable):
            visit(e.inner)

    for cls in t.classes:
        for f in cls.fields:
            visit(f.type)
    for o in t.options:
        visit(o)
    visit(t.target)
    return found
