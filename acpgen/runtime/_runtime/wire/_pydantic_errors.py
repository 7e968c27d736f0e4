"""pydantic's validation errors as the package's :class:`DecodeError`: the deepest error, its
location read as a JSON pointer into the data, its message in the dataclass flavour's words."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ._codec import DecodeError, describe

__all__ = ["decode_error", "error_of"]


def _follow(node: Any, loc: tuple[str | int, ...], missing: bool) -> tuple[list[str | int], Any]:
    """The place in ``node`` that pydantic's location ``loc`` names, and the value there.

    ``loc`` also holds the labels of union members (a tag value, a class name), which are not
    places in the data; a label can equal a key (``text``), so this takes the reading that
    follows the most segments into the data.
    """
    if not loc:
        return [], node
    segment, rest = loc[0], loc[1:]
    best: tuple[list[str | int], Any] | None = None
    inside = isinstance(node, dict) and segment in node
    if inside or (isinstance(node, list) and isinstance(segment, int) and 0 <= segment < len(node)):
        path, value = _follow(node[segment], rest, missing)
        best = ([segment, *path], value)
    elif missing and not rest:
        return [segment], None
    skipped = _follow(node, rest, missing)
    if best is None or len(skipped[0]) > len(best[0]):
        return skipped
    return best


def decode_error(error: ValidationError, data: Any) -> DecodeError:
    """The deepest of pydantic's errors, its location read as a JSON pointer into ``data``."""
    return error_of(error.errors(include_url=False), data)


def error_of(errors: list[ErrorDetails], data: Any) -> DecodeError:
    """The deepest of pydantic's errors ``errors`` (as ``ValidationError.errors()`` lists them)."""
    details = max(errors, key=lambda e: len(e["loc"]))
    missing = details["type"] == "missing"
    path, node = _follow(data, tuple(details["loc"]), missing)
    message = details["msg"]
    if details["type"] in ("union_tag_invalid", "union_tag_not_found"):
        # pydantic names the tag "'py_name' | 'wireName'": the wire name is the one in the data, else the last
        names = [n.strip("'") for n in str(details.get("ctx", {}).get("discriminator", "")).split(" | ")]
        key = next((n for n in names if node.__class__ is dict and n in node), names[-1])
        path.append(key)
        allowed = details.get("ctx", {}).get("expected_tags", "")
        if details["type"] == "union_tag_not_found":
            message = f"required tag {key!r} is missing (one of {allowed})"
        else:
            message = f"expected one of {allowed}, got {describe(node.get(key) if node.__class__ is dict else node)}"
    elif details["type"] == "missing":
        message = f"required property {path[-1]!r} is missing"
    else:
        message = f"{message[0].lower()}{message[1:]}, got {describe(details['input'])}"
    return DecodeError(message, tuple(path))
