"""The ownership manifest: which files in an output folder acpgen wrote, and what they held.

It sits beside the generated modules (``<package>/acpgen-manifest.json``) and lists, for every
file, the sha256 of its text and of the text the template rendered before formatting. The first
says a file is acpgen's to overwrite or remove; both together let a later run reuse a file on disk
instead of checking or formatting the same render again (see :mod:`acpgen.output.reuse`). Its text is deterministic:
sorted keys, no time, no absolute path.

It also records the Python name given to every schema entity (``names``: the names lock, see
:mod:`acpgen.model.namelock`), which the next run keeps. Beside it, ``acpgen-schema.json`` is a
copy of the schema the output was generated from, byte for byte, so that ``acpgen diff --out``
can compare a new schema with it even after the schema file itself was replaced.

It records the options the output was generated with (``options``: the recipe, see
:mod:`acpgen.output.recipe`), so that ``acpgen check`` can name an option that differs, or use
the recorded ones. A manifest of an earlier acpgen may have none.

It records what the package was made from (``inputs``: digests of acpgen, the schemas, the
templates and the names file, and a seal of its own text, see :mod:`acpgen.output.inputs`), so
that ``acpgen check`` can tell without rendering that generating again would write the same files.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..diagnostics import json_problem
from ..version import __version__
from .inputs import Inputs, inputs_from_json
from .recipe import Recipe, recipe_from_json

MANIFEST_NAME = "acpgen-manifest.json"
SCHEMA_COPY_NAME = "acpgen-schema.json"
FORMAT = 1


class ManifestError(Exception):
    """A manifest file that is not one acpgen wrote."""


@dataclass(frozen=True)
class FileRecord:
    sha256: str  # of the file's text (UTF-8)
    render_sha256: str  # of the template's output before formatting; of its job for pydantic models (render/pydantic_job.py)


@dataclass(frozen=True)
class Manifest:
    generator: str  # "acpgen 0.1.0"
    schema_sha256: str
    files: dict[str, FileRecord]  # path relative to the output folder (POSIX) -> record
    names: dict[str, str] = field(default_factory=dict)  # names-lock key -> Python name
    options: Recipe | None = None  # the options the output was generated with; None: not recorded
    versions: tuple[int, ...] = ()  # the protocol versions the package speaks; (): not recorded (an earlier acpgen)
    root_version: int | None = None  # the version whose API the package's root holds; None: not recorded
    inputs: Inputs | None = None  # what the package was made from; None: not recorded (an earlier acpgen)

    def to_text(self) -> str:
        data = {
            "format": FORMAT,
            "generator": self.generator,
            "schema_sha256": self.schema_sha256,
            "files": {
                path: {"sha256": record.sha256, "render_sha256": record.render_sha256}
                for path, record in sorted(self.files.items())
            },
        }
        if self.names:
            data["names"] = dict(sorted(self.names.items()))
        if self.options is not None:
            data["options"] = self.options.to_json()
        if self.versions:
            data["versions"] = list(self.versions)
        if self.root_version is not None:
            data["root_version"] = self.root_version
        if self.inputs is not None:
            data["inputs"] = self.inputs.to_json()
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    def sealed(self) -> Manifest:
        """This manifest with its inputs' seal: the sha256 of its text with the seal empty."""
        if self.inputs is None:
            return self
        unsealed = replace(self, inputs=self.inputs.unsealed())
        return replace(self, inputs=replace(self.inputs, seal=sha256_text(unsealed.to_text())))


def manifest_for(
    files: Mapping[str, str],
    renders: Mapping[str, str],
    schema_sha256: str,
    names: Mapping[str, str] | None = None,
    options: Recipe | None = None,
    versions: tuple[int, ...] = (),
    root_version: int | None = None,
    inputs: Inputs | None = None,
) -> Manifest:
    """The manifest that records generated ``files`` (path -> text), each made from the render
    whose sha256 ``renders`` gives, the ``names`` given, the ``options`` used, the protocol
    ``versions`` the package speaks, the ``root_version`` whose API its root holds and the
    ``inputs`` it was made from (sealed here)."""
    records = {path: FileRecord(sha256_text(text), renders[path]) for path, text in files.items()}
    return Manifest(generator=f"acpgen {__version__}", schema_sha256=schema_sha256, files=records,
                    names=dict(names or {}), options=options, versions=versions, root_version=root_version,
                    inputs=inputs).sealed()


def manifest_path(package: str) -> str:
    """The manifest's path relative to the output folder: inside the package's own folder."""
    return f"{package.replace('.', '/')}/{MANIFEST_NAME}"


def schema_copy_path(package: str) -> str:
    """The path of the schema's copy relative to the output folder: beside the manifest."""
    return f"{package.replace('.', '/')}/{SCHEMA_COPY_NAME}"


def read_manifest(out: Path, package: str) -> Manifest | None:
    """The manifest under ``out``, or None when there is none that acpgen could read."""
    try:
        return parse_manifest((out / manifest_path(package)).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ManifestError):
        return None


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_manifest(text: str) -> Manifest:
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"not valid JSON ({json_problem(exc)})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ManifestError(f"not an acpgen manifest of format {FORMAT}")
    generator, schema_sha, files = data.get("generator"), data.get("schema_sha256"), data.get("files")
    if not isinstance(generator, str) or not isinstance(schema_sha, str) or not isinstance(files, dict):
        raise ManifestError("missing 'generator', 'schema_sha256' or 'files'")
    records = {}
    for path, entry in files.items():
        if not _safe_relative(path) or not isinstance(entry, dict):
            raise ManifestError(f"bad entry {path!r}")
        sha, render_sha = entry.get("sha256"), entry.get("render_sha256")
        if not isinstance(sha, str) or not isinstance(render_sha, str):
            raise ManifestError(f"bad entry {path!r}")
        records[path] = FileRecord(sha256=sha, render_sha256=render_sha)
    names = data.get("names", {})
    if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        raise ManifestError("bad 'names'")
    options = None
    if "options" in data:
        try:
            options = recipe_from_json(data["options"])
        except ValueError as exc:
            raise ManifestError(str(exc)) from None
    versions = data.get("versions", [])
    if not isinstance(versions, list) or not all(type(v) is int for v in versions):
        raise ManifestError("bad 'versions'")
    root = data.get("root_version")
    if root is not None and (type(root) is not int or root not in versions):
        raise ManifestError("bad 'root_version'")
    inputs = None
    if "inputs" in data:
        try:
            inputs = inputs_from_json(data["inputs"])
        except ValueError as exc:
            raise ManifestError(str(exc)) from None
    return Manifest(generator=generator, schema_sha256=schema_sha, files=records, names=names, options=options,
                    versions=tuple(versions), root_version=root, inputs=inputs)


def same_but_inputs(disk: str, generated: str) -> bool:
    """Whether two manifests' texts differ only in their ``inputs`` (or not at all): the record
    of what a package was made from is a cache key, not output."""
    if disk == generated:
        return True
    try:  # every other byte as generated: the generated manifest with the disk's record is the disk's text
        return replace(parse_manifest(generated), inputs=parse_manifest(disk).inputs).to_text() == disk
    except ManifestError:
        return False


def as_written(text: str) -> Manifest | None:
    """The manifest of ``text`` when it is byte for byte as acpgen wrote it, its seal intact; None
    for a manifest edited (or written by an earlier acpgen, without a seal)."""
    try:
        manifest = parse_manifest(text)
    except ManifestError:
        return None
    if manifest.inputs is None or manifest.to_text() != text or manifest.sealed() != manifest:
        return None
    return manifest


def _safe_relative(path: object) -> bool:
    """A POSIX path inside the output folder: no absolute path, no ``..``, no empty part."""
    if not isinstance(path, str) or not path or path.startswith("/") or "\\" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))
