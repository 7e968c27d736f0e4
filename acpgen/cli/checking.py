"""``acpgen check``: does an output folder hold what ``generate`` would write?

The options come from the flags, then ``[tool.acpgen]``, then the output's manifest, which records
the options the package was generated with (:mod:`acpgen.output.recipe`): an option check is not
given is the recorded one, and one it is given that differs from the recorded one is named on a
line of its own instead of showing up as a diff of every file.

What is checked (:func:`_targets`): with ``[tool.acpgen]``, the package it configures, and a line
(not a failure) names each other package found below the project folder; else the package the
flags name (``--out`` may be the package's own folder, or a folder holding it); else every package
found below the working folder (:mod:`acpgen.output.packages`), and nothing found is an error.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import click

from ..options import missing_tool
from ..output.drift import find_drift, recorded_drift, summary, unlisted
from ..output.manifest import Manifest, as_written, parse_manifest, read_manifest
from ..output.packages import (
    manifest_in,
    out_of,
    packages_below,
    project_of,
    same_folder,
)
from ..output.recipe import BY_KEY, OPTIONS, Recipe, differences, local_path
from ..output.writer import WriteError, check_out_folder
from . import hints
from .base import EXIT_DRIFT, fail, main
from .generating import (
    Run,
    config_strict,
    inputs,
    output_options,
    render,
    resolve,
    run_of,
)


@main.command(name="check")
@output_options
@click.option("--summary", "summary_only", is_flag=True, help="Name the files that differ; print no diff.")
@click.option("--strict/--no-strict", default=None,
              help="Also fail (exit 1) on a file in a package folder that acpgen did not write. [default:"
              " [tool.acpgen] strict, else --no-strict]")
def check_command(summary_only: bool = False, strict: bool | None = None, **flags: Any) -> None:
    """Check that the output folder holds what generate would write.

    Exit 0 when it does. Else print a unified diff per file that differs (none with --summary),
    name each on standard error, and exit 1. A missing output folder is one line. Options not
    given are the ones the output's manifest records; each given one that differs from those is
    named on one line (exit 1). --out may name the package's own folder, or a folder holding
    packages. Given neither --out nor --package, nor [tool.acpgen], every package below here is
    checked, and finding none is an error.
    """
    run = resolve(flags)
    strict = strict if strict is not None else config_strict()
    results = [(each, _check(each, summary_only, strict)) for each in _targets(run)]
    failing = [each for each, status in results if status]
    if len(results) > 1 and failing:
        names = ", ".join(_shown(_folder(each[0])) for each in failing)
        click.echo(f"acpgen check: {len(failing)} of {len(results)} packages differ: {names}", err=True)
    sys.exit(max(status for _, status in results))


def _targets(run: Run) -> list[tuple[Run, list[str]]]:
    """Each package to check, as the run that checks it and the lines of options that differ."""
    by_flag = {key for key, where in run.given.items() if where.startswith("--")}
    if run.configured:
        if not by_flag & {"out", "package"}:
            configured = run.out / run.options.package.replace(".", "/")
            for other in packages_below(Path(os.path.relpath(run.project))):
                if not same_folder(other.folder, configured):
                    click.echo(f"acpgen check: {_shown(other.folder)} is an acpgen package [tool.acpgen] does not"
                               f" configure ({_shown(configured)}); not checked", err=True)
        return [_recorded(run, *_named(run, by_flag))]
    if by_flag & {"out", "package"}:
        named = _named(run, by_flag)
        if named[0] is not None or "package" in by_flag or read_manifest(run.out, run.options.package) is not None:
            return [_recorded(run, *named)]
        holding = packages_below(run.out) if run.out.is_dir() else []  # --out names a folder holding packages
        return [_recorded(run, found.folder, found.manifest) for found in holding] or [_recorded(run)]
    found = packages_below(Path("."))
    if found:
        return [_recorded(run, each.folder, each.manifest) for each in found]
    if read_manifest(run.out, run.options.package) is not None:  # an earlier acpgen's, which records no options
        return [_recorded(run)]
    fail("no acpgen package below this folder (none has an acpgen-manifest.json that records its options), and no"
         f" [tool.acpgen] in a pyproject.toml: give --out, or generate one with `{hints.program()} generate`")


def _named(run: Run, by_flag: set[str]) -> tuple[Path | None, Manifest | None]:
    """The package folder ``--out`` names itself (holding a manifest that records options), or
    ``(None, None)`` when ``--out`` is the output folder."""
    if "out" not in by_flag or "package" in by_flag:
        return None, None
    manifest = manifest_in(run.out)
    return (run.out, manifest) if manifest is not None and manifest.options is not None else (None, None)


def _folder(run: Run) -> Path:
    return run.out / run.options.package.replace(".", "/")


def _shown(folder: Path) -> str:
    return Path(os.path.normpath(folder)).as_posix()


def _recorded(run: Run, folder: Path | None = None, manifest: Manifest | None = None) -> tuple[Run, list[str]]:
    """The run with every option it was not given as the output's manifest records it, and a
    line for each given option whose value differs from the recorded one. ``folder``: the
    package's own folder, named by ``--out`` or found below a folder, and its ``manifest``."""
    problems: list[str] = []
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
                run.options.protocol_versions or run.options.protocol_version) if option.key == "protocol-version" else (
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
    filled = replace(filled, configured=run.configured)
    return filled, problems + differences(recorded, filled.recipe, run.given)


def _in_folder(run: Run, folder: Path, manifest: Manifest) -> tuple[Run, list[str]]:
    """The run for the package in ``folder``, whose manifest records options: its package is the
    recorded one, and the project folder is where the recorded ``--out`` puts the package (a line
    says so when it is not there: the package was moved)."""
    recorded = manifest.options
    assert recorded is not None
    given = {key: where for key, where in run.given.items() if key != "out"}
    options = replace(run.options, package=recorded.package)
    out = out_of(folder, recorded.package)
    project = project_of(folder, recorded)
    if project is not None:
        return replace(run, options=options, out=out, given=given, project=project), []
    if ".." in PurePosixPath(recorded.out).parts and same_folder(local_path(recorded.out, run.project), out):
        return replace(run, options=options, out=out, given=given), []  # an --out beside the project
    where = f"{run.given['out']} names" if run.given.get("out", "").startswith("--") else "found"
    line = (f"{where} the package folder {_shown(folder)} but the package was generated with"
            f" --out {recorded.out} --package {recorded.package}")
    return replace(run, options=options, out=out, given=given), [line]


def _must_exist(path: Path, key: str, shown: str, run: Run) -> None:
    """A recorded schema or names file, or templates folder, must be there; exits 2 when it is not."""
    if path.is_dir() if key == "templates" else path.is_file():
        return
    what = "folder" if key == "templates" else "file"
    fail(f"{(run.out / run.manifest).as_posix()}: the package was generated with {shown}, and {path.as_posix()}"
         f" is not a {what} here; give {BY_KEY[key].flag}")


def _check(prepared: tuple[Run, list[str]], summary_only: bool, strict: bool) -> int:
    """Check one package; the exit status (0 or 1). Exits 2 on an error."""
    run, mismatches = prepared
    folder = _shown(_folder(run))
    if mismatches:
        for line in mismatches:
            click.echo(f"acpgen check: {line}", err=True)
        regenerate = f"`{hints.regenerate(run)}`"
        if _schemas_differ(run):
            regenerate = f"run `{hints.diff(run)}` to see what regenerating with these changes, then {regenerate}"
        else:
            regenerate = f"regenerate it with these: {regenerate}"
        click.echo(f"acpgen check: {folder} was generated with other options (`{_recorded_command(run)}`): check it"
                   f" without the ones above to keep those, or {regenerate}", err=True)
        return EXIT_DRIFT
    try:
        check_out_folder(run.out, run.origins.get("out", "--out"))
        if not run.out.exists():
            count = "" if missing_tool(run.options) else f" ({len(render(run))} missing)"
            click.echo(f"acpgen check: {run.out} does not exist{count}; run `{hints.regenerate(run)}`", err=True)
            return EXIT_DRIFT
        status, listed, last = _by_manifest(run, folder)
        if status is None:
            status, listed, last = _by_rendering(run, folder, summary_only)
        extra = unlisted(run.out, listed)
    except (WriteError, OSError) as exc:
        fail(str(exc) if isinstance(exc, WriteError) else f"cannot read {run.out}: {exc.strerror or exc}")
    for rel in extra:
        click.echo(f"acpgen check: {(run.out / rel).as_posix()} is in the package folder but acpgen did not write it"
                   f" (its manifest does not list it){'' if strict else '; --strict fails on it'}", err=True)
    if strict and extra:
        click.echo(f"acpgen check: {folder}: {len(extra)} file(s) acpgen did not write, and --strict fails on them:"
                   " remove them, or move them out of the package folder", err=True)
    if last:  # the verdict again, last: the tail of a log shows it
        click.echo(last, err=True)
    return EXIT_DRIFT if status or strict and extra else 0


def _by_manifest(run: Run, folder: str) -> tuple[int | None, list[str], str]:
    """The verdict told from the manifest alone (no rendering): when it records the inputs, as
    acpgen wrote it, and they are the same now, the package is up to date while each file it
    lists has the recorded sha256. ``(None, [])``: rendering must tell; rendering is needed too
    to show a changed file's diff, unless the renderer is missing (then drift is named by the
    digests, or by the inputs that changed). The files the manifest lists, and the verdict to
    repeat last ("" for none)."""
    manifest = _as_written(run)
    missing = missing_tool(run.options)
    if manifest is None or manifest.inputs is None:
        return (None, [], "") if missing is None else _unsure(run, folder, missing)
    listed = [*manifest.files, run.manifest]
    changed = manifest.inputs.changed(inputs(run), _schema_names(run))
    if not changed:
        drift = recorded_drift(run.out, manifest, run.manifest)
        if not drift:
            click.echo(f"acpgen check: {folder} is up to date", err=True)
            return 0, listed, ""
        if missing is None:
            return None, [], ""  # render, to show the diff
        verdict = (f"acpgen check: {summary(drift)}; showing the diff, and regenerating, needs {_what(missing)};"
                   f" then run `{hints.regenerate(run)}`")
        click.echo(verdict, err=True)
        for item in drift:
            click.echo(f"  {item.change.value}: {(run.out / item.path).as_posix()}", err=True)
        return EXIT_DRIFT, listed, verdict
    if missing is None:
        return None, [], ""
    said = f"{', '.join(changed[:-1])} and {changed[-1]}" if len(changed) > 1 else changed[0]
    click.echo(f"acpgen check: {folder} is out of date: {said} changed since it was generated;"
               f" regenerating it, and showing what changes, needs {_what(missing)}; then run"
               f" `{hints.regenerate(run)}`", err=True)
    return EXIT_DRIFT, listed, ""


def _unsure(run: Run, folder: str, missing: str) -> tuple[int | None, list[str], str]:
    """Without the renderer, a manifest that is not as acpgen wrote it: drift (exit 1) when it
    records inputs (it was edited); a manifest of an earlier acpgen, which records none, cannot
    tell (exit 2); no package folder: drift (exit 1); a folder without a manifest: rendering says
    what it needs (exit 2)."""
    recorded = read_manifest(run.out, run.options.package)
    if recorded is None and not _folder(run).exists():
        click.echo(f"acpgen check: {folder} does not exist; run `{hints.regenerate(run)}` (it needs {_what(missing)})",
                   err=True)
        return EXIT_DRIFT, [], ""
    if recorded is None:
        return None, [], ""
    if recorded.inputs is None:
        fail(f"{folder}'s manifest records no inputs (an earlier acpgen wrote it): checking it means rendering it,"
             f" which needs {_what(missing)}; or regenerate it once with this acpgen: `{hints.regenerate(run)}`")
    verdict = (f"acpgen check: {folder}'s manifest is not as acpgen wrote it (edited by hand?); showing what"
               f" differs, and regenerating, needs {_what(missing)}; then run `{hints.regenerate(run)}`")
    click.echo(verdict, err=True)
    return EXIT_DRIFT, [*recorded.files, run.manifest], ""


def _by_rendering(run: Run, folder: str, summary_only: bool) -> tuple[int, list[str], str]:
    """The verdict of rendering the package and comparing it with the disk: the verdict line
    first, then each file's diff (none with ``--summary``), then the files; the files it would
    write and the manifest on disk lists (none without a manifest), and the verdict to repeat last."""
    files = render(run)
    drift = find_drift(run.out, files, run.manifest)
    on_disk = read_manifest(run.out, run.options.package)
    listed = [*files, *on_disk.files] if on_disk is not None else []  # no manifest: nothing says what acpgen wrote
    if not drift:
        click.echo(f"acpgen check: {folder} is up to date", err=True)
        if _bytes(run.out / run.manifest) != files[run.manifest].encode("utf-8"):
            click.echo(f"acpgen check: {folder}'s manifest records another acpgen or other inputs, that make the"
                       f" same files: `{hints.regenerate(run)}` records these, and checks need not render",
                       err=True)
        return 0, listed, ""
    advice = f"run `{hints.regenerate(run)}`"
    if on_disk is not None and on_disk.schema_sha256 != parse_manifest(files[run.manifest]).schema_sha256:
        diff = hints.diff(run)
        advice = (f"the schema is not the one {folder} was generated from: run `{diff}` to see what regenerating"
                  f" changes, then {advice}")
    verdict = f"acpgen check: {summary(drift)}; {advice}"
    click.echo(verdict, err=True)
    if not summary_only:
        for item in drift:
            click.echo(item.diff, nl=False)
    for item in drift:
        click.echo(f"  {item.change.value}: {(run.out / item.path).as_posix()}", err=True)
    return EXIT_DRIFT, listed, verdict


def _as_written(run: Run) -> Manifest | None:
    """The package's manifest, when it is as acpgen wrote it (its seal intact)."""
    text = _bytes(run.out / run.manifest)
    return as_written(text.decode("utf-8", "replace")) if text is not None else None


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _schema_names(run: Run) -> tuple[str, ...]:
    """The schemas as the recipe names them."""
    schema = run.recipe.schema
    return schema if isinstance(schema, tuple) else (schema or "(the bundled one)",)


def _what(missing: str) -> str:
    """What a missing renderer's hint says is needed: ``datamodel-code-generator: python -m pip install ...``."""
    return missing.split(" needs ", 1)[-1]


def _schemas_differ(run: Run) -> bool:
    """Whether ``run`` makes the package of other schemas (or versions) than it was generated from."""
    manifest = read_manifest(run.out, run.options.package)
    recorded = manifest.options if manifest is not None else None
    here = run.recipe
    return recorded is not None and (recorded.schema, recorded.protocol_version) != (here.schema, here.protocol_version)


def _recorded_command(run: Run) -> str:
    """The command the package was generated with, run where it was."""
    manifest = read_manifest(run.out, run.options.package)
    recipe = manifest.options if manifest is not None and manifest.options is not None else Recipe()
    return hints.in_project(run.project, [recipe.command.split(" ", 1)[1]])
