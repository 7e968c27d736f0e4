"""The type model: every schema type as plain frozen data, ready for the models templates.

A *type expression* (:data:`TypeExpr`) says what a value looks like (a string, a list of a named
type, ...). A *definition* (:class:`TypeDef`) is one ``$def`` of the schema: a class, a union of
classes and other types, a set of literal values, or an alias. Classes are the only things that
hold fields; union variants that the schema writes inline become classes of their own, named by
:mod:`acpgen.model.names`.

Each expression knows the name of the generated function that decodes it (``fn``), derived from
its structure only, so two runs over the same schema name every helper the same way.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

#: A JSON value as found in a schema (``const``, ``default``, ``enum`` entries).
Json = None | bool | int | float | str | list | dict  # type: ignore[type-arg]


class JsonKind(str, enum.Enum):
    """The kinds of JSON value, as the decoders tell them apart (by the Python class)."""

    NULL = "null"
    BOOLEAN = "boolean"
    INTEGER = "integer"
    NUMBER = "number"  # a float; an integer is a number too
    STRING = "string"
    ARRAY = "array"
    OBJECT = "object"


#: How a decoder tests a JSON kind: ``value.__class__ is <class>``.
KIND_CLASSES: dict[JsonKind, tuple[str, ...]] = {
    JsonKind.NULL: ("NoneType",),
    JsonKind.BOOLEAN: ("bool",),
    JsonKind.INTEGER: ("int",),
    JsonKind.NUMBER: ("float", "int"),
    JsonKind.STRING: ("str",),
    JsonKind.ARRAY: ("list",),
    JsonKind.OBJECT: ("dict",),
}

#: How a diagnostic or a decode error names each JSON kind.
KIND_WORDS = {
    JsonKind.NULL: "null",
    JsonKind.BOOLEAN: "a boolean",
    JsonKind.INTEGER: "an integer",
    JsonKind.NUMBER: "a number",
    JsonKind.STRING: "a string",
    JsonKind.ARRAY: "an array",
    JsonKind.OBJECT: "an object",
}


class Encoding(str, enum.Enum):
    """How a value of a type becomes JSON."""

    AS_IS = "as_is"  # already JSON: str, int, float, bool, None, raw values, lists of those
    METHOD = "method"  # a class instance (or a union of classes): ``value.to_json()``
    LIST = "list"  # a list of class instances: ``[x.to_json() for x in value]``
    MAP = "map"  # a dict of class instances: ``{k: x.to_json() for k, x in value.items()}``
    GENERIC = "generic"  # anything else: the generic ``encode``


@dataclass(frozen=True)
class Scalar:
    """A string, integer, number, boolean or null, with the bounds its ``format`` and
    ``minimum``/``maximum`` give."""

    kind: JsonKind
    format: str | None = None
    form = "scalar"
    minimum: int | float | None = None
    maximum: int | float | None = None

    @property
    def annotation(self) -> str:
        return {
            JsonKind.NULL: "None",
            JsonKind.BOOLEAN: "bool",
            JsonKind.INTEGER: "int",
            JsonKind.NUMBER: "float",
            JsonKind.STRING: "str",
        }[self.kind]

    @property
    def classes(self) -> tuple[str, ...]:
        return KIND_CLASSES[self.kind]

    @property
    def expected(self) -> str:
        word = KIND_WORDS[self.kind]
        if self.minimum is not None and self.maximum is not None:
            return f"{word} in [{self.minimum}, {self.maximum}]"
        if self.minimum is not None:
            return f"{word} >= {self.minimum}"
        if self.maximum is not None:
            return f"{word} <= {self.maximum}"
        return word

    @property
    def bounded(self) -> bool:
        return self.minimum is not None or self.maximum is not None

    @property
    def token(self) -> str:
        parts = [self.kind.value]
        for bound in (self.minimum, self.maximum):
            if bound is not None:
                parts.append(str(bound).replace("-", "m").replace(".", "_").replace("+", ""))
            elif self.bounded:
                parts.append("x")
        return "_".join(parts)

    @property
    def fn(self) -> str:
        return "_d_" + self.token


@dataclass(frozen=True)
class AnyValue:
    """Any JSON value, kept as it came (``{}`` or ``true`` in the schema)."""

    form = "any"
    token = "any"
    fn = "_codec.d_any"


@dataclass(frozen=True)
class Literals:
    """A set of ``const`` values. An *open* set also accepts any other value of ``base``."""

    values: tuple[Json, ...]  # in a fixed order: sorted by (type, value)
    base: Scalar  # the scalar kind all values share
    open: bool = False
    form = "literals"

    @property
    def token(self) -> str:
        return ("open_" if self.open else "") + "lit_" + format(abs(hash_values(self.values)), "x")

    @property
    def fn(self) -> str:
        return "_d_" + self.token


@dataclass(frozen=True)
class Ref:
    """A named type: a ``$def`` or a generated variant class."""

    name: str
    form = "ref"

    @property
    def token(self) -> str:
        return self.name

    @property
    def fn(self) -> str:
        return "_d_" + self.name


@dataclass(frozen=True)
class ListOf:
    item: TypeExpr
    form = "list"

    @property
    def token(self) -> str:
        return "list_" + self.item.token

    @property
    def fn(self) -> str:
        return "_d_" + self.token


@dataclass(frozen=True)
class MapOf:
    """An object used as a map from strings to ``value``."""

    value: TypeExpr
    form = "map"
    expected = "an object"

    @property
    def token(self) -> str:
        return "map_" + self.value.token

    @property
    def fn(self) -> str:
        return "_d_" + self.token


@dataclass(frozen=True)
class Nullable:
    """``inner`` or JSON ``null`` (Python ``None``)."""

    inner: TypeExpr
    form = "nullable"

    @property
    def token(self) -> str:
        return "opt_" + self.inner.token

    @property
    def fn(self) -> str:
        return "_d_" + self.token


TypeExpr = Scalar | AnyValue | Literals | Ref | ListOf | MapOf | Nullable


def hash_values(values: tuple[Json, ...]) -> int:
    """A stable (not salted) hash of literal values, for helper names."""
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(list(values), sort_keys=True).encode()).digest()
    return int.from_bytes(digest[:6], "big")


@dataclass(frozen=True)
class Field:
    """One property of a class."""

    wire_name: str  # "sessionId"
    py_name: str  # "session_id"
    type: TypeExpr  # for the annotation: keeps the names the schema uses
    codec: TypeExpr  # for decoding: ``type`` with aliases of scalars resolved
    encoding: Encoding
    required: bool
    nullable: bool  # JSON null is a valid value
    description: str
    default: Json = None  # the schema's ``default`` (documentation only: never filled in)
    has_default: bool = False

    @property
    def track_null(self) -> bool:
        """An optional field whose explicit ``null`` must be told apart from absence."""
        return self.nullable and not self.required


@dataclass(frozen=True)
class Tag:
    """A property whose value is fixed for a class: the tag of a union variant."""

    wire_name: str
    py_name: str
    value: Json


@dataclass(frozen=True)
class ClassDef:
    """A generated dataclass."""

    name: str
    description: str
    fields: tuple[Field, ...]
    tags: tuple[Tag, ...]  # fixed properties, always sent
    pointer: str  # JSON pointer of the schema node it comes from
    labels: tuple[str, ...] = ()  # for a union variant: its tag values / titles, outermost first
    union: str | None = None  # for a union variant: the union's name

    @property
    def wire_keys(self) -> tuple[str, ...]:
        return tuple(sorted({f.wire_name for f in self.fields} | {t.wire_name for t in self.tags}))

    @property
    def slot_names(self) -> tuple[str, ...]:
        """The fields' Python names as ``__slots__`` lists them: case-insensitive order."""
        return tuple(sorted((f.py_name for f in self.fields), key=str.lower))


@dataclass(frozen=True)
class Leaf:
    """A decision's outcome: decode with ``fn`` (a class's or a type's decoder)."""

    fn: str
    label: str  # for messages: a type name
    guard: tuple[str, ...] = ()  # wire keys an object must have to be worth trying (in a TryEach)
    form = "leaf"


@dataclass(frozen=True)
class Dispatch:
    """Choose by the value of the tag property ``key``; absent or unknown tags go to ``default``."""

    fn: str  # the generated function that runs this decision
    key: str
    cases: tuple[tuple[Json, Decision], ...]  # sorted by value
    default: Decision | None
    form = "dispatch"

    @property
    def label(self) -> str:
        return "one of its variants"


@dataclass(frozen=True)
class TryEach:
    """Try each option in turn; the first that decodes wins."""

    fn: str
    options: tuple[Decision, ...]
    check_object: bool = False  # first check the value is an object (the options' guards need one)
    form = "try"

    @property
    def label(self) -> str:
        return " or ".join(o.label for o in self.options)


@dataclass(frozen=True)
class ByKind:
    """Choose by the JSON kind of the value, then by ``decision`` within that kind."""

    fn: str
    branches: tuple[tuple[str, Decision], ...]  # (Python class of the JSON value, decision), in a fixed order
    expected: str
    form = "kind"

    @property
    def label(self) -> str:
        return self.expected


Decision = Leaf | Dispatch | TryEach | ByKind


class DefKind(str, enum.Enum):
    CLASS = "class"  # an object with properties: one dataclass
    UNION = "union"  # a choice between classes and other types
    LITERALS = "literals"  # a closed or open set of const values
    ALIAS = "alias"  # another name for a type expression


@dataclass(frozen=True)
class TypeDef:
    """One named type of the generated models: a ``$def``, or an inline union lifted out."""

    name: str  # the $def name (also the Python name)
    kind: DefKind
    description: str
    pointer: str
    refs: tuple[str, ...]  # every $def name referenced anywhere inside it, sorted
    classes: tuple[ClassDef, ...] = ()  # CLASS: the one class; UNION: its variant classes
    target: TypeExpr | None = None  # ALIAS / LITERALS: the type; UNION: None
    options: tuple[TypeExpr, ...] = ()  # UNION: the member types, for the annotation
    decision: Decision | None = None  # UNION: how a decoder picks the variant
    helpers: tuple[Dispatch | TryEach | ByKind, ...] = ()  # UNION: every decision node, root first
    encoding: Encoding = Encoding.AS_IS  # how a value of this type is encoded


@dataclass(frozen=True)
class TypeModel:
    """Every type of a schema, ordered by name."""

    types: tuple[TypeDef, ...]
    names: Mapping[str, str] = field(default_factory=dict)  # the names lock's record (acpgen.model.namelock)

    @property
    def helpers(self) -> tuple[TypeExpr, ...]:
        return type_helpers(self.types)


def type_helpers(types: tuple[TypeDef, ...]) -> tuple[TypeExpr, ...]:
    """The helper decoders (lists, maps, optional values, scalars, inline literals) ``types`` use,
    sorted by function name."""
    found: dict[str, TypeExpr] = {}

    def use(t: TypeExpr | None) -> None:
        if t is None or isinstance(t, (Ref, AnyValue)):
            return
        found[t.fn] = t
        if isinstance(t, ListOf):
            use(t.item)
        elif isinstance(t, MapOf):
            use(t.value)
        elif isinstance(t, Nullable):
            use(t.inner)

    for t in types:
        for cls in t.classes:
            for f in cls.fields:
                if not isinstance(f.codec, Scalar) or f.codec.bounded:
                    use(f.codec)
        for o in t.options:
            use(o)
        if t.kind is DefKind.ALIAS:
            use(t.target)
    return tuple(found[k] for k in sorted(found))


def type_classes(types: tuple[TypeDef, ...]) -> tuple[ClassDef, ...]:
    """Every class, sorted by name."""
    return tuple(sorted((c for t in types for c in t.classes), key=lambda c: c.name))


def type_aliases(types: tuple[TypeDef, ...]) -> tuple[TypeDef, ...]:
    """Unions, literals and aliases in an order where each comes after the aliases it names."""
    by_name = {t.name: t for t in types if t.kind is not DefKind.CLASS}
    done: list[TypeDef] = []
    seen: set[str] = set()

    def visit(t: TypeDef) -> None:
        if t.name in seen:
            return
        seen.add(t.name)
        for name in t.refs:
            if name in by_name:
                visit(by_name[name])
        done.append(t)

    for name in sorted(by_name):
        visit(by_name[name])
    return tuple(done)
