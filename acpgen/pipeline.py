"""The pure core: options in, ``{relative path: text}`` out. Only the CLI touches the disk."""

from __future__ import annotations

import importlib.util
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import jinja2

from .diagnostics import Diagnostic, DiagnosticError, error
from .model.calls import variant_hints
from .model.capabilities import build_capabilities
from .model.method_table import build_method_table
from .model.namelock import def_key
from .model.names import load_names_file
from .model.naming import package_problem
from .model.roles import build_roles, served_sides
from .model.selection import select_methods, select_types
from .model.session import session_updates
from .model.spec import Method, SchemaSource, Spec
from .model.stubs import stub_flows
from .model.typebuild import build_types
from .output.formatting import ensure_parses, format_python
from .output.manifest import schema_copy_path, sha256_text
from .output.recipe import DEFAULT_OUT, DEFAULT_PACKAGE, Recipe, project_path
from .output.reuse import NOTHING, Reuse
from .render.environment import make_environment, reads_user_templates, runtime_source
from .render.layout import Unfitted
from .render.longlines import overlong_line, relayout
from .render.pydantic_layout import black_where_needed
from .render.pydantic_models import (
    FLAVOURS,
    INSTALL_HINT,
    SUPPORT_MODULE,
    render_models,
    support_source,
)
from .schema.bundled import bundled_schema
from .schema.loader import LoadedSchema, load_schema
from .schema.protocol import protocol_version, version_problem
from .version import __version__

#: The generated package: one template per module, named ``<module>.jinja``.
OUTPUT_MODULES = (
    "__init__.py",
    "_decode_errors.py",
    "_leniency.py",
    "_codec.py",
    "methods.py",
    "models.py",
    "builders.py",
    "session.py",
    # the connection runtime, in its layers (lower first), and the facade the other modules import
    "_errors.py",
    "_framing.py",
    "_transports.py",
    "_memory.py",
    "_sender.py",
    "_incoming.py",
    "_connection.py",
    "_typed.py",
    "_process.py",
    "_rpc.py",
    "_versions.py",
    "agent.py",
    "client.py",
    "pair.py",
    "stub_agent.py",
    "stub_client.py",
    "_checks.py",
    "_session_page.py",
    "inspect.py",
    "_guard.py",
    "_http_connection.py",
    "_asgi.py",
    "_remote.py",
)

#: Modules only some packages need: the sides that must all be served for the module to be emitted.
#: A module not listed here is emitted for every ``--side``.
MODULE_SIDES = {
    "agent.py": ("agent",),
    "_versions.py": ("agent",),
    "stub_agent.py": ("agent",),
    "client.py": ("client",),
    "stub_client.py": ("client",),
    "pair.py": ("agent", "client"),
    "_guard.py": ("agent",),
    "_http_connection.py": ("agent",),
    "_asgi.py": ("agent",),
    "_remote.py": ("client",),
    "_checks.py": ("agent", "client"),
    "_session_page.py": ("agent", "client"),
    "inspect.py": ("agent", "client"),
}
#: What a package for one side carries of the other (its test peer), so that it can drive itself
#: end to end: an agent package has the client module, ``in_memory_pair`` and the stub client; a
#: client package the agent module, ``in_memory_pair`` and the stub agent. They are not exported
#: from the package root (``from <package>.client import Client``).
TEST_PEERS = {"agent": "client", "client": "agent"}
#: The remote transports, in their layers: who may connect, a Streamable HTTP connection, the ASGI
#: app serving both profiles (agent side), and the WebSocket and HTTP clients (client side).
REMOTE_MODULES = ("_guard.py", "_http_connection.py", "_asgi.py", "_remote.py")
PEER_MODULES = frozenset(
    {"agent.py", "client.py", "pair.py", "stub_agent.py", "stub_client.py", *REMOTE_MODULES}
)

#: The template of the module of each side beyond agent and client (``proxy.py``), given its ``role``.
OTHER_SIDE_TEMPLATE = "side.py.jinja"

#: The stub servers, each emitted only when the schema has the methods it is written against.
STUB_MODULES = {"stub_agent.py": "agent", "stub_client.py": "client"}

#: Modules with no schema-dependent text: ordinary source files in ``acpgen/runtime/``, copied
#: into the package behind the header. A user's template of the same name (``_rpc.py.jinja``)
#: still overrides one.
CONNECTION_MODULES = (
    "_errors.py", "_framing.py", "_transports.py", "_memory.py", "_sender.py", "_incoming.py",
    "_connection.py", "_typed.py", "_process.py", "_rpc.py",
)
CODEC_MODULES = ("_decode_errors.py", "_leniency.py", "_codec.py")
RUNTIME_MODULES = frozenset(
    {
        *CODEC_MODULES,
        *CONNECTION_MODULES,
        "_versions.py",
        "pair.py",
        "_checks.py",
        "_session_page.py",
        "inspect.py",
        *REMOTE_MODULES,
    }
)

#: Files copied into the package as they are (not templates, not formatted).
STATIC_FILES = {
    "py.typed": "",  # PEP 561: the package ships its type hints
}


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
    #: The header's "regenerate with" command; None: :func:`regenerate_command` of these options.
    command: str | None = None
    #: Where a value came from, for error messages (``{"side": "pyproject.toml: [tool.acpgen] side"}``);
    #: an option not named here is named by its flag.
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Header:
    """What every generated file says about how it was made."""

    generator: str
    schema_name: str
    schema_sha256: str
    command: str

    @property
    def text(self) -> str:
        """The two comment lines that start every generated module."""
        return (
            f"# Generated by {self.generator} from {_one_line(self.schema_name)} (sha256 {self.schema_sha256}).\n"
            f"# Do not edit: regenerate with `{_one_line(self.command)}`."
        )


def _one_line(text: str) -> str:
    """Text safe to put after ``#`` on one line."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Output:
    files: dict[str, str]  # relative path (POSIX) -> text, in a fixed order
    warnings: tuple[Diagnostic, ...] = field(default=())
    schema_sha256: str = ""  # of the schema the files were generated from
    renders: dict[str, str] = field(default_factory=dict)  # relative path -> sha256 of the text before formatting
    names: Mapping[str, str] = field(default_factory=dict)  # the names lock's record of this output


def build_spec(
    options: Options, reuse: Reuse = NOTHING, locked: Mapping[str, str] | None = None
) -> tuple[Spec, tuple[Diagnostic, ...]]:
    """The spec of ``options``' schema; ``locked``: the names a previous output recorded."""
    schema = load_schema(options.schema or bundled_schema(), validated=reuse.validated_schemas)
    return spec_of(schema, options, reuse, locked)


def spec_of(
    schema: LoadedSchema, options: Options, reuse: Reuse = NOTHING, locked: Mapping[str, str] | None = None
) -> tuple[Spec, tuple[Diagnostic, ...]]:
    every_method, warnings = build_method_table(schema)
    overrides = load_names_file(options.names)
    try:
        types = build_types(schema, overrides, str(options.names) if options.names else "", locked)
    except DiagnosticError as exc:  # the schema's problems name the schema file
        raise DiagnosticError([d if d.source else d.in_source(schema.where) for d in exc.diagnostics]) from None
    every_method = _renamed_params(every_method, types.names)
    methods = select_methods(every_method, stable_only=options.stable_only)
    dropped = tuple(m for m in every_method if m not in methods)
    source = SchemaSource(name=schema.name, sha256=schema.sha256)
    spec = Spec(
        source=source,
        protocol_version=protocol_version(schema.document, options.schema, options.protocol_version),
        methods=methods,
        side=options.side,
        types=select_types(types.types, kept=methods, dropped=dropped),
        names=types.names,
    )
    capabilities, capability_warnings = build_capabilities(schema, methods)
    updates, update_warnings = session_updates(spec.types, methods)
    warnings = (*warnings, *capability_warnings, *(w.in_source(schema.where) for w in update_warnings))
    spec = replace(
        spec,
        capabilities=capabilities,
        session_updates=updates,
        variant_hints=variant_hints(schema.document, spec.types),
        stub_flows=stub_flows(methods, spec.types),
    )
    # a side's own names (``Proxy``, ...) must not be a type's: the roles are built knowing the types
    taken = frozenset(spec.type_names)
    where = options.origins.get("side", "--side")
    peer = TEST_PEERS.get(options.side)
    return (
        replace(
            spec,
            roles=build_roles(methods, options.side, taken, where, spec.stub_flows),
            test_peers=build_roles(methods, peer, taken, flows=spec.stub_flows) if peer else (),
        ),
        warnings,
    )


def _renamed_params(methods: tuple[Method, ...], names: Mapping[str, str]) -> tuple[Method, ...]:
    """The methods with their params and result types under the names the names lock gave them
    (a new ``$def`` that would take a recorded name gets another)."""

    def py(name: str | None) -> str | None:
        return names.get(def_key(name), name) if name is not None else None

    return tuple(replace(m, params_type=py(m.params_type) or m.params_type, result_type=py(m.result_type))
                 for m in methods)


def output_modules(
    side: str, stubs: Collection[str] = ("agent", "client"), models: str = "dataclasses"
) -> tuple[str, ...]:
    """The modules of a package that serves ``side``, in ``OUTPUT_MODULES`` order.

    ``stubs``: the sides whose stub server the schema supports (see ``Role.stub``). ``models``:
    the flavour; a pydantic package also has the models' support module.
    """
    served = set(served_sides(side))
    carried = served | ({TEST_PEERS[side]} if side in TEST_PEERS else set())
    names = tuple(
        name
        for name in OUTPUT_MODULES
        if set(MODULE_SIDES.get(name, ())) <= (carried if name in PEER_MODULES else served)
        and (name not in STUB_MODULES or STUB_MODULES[name] in stubs)
    )
    if models == "pydantic":
        at = names.index("models.py")
        names = (*names[:at], SUPPORT_MODULE, *names[at:])
    return names


def generate(
    options: Options,
    reuse: Reuse = NOTHING,
    *,
    only: Collection[str] | None = None,
    locked: Mapping[str, str] | None = None,
) -> Output:
    """Render every output file in memory. Raises :class:`DiagnosticError` on bad input.

    ``reuse`` lets a run skip validation and formatting that an earlier run already did on the
    same bytes; the output is the same with or without it. ``only`` limits rendering to the named
    modules (e.g. ``{"agent.py"}``), for tools and tests that need a part of the package quickly.
    ``locked``: the names the output's manifest records, which this run keeps (see
    :mod:`acpgen.model.namelock`); None names everything by the rules.
    """
    check_options(options)
    schema = load_schema(options.schema or bundled_schema(), validated=reuse.validated_schemas)
    spec, warnings = spec_of(schema, options, reuse, locked)
    header = Header(
        generator=f"acpgen {__version__}",
        schema_name=spec.source.name,
        schema_sha256=spec.source.sha256,
        command=options.command or regenerate_command(options),
    )
    context = {"spec": spec, "header": header, "package": options.package, "flavour": options.models}
    renderer = _Renderer(options.templates, header, context, reuse)
    root = options.package.replace(".", "/")
    files: dict[str, str] = {}
    renders: dict[str, str] = {}
    stubs = {r.side for r in (*spec.roles, *spec.test_peers) if r.stub}
    for name in output_modules(spec.side, stubs=stubs, models=options.models):
        if only is None or name in only:
            path = f"{root}/{name}"
            files[path], renders[path] = renderer.module(name, path)
    for role in spec.other_roles:  # proxy.py, ...: one module per side beyond agent and client
        name = f"{role.module}.py"
        if only is None or name in only:
            path = f"{root}/{name}"
            files[path], renders[path] = renderer.module(name, path, template=OTHER_SIDE_TEMPLATE, role=role)
    for name, text in STATIC_FILES.items():
        files[f"{root}/{name}"] = text
        renders[f"{root}/{name}"] = sha256_text(text)
    # the schema, byte for byte, for `acpgen diff --out` once the schema file is replaced
    files[schema_copy_path(options.package)] = schema.text
    renders[schema_copy_path(options.package)] = sha256_text(schema.text)
    return Output(files=files, warnings=warnings, schema_sha256=spec.source.sha256, renders=renders, names=spec.names)


class _Renderer:
    """Renders modules in black's style.

    A built-in template emits black's style itself: black, pinned, would spend seconds agreeing
    with it (tests hold every built-in module to black, for the releases and for ``$def``, field
    and method names of 80 characters). A module that reads a user's template is rendered plainly
    and formatted by black; so would be one with a line :mod:`acpgen.render.layout` cannot lay out
    (raised as :class:`Unfitted`, or left too long with a bracket black would split at): without
    black, the error names that line.
    """

    def __init__(self, templates: Path | None, header: Header, context: dict[str, object], reuse: Reuse) -> None:
        self.templates, self.header, self.context, self.reuse = templates, header, context, reuse
        self.env = make_environment(templates)
        self.plain_env: jinja2.Environment | None = None

    def module(self, name: str, path: str, template: str | None = None, **context: object) -> tuple[str, str]:
        """The module's text and the sha256 of its render (the text before formatting).

        ``template`` defaults to ``<name>.jinja``; ``context`` adds to the template's variables.
        """
        template = template or f"{name}.jinja"
        context = {**self.context, **context}
        if self.context["flavour"] == "pydantic" and name in PYDANTIC_MODULES:
            return self._pydantic_module(name, path)
        if name in RUNTIME_MODULES and not (self.templates and (self.templates / template).is_file()):
            text = f"{self.header.text}\n{runtime_source(name)}"
            return text, sha256_text(text)
        mine = reads_user_templates(self.env, template, self.templates)
        unfitted = ""
        if mine is None:
            try:
                text = relayout(self.env.get_template(template).render(context))
            except Unfitted as exc:
                unfitted = str(exc)
            else:
                overlong = overlong_line(text)
                if overlong is None:
                    return self.reuse.parsed(text, path), sha256_text(text)
                number, line = overlong
                why = f"{path}:{number}: acpgen cannot lay out `{_excerpt(line)}` itself (it is left to black)"
                return self.reuse.format(text, path, why), sha256_text(text)
        self.plain_env = self.plain_env or make_environment(self.templates, black_style=False)
        text = self.plain_env.get_template(template).render(context)
        if mine is not None:
            why = f"{path}: this module reads your template {(self.templates or Path()) / mine} (its layout is left to black)"
        else:
            number = next((n for n, line in enumerate(text.split("\n"), 1) if line.strip() == unfitted.strip()), 0)
            why = f"{path}:{number}: acpgen cannot lay out `{_excerpt(unfitted)}` itself (it is left to black)"
        return self.reuse.format(text, path, why), sha256_text(text)


    def _pydantic_module(self, name: str, path: str) -> tuple[str, str]:
        """The pydantic flavour's ``models.py`` (by datamodel-code-generator, then black where its
        layout is not black's) and its support module (copied, like a runtime module)."""
        if name == SUPPORT_MODULE:
            text = f"{self.header.text}\n{support_source()}"
            return text, sha256_text(text)
        spec = self.context["spec"]
        assert isinstance(spec, Spec)
        body, footer = render_models(spec, self.header.text, self.env)
        render = sha256_text(body + footer)
        known = self.reuse.outputs.get(render)
        if known is None:
            known = ensure_parses(black_where_needed(body, format_python) + footer, path)
        return known, render


def _excerpt(line: str, width: int = 60) -> str:
    """The start of a code line, for an error message."""
    text = line.strip()
    return text if len(text) <= width else text[: width - 3] + "..."


#: The modules the pydantic flavour makes its own way.
PYDANTIC_MODULES = frozenset({"models.py", SUPPORT_MODULE})


#: How an option is named in an error when the caller says nothing else: its flag.
FLAGS = {
    "package": "--package",
    "side": "--side",
    "templates": "--templates",
    "models": "--models",
    "protocol_version": "--protocol-version",
}


def check_options(options: Options) -> None:
    """Raise :class:`DiagnosticError` for an option no run can use, naming where it came from
    (``options.origins``, else its flag). A ``side`` is checked once the schema is read."""
    where = {**FLAGS, **options.origins}
    problem = package_problem(options.package)
    if problem:
        raise DiagnosticError([error(None, f"{where['package']} {options.package!r} {problem}")])
    if options.protocol_version is not None and version_problem(options.protocol_version):
        shown = where["protocol_version"]
        problem = version_problem(options.protocol_version)
        raise DiagnosticError([error(None, f"{shown} {options.protocol_version!r} is not a protocol version: {problem}")])
    if options.models not in FLAVOURS:
        raise DiagnosticError([error(None, f"{where['models']} {options.models!r} is not one of {', '.join(FLAVOURS)}")])
    if options.models == "pydantic" and not _has_datamodel_code_generator():
        raise DiagnosticError([error(None, INSTALL_HINT)])
    if options.templates is not None and not options.templates.is_dir():
        raise DiagnosticError([error(None, f"{where['templates']} {str(options.templates)!r} is not a folder")])


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
        protocol_version=options.protocol_version,
    )

