"""Reuse what an earlier run established, when it provably gives the same result.

Facts from the manifest of the output already on disk (written by this acpgen version):

* the schema with the recorded sha256 passed meta-schema validation, so a schema with the same
  bytes need not be validated again ($refs are still checked; that is cheap); so did each schema
  whose copy the output holds (a version's, in a package of several);
* a file whose text still has the recorded sha256 is acpgen's output for the render with the
  recorded render sha256: that render (what a template wrote, see ``Renderer.module``) laid out,
  once it parsed, or black's formatting of it. The same render need not be laid out, parsed or
  formatted again. The pydantic flavour's ``models.py`` is recorded by the digest of
  datamodel-code-generator's job (:mod:`acpgen.render.pydantic_job`): the same job need not be
  run again.

The bundled schema's digest (``schema/SOURCE.json``) counts as validated too: acpgen's tests
validate that file, and other bytes have another digest. Every key is a content digest, so a
reused result is the one the work would have produced: every byte of drift is still seen. The
manifest is acpgen's own record: a file is reused only while its bytes have the recorded sha256,
so an edited output is checked afresh; a manifest forged to name other digests is not guarded
against.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..schema.bundled import bundled_schema_sha256
from ..version import __version__
from .formatting import format_python
from .manifest import (
    SCHEMA_COPY_NAME,
    ManifestError,
    manifest_path,
    parse_manifest,
    sha256_text,
)


@dataclass(frozen=True)
class Reuse:
    validated_schemas: frozenset[str] = frozenset()  # sha256 of schema documents known to be valid
    outputs: Mapping[str, str] = field(default_factory=dict)  # render sha256 -> the file made from it

    def format(self, rendered: str, path: str, why: str = "") -> str:
        """Black's formatting of ``rendered`` (``why`` black is needed, for the error without it)."""
        known = self.outputs.get(sha256_text(rendered))
        return known if known is not None else format_python(rendered, path, why)


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
    outputs: dict[str, str] = {}
    validated = {*shipped.validated_schemas, manifest.schema_sha256}
    for path, record in manifest.files.items():
        try:
            data = (out / path).read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == record.sha256:
            outputs[record.render_sha256] = data.decode("utf-8")
            if path.endswith(f"/{SCHEMA_COPY_NAME}"):  # a version's schema, in a package of several
                validated.add(record.sha256)
    return Reuse(validated_schemas=frozenset(validated), outputs=outputs)
