"""A statement's value of a few kinds, laid out as black does (:func:`.layout.statement`): a union
of types, a chain of one binary operator, a conditional expression."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .layout import statement


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
    it out (:func:`statement`)."""
    return "\n".join(statement(0, head, " | ".join(str(o) for o in operands)))


def fit_chain(indent: int, head: str, operator: str, operands: Sequence[str], tail: str = "") -> str:
    """``head`` and ``operands`` joined by one binary ``operator``, then ``tail``, at ``indent``
    spaces (``if a and b:``, ``out = a + b``), as black lays it out (:func:`statement`)."""
    return "\n".join(statement(indent, head, f" {operator} ".join(operands), tail))


def fit_ternary(indent: int, head: str, value: str, test: str, other: str) -> str:
    """``head + f"{value} if {test} else {other}"`` at ``indent`` spaces, as black lays it out
    (:func:`statement`)."""
    return "\n".join(statement(indent, head, f"{value} if {test} else {other}"))
