"""Where a project's acpgen packages are: each folder holding an ``acpgen-manifest.json``.

A package is found by its manifest, and the manifest's recorded options (:mod:`.recipe`) say the
rest: its dotted name, and, from the recorded ``--out``, the project folder it was generated from
(the folder the header's command is run in). The search skips what is not the project's own: hidden
folders (``.git``), virtual environments (a folder holding ``pyvenv.cfg``, or named ``venv``),
``node_modules``, ``__pycache__`` and ``site-packages``, and the inside of a package it found.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .manifest import MANIFEST_NAME, Manifest, ManifestError, parse_manifest
from .recipe import Recipe

#: Folders the search does not enter, besides hidden ones and virtual environments.
NOT_SEARCHED = frozenset({"node_modules", "__pycache__", "site-packages", "venv"})


@dataclass(frozen=True)
class Found:
    """A package folder (as the search reached it from where it started) and its manifest."""

    folder: Path
    manifest: Manifest

    @property
    def recipe(self) -> Recipe | None:
        return self.manifest.options


def manifest_in(folder: Path) -> Manifest | None:
    """The manifest of the package whose own folder is ``folder``, or None."""
    try:
        return parse_manifest((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ManifestError):
        return None


def packages_below(start: Path) -> list[Found]:
    """Every package below ``start`` (itself included) whose manifest records its options, sorted
    by folder."""
    found = []
    for folder, subfolders, files in os.walk(start):
        here = Path(folder)
        manifest = manifest_in(here) if MANIFEST_NAME in files else None
        if manifest is not None and manifest.options is not None:
            found.append(Found(here, manifest))
            subfolders.clear()
            continue
        subfolders[:] = sorted(name for name in subfolders if _searched(here / name))
    return sorted(found, key=lambda item: item.folder.as_posix())


def _searched(folder: Path) -> bool:
    name = folder.name
    return not name.startswith(".") and name not in NOT_SEARCHED and not (folder / "pyvenv.cfg").exists()


def project_of(folder: Path, recipe: Recipe) -> Path | None:
    """The project folder the package in ``folder`` was generated from: the one its recorded
    ``--out`` and ``--package`` lead from to ``folder``. None when they do not (the package was
    moved, or its ``--out`` is outside the project)."""
    out_parts = PurePosixPath(recipe.out).parts
    tail = (*out_parts, *recipe.package.split("."))
    here = Path(os.path.abspath(folder))
    if ".." in out_parts or here.parts[-len(tail):] != tail or len(here.parts) <= len(tail):
        return None
    return here.parents[len(tail) - 1]


def out_of(folder: Path, package: str) -> Path:
    """The output folder holding the package ``package`` whose own folder is ``folder``: absolute
    when ``folder`` is, else relative to the working folder."""
    out = Path(os.path.abspath(folder)).parents[len(package.split(".")) - 1]
    return out if folder.is_absolute() else Path(os.path.relpath(out))


def same_folder(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)
