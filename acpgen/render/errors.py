"""Say on one line where rendering failed: the template file and line, and what went wrong there.

A user's template can fail in any way (a syntax error, an undefined name, an exception in an
expression). Jinja reports the template's file and line in the traceback of the exception; this
module finds them, so the error names the user's file rather than blaming acpgen.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

import jinja2

from .environment import TEMPLATES


def template_problem(exc: BaseException, user_templates: Path | None = None) -> str:
    """One line for an exception raised while rendering: ``<file>:<line>: <what>``."""
    what = _one_line(exc.message if isinstance(exc, jinja2.TemplateSyntaxError) and exc.message else exc)
    if not isinstance(exc, jinja2.TemplateError):
        what = f"{type(exc).__name__}: {what}" if what else type(exc).__name__
    location = _location(exc)
    if location is None:
        return f"generation failed: {what}"
    filename, line = location
    if _inside(filename, TEMPLATES):
        name = Path(filename).name
        return f"built-in template {name}, line {line}: {what} (a bug in acpgen; please report it)"
    return f"{_shown(filename)}:{line}: {what}"


def _location(exc: BaseException) -> tuple[str, int] | None:
    """The template file and line the exception was raised at (the innermost template frame)."""
    if isinstance(exc, jinja2.TemplateSyntaxError) and exc.filename and exc.lineno:
        return exc.filename, exc.lineno
    found = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        filename = frame.f_code.co_filename
        if filename.endswith(".jinja"):
            found = (filename, line)
    return found


def _inside(filename: str, folder: Path) -> bool:
    try:
        Path(filename).resolve().relative_to(folder)
    except (ValueError, OSError):
        return False
    return True


def _shown(filename: str) -> str:
    """The file as given (relative to the working folder when it is below it)."""
    path = Path(filename)
    if path.is_absolute():
        relative = os.path.relpath(path, Path.cwd())
        return relative if not relative.startswith("..") else str(path)
    return path.as_posix()


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
