"""``acpgen diff``: what changes from one schema to another, on the wire and in the Python."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import click

from ..diagnostics import DiagnosticError
from ..diff import Change, diff_schemas
from ..diff.layout import Layout, layout_moves
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
from ..versioned import root_version
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
    "--schema",
    "configured",
    type=click.Path(path_type=Path, dir_okay=False),
    multiple=True,
    help="With --out (or [tool.acpgen]): the schemas to regenerate the package with, once per protocol version, "
    "as generate takes them; compared as a whole (versions added or removed included), as a bare diff compares "
    "[tool.acpgen]'s.",
)
@click.option(
    "--protocol-version",
    type=int,
    multiple=True,
    help="With --out on a package of several protocol versions: the version NEW is for "
    "[default: the one NEW states]; with --schema: each one's version, in order.",
)
def diff_command(
    schemas: tuple[Path, ...],
    out: Path | None,
    package: str | None,
    fmt: str,
    fail_on: str | None,
    configured: tuple[Path, ...] = (),
    protocol_version: tuple[int, ...] = (),
) -> None:
    """Show what changes from schema OLD to NEW, on the wire and in the generated Python.

    `acpgen diff OLD NEW` compares two schema files; `acpgen diff --out OUT [NEW]` answers "what would
    regenerating OUT do to me" (for a package of several protocol versions, per version); with
    [tool.acpgen], `acpgen diff [NEW]` does for the package it configures. When the protocol versions
    change, it first says what moves for code that imports the package. One line per change, most
    severe first; exit 2 on bad input.
    """
    known = frozenset({bundled_schema_sha256()})
    if out is None and len(schemas) < 2 and resolve({}).configured:  # [tool.acpgen]'s package
        out = resolve({}).out
    if out is None and not configured:
        if len(schemas) != 2:
            fail("give two schema files (acpgen diff OLD NEW), or --out OUT [NEW]")
        old, new = (_load(path, known) for path in schemas)
        changes = _compared(old, new, None)
        _print(fmt, changes, (schemas[0].as_posix(), schemas[1].as_posix()))
        sys.exit(EXIT_DRIFT if fails(changes, fail_on) else 0)
    if len(schemas) > 1:
        fail("with --out, give at most one schema (NEW); give the schemas of several versions as --schema A --schema B")
    if configured and schemas:
        fail("give NEW or --schema, not both")
    if out is None:
        fail("--schema: with --out OUT, or in a project with [tool.acpgen]")
    if protocol_version and len(protocol_version) != len(configured or schemas):
        fail("--protocol-version: give one per --schema, in order, or one for NEW")
    for value in protocol_version:
        if version_problem(value):
            fail(f"--protocol-version: {value} is not {version_problem(value)}")
    given = configured or schemas
    run = _located(resolve({"out": out, "package": package, "schema": given[0] if len(given) == 1 else None}))
    manifest = read_manifest(run.out, run.options.package)
    versions = _recorded_versions(run.out, run.options.package, manifest, known)
    if versions and schemas:  # one version's NEW, compared alone with its part
        number = protocol_version[0] if protocol_version else None
        _diff_versions(run, versions, _new_schema(schemas[0], number), fmt, fail_on)
    if schemas and protocol_version:
        fail("--protocol-version: only with --out on a package of several protocol versions")
    _diff_configured(run, manifest, versions, _configured(run, manifest, given, protocol_version), fmt, fail_on)


def _compared(old: LoadedSchema, new: LoadedSchema, names: dict[str, str] | None) -> tuple[Change, ...]:
    try:
        return diff_schemas(old, new, names)
    except DiagnosticError as exc:
        report(exc.diagnostics)
        sys.exit(EXIT_ERROR)


def _print(fmt: str, changes: tuple[Change, ...], labels: tuple[str, str]) -> None:
    """One comparison's report (standard output) and count (standard error)."""
    if fmt == "json":
        click.echo(as_json(changes), nl=False)
    elif fmt == "markdown":
        click.echo(as_markdown(changes, *labels), nl=False)
    else:
        click.echo(as_text(changes), nl=False)
    click.echo(f"acpgen diff: {diff_summary(changes)} from {labels[0]} to {labels[1]}", err=True)


@dataclass(frozen=True)
class _Part:
    """One protocol version's part of the package on disk: the schema it was generated from and
    its names, and where it is."""

    schema: LoadedSchema
    names: dict[str, str]
    where: str  # "src/myagent/acp/v1 (acpgen-schema.json)"


def _on_disk(run: Run, manifest: Manifest | None, versions: dict[int, tuple[LoadedSchema, dict[str, str]]],
             known: frozenset[str]) -> tuple[Layout, dict[int, _Part]]:
    """The package's layout on disk and each version's part. A manifest of an earlier acpgen records
    no versions: a package of one version is of the version its schema states (or was given); one
    of several holds no version's API at its root."""
    root = (run.out / run.options.package.replace(".", "/")).as_posix()
    if versions:
        recorded_root = manifest.root_version if manifest is not None else None
        parts = {n: _Part(schema, names, f"{root}/v{n} ({schema.name})") for n, (schema, names) in versions.items()}
        return Layout(tuple(sorted(versions)), recorded_root), parts
    schema, names = _recorded_schema(run.out, run.options.package, known)
    if manifest is not None and len(manifest.versions) == 1:
        number = manifest.versions[0]
    else:
        given = manifest.options.protocol_version if manifest is not None and manifest.options is not None else None
        number = protocol_version(schema.document, None, given if isinstance(given, int) else None)
    return Layout((number,), number), {number: _Part(schema, names, f"{root} ({schema.name})")}


def _configured(run: Run, manifest: Manifest | None, given: tuple[Path, ...],
                numbers_given: tuple[int, ...]) -> list[tuple[str, Path, int | None]]:
    """The schemas ``acpgen generate`` would make the package of, each as the user gave it, its
    file, and the version given for it: the NEW given here, else ``[tool.acpgen]``'s (or the
    ``--schema`` a package records as it is now), else the files a package of several records,
    else the bundled schema."""
    if given:
        return [(path.as_posix(), path, number) for path, number in zip(given, numbers_given or (None,) * len(given))]
    recipe = run.recipe
    if run.options.schemas:
        texts = recipe.schema if isinstance(recipe.schema, tuple) else tuple(p.as_posix() for p in run.options.schemas)
        numbers = run.options.protocol_versions or (None,) * len(texts)
        return [(text, path, number) for text, path, number in zip(texts, run.options.schemas, numbers)]
    if run.options.schema is not None:
        text = recipe.schema if isinstance(recipe.schema, str) else run.options.schema.as_posix()
        return [(text, run.options.schema, run.options.protocol_version)]
    recorded = manifest.options if manifest is not None else None
    if recorded is not None and isinstance(recorded.schema, tuple):
        numbers = recorded.protocol_version if isinstance(recorded.protocol_version, tuple) else (
            None,) * len(recorded.schema)
        return [(text, local_path(text, run.project), number) for text, number in zip(recorded.schema, numbers)]
    return [("the bundled schema", bundled_schema(), None)]


def _diff_configured(run: Run, manifest: Manifest | None, versions: dict[int, tuple[LoadedSchema, dict[str, str]]],
                     configured: list[tuple[str, Path, int | None]], fmt: str, fail_on: str | None) -> None:
    """Compare the package on disk with what regenerating it as configured would make: each version
    with its part, and, when the versions change, what moves for the code that imports it. Exits."""
    known = frozenset({bundled_schema_sha256()})
    old_layout, parts = _on_disk(run, manifest, versions, known)
    new: dict[int, tuple[str, LoadedSchema]] = {}
    for text, path, given in configured:
        loaded = _load(path, known | {p.schema.sha256 for p in parts.values()})
        try:
            number = protocol_version(loaded.document, path, given)
        except DiagnosticError as exc:
            report(exc.diagnostics)
            sys.exit(EXIT_ERROR)
        if number in new:
            fail(f"{new[number][0]} and {text} are both of protocol version {number}: one schema per version")
        new[number] = (text, loaded)
    numbers = tuple(sorted(new))
    new_layout = Layout(numbers, root_version(numbers, old_layout.root))
    package = run.options.package
    if old_layout == new_layout and len(numbers) == 1:  # one version, as before: the report of one comparison
        (text, loaded), = new.values()
        same = parts[numbers[0]]
        changes = _compared(same.schema, loaded, same.names)
        _print(fmt, changes, (same.where, text))
        sys.exit(EXIT_DRIFT if fails(changes, fail_on) else 0)
    reports: dict[str, tuple[Change, ...]] = {}
    root = (run.out / package.replace(".", "/")).as_posix()
    moves = layout_moves(package, old_layout, new_layout, {number: text for number, (text, _) in new.items()})
    if moves:
        reports["layout"] = moves
        _section(fmt, "layout", moves, (f"{root} ({old_layout.shown()})", new_layout.shown()), True)
    for number, (text, loaded) in sorted(new.items()):
        part = parts.get(number)
        if part is None and len(parts) == 1 and len(numbers) == 1:  # the root regenerated as another version
            part = next(iter(parts.values()))
        if part is None:
            continue  # a version added: nothing on disk to compare it with (see the layout's records)
        changes = _compared(part.schema, loaded, part.names)
        _section(fmt, f"v{number}", changes, (part.where, text), not reports)
        reports[f"v{number}"] = changes
    if fmt == "json":
        click.echo(json.dumps({key: [c.as_json() for c in changes] for key, changes in reports.items()}, indent=2))
    sys.exit(EXIT_DRIFT if any(fails(changes, fail_on) for changes in reports.values()) else 0)


def _section(fmt: str, key: str, changes: tuple[Change, ...], labels: tuple[str, str], first: bool) -> None:
    """One part of a report of several: ``layout`` (the moves) or a version's changes."""
    if fmt == "markdown":
        click.echo(("" if first else "\n") + as_markdown(changes, *labels), nl=False)
    elif fmt == "text":
        click.echo(f"{key}:")
        click.echo("".join(f"  {line}\n" for line in as_text(changes).splitlines()), nl=False)
    click.echo(f"acpgen diff: {key}: {diff_summary(changes)} from {labels[0]} to {labels[1]}", err=True)


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


def _new_schema(given: Path, override: int | None) -> dict[int, tuple[Path, LoadedSchema]]:
    """NEW, by the version it states (or ``--protocol-version``'s)."""
    loaded = _load(given, frozenset({bundled_schema_sha256()}))
    try:
        return {protocol_version(loaded.document, given, override): (given, loaded)}
    except DiagnosticError as exc:
        report(exc.diagnostics)
        sys.exit(EXIT_ERROR)


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
