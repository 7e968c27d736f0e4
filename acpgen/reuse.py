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

import hashlib
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
        return known if known is not None else format_python(rendered, path)


NOTHING = Reuse()


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
