"""``acpgen methods`` and ``generate``, and what ``check`` (:mod:`.checking`) shares with them:
the options, resolved against ``[tool.acpgen]``, and the rendering ``generate`` and ``check``
start with."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..config import Config, ConfigError, load_config
from ..diagnostics import DiagnosticError
from ..model.selection import SIDES
from ..options import Options, check_options, recipe_of
from ..output.drift import unlisted
from ..output.formatting import FormattingError
from ..output.inputs import Inputs, inputs_of
from ..output.manifest import manifest_for, manifest_path, read_manifest
from ..output.recipe import BY_KEY, DEFAULT_OUT, DEFAULT_PACKAGE, Recipe, local_path
from ..output.reuse import reuse_from_output
from ..output.writer import WriteError, WriteFailed, check_out_folder, write_output
from ..render.flavours import FLAVOURS
from ..schema.loader import without_methods
from ..schema.protocol import version_problem

if TYPE_CHECKING:
    from ..versioned import Previous

# The pipeline (jinja2, the model) is imported where a command renders: a check that tells from
# the manifest alone that a package is up to date never loads it.
from .base import (
    EXIT_ERROR,
    F,
    fail,
    main,
    one_line,
    report,
    schema_option,
)


@main.command()
@schema_option
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True, help="Output format."
)
def methods(schema: Path | None, fmt: str) -> None:
    """Print the schema's method table.

    One row per method and handling side, read from the schema's x-method / x-side annotations.
    """
    from ..pipeline import build_spec

    if schema is None:
        schema = _config().values.get("schema")
    _refuse_without_methods(schema)
    try:
        spec, warnings = build_spec(Options(schema=schema))
    except DiagnosticError as exc:
        report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    report(warnings)
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
        click.option(
            "--schema",
            type=click.Path(path_type=Path, dir_okay=False),
            multiple=True,
            callback=_schemas,
            help="ACP JSON Schema file; once per protocol version for one package of several (<package>/v1/,"
            " <package>/v2/, ...). Default: [tool.acpgen] schema, else the bundled one (ACP v0.12.2, unstable).",
        ),
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
        click.option(
            "--protocol-version",
            metavar="N",
            multiple=True,
            callback=_protocol_version,
            help="The protocol version the package speaks; with several --schema, one after each (--schema"
            " v1.json --protocol-version 1 --schema v2.json --protocol-version 2). [default: the schema's: a const"
            " on ProtocolVersion, else the version of the meta.json beside it, else the version of the"
            " protocol's documentation its descriptions link to, else 1]",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def _schemas(ctx: click.Context, param: click.Parameter, value: tuple[Path, ...]) -> Path | tuple[Path, ...] | None:
    """``--schema`` given once: its path; more often: the paths, one per protocol version."""
    return (value[0] if len(value) == 1 else value) or None


def _protocol_version(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> int | tuple[int, ...] | None:
    """``--protocol-version``'s integer (given once) or integers, in order (given once per
    ``--schema``); a value that is not one exits 2 with one line."""
    numbers = []
    for text in value:
        number = int(text) if text.strip().isdigit() else None
        if number is None or version_problem(number):
            fail(f"--protocol-version {text!r} is not a protocol version: {version_problem(number)}")
        numbers.append(number)
    return (numbers[0] if len(numbers) == 1 else tuple(numbers)) or None


@dataclass(frozen=True)
class Run:
    """One run's settings: flags over ``[tool.acpgen]`` over the defaults (for ``check``: over the
    options the output's manifest records)."""

    options: Options
    out: Path
    origins: dict[str, str] = field(default_factory=dict)  # Options field -> where a config value came from
    given: dict[str, str] = field(default_factory=dict)  # option key -> its flag, or its [tool.acpgen] key
    project: Path = field(default_factory=Path.cwd)  # where the header's command is run
    configured: bool = False  # a [tool.acpgen] table applies here

    @property
    def manifest(self) -> str:
        return manifest_path(self.options.package)

    @property
    def recipe(self) -> Recipe:
        return recipe_of(self.options, self.project, self.out)


def _config() -> Config:
    """The ``[tool.acpgen]`` settings that apply here; exits 2 on a bad table."""
    try:
        return load_config(Path.cwd())
    except ConfigError as exc:
        fail(str(exc))


def config_strict() -> bool:
    """``[tool.acpgen]`` strict: whether ``check`` fails on a file acpgen did not write."""
    return _config().strict


def resolve(flags: dict[str, Any], *, checked: bool = True) -> Run:
    """The run of these flags here. ``checked``: exit 2 when a path ``[tool.acpgen]`` gives and the
    flags do not override is not there (off: only to say what a command would use)."""
    config = _config()
    flagged = {key.replace("_", "-"): v for key, v in flags.items() if v is not None}
    problem = config.missing(overridden=flagged)  # a path pyproject.toml names: said as written there
    if problem and checked:
        fail(problem)
    if "out" in config.values and "out" not in flagged and checked:
        try:
            check_out_folder(config.values["out"], config.origin("out"), config.written["out"])
        except WriteError as exc:
            fail(str(exc))
    values = {**config.values, **flagged}
    given = {key: config.origin(key) for key in config.values}
    given.update({key: BY_KEY[key].flag_for(value) for key, value in flagged.items()})
    # The header's command is the one to run where the settings apply: the configured project's
    # folder (its pyproject.toml's), else here; so it is the same from any folder of the project.
    project = config.source.parent if config.source is not None else Path.cwd()
    origins = {key.replace("-", "_"): config.origin(key) for key in config.values if key not in flagged}
    return replace(run_of(values, given, project, origins), configured=config.source is not None)


def run_of(values: dict[str, Any], given: dict[str, str], project: Path, origins: dict[str, str]) -> Run:
    """The run of these option values (by key; a path relative to the working folder)."""
    options = Options(
        schema=None if isinstance(values.get("schema"), tuple) else values.get("schema"),
        schemas=values["schema"] if isinstance(values.get("schema"), tuple) else (),
        package=values.get("package", DEFAULT_PACKAGE),
        templates=values.get("templates"),
        side=values.get("side", "both"),
        stable_only=values.get("stable-only", False),
        names=values.get("names"),
        models=values.get("models", "dataclasses"),
        protocol_version=None if isinstance(values.get("protocol-version"), tuple) else values.get("protocol-version"),
        protocol_versions=values["protocol-version"] if isinstance(values.get("protocol-version"), tuple) else (),
        origins=origins,
    )
    run = Run(options=options, out=values.get("out", Path(DEFAULT_OUT)), origins=origins, given=given, project=project)
    return replace(run, options=replace(options, command=run.recipe.command))


def render(run: Run, renew_names: bool = False) -> dict[str, str]:
    """Every file of the output, the manifest and the schema's copy included; exits 2 on any error.

    The names the output's manifest records are kept, unless ``renew_names``."""
    from ..pipeline import generate
    from ..versioned import generate_versions, schema_version

    for schema in run.options.schemas or (run.options.schema,):
        _refuse_without_methods(schema)
    previous = _previous(run)
    locked = previous.locks if not renew_names else None
    try:
        check_options(run.options)
        reuse = reuse_from_output(run.out, run.options.package)
        if run.options.schemas:
            output = generate_versions(run.options, run.options.schemas, reuse, locked=locked,
                                       previous_root=previous.root)
        else:
            number = schema_version(run.options.schema, run.options.protocol_version)
            mine = locked.get(number, {}) if locked is not None and number is not None else None
            output = generate(run.options, reuse, locked=mine)
    except DiagnosticError as exc:
        report(exc.diagnostics)
        sys.exit(EXIT_ERROR)
    except FormattingError as exc:
        fail(one_line(exc))
    except Exception as exc:  # noqa: BLE001 - a user's template may raise anything; show one line
        from ..render.errors import template_problem

        fail(template_problem(exc, run.options.templates))
    report(output.warnings)
    manifest = manifest_for(output.files, output.renders, output.schema_sha256, output.names, run.recipe,
                            versions=output.versions, root_version=output.root_version, inputs=inputs(run))
    return {**output.files, run.manifest: manifest.to_text()}


def inputs(run: Run) -> Inputs:
    """The record of what ``run`` makes its package from, as the inputs are now."""
    return inputs_of(run.options.schemas or (run.options.schema,), run.options.templates, run.options.names)


def _previous(run: Run) -> Previous:
    """What the output's manifest records of the package's versions: their names locks, its root."""
    from ..versioned import Previous, previous_package

    manifest = read_manifest(run.out, run.options.package)
    if manifest is None:
        return Previous({}, None)
    recorded = manifest.options.schema if manifest.options is not None else None
    schema = local_path(recorded, run.project) if isinstance(recorded, str) else None
    return previous_package(manifest, run.out, run.options.package, schema)


def _refuse_without_methods(schema: Path | None) -> None:
    """Exit 2 for a schema with no methods (see :func:`without_methods`); the bundled one has them."""
    problem = without_methods(schema) if schema is not None else None
    if problem is not None:
        report((problem,))
        sys.exit(EXIT_ERROR)


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
        fail(str(exc))
    except WriteFailed as exc:
        fail(_failed_write(run, exc))
    removed = f", removed {len(plan.removals)} stale" if plan.removals else ""
    if not plan.writes and not plan.removals:
        click.echo(f"acpgen: {run.options.package} under {run.out}: all {plan.total} files up to date", err=True)
    else:
        click.echo(f"acpgen: wrote {len(plan.writes)} of {plan.total} files{removed} under {run.out}", err=True)
    for rel in unlisted(run.out, files):
        click.echo(f"acpgen: left {(run.out / rel).as_posix()} alone: acpgen did not write it (the manifest does not"
                   " list it)", err=True)


def _failed_write(run: Run, failed: WriteFailed) -> str:
    """What stopped a write, and the state it left the output folder in."""
    cause = failed.cause
    where = cause.filename2 or cause.filename or run.out  # os.replace names the temporary file first
    said = f"cannot write {Path(where).as_posix()}: {cause.strerror or cause}"
    if not failed.not_restored:
        return f"{said}; nothing was changed"
    shown = ", ".join((run.out / rel).as_posix() for rel in failed.not_restored)
    return (f"{said}; {len(failed.not_restored)} file(s) could not be put back as they were: {shown}; every other"
            " file is as it was: fix the cause and run the same command again")
