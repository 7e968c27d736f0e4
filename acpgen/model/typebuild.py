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

The work is split by concern: object shapes and variant labels (:mod:`.shapes`), type expressions
and lifting (:mod:`.exprs`), what a type accepts and how it encodes (:mod:`.codecs`), and how a
decoder picks a union's variant (:mod:`.unions`). This module reads the ``$defs`` with them,
names the variant classes (:mod:`.names`) and assembles the frozen model.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..diagnostics import DiagnosticError, error, pointer
from ..schema.loader import LoadedSchema
from ..schema.pointers import def_name
from .classes import ClassDef, Field, Tag
from .codecs import Codecs
from .cycles import alias_cycles
from .exprs import ExprReader, is_literal_union, leniency
from .namelock import NameLock, def_key, field_key, variant_key
from .names import type_name, unique_field_names, variant_names
from .shapes import Shape, ShapeReader, UnionParts, discriminator_key, pure_ref, text
from .typedefs import DefKind, TypeDef, TypeModel
from .types import Encoding, ListOf, Literals, MapOf, Nullable, Ref, TypeExpr
from .unions import union_decision


def build_types(schema: LoadedSchema, overrides: dict[str, str] | None = None, names_source: str = "names file",
                locked: Mapping[str, str] | None = None) -> TypeModel:
    """Read every ``$def`` of ``schema`` into the type model. Raises DiagnosticError.

    ``overrides``: the names file's variant names (``"SessionUpdate/plan"`` -> ``"Plan"``), read
    from ``names_source`` (for messages). ``locked``: the names a previous output recorded (see
    :mod:`acpgen.model.namelock`).
    """
    reader = _DefReader(schema.defs, NameLock(locked))
    reader.read()
    names = reader.variant_names(overrides or {}, names_source)
    model = _Assembler(reader, names).model()
    cycles = alias_cycles(model.types)
    if cycles:
        raise DiagnosticError(cycles)
    return model


def _stop_on(problems: list[Any]) -> None:
    if problems:
        raise DiagnosticError(sorted(set(problems), key=lambda d: (d.pointer, d.message)))


class _DefReader:
    """Reads each ``$def``, and each type lifted out of a property, into a class, a union or an
    alias; every problem of the schema is collected before the build stops."""

    def __init__(self, defs: dict[str, Any], lock: NameLock) -> None:
        self.defs = defs
        self.lock = lock
        self.def_names = {name: lock.type_name(def_key(name), type_name(name)) for name in defs}
        self.shapes = ShapeReader(defs)
        self.exprs = ExprReader(self.shapes, self.def_names, lock)
        self.problems = self.shapes.problems
        self.classes: dict[str, Shape] = {}  # class name -> its shape
        self.unions: dict[str, UnionParts] = {}
        self.aliases: dict[str, tuple[TypeExpr, str, str]] = {}  # alias/literals name -> (expr, description, ptr)

    def read(self) -> None:
        self.check_def_names()
        for name in sorted(self.defs):
            self.read_def(name)
        for name, shape in sorted(self.classes.items()):
            self.read_properties(name, [shape])
        for name, u in sorted(self.unions.items()):
            self.read_properties(name, u.shapes)
        self.read_lifted()
        _stop_on(self.problems)

    def check_def_names(self) -> None:
        same_name: dict[str, list[str]] = {}
        for name in sorted(self.defs):
            same_name.setdefault(self.def_names[name], []).append(pointer("$defs", name))
        for py_name, ptrs in sorted(same_name.items()):
            if len(ptrs) > 1:
                listed = ", ".join("#" + p for p in ptrs)
                self.problems.append(error(ptrs[-1], f"two types would be named {py_name!r} ({listed}); rename one"))

    def read_def(self, name: str) -> None:
        node = self.defs[name]
        ptr = pointer("$defs", name)
        py_name = self.def_names[name]
        description = text(node.get("description"))
        if self.shapes.is_object_like(node):
            shapes = self.shapes.def_shapes(name)
            if len(shapes) == 1 and not shapes[0].labels:
                self.classes[py_name] = replace(shapes[0], origin=None)
            elif len(shapes) == 1 and shapes[0].origin is not None:
                self.aliases[py_name] = (Ref(self.def_names[shapes[0].origin]), description, ptr)
            else:
                self.unions[py_name] = UnionParts(py_name, description, ptr, shapes, [], discriminator_key(node))
            return
        key = "oneOf" if isinstance(node.get("oneOf"), list) else "anyOf" if isinstance(node.get("anyOf"), list) else None
        if key is not None and not is_literal_union(node[key]):
            variants = [(v, ptr + pointer(key, i)) for i, v in enumerate(node[key])]
            self.read_union(py_name, node, ptr, variants, description)
        else:
            self.aliases[py_name] = (self.exprs.texpr(node, ptr, py_name, ""), description, ptr)

    def read_union(self, py_name: str, node: Any, ptr: str, variants: list[tuple[Any, str]], description: str) -> None:
        """A union some of whose variants are not objects (or a union lifted out of a property)."""
        shapes: list[Shape] = []
        others: list[TypeExpr] = []
        tag_key = discriminator_key(node)
        for variant, vptr in variants:
            pure = pure_ref(variant)
            target = self.shapes.ref_name(pure, vptr) if pure is not None else None
            if target is not None and self.shapes.is_object_like(self.defs[target]) and len(self.shapes.def_shapes(target)) > 1:
                others.append(Ref(self.def_names[target]))
            elif self.shapes.is_object_like(variant):
                label = self.shapes.variant_label(variant, tag_key, vptr, variants)
                for shape in self.shapes.shapes(variant, vptr):
                    shapes.append(replace(shape, labels=(label, *shape.labels)))
            else:
                others.append(self.exprs.texpr(variant, vptr, py_name, "Option"))
        self.unions[py_name] = UnionParts(py_name, description, ptr, shapes, others, tag_key)

    def read_properties(self, owner: str, shapes: list[Shape]) -> None:
        for shape in shapes:
            for wire, (prop, pptr) in shape.props.items():
                self.exprs.texpr(prop, pptr, owner, wire)

    def read_lifted(self) -> None:
        """The unions and objects lifted out of properties, named after their owner and property;
        reading them may lift more."""
        done: set[str] = set()
        while set(self.exprs.lifted()) - done:
            for name in sorted(set(self.exprs.lifted()) - done):
                done.add(name)
                lifted = self.exprs.lifted()[name]
                what = "union" if lifted.variants is not None else "object"
                if name in self.unions or name in self.classes or name in self.aliases:
                    self.problems.append(error(lifted.pointer, f"the inline {what} here would be named {name}, which is taken"))
                    continue
                if lifted.variants is not None:
                    self.read_union(name, {}, lifted.pointer, list(lifted.variants), lifted.description)
                    self.read_properties(name, self.unions[name].shapes)
                    continue
                shapes = self.shapes.shapes(lifted.node, lifted.pointer)
                if len(shapes) == 1 and not shapes[0].labels:
                    self.classes[name] = replace(shapes[0], origin=None, pointer=lifted.pointer)
                    self.read_properties(name, [self.classes[name]])
                else:
                    self.unions[name] = UnionParts(name, lifted.description, lifted.pointer, shapes, [], None)
                    self.read_properties(name, shapes)

    def variant_names(self, overrides: dict[str, str], names_source: str) -> dict[tuple[str, tuple[str, ...]], str]:
        """The name of every generated variant class, by (union, labels)."""
        wanted: dict[tuple[str, tuple[str, ...]], str] = {}  # (union, labels) -> the variant's pointer
        class_defs = {k for k, v in self.def_names.items() if v in self.classes}
        for u in self.unions.values():
            for shape in u.shapes:
                if shape.origin is None or shape.origin not in class_defs:
                    key = (u.name, shape.labels)
                    if wanted.setdefault(key, shape.pointer) != shape.pointer:
                        first, second = sorted((wanted[key], shape.pointer))
                        label = "/".join(shape.labels)
                        self.problems.append(error(second, f"this variant of {u.name} is labelled {label!r} like the "
                                                           f"one at #{first}: give one another tag or title"))
        _stop_on(self.problems)
        taken = {self.def_names[name]: pointer("$defs", name) for name in self.defs}
        taken.update((name, lifted.pointer) for name, lifted in self.exprs.lifted().items() if name not in taken)
        return variant_names(wanted, taken, overrides, names_source, self.lock)


class _Assembler:
    """Makes the frozen type definitions out of what the reader found and the variant names."""

    def __init__(self, reader: _DefReader, names: dict[tuple[str, tuple[str, ...]], str]) -> None:
        self.reader = reader
        self.names = names
        aliases = {name: expr for name, (expr, _, _) in reader.aliases.items()}
        self.codecs = Codecs(set(reader.classes) | set(names.values()), reader.unions, aliases)
        # the names lock's record of this model: key -> Python name
        lifted, lifted_keys = reader.exprs.lifted(), reader.exprs.lifted_keys()
        self.record = {def_key(d): py for d, py in reader.def_names.items()}
        self.record.update((variant_key(*k), name) for k, name in names.items())
        self.record.update((key, name) for name, key in lifted_keys.items() if name in lifted)
        self.class_keys = {py: def_key(d) for d, py in reader.def_names.items()}
        self.class_keys.update(lifted_keys)

    def leaf_name(self, union: str, shape: Shape) -> str:
        """The class that decodes an object variant of ``union``."""
        if (union, shape.labels) in self.names:
            return self.names[(union, shape.labels)]
        assert shape.origin is not None
        return self.reader.def_names[shape.origin]

    def make_class(self, name: str, shape: Shape, labels: tuple[str, ...] = (), union: str | None = None) -> ClassDef:
        class_key = variant_key(union, labels) if union is not None else self.class_keys[name]
        tag_names = unique_field_names(list(shape.tags))
        locked = self.reader.lock.fields(class_key)
        field_names = unique_field_names(list(shape.props), frozenset(tag_names.values()), locked)
        self.record.update((field_key(class_key, wire), py) for wire, py in field_names.items())
        fields = []
        for wire, (node, ptr) in shape.props.items():
            t = self.reader.exprs.texpr(node, ptr, name, wire)
            codec = self.codecs.resolve_scalar(t.inner if isinstance(t, Nullable) else t)
            has_default = isinstance(node, dict) and "default" in node
            required = wire in shape.required
            salvage_with, null_reads_as = leniency(node, t, required)
            fields.append(
                Field(
                    wire_name=wire,
                    py_name=field_names[wire],
                    type=t,
                    codec=codec,
                    encoding=self.codecs.encoding(codec),
                    required=required,
                    nullable="NoneType" in self.codecs.accepts(t),
                    description=text(node.get("description")) if isinstance(node, dict) else "",
                    default=node.get("default") if has_default else None,
                    has_default=has_default,
                    salvage_with=salvage_with,
                    null_reads_as=null_reads_as,
                )
            )
        tags = tuple(Tag(k, tag_names[k], v) for k, v in sorted(shape.tags.items()))
        return ClassDef(name, shape.description, tuple(fields), tags, shape.pointer, labels, union)

    def model(self) -> TypeModel:
        types: list[TypeDef] = []
        made: set[str] = set()
        for name, shape in self.reader.classes.items():
            cls = self.make_class(name, shape)
            types.append(TypeDef(name, DefKind.CLASS, shape.description, shape.pointer, (), classes=(cls,),
                                 encoding=Encoding.METHOD))
        for name, u in self.reader.unions.items():
            variant_classes = []
            for shape in u.shapes:
                leaf = self.leaf_name(name, shape)
                if (name, shape.labels) in self.names and leaf not in made:
                    made.add(leaf)
                    variant_classes.append(self.make_class(leaf, shape, shape.labels, name))
            options = tuple(dict.fromkeys([*(Ref(self.leaf_name(name, s)) for s in u.shapes), *u.others]))
            decision, helpers = union_decision(u, functools.partial(self.leaf_name, name), self.codecs)
            types.append(TypeDef(name, DefKind.UNION, u.description, u.pointer, (), classes=tuple(variant_classes),
                                 options=options, decision=decision, helpers=helpers,
                                 encoding=self.codecs.encoding(Ref(name))))
        for name, (expr, description, ptr) in self.reader.aliases.items():
            kind = DefKind.LITERALS if isinstance(expr, Literals) else DefKind.ALIAS
            types.append(TypeDef(name, kind, description, ptr, (), target=expr, encoding=self.codecs.encoding(expr)))
        py_by_def = self.reader.def_names
        def_by_py = {py: d for d, py in py_by_def.items()}
        known = set(py_by_def.values()) | set(self.reader.unions)
        finished = []
        for t in types:
            in_schema = {py_by_def[d] for d in _schema_refs(self.reader.defs.get(def_by_py.get(t.name, ""))) if d in py_by_def}
            refs = sorted((_refs_of(t) | in_schema) & known - {t.name})
            finished.append(replace(t, refs=tuple(refs)))
        finished.sort(key=lambda t: t.name)
        return TypeModel(types=tuple(finished), names=dict(sorted(self.record.items())))


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
    """The type names a definition's fields and options use."""
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
