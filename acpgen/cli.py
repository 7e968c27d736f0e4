"""The command line: parse options, call the library, report. Only this module writes files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, TypeVar

import click

from . import __version__
from .diagnostics import Diagnostic, DiagnosticError
from .generate import DEFAULT_PACKAGE, Options, build_spec, generate
from .writer import write_output

EXIT_ERROR = 2

F = TypeVar("F", bound=Callable[..., object])


def _report(diagnostics: tuple[Diagnostic, ...]) -> None:
    for diagnostic in diagnostics:
        click.echo(diagnostic.format(), err=True)


def schema_option(func: F) -> F:
    return click.option(
        "--schema",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="ACP JSON Schema file. Default: the bundled schema (ACP v0.12.2, unstable).",
    )(func)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="acpgen")
def main() -> None:
    """Generate Python bindings for the Agent Client Protocol from its JSON Schema."""


@main.command()
@schema_option
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True, help="Output format."
)
def methods(schema: Path | None, fmt: str) -> None:
    """Print the method table derived from the schema's x-method / x-side annotations."""
    try:
        spec, warnings = build_spec(Options(schema=schema))
    except DiagnosticError as exc:
        _report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    _report(warnings)
    if fmt == "json":
        click.echo(json.dumps([m.as_json() for m in spec.methods], indent=2))
        return
    rows = [("METHOD", "SIDE", "KIND", "PARAMS", "RESULT", "UNSTABLE")]
    for m in spec.methods:
        rows.append((m.wire_name, m.side, m.kind.value, m.params_type, m.result_type or "-", "yes" if m.unstable else ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


@main.command(name="generate")
@schema_option
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("generated"),
    show_default=True,
    help="Output folder; the package is written below it.",
)
@click.option("--package", default=DEFAULT_PACKAGE, show_default=True, help="Dotted name of the generated package.")
@click.option(
    "--templates",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder of templates that override the built-in ones by file name.",
)
def generate_command(schema: Path | None, out: Path, package: str, templates: Path | None) -> None:
    """Generate the bindings package into OUT."""
    try:
        output = generate(Options(schema=schema, package=package, templates=templates))
    except DiagnosticError as exc:
        _report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    _report(output.warnings)
    try:
        written = write_output(out, output.files)
    except OSError as exc:
        click.echo(f"error: cannot write {out}: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(f"acpgen: wrote {written} of {len(output.files)} files under {out}", err=True)
