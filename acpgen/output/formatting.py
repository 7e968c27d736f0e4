"""Format generated Python with black, in-process, in a mode fixed here.

The mode never comes from the caller's configuration (no pyproject.toml is read), and the black
version is pinned in acpgen's requirements, so the same input gives the same bytes everywhere.
black is imported on first use: a run that reuses every formatted file never needs it.
"""

from __future__ import annotations

import functools
from typing import Any

from ..render.layout import LINE_LENGTH


@functools.cache
def _black() -> tuple[Any, Any]:
    import black

    mode = black.Mode(
        target_versions={black.TargetVersion.PY310},
        line_length=LINE_LENGTH,
        string_normalization=True,
        is_pyi=False,
        magic_trailing_comma=True,
        preview=False,
    )
    return black, mode


class FormattingError(Exception):
    """Generated code that black cannot parse: a bug in a template, never the user's fault."""


def format_python(source: str, filename: str = "<generated>") -> str:
    black, mode = _black()
    try:
        return black.format_str(source, mode=mode)
    except black.InvalidInput as exc:
        raise FormattingError(f"{filename}: generated code is not valid Python: {exc}") from exc


def ensure_parses(source: str, filename: str = "<generated>") -> str:
    """``source`` unchanged, once it is known to parse (for output emitted in black's style)."""
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise FormattingError(f"{filename}: generated code is not valid Python: {exc}") from exc
    return source
