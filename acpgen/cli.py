"""The command line: parse options, call the library, report. Only this module writes files."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from .config import Config, ConfigError, load_config
from .diagnostics import Diagnostic, DiagnosticError
from .diff import diff_schemas
from .diff.report import FAIL_ON, FORMATS, as_json, as_markdown, as_text, fails
from .diff.report import summary as diff_summary
from .model.selection import SIDES
from .output.drift import find_drift, summary
from .output.formatting import FormattingError
from .output.manifest import (
    manifest_for,
    manifest_path,
    parse_manifest,
    read_manifest,
    schema_copy_path,
)
from .output.reuse import reuse_from_output
from .output.writer import WriteError, check_out_folder, write_output
from .pipeline import (
    DEFAULT_OUT,
    DEFAULT_PACKAGE,
    Options,
    build_spec,
    check_options,
    generate,
    regenerate_command,
)
from .render.errors import template_problem
from .render.pydantic_models import FLAVOURS
from .schema.bundled import bundled_schema, bundled_schema_sha256
from .schema.loader import LoadedSchema, load_schema, parse_schema
from .validate import DIRECTIONS, TranscriptError, Validator
from .version import __version__

EXIT_DRIFT = 1
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
        help="ACP JSON Schema file. Default: [tool.acpgen] schema, else the bundled one (ACP v0.12.2, unstable).",
    )(func)


#: click >= 8.2 raises this for a bare ``acpgen``; its message is the whole help text.
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _Command(click.Command):
    """A command whose line in ``acpgen --help`` is its docstring's first paragraph, never cut short
    (click would cut it to fit the terminal, ending it with "...")."""

    def get_short_help_str(self, limit: int = 45) -> str:
        return " ".join((self.short_help or self.help or "").split("\n\n")[0].split())


class _Group(click.Group):
    """Usage errors as one line (``error: ...``, exit 2) instead of click's usage block."""

    command_class = _Command

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NO_ARGS_IS_HELP as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message(), err=True)
            sys.exit(EXIT_ERROR)
        except click.ClickException as exc:
            _fail(_one_line(exc.format_message()))
        except click.Abort:
            _fail("aborted")
        sys.exit(result if isinstance(result, int) else 0)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="acpgen")
def main() -> None:
    """Generate Python bindings for the Agent Client Protocol from its JSON Schema."""


@main.command()
@schema_option
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True, help="Output format."
)
def methods(schema: Path | None, fmt: str) -> None:
    """Print the schema's method table.

    One row per method and handling side, read from the schema's x-method / x-side annotations.
    """
    if schema is None:
        schema = _config().values.get("schema")
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


def output_options(func: F) -> F:
    """The options ``generate`` and ``check`` share. Unset ones come from ``[tool.acpgen]``."""
    decorators = [
        schema_option,
        click.option(
            "--out",
            type=click.Path(path_type=Path),
            default=None,
            help=f"Output folder; the package is written below it. [default: {DEFAULT_OUT}]",
        ),
        click.option("--package", default=None, help=f"Dotted name of the generated package. [default: {DEFAULT_PACKAGE}]"),
        click.option(
            "--side",
            metavar="SIDE",
            default=None,
            help=(
                f"The side the package serves: its handler base and the other side's proxy; one of {', '.join(SIDES)},"
                " or another side the schema declares (proxy). An agent or client package also carries the other"
                " side, unexported, to test itself (in_memory_pair, its stub). [default: both: every side]"
            ),
        ),
        click.option(
            "--stable-only/--all-methods",
            "stable_only",
            default=None,
            help="Leave out unstable methods and the types only they use. [default: --all-methods]",
        ),
        click.option(
            "--templates",
            type=click.Path(path_type=Path),
            default=None,
            help="Folder of templates that override the built-in ones by file name.",
        ),
        click.option(
            "--names", type=click.Path(path_type=Path), default=None, help="File pinning or overriding generated names."
        ),
        click.option(
            "--models",
            type=click.Choice(FLAVOURS),
            metavar="FLAVOUR",
            default=None,
            help="The flavour of models.py: dataclasses (standard library) or pydantic (v2; needs "
            "acpgen[pydantic]). [default: dataclasses]",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


@dataclass(frozen=True)
class Run:
    """One run's settings: flags over ``[tool.acpgen]`` over the defaults."""

    options: Options
    out: Path
    origins: dict[str, str] = field(default_factory=dict)  # Options field -> where a config value came from

    @property
    def manifest(self) -> str:
        return manifest_path(self.options.package)


def _config() -> Config:
    """The ``[tool.acpgen]`` settings that apply here; exits 2 on a bad table."""
    try:
        return load_config(Path.cwd())
    except ConfigError as exc:
        _fail(str(exc))


def resolve(flags: dict[str, Any]) -> Run:
    config = _config()
    given = {key.replace("_", "-"): v for key, v in flags.items() if v is not None}
    values = {**config.values, **given}
    options = Options(
        schema=values.get("schema"),
        package=values.get("package", DEFAULT_PACKAGE),
        templates=values.get("templates"),
        side=values.get("side", "both"),
        stable_only=values.get("stable-only", False),
        names=values.get("names"),
        models=values.get("models", "dataclasses"),
    )
    out = values.get("out", Path(DEFAULT_OUT))
    # The header's command is the one to run where the settings apply: the configured project's
    # folder (its pyproject.toml's), else here; so it is the same from any folder of the project.
    base = config.source.parent if config.source is not None else Path.cwd()
    options = replace(options, command=regenerate_command(options, base))
    origins = {key.replace("-", "_"): config.origin(key) for key in config.values if key not in given}
    return Run(options=replace(options, origins=origins), out=out, origins=origins)


def render(run: Run, renew_names: bool = False) -> dict[str, str]:
    """Every file of the output, the manifest and the schema's copy included; exits 2 on any error.

    The names the output's manifest records are kept, unless ``renew_names``."""
    for key in ("schema", "names"):  # a file named in pyproject.toml: say so (a flag's is named by its file)
        path = getattr(run.options, key)
        if key in run.origins and path is not None and not path.is_file():
            _fail(f"{run.origins[key]} {path.as_posix()!r} is not a file")
    previous = read_manifest(run.out, run.options.package)
    locked = previous.names if previous is not None and not renew_names else None
    try:
        check_options(run.options)
        output = generate(run.options, reuse_from_output(run.out, run.options.package), locked=locked)
    except DiagnosticError as exc:
        _report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    except FormattingError as exc:
        _fail(_one_line(exc))
    except Exception as exc:  # noqa: BLE001 - a user's template may raise anything; show one line
        _fail(template_problem(exc, run.options.templates))
    _report(output.warnings)
    manifest = manifest_for(output.files, output.renders, output.schema_sha256, output.names)
    return {**output.files, run.manifest: manifest.to_text()}


@main.command(name="generate")
@output_options
@click.option("--force", is_flag=True, help="Overwrite files in the way that acpgen did not write.")
@click.option(
    "--renew-names",
    is_flag=True,
    help="Name every class and field by the rules, not as the manifest of the previous output records.",
)
def generate_command(force: bool, renew_names: bool, **flags: Any) -> None:
    """Write the bindings package below the output folder.

    All or nothing: every file is rendered first, then the changed ones replace the previous
    output; on any failure the previous output stays as it was. Names the previous output's
    manifest records are kept (--renew-names: named by the rules again).
    """
    run = resolve(flags)
    files = render(run, renew_names)
    try:
        check_out_folder(run.out, run.origins.get("out", "--out"))
        plan = write_output(run.out, files, run.manifest, force=force)
    except WriteError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot write {exc.filename or run.out}: {exc.strerror or exc}; nothing was changed")
    removed = f", removed {len(plan.removals)} stale" if plan.removals else ""
    click.echo(f"acpgen: wrote {len(plan.writes)} of {plan.total} files{removed} under {run.out}", err=True)


@main.command(name="check")
@output_options
@click.option("--summary", "summary_only", is_flag=True, help="Name the files that differ; print no diff.")
def check_command(summary_only: bool = False, **flags: Any) -> None:
    """Check that the output folder holds what generate would write.

    Exit 0 when it does. Else print a unified diff per file that differs (none with --summary),
    name each on standard error, and exit 1. A missing output folder is one line.
    """
    run = resolve(flags)
    files = render(run)
    try:
        check_out_folder(run.out, run.origins.get("out", "--out"))
        if not run.out.exists():
            click.echo(f"acpgen check: {run.out} does not exist ({len(files)} missing); run `acpgen generate`", err=True)
            sys.exit(EXIT_DRIFT)
        drift = find_drift(run.out, files, run.manifest)
    except (WriteError, OSError) as exc:
        _fail(str(exc) if isinstance(exc, WriteError) else f"cannot read {run.out}: {exc.strerror or exc}")
    if not drift:
        click.echo(f"acpgen check: {run.out} is up to date", err=True)
        return
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
    sys.exit(EXIT_DRIFT)


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
            _fail("give two schema files (acpgen diff OLD NEW), or --out OUT [NEW]")
        old, new = (_load(path, known) for path in schemas)
        labels = (schemas[0].name, schemas[1].name)
    else:
        if len(schemas) > 1:
            _fail("with --out, give at most one schema (NEW)")
        run = resolve({"out": out, "package": package, "schema": schemas[0] if schemas else None})
        old, names = _recorded_schema(run.out, run.options.package, known)
        new = _load(run.options.schema or bundled_schema(), known | {old.sha256})
        labels = (f"{run.out.as_posix()} ({old.name})", new.name)
    try:
        changes = diff_schemas(old, new, names)
    except DiagnosticError as exc:
        _report(exc.diagnostics)
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
        _report(exc.diagnostics)
        sys.exit(EXIT_ERROR)


def _recorded_schema(out: Path, package: str, known: frozenset[str]) -> tuple[LoadedSchema, dict[str, str]]:
    """The schema the output in ``out`` was generated from, and the names it gave."""
    manifest = read_manifest(out, package)
    if manifest is None:
        _fail(f"{(out / manifest_path(package)).as_posix()}: no acpgen manifest to take the old schema from; "
              "give OLD and NEW")
    copy = out / schema_copy_path(package)
    try:
        raw = copy.read_bytes()
    except OSError:
        _fail(f"{copy.as_posix()}: no copy of the schema {out.as_posix()} was generated from "
              "(an older acpgen wrote it); give OLD and NEW")
    if hashlib.sha256(raw).hexdigest() != manifest.schema_sha256:
        _fail(f"{copy.as_posix()} is not the schema the manifest records (sha256 {manifest.schema_sha256})")
    try:
        return parse_schema(raw, copy.name, known | {manifest.schema_sha256}), manifest.names
    except DiagnosticError as exc:
        _report(exc.diagnostics)
        sys.exit(EXIT_ERROR)


@main.command(name="validate")
@schema_option
@click.argument("transcript", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format."
)
@click.option(
    "--direction",
    type=click.Choice(DIRECTIONS),
    default=None,
    help="The direction of messages that do not name one (a plain capture). [default: read from their methods]",
)
@click.option("--strict", is_flag=True, help="Report warnings as errors.")
def validate_command(schema: Path | None, transcript: Path, fmt: str, direction: str | None, strict: bool) -> None:
    """Check a recorded ACP transcript (NDJSON) against the schema, message by message."""
    try:
        report = Validator(schema).validate(transcript, direction=direction, strict=strict)
    except DiagnosticError as exc:
        _report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    except TranscriptError as exc:
        _fail(str(exc))
    click.echo(json.dumps(report.to_json(), indent=2) if fmt == "json" else report.text())
    sys.exit(EXIT_DRIFT if report.errors else 0)


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
