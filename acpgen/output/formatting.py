"""Format generated Python with black, in-process, in a mode fixed here.

The mode never comes from the caller's configuration (no pyproject.toml is read), and the black
version is pinned exactly in acpgen's ``black`` extra, so the same input gives the same bytes
everywhere. Only a module that reads a user's template (or, should a schema ever produce one, has
a line :mod:`acpgen.render.layout` cannot lay out) is formatted by black: the built-in templates
emit black's style themselves, so acpgen installs beside any black. black is imported on first
use; without it, such a module is an error naming the template or the line.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from ..render.layout import LINE_LENGTH

#: What :func:`format_python` needs: acpgen's ``black`` extra, pinned as in pyproject.toml.
BLACK_REQUIREMENT = "black==26.10.1"
#: How to install it, in commands that work where acpgen is installed from a clone (no package
#: index serves acpgen itself).
INSTALL_BLACK = f"python -m pip install '{BLACK_REQUIREMENT}' (or, in acpgen's clone: python -m pip install '.[black]')"


@functools.cache
def _black() -> tuple[Any, Any]:
    import black

    mode = black.Mode(
        target_versions={black.mode.TargetVersion.PY310},
        line_length=LINE_LENGTH,
        string_normalization=True,
        is_pyi=False,
        magic_trailing_comma=True,
        preview=False,
    )
    return black, mode


class FormattingError(Exception):
    """Generated code that black cannot parse: a bug in a template, never the user's fault."""


def format_python(source: str, filename: str = "<generated>", why: str = "") -> str:
    """``source`` as black formats it; ``why``: what makes black needed, for the error when it is
    not installed (``"<file>:<line>: <what>"``)."""
    try:
        black, mode = _black()
    except ImportError:
        raise FormattingError(
            f"{why or filename + ': this module is formatted by black'}, and black is not installed:"
            f" {INSTALL_BLACK}"
        ) from None
    try:
        formatted: str = black.format_str(source, mode=mode)
    except black.InvalidInput as exc:
        raise FormattingError(f"{filename}: generated code is not valid Python: {exc}") from exc
    return formatted


#: sha256 of the texts :func:`ensure_parses` saw parse in this process (a runtime module every
#: package carries, a package generated again by ``check``): each is compiled once.
_PARSED: set[str] = set()


def ensure_parses(source: str, filename: str = "<generated>") -> str:
    """``source`` unchanged, once it is known to parse (for output emitted in black's style)."""
    digest = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    if digest in _PARSED:
        return source
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise FormattingError(f"{filename}: generated code is not valid Python: {exc}") from exc
    _PARSED.add(digest)
    return source
