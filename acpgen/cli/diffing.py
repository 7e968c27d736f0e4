"""``acpgen diff``: what changes from one schema to another, on the wire and in the Python."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

import click

from ..diagnostics import DiagnosticError
from ..diff import diff_schemas
from ..diff.report import FAIL_ON, FORMATS, as_json, as_markdown, as_text, fails
from ..diff.report import summary as diff_summary
from ..output.manifest import (
    SCHEMA_COPY_NAME,
    Manifest,
    manifest_path,
    read_manifest,
    schema_copy_path,
)
from ..output.packages import Found, manifest_in, out_of, packages_below, project_of
from ..output.recipe import DEFAULT_PACKAGE, local_path
from ..schema.bundled import bundled_schema, bundled_schema_sha256
from ..schema.loader import LoadedSchema, load_schema, parse_schema
from ..schema.protocol import protocol_version, version_problem
from .base import EXIT_DRIFT, EXIT_ERROR, fail, main, report
from .generating import Run, resolve


@main.command(name="diff")
@click.argument("schemas", nargs=-1, metavar="[OLD] [NEW]", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Compare NEW with the schema the package in OUT was generated from (its copy beside the manifest), "
    "under the names it has. OUT may be the package's own folder, or a folder holding one. NEW defaults to "
    "[tool.acpgen] schema, else the schema file the package records (as it is now), else the bundled one.",
)
@click.option(
    "--package",
    default=None,
    help=f"With --out: the generated package's dotted name. [default: the one OUT holds, else {DEFAULT_PACKAGE}]",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Report format.")
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default=None,
    help="Exit 1 on a stable breaking change (breaking), a breaking change in either tier (unstable-breaking), "
    "or any change (any).",
)
@click.option(
    "--protocol-version",
    type=int,
    default=None,
    help="With --out on a package of several protocol versions: the version NEW is for. "
    "[default: the one NEW states]",
)
def diff_command(
    schemas: tuple[Path, ...],
    out: Path | None,
    package: str | None,
    fmt: str,
    fail_on: str | None,
    protocol_version: int | None = None,
) -> None:
    """Show what changes from schema OLD to NEW, on the wire and in the generated Python.

    `acpgen diff OLD NEW` compares two schema files; `acpgen diff --out OUT [NEW]` answers "what would
    regenerating OUT do to me" (for a package of several protocol versions, per version); with
    [tool.acpgen], `acpgen diff [NEW]` does for the package it configures. One line per change, most
    severe first; exit 2 on bad input.
    """
    known = frozenset({bundled_schema_sha256()})
    names: dict[str, str] | None = None
    if out is None and len(schemas) < 2 and resolve({}).configured:  # [tool.acpgen]'s package
        out = resolve({}).out
    if out is None:
        if len(schemas) != 2:
            fail("give two schema files (acpgen diff OLD NEW), or --out OUT [NEW]")
        old, new = (_load(path, known) for path in schemas)
        labels = (schemas[0].name, schemas[1].name)
    else:
        if len(schemas) > 1:
            fail("with --out, give at most one schema (NEW)")
        run = _located(resolve({"out": out, "package": package, "schema": schemas[0] if schemas else None}))
        manifest = read_manifest(run.out, run.options.package)
        versions = _recorded_versions(run.out, run.options.package, manifest, known)
        if versions:
            given = schemas[0] if schemas else None
            _diff_versions(run, versions, _new_schemas(run, manifest, given, protocol_version), fmt, fail_on)
        if protocol_version is not None:
            fail("--protocol-version: only with --out on a package of several protocol versions")
        old, names = _recorded_schema(run.out, run.options.package, known)
        new = _load(run.options.schema or bundled_schema(), known | {old.sha256})
        labels = (f"{(run.out / run.options.package.replace('.', '/')).as_posix()} ({old.name})", new.name)
    try:
        changes = diff_schemas(old, new, names)
    except DiagnosticError as exc:
        report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    if fmt == "json":
        click.echo(as_json(changes), nl=False)
    elif fmt == "markdown":
        click.echo(as_markdown(changes, *labels), nl=False)
    else:
        click.echo(as_text(changes), nl=False)
    click.echo(f"acpgen diff: {diff_summary(changes)} from {labels[0]} to {labels[1]}", err=True)
    sys.exit(EXIT_DRIFT if fails(changes, fail_on) else 0)


def _located(run: Run) -> Run:
    """The run for the package ``--out`` names: the package in it (its ``--package``, given or
    the default), else the package whose own folder it is, else the one package below it, with its
    recorded ``--package`` (and its project folder, which the recorded paths are relative to). NEW,
    when neither given nor in ``[tool.acpgen]``, is the schema file the package records (as it is
    now: the new release, when one replaced it)."""
    package_flag = run.given.get("package", "").startswith("--")
    if not package_flag and read_manifest(run.out, run.options.package) is None:
        own = manifest_in(run.out)
        found = [Found(run.out, own)] if own is not None and own.options is not None else (
            packages_below(run.out) if run.out.is_dir() else [])
        if len(found) > 1:
            names = ", ".join(each.folder.as_posix() for each in found)
            fail(f"--out {run.out.as_posix()} holds {len(found)} acpgen packages ({names}): give one's folder as --out")
        recipe = found[0].recipe if found else None
        if recipe is not None:
            options = replace(run.options, package=recipe.package)
            project = project_of(found[0].folder, recipe) or run.project
            run = replace(run, out=out_of(found[0].folder, recipe.package), options=options, project=project)
    manifest = read_manifest(run.out, run.options.package)
    recipe = manifest.options if manifest is not None else None
    if recipe is not None and "schema" not in run.given and isinstance(recipe.schema, str):
        schema = local_path(recipe.schema, run.project)
        if not schema.is_file():
            fail(f"{(run.out / run.manifest).as_posix()}: the package was generated with --schema {recipe.schema},"
                 f" and {schema.as_posix()} is not a file here; give NEW")
        run = replace(run, options=replace(run.options, schema=schema))
    return run


def _recorded_versions(
    out: Path, package: str, manifest: Manifest | None, known: frozenset[str]
) -> dict[int, tuple[LoadedSchema, dict[str, str]]]:
    """For a package of several protocol versions: each version's recorded schema (its copy in
    ``<package>/v<N>/``, as the manifest records it) and its names (the lock's ``v<N>/`` keys,
    unprefixed). Empty for a package of one version."""
    if manifest is None:
        return {}
    root = package.replace(".", "/")
    pattern = re.compile(rf"{re.escape(root)}/v(\d+)/{re.escape(SCHEMA_COPY_NAME)}")
    found = {}
    for path, record in sorted(manifest.files.items()):
        match = pattern.fullmatch(path)
        if match is None:
            continue
        number, copy = int(match.group(1)), out / path
        try:
            raw = copy.read_bytes()
        except OSError as exc:
            fail(f"{copy.as_posix()}: cannot read the schema v{number} was generated from: {exc.strerror or exc}")
        if hashlib.sha256(raw).hexdigest() != record.sha256:
            fail(f"{copy.as_posix()} is not the schema the manifest records (sha256 {record.sha256})")
        prefix = f"v{number}/"
        names = {k[len(prefix):]: v for k, v in manifest.names.items() if k.startswith(prefix)}
        try:
            found[number] = (parse_schema(raw, copy.name, known | {record.sha256}), names)
        except DiagnosticError as exc:
            report(exc.diagnostics)
            sys.exit(EXIT_ERROR)
    return found


def _new_schemas(run: Run, manifest: Manifest | None, given: Path | None, override: int | None) -> dict[int, tuple[Path, LoadedSchema]]:
    """The new schema of each version to compare: NEW alone (of the version it states, or
    ``--protocol-version``'s), else the ones ``acpgen generate`` would use (``[tool.acpgen]``'s
    list), else the files the manifest records; each of the version given for it, if any."""
    if override is not None and version_problem(override):
        fail(f"--protocol-version: {override} is not {version_problem(override)}")
    versions: tuple[int | None, ...] = ()
    if given is not None:
        paths: tuple[Path, ...] = (given,)
        versions = (override,)
    elif run.options.schemas:
        paths, versions = run.options.schemas, run.options.protocol_versions
    else:
        recorded = manifest.options if manifest is not None and manifest.options is not None else None
        if recorded is None or not isinstance(recorded.schema, tuple):
            fail(f"{(run.out / run.manifest).as_posix()}: records no schema files to compare with; give NEW")
        paths = tuple(local_path(text, run.project) for text in recorded.schema)
        versions = tuple(number for _, number in recorded.versions_by_schema)
    found: dict[int, tuple[Path, LoadedSchema]] = {}
    for path, number_given in zip(paths, versions or (None,) * len(paths)):
        loaded = _load(path, frozenset({bundled_schema_sha256()}))
        try:
            number = protocol_version(loaded.document, path, number_given)
        except DiagnosticError as exc:
            report(exc.diagnostics)
            sys.exit(EXIT_ERROR)
        found[number] = (path, loaded)
    return found


def _diff_versions(
    run: Run,
    old: dict[int, tuple[LoadedSchema, dict[str, str]]],
    new: dict[int, tuple[Path, LoadedSchema]],
    fmt: str,
    fail_on: str | None,
) -> None:
    """Compare each version's new schema with its recorded one; exits (1 when any version fails)."""
    root = (run.out / run.options.package.replace(".", "/")).as_posix()
    for number, (path, _) in sorted(new.items()):
        if number not in old:
            held = ", ".join(str(n) for n in sorted(old))
            fail(f"{path.as_posix()} is of protocol version {number}; {root} holds versions {held}"
                 " (give --protocol-version when the schema does not state its own)")
    reports, failing = {}, False
    for number, (_, loaded) in sorted(new.items()):
        schema, names = old[number]
        try:
            changes = diff_schemas(schema, loaded, names)
        except DiagnosticError as exc:
            report(exc.diagnostics)
            sys.exit(EXIT_ERROR)
        reports[number] = changes
        failing = failing or fails(changes, fail_on)
        labels = (f"{root}/v{number} ({schema.name})", loaded.name)
        if fmt == "markdown":
            click.echo(("\n" if len(reports) > 1 else "") + as_markdown(changes, *labels), nl=False)
        elif fmt == "text":
            click.echo(f"v{number}:")
            click.echo("".join(f"  {line}\n" for line in as_text(changes).splitlines()), nl=False)
        click.echo(f"acpgen diff: v{number}: {diff_summary(changes)} from {labels[0]} to {labels[1]}", err=True)
    if fmt == "json":
        click.echo(json.dumps({f"v{n}": [c.as_json() for c in changes] for n, changes in reports.items()}, indent=2))
    sys.exit(EXIT_DRIFT if failing else 0)


def _load(path: Path, known: frozenset[str]) -> LoadedSchema:
    try:
        return load_schema(path, validated=known)
    except DiagnosticError as exc:
        report(exc.diagnostics)
        sys.exit(EXIT_ERROR)


def _recorded_schema(out: Path, package: str, known: frozenset[str]) -> tuple[LoadedSchema, dict[str, str]]:
    """The schema the output in ``out`` was generated from, and the names it gave."""
    manifest = read_manifest(out, package)
    if manifest is None:
        fail(f"{(out / manifest_path(package)).as_posix()}: no acpgen manifest to take the old schema from; "
              "give OLD and NEW")
    copy = out / schema_copy_path(package)
    try:
        raw = copy.read_bytes()
    except OSError:
        fail(f"{copy.as_posix()}: no copy of the schema {out.as_posix()} was generated from "
              "(an older acpgen wrote it); give OLD and NEW")
    if hashlib.sha256(raw).hexdigest() != manifest.schema_sha256:
        fail(f"{copy.as_posix()} is not the schema the manifest records (sha256 {manifest.schema_sha256})")
    try:
        return parse_schema(raw, copy.name, known | {manifest.schema_sha256}), manifest.names
    except DiagnosticError as exc:
        report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
