"""Lay out a bracketed line the way black does, so the built-in templates emit black's style.

Formatting the generated runtime with black costs seconds on every cold run, so the built-in
templates emit black's output directly; the lines whose length depends on the schema (a method's
name, its types) go through :func:`fit`. ``fit`` knows the layouts black gives a line split at
its last bracket pair whose items are never split further. For any other line (an item too long
for a line of its own) it raises :class:`Unfitted`, and the module is formatted by black instead.
Tests hold ``fit`` to black's output at every length around the limit, and every built-in module
to being unchanged by black.
"""

from __future__ import annotations

from collections.abc import Sequence

#: black's line length in the mode :mod:`acpgen.output.formatting` uses too.
LINE_LENGTH = 100


class Unfitted(Exception):
    """A line ``fit`` cannot lay out exactly as black would."""


def fit(indent: int, head: str, items: Sequence[str], tail: str, *, collection: bool = False) -> str:
    """``head + ", ".join(items) + tail`` at ``indent`` spaces, as black lays it out.

    ``head`` ends with the opening bracket and ``tail`` starts with the closing one; no item holds
    a trailing comma. One line when it fits. Else, for a call or a ``def``, the items together on
    a line of their own when that fits; else (and always for a ``collection`` literal) one item
    a line, each with a trailing comma.
    """
    pad, inner = " " * indent, " " * (indent + 4)
    joined = ", ".join(items)
    line = f"{pad}{head}{joined}{tail}"
    if len(line) <= LINE_LENGTH:
        return line
    if not items or len(pad + head) > LINE_LENGTH or len(pad + tail) > LINE_LENGTH:
        raise Unfitted(line)
    if not collection and len(inner + joined) <= LINE_LENGTH:
        lone_parameter = len(items) == 1 and head.lstrip().startswith(("def ", "async def "))
        body = inner + joined + ("," if lone_parameter else "")
    else:
        lines = [f"{inner}{item}," for item in items]
        if any(len(line) > LINE_LENGTH for line in lines):
            raise Unfitted(line)
        body = "\n".join(lines)
    return f"{pad}{head}\n{body}\n{pad}{tail}"


def one_line(indent: int, head: str, items: Sequence[str], tail: str, *, collection: bool = False) -> str:
    """``fit``'s line unsplit, for a module black formats anyway."""
    return f"{' ' * indent}{head}{', '.join(items)}{tail}"
