"""Diagnostics: every problem acpgen finds in its input, with the JSON pointer it came from."""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    """One problem, located by a JSON pointer into the document ``source`` names ("" is the root).

    ``pointer=None``: a problem that is not in a document (a bad option); ``message`` then names
    where the value came from (``--package``, ``pyproject.toml: [tool.acpgen] package``).
    """

    severity: Severity
    pointer: str | None
    message: str
    source: str = ""

    def format(self) -> str:
        """One line: ``<source>: <severity>: #<pointer>: <message>`` (no pointer: no ``#...:``)."""
        message = " ".join(self.message.split())
        prefix = f"{self.source}: " if self.source else ""
        where = f"#{self.pointer}: " if self.pointer is not None else ""
        return f"{prefix}{self.severity.value}: {where}{message}"

    def in_source(self, source: str) -> Diagnostic:
        return Diagnostic(self.severity, self.pointer, self.message, source)


class DiagnosticError(Exception):
    """Raised when a run found errors. Carries every diagnostic of the run (warnings too)."""

    def __init__(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(d.format() for d in self.diagnostics))

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)


def escape_pointer_token(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    """Build a JSON pointer (RFC 6901) from unescaped tokens."""
    return "".join("/" + escape_pointer_token(t) for t in tokens)


def error(ptr: str | None, message: str) -> Diagnostic:
    return Diagnostic(Severity.ERROR, ptr, message)


def warning(ptr: str, message: str) -> Diagnostic:
    return Diagnostic(Severity.WARNING, ptr, message)


def json_problem(exc: json.JSONDecodeError) -> str:
    """What is wrong with a JSON text and where, in words: ``Expecting value at line 3 column 9``."""
    what, line, column = json_located(exc)
    return f"{what} at line {line} column {column}"


def json_error(exc: json.JSONDecodeError, source: str, prefix: str) -> Diagnostic:
    """The error of a file ``source`` that is not JSON, at its line and column the usual way:
    ``schema.json:126:5: error: not valid JSON: Unterminated string``."""
    what, line, column = json_located(exc)
    return error(None, f"{prefix}: {what}").in_source(f"{source}:{line}:{column}")


def json_located(exc: json.JSONDecodeError) -> tuple[str, int, int]:
    """What is wrong with a JSON text, and its line and column, the same on every Python.

    Python's words for a problem at a place end with "at" ("Unterminated string starting at"),
    which is left off. Python 3.13 names a trailing comma itself ("Illegal trailing comma before
    end of object", at the comma); earlier versions expect another member or value where the
    bracket is. Both are said as "a trailing comma before '}'", at the comma.
    """
    pos = exc.pos
    if not exc.msg.startswith("Illegal trailing comma"):
        before = exc.doc[:pos].rstrip()
        if not (pos < len(exc.doc) and exc.doc[pos] in "}]" and before.endswith(",")):
            return re.sub(r"( starting)? at$", "", exc.msg), exc.lineno, exc.colno
        pos = len(before) - 1
    bracket = exc.doc[pos + 1 :].lstrip()[:1]
    line = exc.doc.count("\n", 0, pos) + 1
    column = pos - exc.doc.rfind("\n", 0, pos)
    return f"a trailing comma before {bracket!r}", line, column
