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
from dataclasses import dataclass

#: black's line length in the mode :mod:`acpgen.output.formatting` uses too.
LINE_LENGTH = 100


class Unfitted(Exception):
    """A line ``fit`` cannot lay out exactly as black would."""


def fit(
    indent: int,
    head: str,
    items: Sequence[str],
    tail: str,
    *,
    collection: bool = False,
    one_tuple: bool = False,
    inner: tuple[str, str] = ("", ""),
) -> str:
    """``head + ", ".join(items) + tail`` at ``indent`` spaces, as black lays it out.

    ``head`` ends with the opening bracket and ``tail`` starts with the closing one; no item holds
    a trailing comma. One line when it fits. Else, for a call or a ``def``, the items together on
    a line of their own when that fits; else (and always for a ``collection`` literal) one item
    a line, each with a trailing comma.

    ``one_tuple``: the brackets are a tuple display, so a lone item keeps its comma (``(x,)``).
    ``inner``: a collection display inside a call's brackets (``frozenset({...})``): split, each
    inner bracket gets a line of its own and the items go one level deeper.
    """
    pad, inner_pad = " " * indent, " " * (indent + 4)
    joined = ", ".join(items) + ("," if one_tuple and len(items) == 1 else "")
    line = f"{pad}{head}{inner[0]}{joined}{inner[1]}{tail}"
    if len(line) <= LINE_LENGTH:
        return line
    if not items or len(pad + head) > LINE_LENGTH or len(pad + tail) > LINE_LENGTH:
        raise Unfitted(line)
    if inner != ("", ""):
        body = _one_a_line(indent + 8, items, line)
        return f"{pad}{head}\n{inner_pad}{inner[0]}\n{body}\n{inner_pad}{inner[1]}\n{pad}{tail}"
    if not collection and len(inner_pad + joined) <= LINE_LENGTH:
        lone_parameter = len(items) == 1 and head.lstrip().startswith(("def ", "async def "))
        body = inner_pad + joined + ("," if lone_parameter else "")
    else:
        body = _one_a_line(indent + 4, items, line)
    return f"{pad}{head}\n{body}\n{pad}{tail}"


def _one_a_line(indent: int, items: Sequence[str], line: str) -> str:
    """``items`` one a line at ``indent``, each with a trailing comma; :class:`Unfitted` (naming
    the whole ``line``) when one of them is too long still."""
    lines = [f"{' ' * indent}{item}," for item in items]
    if any(len(text) > LINE_LENGTH for text in lines):
        raise Unfitted(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class Bracketed:
    """An operand black may split inside its brackets: ``open + ", ".join(items) + close``."""

    open: str
    items: tuple[str, ...]
    close: str

    def __str__(self) -> str:
        return self.open + ", ".join(self.items) + self.close


def fit_union(head: str, operands: Sequence[str | Bracketed]) -> str:
    """``head + " | ".join(operands)`` at the top level (``head`` is ``"Name = "``), as black lays
    it out: one line when it fits, else in parentheses with one operand a line, the operand of a
    line too long split inside its own brackets."""
    line = head + " | ".join(str(o) for o in operands)
    if len(line) <= LINE_LENGTH:
        return line
    lines = [head + "("]
    for index, operand in enumerate(operands):
        prefix = "| " if index else ""
        text = f"    {prefix}{operand}"
        if len(text) <= LINE_LENGTH:
            lines.append(text)
        elif isinstance(operand, Bracketed):
            lines.append(fit(4, prefix + operand.open, operand.items, operand.close, collection=True))
        else:
            raise Unfitted(text)
    return "\n".join([*lines, ")"])


def fit_chain(indent: int, head: str, operator: str, operands: Sequence[str], tail: str = "") -> str:
    """``head`` and ``operands`` joined by one binary ``operator``, then ``tail``, at ``indent``
    spaces (``if a and b:``, ``out = a + b``), as black lays it out: one line when it fits, else in
    parentheses: on a line of their own when they fit there, else one operand a line, each but the
    first led by the operator. Two operands whose last ends in a bracket, which black may split
    inside instead, raise :class:`Unfitted`, but for a writer's ``'{"k":' + ("null" if ... else
    ...)`` (see :func:`_split_in_parentheses`)."""
    pad = " " * indent
    line = f"{pad}{head}{f' {operator} '.join(operands)}{tail}"
    if len(line) <= LINE_LENGTH:
        return line
    if len(operands) == 2 and operands[-1][-1:] in ")]}":
        return _split_in_parentheses(indent, head, operator, operands, tail, line)
    joined = f"{pad}    {f' {operator} '.join(operands)}"
    if len(joined) <= LINE_LENGTH:
        return "\n".join([f"{pad}{head}(", joined, f"{pad}){tail}"])
    lines = [f"{pad}    {operator + ' ' if index else ''}{operand}" for index, operand in enumerate(operands)]
    if any(len(text) > LINE_LENGTH for text in lines):
        raise Unfitted(line)
    return "\n".join([f"{pad}{head}(", *lines, f"{pad}){tail}"])


def _split_in_parentheses(
    indent: int, head: str, operator: str, operands: Sequence[str], tail: str, line: str
) -> str:
    """Two operands, a string literal and a parenthesized ternary (``("null" if v is None else
    _str(v))``), as black lays them out: split inside the parentheses when the line up to them
    fits (the ternary on a line of its own, else its three parts a line each), else each operand
    on a line of its own inside parentheses of the whole. Any other pair raises :class:`Unfitted`."""
    first, last = operands
    pad = " " * indent
    inner = last[1:-1]
    if not (first[:1] in "'\"" and first[-1:] == first[:1] and first.count(first[0]) == 2):
        raise Unfitted(line)
    if not (last.startswith("(") and " if " in inner and " else " in inner and _balanced(inner) and not tail):
        raise Unfitted(line)
    opening = f"{pad}{head}{first} {operator} ("
    if len(opening) <= LINE_LENGTH:
        value, rest = inner.split(" if ", 1)
        test, other = rest.split(" else ", 1)
        body = [f"{pad}    {inner}"]
        if len(body[0]) > LINE_LENGTH:
            body = [f"{pad}    {value}", f"{pad}    if {test}", f"{pad}    else {other}"]
        if any(len(text) > LINE_LENGTH for text in body) or not all(map(_balanced, (value, test, other))):
            raise Unfitted(line)
        return "\n".join([opening, *body, f"{pad})"])
    lines = [f"{pad}    {first}", f"{pad}    {operator} {last}"]
    if any(len(text) > LINE_LENGTH for text in lines):
        raise Unfitted(line)
    return "\n".join([f"{pad}{head}(", *lines, f"{pad})"])


def _balanced(text: str) -> bool:
    """``text`` opens no bracket it does not close (and has no string that holds one)."""
    depth = 0
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if depth < 0:
            return False
    return depth == 0 and "'" not in text


def fit_ternary(indent: int, head: str, value: str, test: str, other: str) -> str:
    """``head + f"{value} if {test} else {other}"`` at ``indent`` spaces, as black lays it out: one
    line when it fits, else in parentheses, on a line of their own when they fit there, else
    ``value``, ``if test`` and ``else other`` a line each."""
    pad = " " * indent
    expression = f"{value} if {test} else {other}"
    if len(pad + head + expression) <= LINE_LENGTH:
        return pad + head + expression
    lines = [f"{pad}    {expression}"]
    if len(lines[0]) > LINE_LENGTH:
        lines = [f"{pad}    {value}", f"{pad}    if {test}", f"{pad}    else {other}"]
    if any(len(text) > LINE_LENGTH for text in lines):
        raise Unfitted(pad + head + expression)
    return "\n".join([f"{pad}{head}(", *lines, f"{pad})"])


def one_line_ternary(indent: int, head: str, value: str, test: str, other: str) -> str:
    """``fit_ternary``'s line unsplit, for a module black formats anyway."""
    return f"{' ' * indent}{head}{value} if {test} else {other}"


def one_line_chain(indent: int, head: str, operator: str, operands: Sequence[str], tail: str = "") -> str:
    """``fit_chain``'s line unsplit, for a module black formats anyway."""
    return f"{' ' * indent}{head}{f' {operator} '.join(operands)}{tail}"


def one_line(
    indent: int,
    head: str,
    items: Sequence[str],
    tail: str,
    *,
    collection: bool = False,
    one_tuple: bool = False,
    inner: tuple[str, str] = ("", ""),
) -> str:
    """``fit``'s line unsplit, for a module black formats anyway."""
    joined = ", ".join(items) + ("," if one_tuple and len(items) == 1 else "")
    return f"{' ' * indent}{head}{inner[0]}{joined}{inner[1]}{tail}"


def one_line_union(head: str, operands: Sequence[str | Bracketed]) -> str:
    """``fit_union``'s line unsplit, for a module black formats anyway."""
    return head + " | ".join(str(o) for o in operands)
