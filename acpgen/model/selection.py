"""Selection: what a generated package leaves out.

``--stable-only`` drops every unstable method, and every type that only unstable methods use.
``--side`` names the side the package serves (``agent``, ``client``, another side the schema
declares, or ``both``: every one); it is carried in ``Spec.side`` and the templates emit that
side's handler base and the other side's proxy. An agent still calls the client's
methods, so ``--side`` keeps the whole method table and the types it uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .spec import Method
from .typedefs import TypeDef

#: The values of ``--side`` every schema accepts; a schema may declare more sides (``proxy``).
SIDES = ("agent", "client", "both")


def select_methods(methods: tuple[Method, ...], *, stable_only: bool) -> tuple[Method, ...]:
    """The methods a package keeps: all of them, or with ``stable_only`` the stable ones."""
    return tuple(m for m in methods if not (stable_only and m.unstable))


def select_types(
    types: tuple[TypeDef, ...], kept: tuple[Method, ...], dropped: tuple[Method, ...]
) -> tuple[TypeDef, ...]:
    """``types`` less every type that only the ``dropped`` methods use.

    A type reachable (through ``refs``) from a kept method's params or result stays. One reachable
    only from dropped methods goes, and so does any other type that refers to one that went (the
    JSON-RPC envelopes, whose params and results list every method), since it could not be built.
    """
    if not dropped:
        return types
    refs = {t.name: t.refs for t in types}
    keep = reachable(_roots(kept), refs)
    gone = reachable(_roots(dropped), refs) - keep
    return tuple(t for t in types if t.name not in gone and not reachable([t.name], refs) & gone)


def _roots(methods: tuple[Method, ...]) -> list[str]:
    return [name for m in methods for name in (m.params_type, m.result_type) if name is not None]


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
