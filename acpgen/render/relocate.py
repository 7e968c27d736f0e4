"""A version subpackage's imports of the runtime its package shares: one level up.

A package of several protocol versions has one copy of the connection runtime, at its root
(``<package>/_rpc.py``, ...), and a subpackage per version (``<package>/v2/``) holding what the
version's schema makes. Its modules are rendered as those of a package of one version would be
(``from ._rpc import RequestError``, ``from . import _asgi, models``); :func:`import_from_parent`
then points each import of a shared module at the parent package (``from .._rpc import
RequestError``; ``from .. import _asgi`` and ``from . import models``). It works on any module,
a user's template's too, and changes nothing but those import statements.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterator

#: A line that may start a relative import of the package's own modules: ``from .x import`` or
#: ``from . import``.
_RELATIVE = re.compile(r"^[ \t]*from \.(\w*) import\b", re.MULTILINE)


def import_from_parent(text: str, shared: Collection[str]) -> str:
    """``text`` with its ``from .<module> import ...`` (at any depth: under ``if TYPE_CHECKING:``,
    in a function) of each module in ``shared``
    (names like ``"_rpc"``) made ``from ..<module> import ...``; a ``from . import a, b`` naming
    some is split in two. The parent's imports go first in the block of relative imports they
    were in, as isort orders them. ``text`` that does not parse is returned as it is (its error
    is reported where it is parsed).
    """
    if not any(module in shared or not module for module in _RELATIVE.findall(text)):
        return text  # no import of a shared module (nor a ``from . import``): nothing to parse
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.split("\n")
    blocks: list[list[ast.ImportFrom]] = []
    for body in _bodies(tree.body):
        previous: ast.stmt | None = None
        for node in body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if blocks and previous is blocks[-1][-1]:
                    blocks[-1].append(node)
                else:
                    blocks.append([node])
            previous = node
    blocks.sort(key=lambda block: block[0].lineno)
    for block in reversed(blocks):  # from the end, so that the earlier line numbers hold
        moved = [_moved(node, lines, shared) for node in block]
        first, last = block[0].lineno - 1, block[-1].end_lineno or block[-1].lineno
        covered = sum((n.end_lineno or n.lineno) - n.lineno + 1 for n in block)
        if covered == last - first:  # one statement after another
            lines[first:last] = [*(x for p, _ in moved for x in p), *(x for _, h in moved for x in h)]
        else:  # a comment or a blank line among them: each stays where it is
            for node, (parent, here) in reversed(list(zip(block, moved))):
                lines[node.lineno - 1 : node.end_lineno or node.lineno] = [*parent, *here]
    return "\n".join(lines)


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


def _moved(node: ast.ImportFrom, lines: list[str], shared: Collection[str]) -> tuple[list[str], list[str]]:
    """The lines of ``node`` that import from the parent package, and those that stay."""
    statement = lines[node.lineno - 1 : node.end_lineno or node.lineno]
    if node.module is not None:
        if node.module in shared:
            return [statement[0].replace("from .", "from ..", 1), *statement[1:]], []
        return [], statement
    theirs = [a for a in node.names if a.name in shared]
    mine = [a for a in node.names if a.name not in shared]
    if not theirs:
        return [], statement
    indent = " " * node.col_offset
    return [f"{indent}from .. import {_names(theirs)}"], [f"{indent}from . import {_names(mine)}"] if mine else []


def _names(aliases: list[ast.alias]) -> str:
    return ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in aliases)
