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
import json
from dataclasses import dataclass

from .literals import py_literal

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


class Form(enum.Enum):
    """What a type expression or a decision node is, for the templates to tell them apart."""

    SCALAR = "scalar"
    ANY = "any"
    LITERALS = "literals"
    REF = "ref"
    LIST = "list"
    MAP = "map"
    NULLABLE = "nullable"
    LEAF = "leaf"  # a decision's outcome
    DISPATCH = "dispatch"  # a decision by a tag's value
    TRY = "try"  # a decision by trying each option
    KIND = "kind"  # a decision by the JSON kind


class Encoding(str, enum.Enum):
    """How a value of a type becomes JSON."""

    AS_IS = "as_is"  # already JSON: str, int, float, bool, None, raw values, lists of those
    METHOD = "method"  # a class instance (or a union of classes): ``value.to_json()``
    LIST = "list"  # a list of class instances: ``[x.to_json() for x in value]``
    MAP = "map"  # a dict of class instances: ``{k: x.to_json() for k, x in value.items()}``
    GENERIC = "generic"  # anything else: the generic ``encode``

    def expr(self, var: str) -> str:
        """The expression that encodes the value ``var``."""
        if self is Encoding.AS_IS:
            return var
        if self is Encoding.METHOD:
            return f"{var}.to_json()"
        if self is Encoding.LIST:
            return f"[x.to_json() for x in {var}]"
        if self is Encoding.MAP:
            return f"{{k: x.to_json() for k, x in {var}.items()}}"
        return f"_codec.encode({var})"


class DecodeStep(enum.Enum):
    """How a class decoder reads one field's value once it has it."""

    KEEP = "keep"  # any JSON value: kept as it came
    CHECK = "check"  # a kind test written inline: ``if <rejects>: raise``
    CALL = "call"  # a helper decoder: ``v = _d_x(v)``
    CHECK_UNLESS_NULL = "check_unless_null"  # a required, nullable field: the test, unless null
    CALL_UNLESS_NULL = "call_unless_null"  # a required, nullable field: the helper, unless null


@dataclass(frozen=True)
class Scalar:
    """A string, integer, number, boolean or null, with the bounds its ``format`` and
    ``minimum``/``maximum`` give."""

    kind: JsonKind
    format: str | None = None
    form = Form.SCALAR
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
    def inline(self) -> bool:
        """Checked by an inline test rather than by a helper decoder."""
        return not self.bounded

    def rejects(self, var: str) -> str:
        """The condition under which the value ``var`` is not of this type."""
        if self.kind is JsonKind.NUMBER:
            test = f"{var}.__class__ is not float and {var}.__class__ is not int"
            test = f"({test})" if self.bounded else test
        elif self.kind is JsonKind.NULL:
            test = f"{var} is not None"
        else:
            test = f"{var}.__class__ is not {self.classes[0]}"
        if self.minimum is not None and self.maximum is not None:
            return f"{test} or not {py_literal(self.minimum)} <= {var} <= {py_literal(self.maximum)}"
        if self.minimum is not None:
            return f"{test} or {var} < {py_literal(self.minimum)}"
        if self.maximum is not None:
            return f"{test} or {var} > {py_literal(self.maximum)}"
        return test

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

    form = Form.ANY
    token = "any"
    fn = "_codec.d_any"
    annotation = "Any"
    inline = False


@dataclass(frozen=True)
class Literals:
    """A set of ``const`` values. An *open* set also accepts any other value of ``base``."""

    values: tuple[Json, ...]  # in a fixed order: sorted by (type, value)
    base: Scalar  # the scalar kind all values share
    open: bool = False
    form = Form.LITERALS
    inline = False

    @property
    def value_literals(self) -> tuple[str, ...]:
        return tuple(py_literal(v) for v in self.values)

    @property
    def closed_annotation(self) -> str:
        """``Literal[...]`` of the values alone."""
        return "Literal[" + ", ".join(self.value_literals) + "]"

    @property
    def annotation(self) -> str:
        return self.closed_annotation + (f" | {self.base.annotation}" if self.open else "")

    @property
    def table_entries(self) -> tuple[str, ...]:
        """The entries of the table a closed set's decoder looks values up in: ``"a": "a"``."""
        return tuple(f"{v}: {v}" for v in self.value_literals)

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
    form = Form.REF
    inline = False

    @property
    def annotation(self) -> str:
        return self.name

    @property
    def token(self) -> str:
        return self.name

    @property
    def fn(self) -> str:
        return "_d_" + self.name


@dataclass(frozen=True)
class ListOf:
    item: TypeExpr
    form = Form.LIST
    inline = False

    @property
    def annotation(self) -> str:
        return f"list[{self.item.annotation}]"

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
    form = Form.MAP
    expected = "an object"

    @property
    def annotation(self) -> str:
        return f"dict[str, {self.value.annotation}]"

    @property
    def inline(self) -> bool:
        """A map of any values is checked inline: it need only be an object."""
        return isinstance(self.value, AnyValue)

    def rejects(self, var: str) -> str:
        return f"{var}.__class__ is not dict"

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
    form = Form.NULLABLE
    inline = False

    @property
    def annotation(self) -> str:
        return f"{self.inner.annotation} | None"

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

    @property
    def wire_literal(self) -> str:
        return py_literal(self.wire_name)

    @property
    def annotation(self) -> str:
        """The attribute's annotation: an optional field may be ``None`` (absent)."""
        if self.required or isinstance(self.type, (Nullable, AnyValue)):
            return self.type.annotation
        return f"{self.type.annotation} | None"

    @property
    def doc(self) -> str:
        """The attribute's docstring text (empty: none)."""
        doc = self.description
        if self.has_default:
            doc += f"\n\nSchema default (when absent): ``{_html_safe_json(self.default)}``."
        if self.py_name != self.wire_name:
            doc += f"\n\nWire name: ``{self.wire_name}``."
        return doc

    @property
    def decode_step(self) -> DecodeStep:
        if isinstance(self.codec, AnyValue):
            return DecodeStep.KEEP
        if self.required and isinstance(self.type, Nullable):
            return DecodeStep.CHECK_UNLESS_NULL if self.codec.inline else DecodeStep.CALL_UNLESS_NULL
        return DecodeStep.CHECK if self.codec.inline else DecodeStep.CALL

    def encode(self, var: str) -> str:
        """The expression that encodes this field's value ``var``."""
        return self.encoding.expr(var)

    @property
    def json_entry(self) -> str:
        """A required field's entry in ``to_json``'s dict display."""
        value = self.encode(f"self.{self.py_name}")
        if self.nullable and self.encoding is not Encoding.AS_IS:
            value = f"None if self.{self.py_name} is None else {value}"
        return f"{self.wire_literal}: {value}"


def _html_safe_json(value: Json) -> str:
    """JSON text with ``<``, ``>``, ``&`` and ``'`` escaped, as the docs have always shown defaults."""
    text = json.dumps(value, sort_keys=True)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027")):
        text = text.replace(char, escape)
    return text


@dataclass(frozen=True)
class Tag:
    """A property whose value is fixed for a class: the tag of a union variant."""

    wire_name: str
    py_name: str
    value: Json

    @property
    def value_literal(self) -> str:
        return py_literal(self.value)

    @property
    def wire_literal(self) -> str:
        return py_literal(self.wire_name)

    @property
    def doc(self) -> str:
        return f"Always {self.value_literal}: sent as ``{self.wire_name}``."

    @property
    def json_entry(self) -> str:
        return f"{self.wire_literal}: {self.value_literal}"


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

    @property
    def slot_literals(self) -> tuple[str, ...]:
        return tuple(py_literal(n) for n in self.slot_names)

    @property
    def key_literals(self) -> tuple[str, ...]:
        return tuple(py_literal(k) for k in self.wire_keys)

    @property
    def json_entries(self) -> tuple[str, ...]:
        """``to_json``'s dict display: the tags, then the required fields."""
        return (*(t.json_entry for t in self.tags), *(f.json_entry for f in self.fields if f.required))

    @property
    def optional_fields(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if not f.required)

    @property
    def tracks_nulls(self) -> bool:
        """Some field remembers an explicit ``null`` (its decoder collects them)."""
        return any(f.track_null for f in self.fields)

    @property
    def fixed_keys(self) -> int:
        """How many keys every instance's JSON has: its tags and required fields."""
        return len(self.tags) + sum(f.required for f in self.fields)


@dataclass(frozen=True)
class Leaf:
    """A decision's outcome: decode with ``fn`` (a class's or a type's decoder)."""

    fn: str
    label: str  # for messages: a type name
    guard: tuple[str, ...] = ()  # wire keys an object must have to be worth trying (in a TryEach)
    form = Form.LEAF

    @property
    def is_null(self) -> bool:
        """The outcome is JSON ``null``: its decoder would only return ``None``."""
        return self.fn == "_d_null"

    def guard_test(self, var: str) -> str:
        return " and ".join(f"{py_literal(key)} in {var}" for key in self.guard)


@dataclass(frozen=True)
class Dispatch:
    """Choose by the value of the tag property ``key``; absent or unknown tags go to ``default``."""

    fn: str  # the generated function that runs this decision
    key: str
    cases: tuple[tuple[Json, Decision], ...]  # sorted by value
    default: Decision | None
    form = Form.DISPATCH

    @property
    def label(self) -> str:
        return "one of its variants"


@dataclass(frozen=True)
class TryEach:
    """Try each option in turn; the first that decodes wins."""

    fn: str
    options: tuple[Decision, ...]
    check_object: bool = False  # first check the value is an object (the options' guards need one)
    form = Form.TRY

    @property
    def guarded(self) -> bool:
        """Some option is tried only when its guard keys are present."""
        return any(isinstance(o, Leaf) and o.guard for o in self.options)

    @property
    def label(self) -> str:
        return " or ".join(o.label for o in self.options)


@dataclass(frozen=True)
class ByKind:
    """Choose by the JSON kind of the value, then by ``decision`` within that kind."""

    fn: str
    branches: tuple[tuple[str, Decision], ...]  # (Python class of the JSON value, decision), in a fixed order
    expected: str
    form = Form.KIND

    @property
    def tests(self) -> tuple[tuple[str, Decision], ...]:
        """Each branch as (the condition on the value ``d``, whose class is ``c``, its decision)."""
        return tuple(("d is None" if k == "NoneType" else f"c is {k}", d) for k, d in self.branches)

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
