"""Reuse what an earlier run established, when it provably gives the same result.

Facts from the manifest of the output already on disk (written by this acpgen version):

* the schema with the recorded sha256 passed meta-schema validation, so a schema with the same
  bytes need not be validated again ($refs are still checked; that is cheap);
* a file whose text still has the recorded sha256 is black's output for the render with the
  recorded render sha256, so the same render need not be formatted again;
* such a file is also, piece by piece (see :func:`split_pieces`), black's output for the
  rendered pieces whose sha256 and line counts the manifest lists, so after a schema change only
  the pieces that changed are formatted.

The bundled schema's digest (``schema/SOURCE.json``) counts as validated too: acpgen's tests
validate that file, and other bytes have another digest. Every key is a content digest, so a
reused result is the one the work would have produced: every byte of drift is still seen. The
manifest is acpgen's own record: a file is reused only while its bytes have the recorded sha256
and the recorded pieces tile it exactly, so an edited or half-merged output is formatted afresh;
a manifest forged to name other digests is not guarded against.
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
from .formatting import check_python, format_python
from .manifest import ManifestError, manifest_path, parse_manifest, sha256_text
from .resources import bundled_schema_sha256


@dataclass(frozen=True)
class Formatted:
    text: str
    pieces: tuple[str, ...]  # "<sha256 of a rendered piece>:<lines of its formatted text>", in order


@dataclass(frozen=True)
class Reuse:
    validated_schemas: frozenset[str] = frozenset()  # sha256 of schema documents known to be valid
    formatted: Mapping[str, Formatted] = field(default_factory=dict)  # render sha256 -> its formatting
    pieces: Mapping[str, str] = field(default_factory=dict)  # rendered piece sha256 -> formatted piece

    def format(self, rendered: str, path: str) -> Formatted:
        known = self.formatted.get(sha256_text(rendered))
        return known if known is not None else format_in_pieces(rendered, path, self.pieces)

    def check(self, rendered: str, path: str) -> str:
        """``rendered`` once it is known to parse: output a template emits already formatted."""
        known = self.formatted.get(sha256_text(rendered))
        return known.text if known is not None and not known.pieces else check_python(rendered, path)


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


def format_in_pieces(source: str, path: str, known: Mapping[str, str] | None = None) -> Formatted:
    """Black's output for ``source``, formatting each top-level piece once per process.

    ``known`` maps the sha256 of rendered pieces to their formatted text, from an earlier run.
    """
    texts, pieces = [], []
    for piece in split_pieces(source):
        key = sha256_text(piece)
        text = (known or {}).get(key) or _PIECES.get(key)
        if text is None:
            text = _PIECES[key] = format_python(piece, path)
        texts.append(text)
        pieces.append(f"{key}:{text.count(chr(10))}")
    return Formatted("\n\n".join(texts), tuple(pieces))


def reuse_from_output(out: Path, package: str) -> Reuse:
    """What the manifest under ``out`` (when there is one from this acpgen) lets this run reuse."""
    shipped = Reuse(validated_schemas=frozenset({bundled_schema_sha256()}))
    try:
        manifest = parse_manifest((out / manifest_path(package)).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ManifestError):
        return shipped
    if manifest.generator != f"acpgen {__version__}":
        return shipped
    formatted: dict[str, Formatted] = {}
    pieces: dict[str, str] = {}
    for path, record in manifest.files.items():
        try:
            data = (out / path).read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() != record.sha256:
            continue
        text = data.decode("utf-8")
        if not record.pieces and record.render_sha256 == record.sha256:
            formatted[record.render_sha256] = Formatted(text, ())  # written as rendered, once it parsed
            continue
        cut = _cut(text, record.pieces)
        if cut:  # the record's pieces tile the file exactly: both facts hold
            formatted[record.render_sha256] = Formatted(text, record.pieces)
            pieces.update(cut)
    return Reuse(
        validated_schemas=shipped.validated_schemas | {manifest.schema_sha256}, formatted=formatted, pieces=pieces
    )


def _cut(text: str, pieces: tuple[str, ...]) -> dict[str, str]:
    """The formatted pieces of ``text`` by rendered piece sha256; none if the counts do not fit."""
    lines = text.splitlines(keepends=True)
    found, at = {}, 0
    for index, entry in enumerate(pieces):
        key, _, count = entry.partition(":")
        if not count.isdigit():
            return {}
        if index:
            if lines[at : at + 2] != ["\n", "\n"]:
                return {}
            at += 2
        found[key] = "".join(lines[at : at + int(count)])
        at += int(count)
    return found if at == len(lines) else {}
