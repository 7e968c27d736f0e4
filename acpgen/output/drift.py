"""Compare the output on disk with what generation would write: changed, missing, stale and stray files."""

from __future__ import annotations

import enum
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .manifest import Manifest, same_but_inputs, sha256_text
from .writer import TMP_SUFFIX, check_out_folder, owned_files, stray_files


class Change(str, enum.Enum):
    CHANGED = "changed"  # on disk, with other bytes
    MISSING = "missing"  # generation would write it; it is not on disk
    STALE = "stale"  # the manifest says acpgen wrote it; generation would no longer write it
    STRAY = "stray"  # a temporary file of acpgen's (.*.acpgen-tmp) that a failed or killed write left


@dataclass(frozen=True)
class Drift:
    path: str  # relative to the output folder
    change: Change
    shown: str  # the path as the diff's headers name it
    disk: str | None  # the text on disk; None: missing
    generated: str | None  # what generation writes; None: stale or stray

    @property
    def diff(self) -> str:
        """The unified diff from the disk to the generated text, worked out when it is shown: on a
        module of tens of thousands of lines it takes seconds, and ``check --summary`` shows none."""
        return _diff(self.shown, self.disk, self.generated)


def find_drift(out: Path, files: dict[str, str], manifest_rel: str) -> tuple[Drift, ...]:
    """Every difference between ``out`` and ``files`` (the manifest included), sorted by path.

    Files acpgen does not own and would not write are not drift (:func:`unlisted` names them); a
    temporary file of acpgen's (``.*.acpgen-tmp``) beside the files it would write is drift (stray).
    The manifest is compared without its record of the inputs (see :mod:`acpgen.output.inputs`).
    Raises :class:`~acpgen.writer.WriteError` when ``out`` cannot be an output folder.
    """
    check_out_folder(out)
    owned = owned_files(out, manifest_rel, force=True)
    found = []
    for rel, text in sorted(files.items()):
        target = out / rel
        if not target.is_file():
            found.append(Drift(rel, Change.MISSING, _shown(out, rel), None, text))
            continue
        data = target.read_bytes()
        if rel == manifest_rel and data != text.encode("utf-8"):
            disk = data.decode("utf-8", "replace")
            if not same_but_inputs(disk, text):
                found.append(Drift(rel, Change.CHANGED, _shown(out, rel), disk, text))
        elif data != text.encode("utf-8"):
            found.append(Drift(rel, Change.CHANGED, _shown(out, rel), data.decode("utf-8", "replace"), text))
    for rel in sorted(owned - files.keys()):
        target = out / rel
        if target.is_file():
            found.append(Drift(rel, Change.STALE, _shown(out, rel), target.read_bytes().decode("utf-8", "replace"), None))
    for rel in stray_files(out, files):
        found.append(Drift(rel, Change.STRAY, _shown(out, rel), (out / rel).read_bytes().decode("utf-8", "replace"), None))
    return tuple(sorted(found, key=lambda d: d.path))


def recorded_drift(out: Path, manifest: Manifest, manifest_rel: str) -> tuple[Drift, ...]:
    """Every file the manifest lists that is not on disk with the sha256 it records, and every
    temporary file of acpgen's beside them: drift told from the manifest alone, without rendering.
    Each drift's generated text is unknown (None); a changed file's diff is not shown."""
    check_out_folder(out)
    found = []
    for rel, record in sorted(manifest.files.items()):
        target = out / rel
        if not target.is_file():
            found.append(Drift(rel, Change.MISSING, _shown(out, rel), None, None))
            continue
        text = target.read_bytes().decode("utf-8", "surrogateescape")
        if sha256_text(text) != record.sha256:
            found.append(Drift(rel, Change.CHANGED, _shown(out, rel), text, None))
    for rel in stray_files(out, [*manifest.files, manifest_rel]):
        found.append(Drift(rel, Change.STRAY, _shown(out, rel), None, None))
    return tuple(sorted(found, key=lambda d: d.path))


def unlisted(out: Path, listed: Collection[str]) -> tuple[str, ...]:
    """The files and folders in the folders of ``listed`` (relative paths, the manifest's files and
    the manifest) that acpgen did not write: relative to ``out``, a folder with a trailing ``/``;
    bytecode caches and acpgen's own temporary files (drift of their own) aside."""
    folders = {PurePosixPath(rel).parent for rel in listed}
    found = []
    for folder in folders:
        try:
            entries = list(os.scandir(out / folder))
        except OSError:
            continue
        for entry in entries:
            rel = (folder / entry.name).as_posix()
            if entry.is_dir() and PurePosixPath(rel) not in folders and entry.name != "__pycache__":
                found.append(rel + "/")
            elif not entry.is_dir() and rel not in listed and not entry.name.endswith(TMP_SUFFIX):
                found.append(rel)
    return tuple(sorted(found))


def summary(drift: tuple[Drift, ...]) -> str:
    counts = ", ".join(f"{sum(d.change is c for d in drift)} {c.value}" for c in Change if any(d.change is c for d in drift))
    return f"{len(drift)} file(s) differ from what acpgen generate would write ({counts})"


def _shown(out: Path, rel: str) -> str:
    return (out / rel).as_posix()


def _diff(shown: str, disk: str | None, generated: str | None) -> str:
    old_name = f"{shown} (on disk)" if disk is not None else f"{shown} (missing)"
    new_name = f"{shown} (generated)" if generated is not None else f"{shown} (stale: no longer generated)"
    if shown.endswith(TMP_SUFFIX):
        new_name = f"{shown} (stray: a temporary file a failed write left)"
    import difflib  # a package that is up to date is never diffed

    lines = difflib.unified_diff(
        (disk or "").splitlines(keepends=True), (generated or "").splitlines(keepends=True), old_name, new_name
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    if not text:  # the same lines with other bytes (e.g. an encoding error): say so rather than print nothing
        text = f"--- {old_name}\n+++ {new_name}\n(the files differ in bytes that are not shown as text)\n"
    return text
