"""The decode error, and the errors a decoder raises: what was expected, at which JSON pointer."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "DecodeError",
    "bad_tag",
    "describe",
    "errors_of",
    "expected",
    "expected_one_of",
    "missing",
    "no_match",
]


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
