"""Classes of the type model: a generated dataclass, its fields and its tags.

Each knows what the models template prints for it: annotations, docstrings, ``to_json``'s
entries and how its decoder reads each field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .literals import py_literal
from .types import (
    AnyValue,
    DecodeStep,
    Encoding,
    Json,
    JsonKind,
    JsonText,
    ListOf,
    Literals,
    Nullable,
    Scalar,
    TypeExpr,
    text_operands,
)


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
    #: ``x-deserialize-default-on-error``: the Python literal a bad value is replaced by (``"None"``:
    #: absent); None when a bad value fails the decode.
    salvage_with: str | None = None
    #: ``x-deserialize-default-on-null``: the empty value (``"[]"``, ``"{}"``) a ``null`` reads as.
    null_reads_as: str | None = None

    @property
    def null_read_as_empty(self) -> str | None:
        """The empty value a ``null`` of this field is read as (``null_reads_as``), unless the field
        is optional and may be ``null``: then a ``null`` is kept, as the peer sent it."""
        return None if self.track_null else self.null_reads_as

    @property
    def skips_invalid_items(self) -> bool:
        """The field is an array (maybe nullable) whose bad items are dropped
        (``x-deserialize-skip-invalid-items``)."""
        t = self.codec.inner if isinstance(self.codec, Nullable) else self.codec
        return isinstance(t, ListOf) and t.skip_invalid

    @property
    def lenient(self) -> bool:
        """A decode may repair a bad value of this field (``x-deserialize-*``)."""
        return self.salvage_with is not None or self.null_read_as_empty is not None or self.skips_invalid_items

    @property
    def null_expected(self) -> str:
        """What a ``null`` read as the empty value should have been."""
        return "an object" if self.null_reads_as == "{}" else "an array"

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
    def key_text(self) -> JsonText:
        """The JSON text of this field's key and colon, after a comma: ``,"sessionId":``."""
        return JsonText(f",{json.dumps(self.wire_name)}:")

    def text_pieces(self, var: str) -> tuple[str, ...]:
        """What writes this field's value ``var`` as JSON text (see ``Encoding.text_pieces``); an
        optional field's writer has tested it is not None."""
        pieces = self.encoding.text_pieces(var, string=_is_string(self.codec))
        if self.required and self.nullable and pieces != (f"_dump({var})",):
            return (f'("null" if {var} is None else {" + ".join(text_operands(pieces))})',)
        return pieces

    @property
    def text_entry(self) -> tuple[str, ...]:
        """The operands that write an optional field's ``,"key":value`` when it is not None."""
        return text_operands([self.key_text, *self.text_pieces(f"self.{self.py_name}")])

    @property
    def json_entry(self) -> str:
        """A required field's entry in ``to_json``'s dict display."""
        value = self.encode(f"self.{self.py_name}")
        if self.nullable and self.encoding is not Encoding.AS_IS:
            value = f"None if self.{self.py_name} is None else {value}"
        return f"{self.wire_literal}: {value}"


def _is_string(t: TypeExpr) -> bool:
    """A value of the type is always a ``str``."""
    if isinstance(t, Literals):
        t = t.base
    return isinstance(t, Scalar) and t.kind is JsonKind.STRING


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
    def text_head(self) -> tuple[str, ...]:
        """The operands (joined by ``+``) that write the JSON text every instance starts with: ``{``,
        its tags and its required fields, and the closing ``}`` when it has no optional field. With
        neither tags nor required fields it starts empty, and :attr:`text_tail` adds the ``{``."""
        pieces: list[str] = []
        for tag in self.tags:
            value = json.dumps(tag.value, separators=(",", ":"))
            pieces.append(JsonText(f",{json.dumps(tag.wire_name)}:{value}"))
        for f in self.fields:
            if f.required:
                pieces += [f.key_text, *f.text_pieces(f"self.{f.py_name}")]
        if not pieces:
            return ('""',) if self.optional_fields else ('"{}"',)
        pieces[0] = JsonText("{" + pieces[0][1:])  # the first key's comma is the opening brace
        if not self.optional_fields:
            pieces.append(JsonText("}"))
        return text_operands(pieces)

    @property
    def text_tail(self) -> str:
        """What the writer returns once it has added the optional fields present to ``out``."""
        return 'out + "}"' if self.fixed_keys else '"{" + out[1:] + "}"'

    @property
    def json_entries(self) -> tuple[str, ...]:
        """``to_json``'s dict display: the tags, then the required fields."""
        return (*(t.json_entry for t in self.tags), *(f.json_entry for f in self.fields if f.required))

    @property
    def optional_fields(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if not f.required)

    @property
    def optional_key_literals(self) -> tuple[str, ...]:
        """The optional fields' wire names in order, as literals (``_O_<name>``: where
        ``to_json`` puts back the nulls a value remembers)."""
        return tuple(f.wire_literal for f in self.optional_fields)

    @property
    def tracks_nulls(self) -> bool:
        """Some field remembers an explicit ``null`` (its decoder collects them)."""
        return any(f.track_null for f in self.fields)

    @property
    def fixed_keys(self) -> int:
        """How many keys every instance's JSON has: its tags and required fields."""
        return len(self.tags) + sum(f.required for f in self.fields)

    @property
    def only_required_test(self) -> tuple[str, ...]:
        """The operands of the test (joined by ``and``) that an object carries only the keys every
        instance has, its tags and required fields: then its decoder reads those and looks for no
        optional field. Empty when the class has no optional field, as the decoder then reads
        only those anyway."""
        if not self.optional_fields:
            return ()
        keys = (f"{f.wire_literal} in d" for f, _var in self.required_reads)
        return (f"len(d) == {self.fixed_keys}", *keys)

    @property
    def required_reads(self) -> tuple[tuple[Field, str], ...]:
        """Each required field and the variable its decoder reads it into (``v3``: the third field)."""
        return tuple((f, f"v{index}") for index, f in enumerate(self.fields, 1) if f.required)
