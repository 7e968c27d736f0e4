"""Codec support for the generated models: the generic ``decode``/``encode``, the models' base,
and the wire's JSON text; with the decode errors (``_decode_errors``) and the leniency rules
(``_leniency``) the generated models reach through this module.

This module knows nothing about the schema: a models module's codec (``_models_codec``) attaches
each class's methods (:func:`attach`) and registers a decoder for every named type.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar, Union, overload

# The decode errors and leniency rules live in their own modules; the generated models reach
# them as ``_codec.<name>`` (the second part of ``__all__``).
from ._decode_errors import (
    DecodeError,
    bad_tag,
    describe,
    errors_of,
    expected,
    expected_one_of,
    missing,
    no_match,
)
from ._leniency import (
    REPAIRS,
    Salvage,
    leniently,
    list_skipping,
    log_repairs,
    mark,
    null_as_empty,
    rewind,
    salvaged,
    strictly,
    taken,
)

T = TypeVar("T")
_M = TypeVar("_M", bound="Model")

__all__ = [  # noqa: RUF022 (in two parts)
    "DecodeError",
    "Model",
    "Salvage",
    "decode",
    "decode_salvaging",
    "dump_json",
    "encode",
    "encode_text",
    # re-exported for the generated models
    "bad_tag",
    "describe",
    "errors_of",
    "expected",
    "expected_one_of",
    "leniently",
    "list_skipping",
    "mark",
    "missing",
    "no_match",
    "null_as_empty",
    "rewind",
    "salvaged",
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


class Model:
    """The base of every generated class: ``extra``, equality and ``repr``; each class declares its
    fields (as slots), and its codec attaches its own ``__init__``, ``from_json``, ``to_json`` and
    ``_json_text`` (:func:`attach`).

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

    @classmethod
    def from_json(cls: type[_M], data: Any) -> _M:  # noqa: PYI019 (typing.Self is Python 3.11's)
        """Decode JSON data; raises DecodeError (with the JSON pointer of the bad value)."""
        value: _M = leniently(_DECODERS[cls], data)  # each class's codec attaches its own, quicker
        return value

    def to_json(self) -> dict[str, Any]:
        """The wire form: a dict ready for ``json.dumps``."""
        raise NotImplementedError

    def _json_text(self) -> str:
        """``to_json()`` as the wire's JSON text; each class writes its own, straight from its fields."""
        return dump_json(self.to_json())


def attach(
    cls: type[Model],
    init: Callable[..., None],
    to_json: Callable[..., dict[str, Any]],
    json_text: Callable[..., str],
    decoder: Callable[[Any], Any],
) -> None:
    """Make the functions a models module's codec writes beside a class's decoder its methods:
    ``__init__``, ``to_json`` and ``_json_text``, and ``from_json`` (a classmethod calling
    ``decoder``, made here: one function for every class, as quick as one written out), named as
    if written in its body: a constructor called wrong says ``PromptRequest.__init__() missing
    ...``. Their code keeps the name it was written with (``_init_PromptRequest``, in a
    traceback): a copy of each code object renamed would cost the import about a twentieth of the
    models' time."""

    def from_json(cls: Any, data: Any) -> Any:
        """Decode JSON data; raises DecodeError (with the JSON pointer of the bad value)."""
        return leniently(decoder, data)

    name = cls.__name__
    init.__name__, init.__qualname__ = "__init__", name + ".__init__"
    from_json.__qualname__ = name + ".from_json"
    to_json.__name__, to_json.__qualname__ = "to_json", name + ".to_json"
    json_text.__name__, json_text.__qualname__ = "_json_text", name + "._json_text"
    setattr(cls, "__init__", init)  # noqa: B010 (mypy refuses to assign a method)
    setattr(cls, "from_json", classmethod(from_json))  # noqa: B010
    setattr(cls, "to_json", to_json)  # noqa: B010
    setattr(cls, "_json_text", json_text)  # noqa: B010


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
        if REPAIRS:
            taken(data)
        raise
    if REPAIRS:
        log_repairs(data)
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


def decode_salvaging(tp: Any, data: Any) -> tuple[Any, tuple[Salvage, ...]]:
    """:func:`decode`, returning what the leniency rules repaired instead of logging it."""
    decoder = _decoder(tp)
    try:
        value = decoder(data)
    except DecodeError:
        taken(data)
        raise
    return value, taken(data) if REPAIRS else ()
