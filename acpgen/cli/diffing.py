"""``acpgen diff``: what changes from one schema to another, on the wire and in the Python."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import click

from ..diagnostics import DiagnosticError
from ..diff import diff_schemas
from ..diff.report import FAIL_ON, FORMATS, as_json, as_markdown, as_text, fails
from ..diff.report import summary as diff_summary
from ..output.manifest import manifest_path, read_manifest, schema_copy_path
from ..output.recipe import DEFAULT_PACKAGE
from ..schema.bundled import bundled_schema, bundled_schema_sha256
from ..schema.loader import LoadedSchema, load_schema, parse_schema
from .base import EXIT_DRIFT, EXIT_ERROR, fail, main, report
from .generating import resolve


@main.command(name="diff")
@click.argument("schemas", nargs=-1, metavar="[OLD] [NEW]", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Compare NEW with the schema the output in OUT was generated from (its copy beside the manifest), "
    "under the names OUT has. NEW defaults to the schema `acpgen generate` would use.",
)
@click.option("--package", default=None, help=f"With --out: the generated package's dotted name. [default: {DEFAULT_PACKAGE}]")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Report format.")
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default=None,
    help="Exit 1 on a stable breaking change (breaking), a breaking change in either tier (unstable-breaking), "
    "or any change (any).",
)
def diff_command(schemas: tuple[Path, ...], out: Path | None, package: str | None, fmt: str, fail_on: str | None) -> None:
    """Show what changes from schema OLD to NEW, on the wire and in the generated Python.

    `acpgen diff OLD NEW` compares two schema files; `acpgen diff --out OUT [NEW]` answers "what would
    regenerating OUT do to me". One line per change, most severe first; exit 2 on bad input.
    """
    known = frozenset({bundled_schema_sha256()})
    names: dict[str, str] | None = None
    if out is None:
        if len(schemas) != 2:
            fail("give two schema files (acpgen diff OLD NEW), or --out OUT [NEW]")
        old, new = (_load(path, known) for path in schemas)
        labels = (schemas[0].name, schemas[1].name)
    else:
        if len(schemas) > 1:
            fail("with --out, give at most one schema (NEW)")
        run = resolve({"out": out, "package": package, "schema": schemas[0] if schemas else None})
        old, names = _recorded_schema(run.out, run.options.package, known)
        new = _load(run.options.schema or bundled_schema(), known | {old.sha256})
        labels = (f"{run.out.as_posix()} ({old.name})", new.name)
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
