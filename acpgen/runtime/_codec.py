"""Codec support for the generated models: the decode error, and the generic ``decode``/``encode``.

This module knows nothing about the schema: ``models`` registers a decoder for every named type.
"""

from __future__ import annotations

import json
import logging
import threading
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeVar, Union, overload

T = TypeVar("T")

__all__ = [
    "DecodeError",
    "Model",
    "Salvage",
    "decode",
    "decode_salvaging",
    "dump_json",
    "encode",
    "encode_text",
]


def _json_dumper() -> Callable[[Any], str]:
    """Compact, strict JSON text of a value (``ValueError`` for NaN or an infinity): the C
    encoder, built once rather than on every call as ``JSONEncoder.encode`` does."""
    encoder = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        return encoder.encode
    chunks = make(
        None,  # no markers: a value that holds itself ends in RecursionError
        encoder.default,
        json.encoder.encode_basestring_ascii,
        None,  # indent
        ":",
        ",",
        False,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan
    )
    join = "".join

    def dump(value: Any) -> str:
        return join(chunks(value, 0))

    return dump


#: The wire's JSON text of a value: compact, ASCII only, no NaN or infinity (``ValueError``).
dump_json = _json_dumper()
#: The wire's JSON text of a string (``TypeError`` for anything else).
json_string: Callable[[str], str] = json.encoder.encode_basestring_ascii


class DecodeError(ValueError):
    """JSON data that does not fit the schema type it is decoded as.

    ``path`` is the JSON pointer (RFC 6901) of the offending value, ``""`` for the value itself;
    ``message`` says what was expected.
    """

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self._reversed_path: list[str | int] = list(reversed(path))

    def at(self, segment: str | int) -> DecodeError:
        """Put ``segment`` in front of the path (a decoder adds its key as the error passes)."""
        self._reversed_path.append(segment)
        return self

    @property
    def path(self) -> str:
        return "".join(
            "/" + str(s).replace("~", "~0").replace("/", "~1")
            for s in reversed(self._reversed_path)
        )

    def __str__(self) -> str:
        return f"at {self.path or '/'}: {self.message}"


class Model:
    """The base of every generated class: ``extra``, equality and ``repr``; each class adds its
    fields (as slots), ``from_json`` and ``to_json``.

    Two values are equal when they are of the same class and their fields and ``extra`` are
    equal (whether an absent optional property came as ``null`` does not count).
    """

    __slots__ = ("_extra", "_nulls")
    _extra: dict[str, Any] | None
    _nulls: tuple[str, ...]

    @property
    def extra(self) -> dict[str, Any]:
        """Properties the schema does not define for this type, kept as they came and sent back out."""
        extra = self._extra
        if extra is None:
            extra = self._extra = {}
        return extra

    @extra.setter
    def extra(self, value: dict[str, Any]) -> None:
        self._extra = value

    def _fields(self) -> list[tuple[str, Any]]:
        names: tuple[str, ...] = getattr(type(self), "__slots__", ())
        return [(name, getattr(self, name)) for name in names]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, Model):
            return NotImplemented
        return self._fields() == other._fields() and (self._extra or {}) == (other._extra or {})

    def __repr__(self) -> str:
        parts = [f"{name}={value!r}" for name, value in self._fields()]
        if self._extra:
            parts.append(f"extra={self._extra!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def _json_text(self) -> str:
        """``to_json()`` as the wire's JSON text; each class writes its own, straight from its fields."""
        return dump_json(self.to_json())


def describe(value: Any) -> str:
    """A short description of a JSON value for error messages."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"[:60]
    if isinstance(value, str):
        text = repr(value)
        return "the string " + (text if len(text) <= 40 else text[:37] + "...")
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__} (not JSON)"


def expected(what: str, value: Any) -> DecodeError:
    return DecodeError(f"expected {what}, got {describe(value)}")


def missing(key: str) -> DecodeError:
    return DecodeError(f"required property {key!r} is missing", (key,))


def expected_one_of(value: Any, allowed: Iterable[Any]) -> DecodeError:
    return expected("one of " + ", ".join(repr(a) for a in allowed), value)


def bad_tag(data: dict[str, Any], key: str, allowed: Iterable[str]) -> DecodeError:
    """The error of an object whose tag property ``key`` is missing or not one of ``allowed``."""
    choices = ", ".join(repr(a) for a in allowed)
    if key not in data:
        return DecodeError(f"required tag {key!r} is missing (one of {choices})", (key,))
    return DecodeError(f"expected one of {choices}, got {describe(data[key])}", (key,))


def no_match(value: Any, what: str, errors: list[DecodeError]) -> DecodeError:
    """The error of a value no variant of a union decodes: the one that got furthest in, if any."""
    deepest = max(errors, key=lambda e: len(e._reversed_path), default=None)
    if deepest is not None and deepest._reversed_path:
        return deepest
    return expected(what, value)


def errors_of(value: Any, decoders: Iterable[Callable[[Any], Any]]) -> list[DecodeError]:
    """The errors each decoder raises on ``value``."""
    found = []
    for decoder in decoders:
        try:
            decoder(value)
        except DecodeError as error:
            found.append(error)
    return found


def unknown(data: dict[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    """The properties of ``data`` a class does not know, kept to be sent back out (None: none)."""
    return {k: v for k, v in data.items() if k not in known} or None


def d_any(value: Any) -> Any:
    return value


def list_of(item: Callable[[Any], T], value: Any) -> list[T]:
    if value.__class__ is not list:
        raise expected("an array", value)
    try:
        return [item(x) for x in value]
    except DecodeError:
        for index, x in enumerate(value):
            try:
                item(x)
            except DecodeError as error:
                raise error.at(index) from None
        raise


def map_of(item: Callable[[Any], T], value: Any) -> dict[str, T]:
    if value.__class__ is not dict:
        raise expected("an object", value)
    try:
        return {k: item(x) for k, x in value.items()}
    except DecodeError:
        for key, x in value.items():
            try:
                item(x)
            except DecodeError as error:
                raise error.at(key) from None
        raise


def _d_str(value: Any) -> str:
    if value.__class__ is not str:
        raise expected("a string", value)
    result: str = value
    return result


def integer(value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an integer within the bounds, or a :class:`DecodeError`.

    An integer-valued number such as ``1.0`` or ``1E2`` (a float once parsed) is an integer in
    JSON Schema: it becomes the ``int`` it stands for, and is sent back out as ``1`` or ``100``.
    """
    number = int(value) if value.__class__ is float and value.is_integer() else value
    if (
        number.__class__ is not int
        or (minimum is not None and number < minimum)
        or (maximum is not None and number > maximum)
    ):
        if minimum is not None and maximum is not None:
            what = f"an integer in [{minimum}, {maximum}]"
        elif minimum is not None:
            what = f"an integer >= {minimum}"
        elif maximum is not None:
            what = f"an integer <= {maximum}"
        else:
            what = "an integer"
        raise expected(what, value)
    result: int = number
    return result


def _d_int(value: Any) -> int:
    if value.__class__ is not int:
        return integer(value)
    result: int = value
    return result


def _d_float(value: Any) -> float:
    if value.__class__ is not float and value.__class__ is not int:
        raise expected("a number", value)
    result: float = value
    return result


def _d_bool(value: Any) -> bool:
    if value.__class__ is not bool:
        raise expected("a boolean", value)
    result: bool = value
    return result


def _d_none(value: Any) -> None:
    if value is not None:
        raise expected("null", value)


_DECODERS: dict[Any, Callable[[Any], Any]] = {
    str: _d_str,
    int: _d_int,
    float: _d_float,
    bool: _d_bool,
    type(None): _d_none,
    None: _d_none,
    Any: d_any,
    object: d_any,
}


#: The bases whose instances ``encode`` sends as their ``to_json()``.
_MODELS: tuple[type, ...] = (Model,)


def register(decoders: dict[Any, Callable[[Any], Any]], model: type | None = None) -> None:
    """Called by ``models``: the decoder of every named type (classes, unions, literal sets), and
    the base of its classes when it is not :class:`Model` (each instance has ``to_json()``)."""
    global _MODELS
    _DECODERS.update(decoders)
    if model is not None and model not in _MODELS:
        _MODELS = (*_MODELS, model)


@overload
def decode(tp: type[T], data: Any, *, strict: bool = False) -> T: ...
@overload
def decode(tp: Any, data: Any, *, strict: bool = False) -> Any: ...
def decode(tp: Any, data: Any, *, strict: bool = False) -> Any:
    """Decode JSON ``data`` (as ``json.loads`` returns it) as the schema type ``tp``.

    ``tp`` is a generated class, a union or literal alias (``SessionUpdate``, ``StopReason``),
    a scalar alias or builtin (``SessionId``, ``str``), or ``list[...]`` / ``dict[str, ...]`` /
    ``Optional[...]`` of those. Raises :class:`DecodeError` and nothing else on bad data.

    Where the schema says a bad value may be replaced or dropped (``x-deserialize-*``), it is,
    and each such repair is logged as a warning naming its JSON pointer; ``strict=True`` refuses
    them like any other bad value (see :func:`decode_salvaging`).
    """
    try:
        decoder = _DECODERS[tp]
    except (KeyError, TypeError):  # not a registered type, or an unhashable type form
        decoder = _decoder(tp)
    if strict:
        return strictly(decoder, data)
    try:  # leniently(decoder, data), written out: a call less on every message
        value = decoder(data)
    except DecodeError:
        if _REPAIRS:
            _taken(data)
        raise
    if _REPAIRS:
        _log_repairs(data)
    return value


def _decoder(tp: Any) -> Callable[[Any], Any]:
    try:
        found = _DECODERS.get(tp)
    except TypeError:  # an unhashable type form
        found = None
    if found is not None:
        return found
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is list and len(args) == 1:
        item = _decoder(args[0])
        return lambda data: list_of(item, data)
    if origin is dict and len(args) == 2:
        value = _decoder(args[1])
        return lambda data: map_of(value, data)
    if origin is typing.Literal:
        allowed = args

        def literal(data: Any) -> Any:
            for option in allowed:
                if data == option and data.__class__ is option.__class__:
                    return data
            raise expected("one of " + ", ".join(repr(a) for a in allowed), data)

        return literal
    if origin is Union or origin is types.UnionType:
        options = [_decoder(a) for a in args]

        def union(data: Any) -> Any:
            errors = []
            for option in options:
                try:
                    return option(data)
                except DecodeError as error:
                    errors.append(error)
            raise no_match(" or ".join(str(a) for a in args), data, errors)

        return union
    raise TypeError(f"decode: {tp!r} is not a type of these bindings")


def encode(value: Any) -> Any:
    """The JSON form of a model value (a class instance, a list or dict of them, or plain JSON)."""
    if isinstance(value, _MODELS):
        model: Any = value  # a Model, or an instance of another registered base: has to_json()
        return model.to_json()
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return value
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    raise TypeError(f"encode: cannot encode a {type(value).__name__}")


def with_nulls(
    out: dict[str, Any], nulls: tuple[str, ...], optional: tuple[str, ...]
) -> dict[str, Any]:
    """A class's ``to_json`` dict with the explicit nulls it remembers put back: ``out`` has its
    fixed keys, then the ``optional`` ones present, in order; a remembered null takes its place
    among them."""
    fixed = {k: v for k, v in out.items() if k not in optional}
    for key in optional:
        if key in out:
            fixed[key] = out[key]
        elif key in nulls:
            fixed[key] = None
    return fixed


def encode_text(value: Any) -> str:
    """The wire's JSON text of a model value: ``dump_json(encode(value))``, but a class instance
    writes itself, which is faster. ``ValueError`` for NaN or an infinity."""
    write = getattr(value, "_json_text", None)
    if write is not None:
        try:
            text: str = write()
            return text
        except TypeError:  # a field holds a value its annotation does not allow: the general way
            pass
    return dump_json(encode(value))


# -- leniency: what the schema's x-deserialize-* annotations let a decoder repair ----------------


class Salvage(NamedTuple):
    """A bad value a lenient decode repaired instead of refusing the whole message."""

    path: str  # JSON pointer of the bad value, from the root of the decoded data
    action: str  # "replaced by its default", "dropped" or "null read as the empty value"
    reason: str  # what was wrong with it

    def __str__(self) -> str:
        return f"at {self.path or '/'}: {self.reason}; {self.action}"


_log = logging.getLogger(__name__)


#: The repairs decodes under way have made: (thread, container, key, error, action). Empty but
#: for the moment a lenient decode repairs something, so a decode of valid input only tests it.
_REPAIRS: list[tuple[int, Any, Any, DecodeError, str]] = []


class _Strictness(threading.local):
    strict = False


_strictness = _Strictness()


def _repaired(container: Any, key: Any, error: DecodeError, action: str) -> None:
    _REPAIRS.append((threading.get_ident(), container, key, error, action))


def _taken(data: Any) -> tuple[Salvage, ...]:
    """This thread's repairs, taken off the list, with their pointers from the root ``data``."""
    me = threading.get_ident()
    mine = [r for r in _REPAIRS if r[0] == me]
    _REPAIRS[:] = [r for r in _REPAIRS if r[0] != me]
    return tuple(_salvage(data, *repair[1:]) for repair in mine)


def decode_salvaging(tp: Any, data: Any) -> tuple[Any, tuple[Salvage, ...]]:
    """:func:`decode`, returning what the leniency rules repaired instead of logging it."""
    decoder = _decoder(tp)
    try:
        value = decoder(data)
    except DecodeError:
        _taken(data)
        raise
    return value, _taken(data) if _REPAIRS else ()


def leniently(decoder: Callable[[Any], T], data: Any) -> T:
    """Run a decoder, logging each repair the leniency rules made with its JSON pointer. On
    valid input this costs one test of an empty list."""
    try:
        value = decoder(data)
    except DecodeError:
        if _REPAIRS:
            _taken(data)
        raise
    if _REPAIRS:
        _log_repairs(data)
    return value


def strictly(decoder: Callable[[Any], T], data: Any) -> T:
    """Run a decoder that refuses what the leniency rules would repair."""
    before, _strictness.strict = _strictness.strict, True
    try:
        return decoder(data)
    finally:
        _strictness.strict = before


def mark() -> int:
    """Where the repairs stand: a union decoder trying its options takes a mark first, so that
    the repairs of an option that then fails can be taken back."""
    return len(_REPAIRS)


def rewind(to: int) -> None:
    """Forget this thread's repairs made since :func:`mark` gave ``to``: they belonged to an
    option that failed."""
    me = threading.get_ident()
    _REPAIRS[to:] = [r for r in _REPAIRS[to:] if r[0] != me]


def _log_repairs(data: Any) -> None:
    for salvage in _taken(data):
        _log.warning("repaired a bad value: %s", salvage)


def salvaged(container: Any, key: Any, error: DecodeError, replacement: Any) -> Any:
    """A field's bad value, which its schema lets the decoder replace: ``replacement``
    (``None``: absent), recorded; in a strict decode, ``error`` is raised instead."""
    if _strictness.strict:
        raise error
    _repaired(container, key, error, "replaced by its default")
    return replacement


def null_as_empty(container: Any, key: Any, empty: Any, what: str) -> Any:
    """A field's ``null``, which its schema reads as the empty value ``empty``, recorded."""
    error = expected(what, None)
    if _strictness.strict:
        raise error
    _repaired(container, key, error, "null read as the empty value")
    return empty


def list_skipping(item: Callable[[Any], T], value: Any) -> list[T]:
    """An array whose bad items its schema lets the decoder drop (each drop recorded)."""
    if value.__class__ is not list:
        raise expected("an array", value)
    out: list[T] = []
    for index, x in enumerate(value):
        try:
            out.append(item(x))
        except DecodeError as error:
            if _strictness.strict:
                raise error.at(index) from None
            _repaired(value, index, error, "dropped")
    return out


def _salvage(root: Any, container: Any, key: Any, error: DecodeError, action: str) -> Salvage:
    where = _pointer_of(root, container)
    path = (where if where is not None else "") + "/" + _escape(key) + error.path
    return Salvage(path, action, error.message)


def _pointer_of(root: Any, target: Any) -> str | None:
    """The JSON pointer of the object or array ``target`` (by identity) inside ``root``."""
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if node.__class__ is dict:
            stack.extend(
                (v, path + "/" + _escape(k)) for k, v in node.items() if v.__class__ in (dict, list)
            )
        elif node.__class__ is list:
            stack.extend(
                (v, f"{path}/{i}") for i, v in enumerate(node) if v.__class__ in (dict, list)
            )
    return None


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
