"""Load a schema file: parse it, validate it against the draft 2020-12 meta-schema, check its refs.

Every problem becomes a :class:`Diagnostic` naming a JSON pointer; all of them are collected
before the run stops, so a user sees every problem of a broken schema at once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError, error, json_error, pointer
from .bundled import bundled_schema
from .depth import too_deep
from .pointers import resolve_ref


@dataclass(frozen=True)
class LoadedSchema:
    """A parsed, validated schema document and where it came from."""

    name: str  # the file name, as shown in generated headers
    sha256: str
    document: dict[str, Any]
    text: str = ""  # the file's text, as read
    shown: str = ""  # the file as diagnostics name it: the path as the user gave it ("" : ``name``)

    @property
    def where(self) -> str:
        """The file as a diagnostic names it."""
        return self.shown or self.name

    @property
    def defs(self) -> dict[str, Any]:
        defs = self.document.get("$defs", {})
        return defs if isinstance(defs, dict) else {}


def load_schema(path: Path, validated: frozenset[str] = frozenset()) -> LoadedSchema:
    """Read and check ``path``. Raises :class:`DiagnosticError` on any error.

    ``validated``: sha256 digests of documents already known to pass the meta-schema; a document
    with one of them skips that (slow) validation. Its $refs are checked all the same.
    Diagnostics name the file by ``path`` as given (the bundled schema by its file name).
    """
    shown = path.name if path == bundled_schema() else str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DiagnosticError([error(None, f"cannot read schema: {exc.strerror or exc}").in_source(shown)]) from None
    return parse_schema(raw, path.name, validated, shown)


def without_methods(path: Path) -> Diagnostic | None:
    """The error for a JSON object none of whose ``$defs`` carries ``x-method`` (a ``package.json``,
    the schema of something else): not an ACP schema, and a package made of it would speak no
    method. None for anything else, an ACP schema or a file :func:`load_schema` reports on.

    Checked before the meta-schema, whose findings about a file of another kind would only bury it.
    A library caller may still load a types-only schema, for its models.
    """
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    defs = document.get("$defs")
    if isinstance(defs, dict) and any(isinstance(node, dict) and "x-method" in node for node in defs.values()):
        return None
    shown = path.name if path == bundled_schema() else str(path)
    return error(None, "no $defs entry has an x-method annotation: this is not an ACP schema").in_source(shown)


def parse_schema(raw: bytes, name: str, validated: frozenset[str] = frozenset(), shown: str = "") -> LoadedSchema:
    """Check the schema file ``name`` holding ``raw``; ``shown``: the file as diagnostics name it
    (default: ``name``). A problem with the file as a whole (not text, not JSON) has no pointer."""
    shown = shown or name
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DiagnosticError([error(None, f"not UTF-8 text (byte {exc.start})").in_source(shown)]) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DiagnosticError([json_error(exc, shown, "not valid JSON")]) from None
    except RecursionError:
        raise DiagnosticError([error(None, "nested too deeply for Python's JSON parser").in_source(shown)]) from None
    if not isinstance(document, dict):
        message = f"a schema must be a JSON object, found {_json_type(document)}"
        raise DiagnosticError([error("", message).in_source(shown)])
    deep = too_deep(document)
    if deep is not None:
        raise DiagnosticError([deep.in_source(shown)])
    sha256 = hashlib.sha256(raw).hexdigest()
    meta_problems = () if sha256 in validated else _meta_problems(sha256, document)
    problems = [*meta_problems, *check_refs(document)]
    if problems:
        raise DiagnosticError([d.in_source(shown) for d in problems])
    return LoadedSchema(name=name, sha256=sha256, document=document, text=text, shown=shown)


#: sha256 of a document -> what the meta-schema found in it, for this process: a process that
#: loads one schema several times (``check`` after ``generate``, a test session) validates it once.
_META_PROBLEMS: dict[str, tuple[Diagnostic, ...]] = {}


def _meta_problems(sha256: str, document: dict[str, Any]) -> tuple[Diagnostic, ...]:
    if sha256 not in _META_PROBLEMS:
        _META_PROBLEMS[sha256] = tuple(validate_meta_schema(document))
    return _META_PROBLEMS[sha256]


def validate_meta_schema(document: dict[str, Any]) -> list[Diagnostic]:
    """Check ``document`` against the JSON Schema draft 2020-12 meta-schema."""
    import jsonschema  # imported here: a run that skips validation (a known digest) never needs it

    from .metaschema import meta_schema

    validator = jsonschema.Draft202012Validator(meta_schema())
    found = {
        error(pointer(*problem.absolute_path), f"meta-schema: {problem.message}")
        for problem in validator.iter_errors(document)
    }
    return sorted(found, key=lambda d: (d.pointer, d.message))


def check_refs(document: dict[str, Any]) -> list[Diagnostic]:
    """Every ``$ref`` must be a local JSON pointer that resolves inside the document."""
    found: list[Diagnostic] = []

    def walk(node: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and resolve_ref(document, ref) is None:
                found.append(error(pointer(*path, "$ref"), f"unresolvable $ref {ref!r}"))
            for key, value in node.items():
                walk(value, (*path, key))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, (*path, index))

    walk(document, ())
    return found


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null"
