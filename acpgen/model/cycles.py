"""Type aliases that refer to themselves: a schema error, named at the cycle's JSON pointer.

``models.py`` assigns every union, literal set and alias at import time, each after the aliases
it names (``SessionId = str``; ``ContentBlock = Text | Image | ...``). A class may refer to
itself (its fields are annotations), but an alias that names itself, directly or through other
aliases, can never be assigned: ``A: {"$ref": "#/$defs/A"}``, ``A -> B -> A``, ``A = A | str``
never reach a real type, and ``A = list[A] | str`` would need a forward reference.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, error
from .typedefs import DefKind, TypeDef
from .types import ListOf, MapOf, Nullable, Ref, TypeExpr


def alias_cycles(types: tuple[TypeDef, ...]) -> list[Diagnostic]:
    """One error per set of aliases that refer to each other in a cycle."""
    aliases = {t.name: t for t in types if t.kind is not DefKind.CLASS}
    direct: dict[str, set[str]] = {name: set() for name in aliases}
    nested: dict[str, set[str]] = {name: set() for name in aliases}
    for name, t in aliases.items():
        for expr in (*t.options, t.target):
            _edges(expr, direct[name], nested[name], inside=False)
    every = {name: (direct[name] | nested[name]) & aliases.keys() for name in aliases}
    problems = []
    reported: set[str] = set()
    for graph, why in (
        ({name: targets & aliases.keys() for name, targets in direct.items()}, "never reaches a real type (no object type on the way)"),
        (every, "goes through an array or a map; only an object type may contain itself"),
    ):
        for cycle in _cycles(graph):
            if reported & set(cycle):
                continue
            reported.update(cycle)
            closed = cycle[0] in graph[cycle[-1]]
            path = " -> ".join((*cycle, cycle[0])) if closed else "through " + ", ".join(sorted(cycle))
            problems.append(error(aliases[cycle[0]].pointer, f"$ref cycle {path} {why}"))
    return problems


def _edges(expr: TypeExpr | None, direct: set[str], nested: set[str], *, inside: bool) -> None:
    if isinstance(expr, Ref):
        (nested if inside else direct).add(expr.name)
    elif isinstance(expr, Nullable):
        _edges(expr.inner, direct, nested, inside=inside)
    elif isinstance(expr, ListOf):
        _edges(expr.item, direct, nested, inside=True)
    elif isinstance(expr, MapOf):
        _edges(expr.value, direct, nested, inside=True)


def _cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Each strongly connected set of names that holds a cycle, in a fixed order: as a path
    from its least name, following the least next name (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[tuple[str, ...]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1 or node in graph[node]:
                    found.append(_path(set(members), graph))
    return sorted(found)


def _path(members: set[str], graph: dict[str, set[str]]) -> tuple[str, ...]:
    """A cycle through ``members`` starting at the least one, as far as it goes without repeating."""
    path = [min(members)]
    while True:
        following = sorted(graph[path[-1]] & members)
        step = next((name for name in following if name not in path), None)
        if step is None:
            return tuple(path)
        path.append(step)
