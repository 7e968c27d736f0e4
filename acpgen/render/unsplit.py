"""The layout helpers' lines unsplit (:mod:`.layout`'s ``fit`` and its siblings), for a module
black formats anyway: one that reads a user's template."""

from __future__ import annotations

from collections.abc import Sequence

from .expressions import Bracketed


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
