"""Object shapes: what a class or a union variant looks like on the wire, and what labels it.

A :class:`Shape` is one object: its properties, the ones it requires, its tags (required
properties with a ``const`` string), and the ``$def`` it is exactly, when nothing was added. A
``$def`` whose ``oneOf`` / ``anyOf`` variants are objects has one shape per variant (a variant
that is itself a union gives one per inner variant); properties the union shares are merged into
every variant. Each variant shape carries its *labels*: what identifies it on the wire, outermost
union first (see :meth:`ShapeReader.variant_label`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from ..diagnostics import Diagnostic, error, pointer
from ..schema.pointers import def_name

#: The keywords that say what a schema node is; a node with none of them accepts any value.
STRUCTURAL = frozenset(
    {"$ref", "type", "const", "enum", "allOf", "anyOf", "oneOf", "properties", "items", "additionalProperties"}
)


@dataclass
class Shape:
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


def merge(a: Shape, b: Shape) -> Shape:
    """``b`` laid over ``a``: an ``allOf`` part, or a union variant over the union's own properties."""
    props = dict(a.props)
    for key, value in b.props.items():
        props.setdefault(key, value)
    tags = {**a.tags, **b.tags}
    for key in tags:
        props.pop(key, None)
    origin = b.origin if a.empty() else a.origin if b.empty() else None
    return Shape(
        labels=a.labels + b.labels,
        props=props,
        required=a.required | b.required,
        tags=tags,
        origin=origin,
        description=b.description or a.description,
        pointer=b.pointer if b.labels or not a.pointer else a.pointer,
    )


class ShapeReader:
    """Reads the object shapes of a schema's ``$defs``; collects every problem in ``problems``."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.problems: list[Diagnostic] = []
        self._shapes: dict[str, list[Shape]] = {}

    def ref_name(self, ref: Any, ptr: str) -> str | None:
        """The ``$def`` that ``ref`` (found at ``ptr``) names; None, and a problem, for any other ref."""
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

    def def_shapes(self, name: str, stack: tuple[str, ...] = ()) -> list[Shape]:
        """The shapes of the ``$def`` ``name`` (read once)."""
        if name in self._shapes:
            return self._shapes[name]
        if name in stack:
            self.problems.append(error(pointer("$defs", name), f"{name} contains itself through allOf"))
            return [Shape()]
        shapes = self.shapes(self.defs[name], pointer("$defs", name), (*stack, name))
        if len(shapes) == 1 and not shapes[0].labels:
            shapes = [replace(shapes[0], origin=name, pointer=pointer("$defs", name))]
        self._shapes[name] = shapes
        return shapes

    def shapes(self, node: dict[str, Any], ptr: str, stack: tuple[str, ...] = ()) -> list[Shape]:
        """The shapes of an object node at ``ptr``: its ``$ref`` and ``allOf`` parts merged with its
        own properties, once per combination of its union variants."""
        own = Shape(description=text(node.get("description")), pointer=ptr)
        required = node.get("required", [])
        own.required = frozenset(r for r in required if isinstance(r, str)) if isinstance(required, list) else frozenset()
        props = node.get("properties", {})
        for key, prop in props.items() if isinstance(props, dict) else ():
            if isinstance(prop, dict) and "const" in prop and isinstance(prop["const"], str) and key in own.required:
                own.tags[key] = prop["const"]
            else:
                own.props[key] = (prop, ptr + pointer("properties", key))
        own.required -= own.tags.keys()
        parts: list[list[Shape]] = []
        if "$ref" in node:
            name = self.ref_name(node["$ref"], ptr)
            if name is not None:
                parts.append(self.def_shapes(name, stack))
        for index, item in enumerate(node.get("allOf", []) or []):
            if isinstance(item, dict) and self.is_object_like(item):
                parts.append(self.shapes(item, ptr + pointer("allOf", index), stack))
        parts.append([own])
        tag_key = discriminator_key(node)
        for key in ("oneOf", "anyOf"):
            variants = node.get(key)
            if not isinstance(variants, list) or not variants:
                continue
            found: list[Shape] = []
            siblings = [(variant, ptr + pointer(key, index)) for index, variant in enumerate(variants)]
            for variant, vptr in siblings:
                if not self.is_object_like(variant) and not is_tag_only(variant):
                    self.problems.append(error(vptr, "a variant of an object union must be an object"))
                    continue
                label = self.variant_label(variant, tag_key, vptr, siblings, stack)
                for shape in self.shapes(variant, vptr, stack):
                    found.append(replace(shape, labels=(label, *shape.labels)))
            parts.append(found)
        result = []
        for combo in itertools.product(*parts):
            merged = Shape(pointer=ptr)
            for shape in combo:
                merged = merge(merged, shape)
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


def discriminator_key(node: Any) -> str | None:
    """The tag property an OpenAPI-style ``discriminator`` names, if any."""
    discriminator = node.get("discriminator", {}) if isinstance(node, dict) else {}
    return discriminator.get("propertyName") if isinstance(discriminator, dict) else None


def pure_ref(node: Any) -> str | None:
    """The ref of ``{"$ref": X}`` or ``{"allOf": [{"$ref": X}]}`` with nothing else that matters."""
    if not isinstance(node, dict) or (STRUCTURAL - {"$ref", "allOf"}) & node.keys():
        return None
    if "$ref" in node and "allOf" not in node:
        return node["$ref"] if isinstance(node["$ref"], str) else None
    parts = node.get("allOf")
    if "$ref" not in node and isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict):
        return pure_ref(parts[0])
    return None


def is_tag_only(node: Any) -> bool:
    return isinstance(node, dict) and isinstance(node.get("properties"), dict)


def text(value: Any) -> str:
    """A ``description`` (or ``title``) as text; anything that is not a string is no text."""
    return value if isinstance(value, str) else ""


@dataclass
class UnionParts:
    """A union as read from the schema: its object variants' shapes and its other options."""

    name: str
    description: str
    pointer: str
    shapes: list[Shape]  # object variants
    others: list[Any]  # non-object variants: type expressions (acpgen.model.types.TypeExpr)
    tag_key: str | None
