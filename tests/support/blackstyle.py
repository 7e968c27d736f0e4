"""Black leaves a module unchanged: checked statement by statement on a models module.

A models module and its codec are tens of thousands of lines of very regular classes, methods and
decoders, and black takes half a minute over the bundled schema's. :func:`unchanged_by_black` formats a module whole,
but for a models module: every top-level statement that is not one of the regular classes and
decoders, every regular one with a line of code near the limit (not a comment's, not a docstring's)
or one a test names, and a deterministic sample of the rest.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable

from acpgen.output.formatting import format_python


def top_level_chunks(text: str) -> list[str]:
    """A module's top-level statements (with their decorators and docstrings), each as a text."""
    lines = text.split("\n")
    starts = []
    for node in ast.parse(text).body:
        decorators = getattr(node, "decorator_list", [])
        starts.append(min([node.lineno] + [d.lineno for d in decorators]) - 1)
    starts.append(len(lines))
    chunks: list[str] = []
    for begin, end in itertools.pairwise(starts):
        chunk = "\n".join(lines[begin:end]).strip("\n") + "\n"
        if chunks and chunk.startswith('"""'):  # a docstring belongs to the statement before it
            chunks[-1] += "\n" + chunk
        else:
            chunks.append(chunk)
    return chunks


#: How the regular statements start: a class, its methods in the codec, their attaching, its keys.
REGULAR = ("@dataclass", "def _init_", "def _to_json_", "def _json_text_", "_codec.attach(", "_K_")


def models_sample(text: str, named: Callable[[str], bool] = lambda chunk: False) -> list[str]:
    """The top-level statements of a models module (or its codec) black is run over: all but the
    regular classes, methods and decoders; of those, each with a line near the limit or ``named``,
    and one in twelve."""
    chunks = top_level_chunks(text)
    regular = [c for c in chunks if c.startswith(REGULAR) or "    o = _new(" in c]
    near = [c for c in regular if named(c) or any(len(line) > 88 for line in code_lines(c))]
    return list(dict.fromkeys([c for c in chunks if c not in regular] + regular[::12] + near))


def code_lines(chunk: str) -> list[str]:
    """The lines of ``chunk`` black may split or join: not a comment's, not a docstring's."""
    lines = chunk.split("\n")
    prose = {n for node in ast.walk(ast.parse(chunk))
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
             for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    return [line for n, line in enumerate(lines, 1) if n not in prose and not line.lstrip().startswith("#")]


def unchanged_by_black(text: str, path: str, named: Callable[[str], bool] = lambda chunk: False) -> list[str]:
    """The parts of ``text`` (a module at ``path``) black would change: empty when it leaves them
    alone. A ``models.py`` and its codec are checked by :func:`models_sample`, any other module whole."""
    if not path.endswith(("models.py", "_models_codec.py")):
        return [] if format_python(text, path) == text else [path]
    return [f"{path}: {chunk[:200]}" for chunk in models_sample(text, named) if format_python(chunk) != chunk]
