"""Compare the output on disk with what generation would write: changed, missing, stale and stray files."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

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

    Files acpgen does not own and would not write are none of its business and are ignored; a
    temporary file of acpgen's (``.*.acpgen-tmp``) beside the files it would write is drift (stray).
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
        if data != text.encode("utf-8"):
            found.append(Drift(rel, Change.CHANGED, _shown(out, rel), data.decode("utf-8", "replace"), text))
    for rel in sorted(owned - files.keys()):
        target = out / rel
        if target.is_file():
            found.append(Drift(rel, Change.STALE, _shown(out, rel), target.read_bytes().decode("utf-8", "replace"), None))
    for rel in stray_files(out, files):
        found.append(Drift(rel, Change.STRAY, _shown(out, rel), (out / rel).read_bytes().decode("utf-8", "replace"), None))
    return tuple(sorted(found, key=lambda d: d.path))


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
