"""Reuse what an earlier run established, when it provably gives the same result.

Two facts from the manifest of the output already on disk (written by this acpgen version):

* the schema with the recorded sha256 passed meta-schema validation, so a schema with the same
  bytes need not be validated again ($refs are still checked; that is cheap);
* a file whose text still has the recorded sha256 is black's output for the render with the
  recorded render sha256, so the same render need not be formatted again.

The bundled schema's digest (``schema/SOURCE.json``) counts as validated too: acpgen's tests
validate that file, and other bytes have another digest. Both keys are content digests, so a reused result is the one the work would have produced: every
byte of drift is still seen. The manifest is only read here, never trusted for anything else.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .formatting import format_python
from .manifest import ManifestError, manifest_path, parse_manifest, sha256_text
from .resources import bundled_schema_sha256


@dataclass(frozen=True)
class Reuse:
    validated_schemas: frozenset[str] = frozenset()  # sha256 of schema documents known to be valid
    formatted: Mapping[str, str] = field(default_factory=dict)  # render sha256 -> formatted text

    def format(self, rendered: str, path: str) -> str:
        known = self.formatted.get(sha256_text(rendered))
        return known if known is not None else format_in_pieces(rendered, path)


NOTHING = Reuse()

#: Black's output for each top-level piece formatted in this process, by the piece's sha256.
_PIECES: dict[str, str] = {}


def split_pieces(source: str) -> list[str]:
    """Cut a module before each top-level class or function (its decorators included) that follows
    a blank line and has no comment right above it.

    Black puts exactly two blank lines before such a statement and decides nothing across it, so
    formatting each piece alone and joining them with two blank lines gives black's output for the
    whole module (the tests hold that on every generated module). Source that does not parse is
    one piece, so black reports the error.
    """
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return [source]
    lines = re.findall(r"[^\n]*\n|[^\n]+$", source)  # ast counts "\n" only
    cuts = []
    for node in body:
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1  # 0-based
        above = start - 1
        if above < 1 or lines[above].strip():
            continue  # not after a blank line
        while above >= 0 and not lines[above].strip():
            above -= 1
        if above >= 0 and not lines[above].lstrip().startswith("#"):
            cuts.append(start)
    bounds = [0, *cuts, len(lines)]
    return ["".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]


def format_in_pieces(source: str, path: str) -> str:
    """Black's output for ``source``, formatting each top-level piece once per process."""
    formatted = []
    for piece in split_pieces(source):
        key = sha256_text(piece)
        known = _PIECES.get(key)
        if known is None:
            known = _PIECES[key] = format_python(piece, path)
        formatted.append(known)
    return "\n\n".join(formatted)


def reuse_from_output(out: Path, package: str) -> Reuse:
    """What the manifest under ``out`` (when there is one from this acpgen) lets this run reuse."""
    shipped = Reuse(validated_schemas=frozenset({bundled_schema_sha256()}))
    try:
        manifest = parse_manifest((out / manifest_path(package)).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ManifestError):
        return shipped
    if manifest.generator != f"acpgen {__version__}":
        return shipped
    formatted = {}
    for path, record in manifest.files.items():
        try:
            data = (out / path).read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == record.sha256:
            formatted[record.render_sha256] = data.decode("utf-8")
    return Reuse(validated_schemas=shipped.validated_schemas | {manifest.schema_sha256}, formatted=formatted)
