"""Leniency: what the schema's ``x-deserialize-*`` annotations let a decoder repair instead of
refusing the whole message, each repair recorded with its JSON pointer (a warning, or returned by
``decode_salvaging``), and strict decodes that refuse them."""

from __future__ import annotations

from _thread import _local, get_ident  # threading's own: importing threading costs more
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from ._decode_errors import DecodeError, expected

__all__ = [
    "REPAIRS",
    "Salvage",
    "leniently",
    "list_skipping",
    "log_repairs",
    "mark",
    "null_as_empty",
    "rewind",
    "salvaged",
    "strictly",
    "taken",
]

T = TypeVar("T")


class Salvage(NamedTuple):
    """A bad value a lenient decode repaired instead of refusing the whole message."""

    path: str  # JSON pointer of the bad value, from the root of the decoded data
    action: str  # "replaced by its default", "dropped" or "null read as the empty value"
    reason: str  # what was wrong with it

    def __str__(self) -> str:
        return f"at {self.path or '/'}: {self.reason}; {self.action}"


#: The logger repairs are told on (the codec's); logging is imported at the first repair, not
#: with the models: importing the package stays light.
_PACKAGE, _IN_ROOM, _ = __name__.partition("._runtime.")  # in a room of the private runtime
_LOGGER = (_PACKAGE if _IN_ROOM else __name__.rpartition(".")[0]) + "._codec"


#: The repairs decodes under way have made: (thread, container, key, error, action). Empty but
#: for the moment a lenient decode repairs something, so a decode of valid input only tests it.
REPAIRS: list[tuple[int, Any, Any, DecodeError, str]] = []


class _Strictness(_local):
    strict = False


_strictness = _Strictness()


def _repaired(container: Any, key: Any, error: DecodeError, action: str) -> None:
    REPAIRS.append((get_ident(), container, key, error, action))


def taken(data: Any) -> tuple[Salvage, ...]:
    """This thread's repairs, taken off the list, with their pointers from the root ``data``."""
    me = get_ident()
    mine = [r for r in REPAIRS if r[0] == me]
    REPAIRS[:] = [r for r in REPAIRS if r[0] != me]
    return tuple(_salvage(data, *repair[1:]) for repair in mine)


def leniently(decoder: Callable[[Any], T], data: Any) -> T:
    """Run a decoder, logging each repair the leniency rules made with its JSON pointer. On
    valid input this costs one test of an empty list."""
    try:
        value = decoder(data)
    except DecodeError:
        if REPAIRS:
            taken(data)
        raise
    if REPAIRS:
        log_repairs(data)
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
    return len(REPAIRS)


def rewind(to: int) -> None:
    """Forget this thread's repairs made since :func:`mark` gave ``to``: they belonged to an
    option that failed."""
    me = get_ident()
    REPAIRS[to:] = [r for r in REPAIRS[to:] if r[0] != me]


def log_repairs(data: Any) -> None:
    import logging

    log = logging.getLogger(_LOGGER)
    for salvage in taken(data):
        log.warning("repaired a bad value: %s", salvage)


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
