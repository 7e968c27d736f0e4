"""Selection: what a generated package leaves out.

``--stable-only`` drops every unstable method, and every type that only unstable methods use.
``--side`` names the side the package serves; it is carried in ``Spec.side`` and the templates
emit that side's handler base and the other side's proxy. An agent still calls the client's
methods, so ``--side`` keeps the whole method table and the types it uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .ir import Method

#: The values of ``--side``.
SIDES = ("agent", "client", "both")


def select_methods(methods: tuple[Method, ...], *, stable_only: bool) -> tuple[Method, ...]:
    """The methods a package keeps: all of them, or with ``stable_only`` the stable ones."""
    return tuple(m for m in methods if not (stable_only and m.unstable))


def reachable(roots: Iterable[str], refs: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """Every name reachable from ``roots`` by following ``refs`` (roots included)."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(refs.get(name, ()))
    return frozenset(seen)
