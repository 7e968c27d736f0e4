"""``acpgen check``: does an output folder hold what ``generate`` would write?

The options come from the flags, then ``[tool.acpgen]``, then the output's manifest, which records
the options the package was generated with (:mod:`acpgen.output.recipe`): an option check is not
given is the recorded one, and one it is given that differs from the recorded one is named on a
line of its own instead of showing up as a diff of every file. The package is found where the
options say (``--out`` and ``--package``), or ``--out`` names the package's own folder (the one
holding ``acpgen-manifest.json``); given neither, and with nothing at the default place, check
checks every package generated below the working folder.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import click

from ..output.drift import find_drift, summary
from ..output.manifest import (
    MANIFEST_NAME,
    Manifest,
    ManifestError,
    parse_manifest,
    read_manifest,
)
from ..output.recipe import BY_KEY, OPTIONS, Recipe, differences, local_path
from ..output.writer import WriteError, check_out_folder
from .base import EXIT_DRIFT, fail, main
from .generating import Run, output_options, render, resolve, run_of

#: Folders the search for generated packages does not enter (besides hidden ones).
_NOT_SEARCHED = frozenset({"node_modules", "__pycache__", "site-packages"})


@main.command(name="check")
@output_options
@click.option("--summary", "summary_only", is_flag=True, help="Name the files that differ; print no diff.")
def check_command(summary_only: bool = False, **flags: Any) -> None:
    """Check that the output folder holds what generate would write.

    Exit 0 when it does. Else print a unified diff per file that differs (none with --summary),
    name each on standard error, and exit 1. A missing output folder is one line. Options not
    given are the ones the output's manifest records; each given one that differs from those is
    named on one line (exit 1). --out may name the package's own folder; with neither --out nor
    --package, and no package at the default place, every package below here is checked.
    """
    run = resolve(flags)
    prepared = [_recorded(run)]
    if "out" not in run.given and "package" not in run.given and read_manifest(run.out, run.options.package) is None:
        found = _packages_below(Path("."))
        prepared = [_recorded(run, folder, manifest) for folder, manifest in found] or prepared
    sys.exit(max(_check(each, summary_only) for each in prepared))


def _recorded(run: Run, folder: Path | None = None, manifest: Manifest | None = None) -> tuple[Run, list[str]]:
    """The run with every option it was not given as the output's manifest records it, and a
    line for each given option whose value differs from the recorded one. ``folder``: a package
    folder found below the working folder, and its ``manifest``."""
    problems: list[str] = []
    if folder is None and "out" in run.given:  # --out may name the package folder
        folder, manifest = run.out, _manifest_in(run.out)
    if folder is not None and manifest is not None and manifest.options is not None:
        run, problems = _in_folder(run, folder, manifest)
    else:
        manifest = read_manifest(run.out, run.options.package)
    if manifest is None or manifest.options is None:  # nothing recorded (an earlier acpgen's output)
        return run, problems
    recorded = manifest.options
    values: dict[str, Any] = {}
    for option in OPTIONS:
        if option.key == "out":
            values["out"] = run.out
        elif option.key in run.given:
            values[option.key] = (run.options.schemas or run.options.schema) if option.key == "schema" else (
                getattr(run.options, option.attr))
        else:
            value = getattr(recorded, option.attr)
            if option.kind == "path" and value is not None:
                paths = tuple(local_path(v, run.project) for v in (value if isinstance(value, tuple) else (value,)))
                for path in paths:
                    _must_exist(path, option.key, f"{option.shown(getattr(recorded, option.attr))}", run)
                value = paths if isinstance(value, tuple) else paths[0]
            values[option.key] = value
    filled = run_of({k: v for k, v in values.items() if v is not None}, run.given, run.project, run.origins)
    return filled, problems + differences(recorded, filled.recipe, run.given)


def _in_folder(run: Run, folder: Path, manifest: Manifest) -> tuple[Run, list[str]]:
    """The run for the package in ``folder``, whose manifest records options: its package is the
    recorded one, and the project folder is where the recorded ``--out`` puts the package (a line
    says so when it is not there: the package was moved)."""
    recorded = manifest.options
    assert recorded is not None
    depth = len(recorded.package.split("."))
    out_parts = PurePosixPath(recorded.out).parts
    tail = (*out_parts, *recorded.package.split("."))
    here = Path(os.path.abspath(folder))
    given = {key: where for key, where in run.given.items() if key != "out"}
    options = replace(run.options, package=recorded.package)
    if ".." not in out_parts and here.parts[-len(tail):] == tail:
        project = here.parents[len(tail) - 1]
        return replace(run, options=options, out=local_path(recorded.out, project), given=given, project=project), []
    out = folder.parents[depth - 1]
    if ".." in out_parts and _same(local_path(recorded.out, run.project), out):  # an --out beside the project
        return replace(run, options=options, out=out, given=given), []
    where = f"{run.given['out']} names" if "out" in run.given else "found"
    line = (f"{where} the package folder {folder.as_posix()} but the package was generated with"
            f" --out {recorded.out} --package {recorded.package}")
    return replace(run, options=options, out=out, given=given), [line]


def _must_exist(path: Path, key: str, shown: str, run: Run) -> None:
    """A recorded schema or names file, or templates folder, must be there; exits 2 when it is not."""
    if path.is_dir() if key == "templates" else path.is_file():
        return
    what = "folder" if key == "templates" else "file"
    fail(f"{(run.out / run.manifest).as_posix()}: the package was generated with {shown}, and {path.as_posix()}"
         f" is not a {what} here; give {BY_KEY[key].flag}")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _manifest_in(folder: Path) -> Manifest | None:
    try:
        return parse_manifest((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ManifestError):
        return None


def _packages_below(start: Path) -> list[tuple[Path, Manifest]]:
    """Every package folder below ``start`` whose manifest records its options, sorted; hidden
    folders, ``node_modules``, virtual environments and the insides of a package are not searched."""
    found = []
    for folder, subfolders, files in os.walk(start):
        here = Path(folder)
        manifest = _manifest_in(here) if MANIFEST_NAME in files else None
        if manifest is not None and manifest.options is not None:
            found.append((here, manifest))
            subfolders.clear()
            continue
        subfolders[:] = sorted(
            name for name in subfolders
            if not name.startswith(".") and name not in _NOT_SEARCHED and not (here / name / "pyvenv.cfg").exists()
        )
    return sorted(found, key=lambda item: item[0].as_posix())


def _check(prepared: tuple[Run, list[str]], summary_only: bool) -> int:
    """Check one package; the exit status (0 or 1). Exits 2 on an error."""
    run, mismatches = prepared
    if mismatches:
        for line in mismatches:
            click.echo(f"acpgen check: {line}", err=True)
        click.echo(f"acpgen check: {(run.out / run.options.package.replace('.', '/')).as_posix()} was generated"
                   f" with other options (`{_recorded_command(run)}`): check it without the ones above to use"
                   " those, or regenerate it with these", err=True)
        return EXIT_DRIFT
    files = render(run)
    try:
        check_out_folder(run.out, run.origins.get("out", "--out"))
        if not run.out.exists():
            click.echo(f"acpgen check: {run.out} does not exist ({len(files)} missing); run `acpgen generate`", err=True)
            return EXIT_DRIFT
        drift = find_drift(run.out, files, run.manifest)
    except (WriteError, OSError) as exc:
        fail(str(exc) if isinstance(exc, WriteError) else f"cannot read {run.out}: {exc.strerror or exc}")
    if not drift:
        click.echo(f"acpgen check: {run.out} is up to date", err=True)
        return 0
    if not summary_only:
        for item in drift:
            click.echo(item.diff, nl=False)
    advice = "run `acpgen generate`"
    previous = read_manifest(run.out, run.options.package)
    if previous is not None and previous.schema_sha256 != parse_manifest(files[run.manifest]).schema_sha256:
        schema = f" {run.options.schema.as_posix()}" if run.options.schema is not None else ""
        advice = (f"the schema is not the one {run.out.as_posix()} was generated from: run "
                  f"`acpgen diff --out {run.out.as_posix()}{schema}` to see what regenerating changes, then {advice}")
    click.echo(f"acpgen check: {summary(drift)}; {advice}", err=True)
    for item in drift:
        click.echo(f"  {item.change.value}: {(run.out / item.path).as_posix()}", err=True)
    return EXIT_DRIFT


def _recorded_command(run: Run) -> str:
    manifest = read_manifest(run.out, run.options.package)
    recipe = manifest.options if manifest is not None and manifest.options is not None else Recipe()
    return recipe.command
