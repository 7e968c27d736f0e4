"""Python literals for JSON values from the schema: the one way schema text becomes code."""

from __future__ import annotations

from typing import Any


def py_literal(value: Any) -> str:
    """A Python literal for a JSON-like value (str, int, float, bool, None, list, dict).

    Schema text reaches generated code only through this function (or the ``docstring`` filter), so a
    quote, a backslash or a newline in the schema can never become code.
    """
    if isinstance(value, str):
        return _string_literal(value)
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no Python literal for {type(value).__name__}")


def _string_literal(text: str) -> str:
    """``repr(text)``, with double quotes where black would choose them (fewest escapes, then ")."""
    literal = repr(text)
    if literal[0] == '"' or text.count('"') > text.count("'"):
        return literal
    body = literal[1:-1]
    if "\\" not in body and '"' not in body:  # most: nothing to change but the quotes
        return '"' + body + '"'
    out = []
    index = 0
    while index < len(body):
        if body[index] == "\\":
            pair = body[index : index + 2]
            out.append("'" if pair == "\\'" else pair)
            index += 2
            continue
        out.append('\\"' if body[index] == '"' else body[index])
        index += 1
    return '"' + "".join(out) + '"'
