"""The type model's expressions: what a value looks like, as plain frozen data.

A *type expression* (:data:`TypeExpr`) says what a value looks like: a scalar with its bounds, a
set of ``const`` values, a named type, a list, a map, a nullable value. The rest of the type
model builds on these: classes with their fields (:mod:`.classes`), the decisions a union's
decoder takes (:mod:`.decisions`), and the named types (:mod:`.typedefs`).

Each expression knows its annotation and the name of the generated function that decodes it
(``fn``), derived from its structure only, so two runs over the same schema name every helper
the same way.
"""

from __future__ import annotations

import enum
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


class JsonText(str):
    """A piece of JSON text a writer emits as it is, where the other operands are expressions."""


def text_operands(pieces: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Operands for ``+``: the next pieces of :class:`JsonText` merged into one Python literal,
    the expressions as they are."""
    operands: list[str] = []
    text = ""
    for piece in pieces:
        if isinstance(piece, JsonText):
            text += piece
            continue
        if text:
            operands.append(py_literal(str(text)))
            text = ""
        operands.append(piece)
    if text:
        operands.append(py_literal(str(text)))
    return tuple(operands)


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

    def text_pieces(self, var: str, *, string: bool = False) -> tuple[str, ...]:
        """What writes the value ``var`` as the wire's JSON text: expressions, and pieces of
        :class:`JsonText`; ``string``: the value is a ``str``."""
        if self is Encoding.AS_IS:
            return (f"_str({var})" if string else f"_dump({var})",)
        if self is Encoding.METHOD:
            return (f"{var}._json_text()",)
        if self is Encoding.LIST:
            return (JsonText("["), f'",".join([x._json_text() for x in {var}])', JsonText("]"))
        if self is Encoding.MAP:
            items = f'",".join([_str(k) + ":" + x._json_text() for k, x in {var}.items()])'
            return (JsonText("{"), items, JsonText("}"))
        return (f"_dump(_codec.encode({var}))",)


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
    ``minimum``/``maximum`` give, and a string's ``minLength`` and ``pattern``."""

    kind: JsonKind
    format: str | None = None
    form = Form.SCALAR
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_length: int | None = None
    pattern: str | None = None  # an ECMA-262 regular expression, matched with Python's re.search

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
        if self.min_length is not None:
            word += f" of at least {self.min_length} character" + ("s" if self.min_length != 1 else "")
        if self.pattern is not None:
            word += f" matching {self.pattern!r}"
        if self.minimum is not None and self.maximum is not None:
            return f"{word} in [{self.minimum}, {self.maximum}]"
        if self.minimum is not None:
            return f"{word} >= {self.minimum}"
        if self.maximum is not None:
            return f"{word} <= {self.maximum}"
        return word

    @property
    def bounded(self) -> bool:
        """A number with a ``minimum`` or ``maximum`` (its ``format``'s, or the schema's)."""
        return self.minimum is not None or self.maximum is not None

    @property
    def constrained(self) -> bool:
        """Checked for more than its JSON kind: bounds, a length, a pattern."""
        return self.bounded or self.min_length is not None or self.pattern is not None

    @property
    def inline(self) -> bool:
        """Checked by an inline test rather than by a helper decoder."""
        return not self.constrained

    def coerce(self, var: str) -> str | None:
        """The expression that turns a value failing :meth:`rejects` into this type where JSON
        Schema counts it as one (an integer-valued number, ``1.0`` or ``1E2``, is an integer),
        raising a DecodeError otherwise; None when nothing can."""
        if self.kind is not JsonKind.INTEGER:
            return None
        if not self.bounded:
            return f"_codec.integer({var})"
        return f"_codec.integer({var}, {py_literal(self.minimum)}, {py_literal(self.maximum)})"

    @property
    def pattern_name(self) -> str:
        """The module-level compiled ``pattern`` its checks use."""
        return "_P" + self.fn

    def rejects(self, var: str) -> str:
        """The condition under which the value ``var`` is not of this type."""
        if self.kind is JsonKind.NUMBER:
            test = f"{var}.__class__ is not float and {var}.__class__ is not int"
            test = f"({test})" if self.bounded else test
        elif self.kind is JsonKind.NULL:
            test = f"{var} is not None"
        else:
            test = f"{var}.__class__ is not {self.classes[0]}"
        if self.min_length is not None:
            test += f" or len({var}) < {self.min_length}"
        if self.pattern is not None:
            test += f" or {self.pattern_name}.search({var}) is None"
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
        if self.min_length is not None:
            parts.append(f"len{self.min_length}")
        if self.pattern is not None:
            parts.append("re" + format(abs(hash_values((self.pattern,))), "x"))
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
    def lookup_test(self) -> str:
        """The condition on ``d`` under which a closed set's decoder looks it up in its table (an
        integer-valued float finds its integer there)."""
        if self.base.kind is JsonKind.INTEGER:
            return "d.__class__ is int or d.__class__ is float"
        return f"d.__class__ is {self.base.classes[0]}"

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
    skip_invalid: bool = False  # ``x-deserialize-skip-invalid-items``: a bad item is dropped, not fatal
    min_items: int | None = None
    form = Form.LIST
    inline = False

    @property
    def expected(self) -> str:
        if self.min_items is None:
            return "an array"
        return f"an array of at least {self.min_items} item" + ("s" if self.min_items != 1 else "")

    @property
    def annotation(self) -> str:
        return f"list[{self.item.annotation}]"

    @property
    def token(self) -> str:
        token = ("listskip_" if self.skip_invalid else "list_") + self.item.token
        return token if self.min_items is None else f"{token}_min{self.min_items}"

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

    def coerce(self, var: str) -> str | None:
        return None

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
