"""The command line: parse options, call the library, report. Only this module writes files."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import jinja2

from . import __version__
from .config import ConfigError, load_config
from .diagnostics import Diagnostic, DiagnosticError
from .generate import DEFAULT_PACKAGE, Options, build_spec, check_options, generate
from .model.selection import SIDES
from .output.drift import find_drift, summary
from .output.formatting import FormattingError
from .output.manifest import manifest_for, manifest_path
from .output.reuse import reuse_from_output
from .output.writer import WriteError, write_output
from .render.pydantic_models import FLAVOURS

EXIT_DRIFT = 1
EXIT_ERROR = 2
DEFAULT_OUT = "generated"

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


#: click >= 8.2 raises this for a bare ``acpgen``; its message is the whole help text.
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _Group(click.Group):
    """Usage errors as one line (``error: ...``, exit 2) instead of click's usage block."""

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
            type=click.Choice(SIDES),
            default=None,
            help="The side the package serves: its handler base and the other side's proxy. [default: both]",
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

    @property
    def manifest(self) -> str:
        return manifest_path(self.options.package)


def resolve(flags: dict[str, Any]) -> Run:
    try:
        config = load_config(Path.cwd())
    except ConfigError as exc:
        _fail(str(exc))
    values = {**config.values, **{key.replace("_", "-"): v for key, v in flags.items() if v is not None}}
    options = Options(
        schema=values.get("schema"),
        package=values.get("package", DEFAULT_PACKAGE),
        templates=values.get("templates"),
        side=values.get("side", "both"),
        stable_only=values.get("stable-only", False),
        names=values.get("names"),
        models=values.get("models", "dataclasses"),
    )
    return Run(options=options, out=values.get("out", Path(DEFAULT_OUT)))


def render(run: Run) -> dict[str, str]:
    """Every file of the output, the manifest included; exits 2 on any error."""
    try:
        check_options(run.options)
        output = generate(run.options, reuse_from_output(run.out, run.options.package))
    except DiagnosticError as exc:
        _report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    except (jinja2.TemplateError, FormattingError) as exc:
        _fail(f"template: {_one_line(exc)}")
    except Exception as exc:  # noqa: BLE001 - a user's template may raise anything; show one line
        _fail(f"generation failed: {type(exc).__name__}: {_one_line(exc)}")
    _report(output.warnings)
    return {**output.files, run.manifest: manifest_for(output.files, output.renders, output.schema_sha256).to_text()}


@main.command(name="generate")
@output_options
@click.option("--force", is_flag=True, help="Overwrite files in the way that acpgen did not write.")
def generate_command(force: bool, **flags: Any) -> None:
    """Generate the bindings package into OUT, replacing the previous output atomically."""
    run = resolve(flags)
    files = render(run)
    try:
        plan = write_output(run.out, files, run.manifest, force=force)
    except WriteError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot write {exc.filename or run.out}: {exc.strerror or exc}; nothing was changed")
    removed = f", removed {len(plan.removals)} stale" if plan.removals else ""
    click.echo(f"acpgen: wrote {len(plan.writes)} of {plan.total} files{removed} under {run.out}", err=True)


@main.command(name="check")
@output_options
def check_command(**flags: Any) -> None:
    """Exit 0 when OUT holds exactly what generate would write; else print a diff and exit 1."""
    run = resolve(flags)
    files = render(run)
    try:
        drift = find_drift(run.out, files, run.manifest)
    except (WriteError, OSError) as exc:
        _fail(str(exc) if isinstance(exc, WriteError) else f"cannot read {run.out}: {exc.strerror or exc}")
    if not drift:
        click.echo(f"acpgen check: {run.out} is up to date", err=True)
        return
    for item in drift:
        click.echo(item.diff, nl=False)
    click.echo(f"acpgen check: {summary(drift)}; run `acpgen generate`", err=True)
    for item in drift:
        click.echo(f"  {item.change.value}: {(run.out / item.path).as_posix()}", err=True)
    sys.exit(EXIT_DRIFT)


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
