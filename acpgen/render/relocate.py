"""A version subpackage's imports of the runtime its package shares: from the package's root.

A package of several protocol versions has one copy of the connection runtime, at its root
(``<package>/_runtime/connection/_rpc.py``, ...), and a subpackage per version (``<package>/v2/``)
holding what the version's schema makes, and the runtime modules that import its own modules (its
stubs, in ``v2/_runtime/stubs/``). Its modules are rendered as those of a package of one version
would be (``from ._runtime.connection._rpc import RequestError``, ``from ..wire import _codec``);
:func:`import_from_parent` then points each import of a shared module at the package's root
(``from .._runtime.connection._rpc import RequestError``; ``from ...._runtime.wire import
_codec``). It works on any module, a user's template's too, and changes nothing but those import
statements.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterator

#: A line that may start a relative import: ``from .x import``, ``from .. import``.
_RELATIVE = re.compile(r"^[ \t]*from \.+[\w.]* import\b", re.MULTILINE)


def import_from_parent(text: str, shared: Collection[str], here: str = "") -> str:
    """``text``, a module of a version's subpackage in its package ``here`` (dotted, relative to
    the version's subpackage: ``""`` at its root, ``"_runtime.stubs"`` in a room), with its
    relative imports (at any depth: under ``if TYPE_CHECKING:``, in a function) of each module in
    ``shared`` (dotted names relative to a package's root: ``"_rpc"``,
    ``"_runtime.connection._rpc"``) made imports from the package's root, which has them: ``from
    ._rpc import ...`` at the version's root becomes ``from .._rpc import ...``. A ``from . import
    a, b`` naming some is split in two. The root's imports go first in the block of relative
    imports they were in, as isort orders them. ``text`` that does not parse is returned as it
    is (its error is reported where it is parsed).
    """
    if not _RELATIVE.search(text):
        return text  # no relative import: nothing to parse
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    package = here.split(".") if here else []
    lines = text.split("\n")
    blocks: list[list[ast.ImportFrom]] = []
    for body in _bodies(tree.body):
        previous: ast.stmt | None = None
        for node in body:
            if isinstance(node, ast.ImportFrom) and 1 <= node.level <= len(package) + 1:
                if blocks and previous is blocks[-1][-1]:
                    blocks[-1].append(node)
                else:
                    blocks.append([node])
            previous = node
    blocks.sort(key=lambda block: block[0].lineno)
    for block in reversed(blocks):  # from the end, so that the earlier line numbers hold
        moved = [_moved(node, lines, shared, package) for node in block]
        first, last = block[0].lineno - 1, block[-1].end_lineno or block[-1].lineno
        covered = sum((n.end_lineno or n.lineno) - n.lineno + 1 for n in block)
        if covered == last - first:  # one statement after another
            parents = sorted((p for p, _ in moved if p), key=_sort_key)
            lines[first:last] = [*(x for p in parents for x in p), *(x for _, h in moved for x in h)]
        else:  # a comment or a blank line among them: each stays where it is
            for node, (parent, here_lines) in reversed(list(zip(block, moved))):
                lines[node.lineno - 1 : node.end_lineno or node.lineno] = [*parent, *here_lines]
    return "\n".join(lines)


def _sort_key(statement: list[str]) -> str:
    """The module a ``from <module> import`` statement names, as isort sorts it."""
    return statement[0].split()[1]


def _bodies(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """``body`` and every statement list nested in it (an ``if``'s, a function's, a handler's), but
    no expression: imports are statements."""
    yield body
    for node in body:
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            nested = getattr(node, field, None)
            if isinstance(nested, list) and nested and isinstance(nested[0], ast.stmt):
                yield from _bodies(nested)
            elif isinstance(nested, list):  # handlers and cases hold statement lists of their own
                for part in nested:
                    if isinstance(part, (ast.ExceptHandler, ast.match_case)):
                        yield from _bodies(part.body)


def _moved(
    node: ast.ImportFrom, lines: list[str], shared: Collection[str], package: list[str]
) -> tuple[list[str], list[str]]:
    """The lines of ``node`` that import from the package's root, and those that stay."""
    statement = lines[node.lineno - 1 : node.end_lineno or node.lineno]
    base = package[: len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
    root = "." * (len(package) + 2)  # from a module of the version's subpackage up to the package's root
    dotted = ".".join(base)
    if node.module is not None and dotted in shared:
        head, _, rest = statement[0].partition(" import")
        return [f"{head.partition('from ')[0]}from {root}{dotted} import{rest}", *statement[1:]], []
    theirs = [a for a in node.names if ".".join([*base, a.name]) in shared]
    mine = [a for a in node.names if ".".join([*base, a.name]) not in shared]
    if not theirs:
        return [], statement
    indent = " " * node.col_offset
    here = "." * node.level + (node.module or "")
    return [f"{indent}from {root}{dotted} import {_names(theirs)}"], [f"{indent}from {here} import {_names(mine)}"] if mine else []


def _names(aliases: list[ast.alias]) -> str:
    return ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in aliases)
