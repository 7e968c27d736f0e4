"""Put generated files on disk, all or nothing.

:func:`plan_write` looks before anything changes: which files differ, which owned files are stale,
and whether anything is in the way (a file where a folder must be, a file acpgen does not own).
:func:`apply_plan` stages every new file under a temporary name beside its target, then renames
each into place and removes the stale ones; on any failure it puts back what it had changed, so the
previous output stays intact byte for byte, and removes what it staged whatever else fails: a file
it cannot put back is named by :class:`WriteFailed`, never hidden behind a leftover temporary file.
A temporary file an earlier run left (a crash, a killed process) is acpgen's: the next write
removes it. Ownership comes from the manifest (:mod:`.manifest`).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .manifest import ManifestError, parse_manifest

#: The suffix of the temporary file a write stages beside its target (``.models.py.x1y2.acpgen-tmp``).
TMP_SUFFIX = ".acpgen-tmp"


class WriteError(Exception):
    """Something in the output folder stops the write; nothing was changed. One line."""


class WriteFailed(Exception):
    """A write that failed part way (``cause``): what it changed is put back, except the files of
    ``not_restored`` (relative paths), which hold the new text or none; what it staged is gone."""

    def __init__(self, cause: OSError, not_restored: tuple[str, ...]) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.not_restored = not_restored


@dataclass(frozen=True)
class Plan:
    out: Path
    writes: dict[str, bytes]  # relative path -> new bytes, only for files whose bytes change
    removals: tuple[str, ...]  # stale files the previous manifest owns and the new output lacks
    total: int  # files in the new output, the manifest included


def owned_files(out: Path, manifest_rel: str, *, force: bool = False) -> frozenset[str]:
    """The files the manifest under ``out`` says acpgen wrote (none when there is no manifest)."""
    path = out / manifest_rel
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return frozenset()
    except (OSError, UnicodeDecodeError) as exc:
        if force:
            return frozenset()
        raise WriteError(f"cannot read {path}: {_reason(exc)}") from None
    try:
        return frozenset(parse_manifest(text).files)
    except ManifestError as exc:
        if force:
            return frozenset()
        raise WriteError(f"{path} is not an acpgen manifest ({exc}); remove it or pass --force") from None


def check_out_folder(out: Path, name: str = "--out", shown: str | None = None) -> None:
    """``out`` must be a folder, or not exist below a folder. ``name``: where ``out`` came from;
    ``shown``: ``out`` as given there (default: ``out``)."""
    for path in (out, *out.parents):
        if path.is_dir():
            return
        if path.exists() or path.is_symlink():
            what = f"{name} {shown or path}" if path == out else f"a parent of {name}, {path},"
            raise WriteError(f"{what} is not a folder")


def plan_write(out: Path, files: dict[str, str], manifest_rel: str, *, force: bool = False) -> Plan:
    """``files`` is the whole new output, the manifest (at ``manifest_rel``) included."""
    check_out_folder(out)
    owned = owned_files(out, manifest_rel, force=force)
    writes: dict[str, bytes] = {}
    foreign: list[str] = []
    for rel, text in files.items():
        target = out / rel
        _check_parents(out, target)
        if target.is_dir():
            raise WriteError(f"{target} is a folder where acpgen must write a file")
        data = text.encode("utf-8")
        if target.exists() or target.is_symlink():
            if rel not in owned and rel != manifest_rel and not force:
                foreign.append(str(target))
            if target.is_file() and not target.is_symlink() and _read(target) == data:
                continue
        writes[rel] = data
    if foreign:
        raise WriteError(
            f"refusing to overwrite {len(foreign)} file(s) acpgen does not own: {', '.join(foreign)}"
            " (pass --force to take them over)"
        )
    stale = {rel for rel in owned if rel not in files and (out / rel).is_file()}
    removals = tuple(sorted(stale | set(stray_files(out, files))))
    return Plan(out=out, writes=writes, removals=removals, total=len(files))


def stray_files(out: Path, files: Collection[str]) -> tuple[str, ...]:
    """The temporary files an earlier write left (``.*.acpgen-tmp``) in the folders of ``files``
    (relative paths), relative to ``out``, sorted."""
    folders = {PurePosixPath(rel).parent for rel in files}
    found = []
    for folder in folders:
        try:
            names = os.listdir(out / folder)
        except OSError:
            continue
        found += [(folder / name).as_posix() for name in names if name.startswith(".") and name.endswith(TMP_SUFFIX)]
    return tuple(sorted(found))


def apply_plan(plan: Plan) -> None:
    """Make the plan true on disk, or put back what it changed and raise :class:`WriteFailed`."""
    created: list[Path] = []  # folders this call made
    staged: dict[str, str] = {}  # relative path -> temporary file
    previous: dict[str, bytes | None] = {}  # what each changed path held before (None: nothing)
    umask = _umask()
    try:
        for rel, data in plan.writes.items():
            target = plan.out / rel
            _make_folders(target.parent, created)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TMP_SUFFIX)
            staged[rel] = tmp
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            mode = stat.S_IMODE(target.stat().st_mode) if target.is_file() else 0o666 & ~umask
            os.chmod(tmp, mode)
        for rel, tmp in staged.items():
            target = plan.out / rel
            before = _read(target) if target.is_file() else None
            os.replace(tmp, target)
            previous[rel] = before  # recorded once changed: a path that failed to change needs nothing put back
        for rel in plan.removals:
            target = plan.out / rel
            before = _read(target)
            target.unlink()
            previous[rel] = before
    except BaseException as exc:
        not_restored = _roll_back(plan.out, previous, staged, created)
        if isinstance(exc, OSError):
            raise WriteFailed(exc, not_restored) from exc
        raise


def write_output(out: Path, files: dict[str, str], manifest_rel: str, *, force: bool = False) -> Plan:
    plan = plan_write(out, files, manifest_rel, force=force)
    apply_plan(plan)
    return plan


def _roll_back(out: Path, previous: dict[str, bytes | None], staged: dict[str, str], created: list[Path]) -> tuple[str, ...]:
    """Put back every changed file and remove every staged one, each on its own: one that fails
    stops none of the others. Returns the files that could not be put back."""
    failed = []
    for rel, data in previous.items():
        target = out / rel
        try:
            if data is None:
                target.unlink(missing_ok=True)
            else:
                target.write_bytes(data)
        except OSError:
            failed.append(rel)
    for tmp in staged.values():
        try:
            Path(tmp).unlink(missing_ok=True)
        except OSError:
            failed.append(Path(os.path.relpath(tmp, out)).as_posix())
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:
            pass
    return tuple(failed)


def _check_parents(out: Path, target: Path) -> None:
    for parent in reversed(target.parents):
        inside = parent == out or out in parent.parents
        if inside and (parent.exists() or parent.is_symlink()) and not parent.is_dir():
            raise WriteError(f"{parent} is a file where acpgen must make a folder")


def _make_folders(folder: Path, created: list[Path]) -> None:
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        created.append(path)


def _read(path: Path) -> bytes:
    return path.read_bytes()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
