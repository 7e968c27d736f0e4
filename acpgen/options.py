"""The options of a run: what to generate (:class:`Options`), the checks an option must pass
before any schema is read (:func:`check_options`), and the options as the manifest records them
and the header's command gives them (:func:`recipe_of`)."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import DiagnosticError, error
from .model.naming import package_problem
from .output.recipe import DEFAULT_OUT, DEFAULT_PACKAGE, Recipe, project_path
from .render.flavours import FLAVOURS
from .schema.protocol import version_problem

__all__ = ["FLAGS", "Options", "check_options", "recipe_of", "regenerate_command"]


@dataclass(frozen=True)
class Options:
    """What to generate. ``schema=None`` means the bundled schema."""

    schema: Path | None = None
    package: str = DEFAULT_PACKAGE
    templates: Path | None = None  # a user's folder whose templates override the built-in ones
    side: str = "both"  # "agent", "client", another side the schema declares, or "both" (all of them)
    stable_only: bool = False  # leave out unstable methods and the types only they use
    names: Path | None = None  # a user's file pinning or overriding generated names
    models: str = "dataclasses"  # the flavour of models.py: "dataclasses" or "pydantic"
    #: The protocol version the package speaks; None: the one the schema states (see
    #: :mod:`acpgen.schema.protocol`).
    protocol_version: int | None = None
    #: Two or more schemas: one package of several protocol versions (:mod:`acpgen.versioned`).
    schemas: tuple[Path, ...] = ()
    #: The protocol version of each of ``schemas``, in their order; empty: the ones they state.
    protocol_versions: tuple[int, ...] = ()
    #: The header's "regenerate with" command; None: :func:`regenerate_command` of these options.
    command: str | None = None
    #: Where a value came from, for error messages (``{"side": "pyproject.toml: [tool.acpgen] side"}``);
    #: an option not named here is named by its flag.
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)


#: How an option is named in an error when the caller says nothing else: its flag.
FLAGS = {
    "package": "--package",
    "side": "--side",
    "templates": "--templates",
    "models": "--models",
    "protocol_version": "--protocol-version",
    "schema": "--schema",
}


def check_options(options: Options) -> None:
    """Raise :class:`DiagnosticError` for an option no run can use, naming where it came from
    (``options.origins``, else its flag). A ``side`` is checked once the schema is read."""
    where = {**FLAGS, **options.origins}
    problem = package_problem(options.package)
    if problem:
        raise DiagnosticError([error(None, f"{where['package']} {options.package!r} {problem}")])
    for number in (options.protocol_version, *options.protocol_versions):
        if number is not None and version_problem(number):
            shown, problem = where["protocol_version"], version_problem(number)
            raise DiagnosticError([error(None, f"{shown} {number!r} is not a protocol version: {problem}")])
    given = len(options.protocol_versions) or int(options.protocol_version is not None)
    if options.schemas and given and given != len(options.schemas) or options.protocol_versions and not options.schemas:
        versions = f"{given} version{'s' if given > 1 else ''}"
        schemas = f"{len(options.schemas) or 1} schema{'s' if len(options.schemas) > 1 else ''}"
        raise DiagnosticError([error(None, f"{where['protocol_version']} gives {versions} for {schemas}"
                                           f" ({where['schema']}): give one per schema, in the same order")])
    if options.models not in FLAVOURS:
        raise DiagnosticError([error(None, f"{where['models']} {options.models!r} is not one of {', '.join(FLAVOURS)}")])
    missing = missing_tool(options)
    if missing is not None:
        raise DiagnosticError([error(None, missing)])
    if options.templates is not None and not options.templates.is_dir():
        raise DiagnosticError([error(None, f"{where['templates']} {str(options.templates)!r} is not a folder")])


def missing_tool(options: Options) -> str | None:
    """What rendering ``options`` needs that is not installed (the line that says how to install
    it), or None."""
    if options.models == "pydantic" and not _has_datamodel_code_generator():
        from .render.pydantic_models import INSTALL_HINT

        return INSTALL_HINT
    return None


def _has_datamodel_code_generator() -> bool:
    try:
        return importlib.util.find_spec("datamodel_code_generator") is not None
    except (ImportError, ValueError):
        return False


def regenerate_command(options: Options, base: Path | None = None, out: Path | None = None) -> str:
    """The command that remakes the output, with no absolute path in it: see :func:`recipe_of`."""
    return recipe_of(options, base, out).command


def recipe_of(options: Options, base: Path | None = None, out: Path | None = None) -> Recipe:
    """The options as the manifest records them and the header's command gives them.

    ``base``: the project folder, where the command is run (a configured project's
    ``pyproject.toml`` folder, else the working folder); every path is relative to it, with ``..``
    for one outside it. Without ``base`` (the library's default) every path is shown by its file
    name. ``out``: the output folder; None leaves it out (the default, ``generated``).
    """

    def shown(path: Path | None) -> str | None:
        if path is None:
            return None
        return project_path(path, base) if base is not None else path.name

    return Recipe(
        schema=tuple(str(shown(p)) for p in options.schemas) if options.schemas else shown(options.schema),
        out=shown(out) or DEFAULT_OUT,
        package=options.package,
        side=options.side,
        stable_only=options.stable_only,
        templates=shown(options.templates),
        names=shown(options.names),
        models=options.models,
        protocol_version=options.protocol_versions or options.protocol_version,
    )

