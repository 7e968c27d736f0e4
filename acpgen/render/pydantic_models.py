"""The pydantic flavour of ``models.py``: pydantic v2 classes made by datamodel-code-generator.

acpgen's type model decides everything (names, fields, tags, unions, what ``null`` means). This
module writes that model as a JSON Schema in which every class, union, literal set and alias is a
``$def`` of its final Python name and every property names its Python name (``aliases``), so
datamodel-code-generator has nothing left to name or number, and the data acpgen's class
template reads (:mod:`.pydantic_job` runs it). acpgen adds what it cannot write: the module's
header and the footer that registers each type's decoder with ``_codec``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model.classes import ClassDef, Field, Tag
from ..model.decisions import Decision, Dispatch, Leaf, TryEach
from ..model.literals import py_literal
from ..model.typedefs import DefKind, TypeDef
from ..model.types import (
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
from .environment import docstring
from .flavours import FLAVOURS as FLAVOURS  # noqa: PLC0414  (named here before its own module)
from .modules import BY_NAME

#: What ``--models pydantic`` needs: acpgen's ``pydantic`` extra, pinned as in pyproject.toml.
REQUIREMENT = "datamodel-code-generator==0.89.*"
#: The error without it: commands that work where acpgen is installed from a clone (no package
#: index serves acpgen itself).
INSTALL_HINT = (
    f"--models pydantic needs datamodel-code-generator: python -m pip install '{REQUIREMENT}'"
    " (or, in acpgen's clone: python -m pip install '.[pydantic]')"
)


def flavour_schema(types: tuple[TypeDef, ...]) -> dict[str, Any]:
    """The type model as a JSON Schema whose ``$defs`` are exactly the generated types."""
    defs: dict[str, Any] = {}
    bounded: dict[str, Any] = {}
    for t in types:
        for cls in t.classes:
            defs[cls.name] = _class_schema(cls, bounded)
        if t.kind is DefKind.UNION:
            defs[t.name] = _union_schema(t, bounded)
        elif t.kind is not DefKind.CLASS:
            assert t.target is not None
            defs[t.name] = _expr_schema(t.target, None if isinstance(t.target, Scalar) else bounded)
        if t.description and t.kind is not DefKind.CLASS:
            defs[t.name]["description"] = t.description
    defs.update(bounded)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": dict(sorted(defs.items()))}


def _class_schema(cls: ClassDef, bounded: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for tag in cls.tags:
        properties[tag.wire_name] = {"const": tag.value}
    for f in sorted(cls.fields, key=lambda f: not f.required):  # the wire's order: the dataclass flavour's
        prop = _expr_schema(f.type, bounded)
        if f.description:
            prop = {**prop, "description": f.description} if "$ref" not in prop else {"allOf": [prop], "description": f.description}
        properties[f.wire_name] = prop
    required = [t.wire_name for t in cls.tags] + [f.wire_name for f in cls.fields if f.required]
    node: dict[str, Any] = {"type": "object", "properties": properties}  # extra="allow" is AcpModel's
    if required:
        node["required"] = required
    if cls.description:
        node["description"] = cls.description
    return node


def _union_schema(t: TypeDef, bounded: dict[str, Any]) -> dict[str, Any]:
    members = [_expr_schema(o, bounded) for o in t.options]
    key = _discriminator(t)
    if key is None:
        return {"anyOf": members}
    return {"oneOf": members, "discriminator": {"propertyName": key}}


#: The most classes a union tried in turn is written for with a discriminator (one member per
#: set of classes whose guards an object can pass: 2**n - 1); above, pydantic-core tries each.
MOST_TRIED = 4


def tried_in_turn(t: TypeDef) -> tuple[tuple[Ref, tuple[str, ...]], ...]:
    """The classes of a union acpgen decodes by trying each in turn (the first that decodes wins),
    in that order, with the keys an object must have for each to be worth trying. Empty for any
    other union."""
    decision = t.decision
    if not isinstance(decision, TryEach) or not all(isinstance(d, Leaf) for d in decision.options):
        return ()
    by_name = {o.name: o for o in t.options if isinstance(o, Ref)}
    leaves = [d for d in decision.options if isinstance(d, Leaf)]
    if len(by_name) != len(t.options) or sorted(d.label for d in leaves) != sorted(by_name):
        return ()
    return tuple((by_name[d.label], d.guard) for d in leaves)


def union_annotation(t: TypeDef, classes: frozenset[str] = frozenset()) -> tuple[str, tuple[str, ...]] | None:
    """The annotation of a union of classes as acpgen writes it for pydantic-core, and the names
    of ``_pydantic`` it uses; None for the others (datamodel-code-generator's own). Every such
    union is serialized by the class of its value (``AsAny``), not by trying its members.

    A union tagged by one property is pydantic's discriminated union. One acpgen tells apart by
    a tag with a default for an absent or unknown value (an open union's "other" variant), maybe
    by a nested tag, picks its member in Python (``by_tag``; ``classes``: the names of every
    class). A union acpgen tries in
    turn picks, in Python, the classes whose guard keys the object has (``in_turn``), and tries
    those in acpgen's order (``InTurn``): what acpgen's decoder does, without a failed attempt
    at a class the object cannot be."""
    key = _discriminator(t)
    if key is not None:
        members = " | ".join(o.name for o in t.options if isinstance(o, Ref))
        field = next(tag.py_name for cls in t.classes for tag in cls.tags if tag.wire_name == key)
        return f"Annotated[{members}, Field(discriminator={py_literal(field)}), AsAny]", ("AsAny",)
    by_tags = _by_tag(t, classes)
    if by_tags is not None:
        return by_tags
    tried = tried_in_turn(t)
    if not tried:
        return None
    names = [ref.name for ref, _guard in tried]
    if len(tried) > MOST_TRIED:
        return f"Annotated[{' | '.join(names)}, InTurn, AsAny]", ("AsAny", "InTurn")
    tagged = []
    for chosen in range(1, 2 ** len(names)):
        subset = [name for i, name in enumerate(names) if chosen >> i & 1]
        member = subset[0] if len(subset) == 1 else f"Annotated[{' | '.join(subset)}, InTurn]"
        tagged.append(f"Annotated[{member}, Tag({py_literal('|'.join(subset))})]")
    guards = ", ".join(f"({ref.name}, {_tuple_literal(guard)})" for ref, guard in tried)
    return f"Annotated[{' | '.join(tagged)}, in_turn({guards}), AsAny]", ("AsAny", "InTurn", "Tag", "in_turn")


def _by_tag(t: TypeDef, classes: frozenset[str]) -> tuple[str, tuple[str, ...]] | None:
    """A union acpgen tells apart by tags, each with a default, as ``by_tag`` writes it: one member
    per outcome, a class or the classes it tries in turn; None for another union."""
    groups: list[tuple[str, ...]] = []
    tree = _tag_tree(t.decision, classes, groups) if isinstance(t.decision, Dispatch) else None
    options = [o.name for o in t.options if isinstance(o, Ref)]
    if tree is None or len(options) != len(t.options) or {c for g in groups for c in g} != set(options):
        return None
    members = []
    for group in sorted(dict.fromkeys(groups), key=lambda g: [options.index(name) for name in g]):
        member = group[0] if len(group) == 1 else f"Annotated[{' | '.join(group)}, InTurn]"
        members.append(f"Annotated[{member}, Tag({py_literal('|'.join(group))})]")
    uses = ("AsAny", "Tag", "by_tag") + (("InTurn",) if any(len(g) > 1 for g in groups) else ())
    return f"Annotated[{' | '.join(members)}, {tree}, AsAny]", tuple(sorted(uses))


def _tag_tree(d: Decision | None, classes: frozenset[str], groups: list[tuple[str, ...]]) -> str | None:
    """``d`` as ``by_tag`` takes it: a class, a tuple of classes tried in turn, or a nested
    ``by_tag(...)``, each outcome added to ``groups``. None where ``by_tag`` cannot decide as
    acpgen does: a tag without a default, or whose values are not strings, a leaf not a class."""
    if isinstance(d, Leaf) and d.label in classes:
        groups.append((d.label,))
        return d.label
    if isinstance(d, TryEach) and all(isinstance(o, Leaf) and o.label in classes for o in d.options):
        groups.append(tuple(o.label for o in d.options))
        return f"({', '.join(groups[-1])})"
    if not isinstance(d, Dispatch) or d.default is None or not all(isinstance(v, str) for v, _ in d.cases):
        return None
    cases = []
    for value, case in d.cases:
        written = _tag_tree(case, classes, groups)
        if written is None:
            return None
        cases.append(f"{py_literal(value)}: {written}")
    default = _tag_tree(d.default, classes, groups)
    return None if default is None else f"by_tag({py_literal(d.key)}, {{{', '.join(cases)}}}, {default})"


def _tuple_literal(items: tuple[str, ...]) -> str:
    """A tuple of strings as black writes it: ``()``, ``("a",)``, ``("a", "b")``."""
    written = ", ".join(py_literal(item) for item in items)
    return f"({written},)" if len(items) == 1 else f"({written})"


def _discriminator(t: TypeDef) -> str | None:
    """The tag a union is discriminated by in pydantic-core, when every member is a class with its
    own value of that tag and nothing else decodes (no default, no nested decision)."""
    decision = t.decision
    if not isinstance(decision, Dispatch) or decision.default is not None:
        return None
    if len(decision.cases) != len(t.options) or not all(isinstance(d, Leaf) for _, d in decision.cases):
        return None
    by_name = {c.name: c for c in t.classes}
    for option in t.options:
        cls = by_name.get(option.name) if isinstance(option, Ref) else None
        if cls is None or [tag.wire_name for tag in cls.tags] != [decision.key]:
            return None
    return decision.key


_KIND_TYPES = {
    JsonKind.NULL: "null",
    JsonKind.BOOLEAN: "boolean",
    JsonKind.INTEGER: "integer",
    JsonKind.NUMBER: "number",
    JsonKind.STRING: "string",
}


def _expr_schema(t: TypeExpr, bounded: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema of ``t``. A bounded scalar is a ``$ref`` to a private alias, added to
    ``bounded``: datamodel-code-generator would lift it into a numbered alias of its own."""
    if isinstance(t, Scalar):
        if t.bounded and bounded is not None:
            name = bounded_name(t)
            if bounded.setdefault(name, _expr_schema(t)) != _expr_schema(t):
                name = "_" + "".join(part.capitalize() for part in t.token.split("_"))
                bounded[name] = _expr_schema(t)
            return {"$ref": f"#/$defs/{name}"}
        node: dict[str, Any] = {"type": _KIND_TYPES[t.kind]}
        if t.minimum is not None:
            node["minimum"] = t.minimum
        if t.maximum is not None:
            node["maximum"] = t.maximum
        return node
    if isinstance(t, AnyValue):
        return {}
    if isinstance(t, Literals):
        closed = {"type": _KIND_TYPES[t.base.kind], "enum": list(t.values)}
        return {"anyOf": [closed, _expr_schema(t.base, bounded)]} if t.open else closed
    if isinstance(t, Ref):
        return {"$ref": f"#/$defs/{t.name}"}
    if isinstance(t, ListOf):
        return {"type": "array", "items": _expr_schema(t.item, bounded)}
    if isinstance(t, MapOf):
        return {"type": "object", "additionalProperties": _expr_schema(t.value, bounded)}
    if isinstance(t, Nullable):
        return {"anyOf": [_expr_schema(t.inner, bounded), {"type": "null"}]}
    raise AssertionError(t)


def bounded_name(t: Scalar) -> str:
    """The private alias of a bounded scalar: ``_Uint32``, else from its bounds."""
    return "_" + (t.format or t.token).capitalize()


def property_aliases(classes: tuple[ClassDef, ...]) -> dict[str, str]:
    """Every property's Python name, ``Class.wireName`` -> ``py_name``: acpgen's naming rules."""
    found: dict[str, str] = {}
    for cls in classes:
        for item in _properties(cls):
            if item.py_name != item.wire_name:
                found[f"{cls.name}.{item.wire_name}"] = item.py_name
    return found


def _properties(cls: ClassDef) -> tuple[Tag | Field, ...]:
    return (*cls.tags, *cls.fields)


def union_data(types: tuple[TypeDef, ...]) -> dict[str, dict[str, Any]]:
    """Per union alias of classes, for its template: its annotation (:func:`union_annotation`),
    and the names of ``_pydantic`` it uses."""
    found = {}
    classes = frozenset(c.name for t in types for c in t.classes)
    for t in types:
        written = union_annotation(t, classes) if t.kind is DefKind.UNION else None
        if written is not None:
            found[t.name] = {"acp_annotation": written[0], "acp_uses": written[1]}
    return found


def template_data_of(classes: tuple[ClassDef, ...]) -> dict[str, dict[str, Any]]:
    """Per class, for the class template, by wire name: each property's Python name and alias
    (a literal, or None when it is the Python name), the tags' values, the optional properties
    whose JSON ``null`` the schema refuses, the properties that may be ``null``, and the
    ``lenient(...)`` of those a decode may repair."""
    return {
        cls.name: {
            "acp_fields": {
                item.wire_name: (item.py_name, None if item.py_name == item.wire_name else py_literal(item.wire_name))
                for item in _properties(cls)
            },
            "acp_tags": {t.wire_name: py_literal(t.value) for t in cls.tags},
            "acp_not_null": [f.wire_name for f in cls.fields if not f.required and not f.nullable],
            "acp_nullable": [f.wire_name for f in cls.fields if f.nullable or isinstance(f.type, AnyValue)],
            "acp_lenient": {f.wire_name: lenient_marker(f) for f in cls.fields if f.lenient},
        }
        for cls in classes
    }


#: An empty value of the type model (a Python literal) as ``lenient`` takes it: what makes it.
_EMPTY = {"None": "None", "[]": "list", "{}": "dict"}


def lenient_marker(f: Field) -> str:
    """The ``lenient(...)`` of a field a decode may repair (see ``_pydantic.lenient``): the
    repairs the type model gives it, as the dataclass flavour's decoders make them."""
    args = []
    if f.salvage_with is not None:
        args.append(f"on_error={_EMPTY[f.salvage_with]}")
    if f.null_read_as_empty is not None:
        args.append(f"on_null={_EMPTY[f.null_read_as_empty]}")
    if f.skips_invalid_items:
        args.append("skip_invalid=True")
    return f"lenient({', '.join(args)})"


def support_used(classes: dict[str, dict[str, Any]], unions: dict[str, dict[str, Any]]) -> set[str]:
    """The names of ``_pydantic`` the class template (``classes``: :func:`template_data_of`) and
    the unions write, besides ``AcpModel`` and ``decoder``."""
    used = {name for data in unions.values() for name in data["acp_uses"]}
    for data in classes.values():
        if data["acp_not_null"]:
            used.add("NotNull")
        if set(data["acp_nullable"]) - set(data["acp_not_null"]) - set(data["acp_tags"]):  # the template's order
            used.add("NullSeen")
        if data["acp_lenient"]:
            used.add("lenient")
    return used


def template_imports(classes: dict[str, dict[str, Any]]) -> tuple[str, ...]:
    """The imports of what the class template (``classes``: :func:`template_data_of`) writes
    itself: ``Annotated`` around a field with an alias or a marker, and ``Field`` for an alias.
    datamodel-code-generator imports them only for its own fields' needs (with none of its own, a
    small schema's module would lack them)."""
    data = classes.values()
    aliased = any(alias is not None for d in data for _name, alias in d["acp_fields"].values())
    marked = any(d["acp_not_null"] or d["acp_lenient"] or set(d["acp_nullable"]) - set(d["acp_tags"]) for d in data)
    return (("from typing import Annotated",) if aliased or marked else ()) + (
        ("from pydantic import Field",) if aliased else ()
    )


def module_header(header_text: str, schema_name: str, uses: Iterable[str] = (), imports: Iterable[str] = ()) -> str:
    """The models module's header; it imports the names of ``_pydantic`` that it and the unions
    use (``uses``), and ``imports`` (statements; merged with datamodel-code-generator's by
    :func:`.pydantic_layout.sorted_imports`)."""
    support = sorted({"AcpModel", "decoder", *uses})
    doc = (
        f"Every type of {schema_name}: pydantic v2 models, unions and literal sets, with exact JSON codecs.\n\n"
        "Made by datamodel-code-generator from acpgen's type model. Needs pydantic (v2) and nothing else "
        "outside the standard library. Each class has ``from_json(data)`` and ``to_json()``; optional "
        "fields are ``None`` when absent, an explicit ``null`` sent by the peer is sent back out, and "
        "properties a class does not know are kept (``extra``) and sent back out too."
    )
    return (
        f"{header_text}\n{docstring(doc)}\n\nfrom __future__ import annotations\n\n"
        + "".join(f"{statement}\n" for statement in imports)
        + f"from .{_parent('_codec.py')} import _codec\nfrom .{BY_NAME['_pydantic.py'].dotted} import {', '.join(support)}"
    )


def _parent(name: str) -> str:
    """The package a runtime module is in, dotted from the package's root: ``_runtime.wire``, or ``""``."""
    return BY_NAME[name].dotted.rpartition(".")[0]
