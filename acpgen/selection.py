"""Selection: what a generated package leaves out.

``--stable-only`` drops every unstable method, and every type that only unstable methods use.
``--side`` names the side the package serves; it is carried in ``Spec.side`` and the templates
emit that side's handler base and the other side's proxy. An agent still calls the client's
methods, so ``--side`` keeps the whole method table and the types it uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from .ir import Spec

#: The values of ``--side``.
SIDES = ("agent", "client", "both")


def select(spec: Spec, *, stable_only: bool) -> Spec:
    if not stable_only:
        return spec
    return dataclasses.replace(spec, methods=tuple(m for m in spec.methods if not m.unstable))


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
