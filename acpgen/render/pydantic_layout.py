"""datamodel-code-generator's ``models.py`` brought to acpgen's style (see :mod:`.pydantic_models`).

Its imports are laid out as isort (ruff's ``I`` rules) lays them out, read from the module's
syntax tree; black reformats only the statements whose layout is not black's already, since
black over the whole module would spend seconds agreeing.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable

from .layout import fit_import


def sorted_imports(text: str) -> str:
    """``text`` with its leading import statements (acpgen's header's, then those
    datamodel-code-generator writes) laid out as isort (ruff's ``I`` rules) lays them out:
    ``__future__``, the standard library, other packages, then the package's own modules, a blank
    line between the groups, one statement per module, names ordered by kind. Read from the
    module's syntax tree, not its text."""
    tree = ast.parse(text)
    body = tree.body[1:] if tree.body and _is_docstring(tree.body[0]) else tree.body
    block: list[ast.ImportFrom] = []
    for node in body:
        if not isinstance(node, ast.ImportFrom):
            break
        block.append(node)
    if not block:
        return text
    names: dict[tuple[int, str], set[str]] = {}
    for node in block:
        names.setdefault((node.level, node.module or ""), set()).update(
            a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names
        )
    groups: dict[int, list[str]] = {}
    for (level, module), found in sorted(names.items(), key=lambda item: (-item[0][0], item[0][1].lower())):
        groups.setdefault(_import_group(level, module), []).append(
            fit_import(0, "." * level + module, sorted(found, key=_name_order))
        )
    lines = text.split("\n")
    start, end = block[0].lineno - 1, block[-1].end_lineno or block[-1].lineno
    laid_out = "\n\n".join("\n".join(statements) for _group, statements in sorted(groups.items()))
    return "\n".join([*lines[:start], laid_out, *lines[end:]])


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _import_group(level: int, module: str) -> int:
    """isort's sections: 0 ``__future__``, 1 the standard library, 2 other packages, 3 relative."""
    if level:
        return 3
    if module == "__future__":
        return 0
    return 1 if module.split(".")[0] in sys.stdlib_module_names else 2


def _name_order(name: str) -> tuple[int, str]:
    """isort's order of imported names: constants, then classes, then the others."""
    if name.isupper() and len(name) > 1:
        return 0, name
    return (1 if name[:1].isupper() else 2), name


def black_where_needed(text: str, format_python: Callable[[str], str], line_length: int = 100) -> str:
    """``text`` (datamodel-code-generator's output) in black's style, with black reading a few
    hundred of its lines instead of five thousand.

    acpgen's templates write black's layout; black formats each statement they leave too long,
    wrapped or with a single-quoted string (a statement of a class body alone, inside a class of
    its own), and the blank lines between top-level statements are black's. Black lays out each
    statement of a block on its own, so this is what black makes of the whole module (tests
    compare the two).
    """
    lines = text.split("\n")
    tree = ast.parse(text)
    in_strings = _string_lines(tree)

    def flagged(start: int, end: int) -> bool:
        return any(_needs_black(lines[i], line_length, i + 1 in in_strings) for i in range(start, end))

    def black_class_member(first: int, last: int, leading: bool) -> list[str]:
        # In a class of its own; after a statement unless it leads its class: black treats the
        # string that leads a class as its docstring, the others as attribute docstrings.
        head = "class _:\n" if leading else "class _:\n    _ = 0\n"
        formatted = format_python(head + "\n".join(lines[first:last]) + "\n")
        return formatted.rstrip("\n").split("\n")[head.count("\n") :]

    out: list[str] = []
    previous: ast.stmt | None = None
    previous_end = 0
    for node in tree.body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        end = node.end_lineno or node.lineno
        if previous is None:
            out.extend(lines[:start])
        else:
            out.extend([""] * _blank_lines(previous, node, sum(not line.strip() for line in lines[previous_end:start])))
        if not flagged(start, end):
            out.extend(lines[start:end])
        elif isinstance(node, ast.ClassDef) and not flagged(start, node.body[0].lineno - 1):
            done = start
            for index, member in enumerate(node.body):
                first, last = member.lineno - 1, member.end_lineno or member.lineno
                if flagged(first, last):
                    out.extend(lines[done:first])
                    out.extend(black_class_member(first, last, leading=index == 0))
                    done = last
            out.extend(lines[done:end])
        else:
            out.extend(format_python("\n".join(lines[start:end]) + "\n").rstrip("\n").split("\n"))
        previous, previous_end = node, end
    out.extend(lines[previous_end:])
    return "\n".join(out)


def _blank_lines(previous: ast.stmt, node: ast.stmt, found: int) -> int:
    """The blank lines black puts between two top-level statements that have ``found``."""
    if isinstance(node, _DEFINITIONS) or isinstance(previous, _DEFINITIONS):
        return 2
    if isinstance(previous, _IMPORTS) and not isinstance(node, _IMPORTS):
        return 1
    return min(found, 2)


_DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_IMPORTS = (ast.Import, ast.ImportFrom)


def _string_lines(tree: ast.Module) -> set[int]:
    """The lines inside a multi-line string statement (a docstring) after its first."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.update(range(node.lineno + 1, (node.end_lineno or node.lineno) + 1))
    return found


def _needs_black(line: str, line_length: int, in_string: bool) -> bool:
    """Black might lay out the statement holding ``line`` otherwise: too long, or wrapped."""
    if len(line) > line_length:
        return True
    if in_string:
        return False
    code = line.rstrip()
    return "'" in code or code.endswith(("(", "[", "{", ",")) or code.lstrip().startswith((")", "]", "}"))
