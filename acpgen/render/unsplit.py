"""The layout helper's lines unsplit (:mod:`.layout`'s ``fit``), for a module black formats
anyway: one that reads a user's template."""

from __future__ import annotations

from collections.abc import Sequence


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

