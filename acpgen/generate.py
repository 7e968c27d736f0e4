"""The pure core: options in, ``{relative path: text}`` out. Only the CLI touches the disk."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from . import __version__
from .diagnostics import Diagnostic, DiagnosticError, error
from .ir import SchemaSource, Spec
from .layout import Unfitted
from .loader import load_schema
from .manifest import sha256_text
from .methods import build_method_table
from .render import make_environment, reads_user_templates
from .resources import bundled_schema
from .reuse import NOTHING, Reuse
from .roles import build_roles, served_sides
from .selection import SIDES, select_methods, select_types
from .typebuild import build_types
from .typenames import load_names_file

DEFAULT_PACKAGE = "acp_bindings"
_PACKAGE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


#: The generated package: one template per module, named ``<module>.jinja``.
OUTPUT_MODULES = (
    "__init__.py",
    "_codec.py",
    "methods.py",
    "models.py",
    "_rpc.py",
    "agent.py",
    "client.py",
    "pair.py",
    "stub_agent.py",
    "stub_client.py",
)

#: Modules only some packages need: the sides that must all be served for the module to be emitted.
#: A module not listed here is emitted for every ``--side``.
MODULE_SIDES = {
    "agent.py": ("agent",),
    "stub_agent.py": ("agent",),
    "client.py": ("client",),
    "stub_client.py": ("client",),
    "pair.py": ("agent", "client"),
}
#: The stub servers, each emitted only when the schema has the methods it is written against.
STUB_MODULES = {"stub_agent.py": "agent", "stub_client.py": "client"}

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
    side: str = "both"  # "agent", "client" or "both": what the generated package serves
    stable_only: bool = False  # leave out unstable methods and the types only they use
    names: Path | None = None  # a user's file pinning or overriding generated names


@dataclass(frozen=True)
class Header:
    """What every generated file says about how it was made."""

    generator: str
    schema_name: str
    schema_sha256: str
    command: str


@dataclass(frozen=True)
class Output:
    files: dict[str, str]  # relative path (POSIX) -> text, in a fixed order
    warnings: tuple[Diagnostic, ...] = field(default=())
    schema_sha256: str = ""  # of the schema the files were generated from
    renders: dict[str, str] = field(default_factory=dict)  # relative path -> sha256 of the text before formatting


def build_spec(options: Options, reuse: Reuse = NOTHING) -> tuple[Spec, tuple[Diagnostic, ...]]:
    schema = load_schema(options.schema or bundled_schema(), validated=reuse.validated_schemas)
    every_method, warnings = build_method_table(schema)
    methods = select_methods(every_method, stable_only=options.stable_only)
    types = build_types(schema, load_names_file(options.names), options.names.name if options.names else "")
    dropped = tuple(m for m in every_method if m not in methods)
    source = SchemaSource(name=schema.name, sha256=schema.sha256)
    spec = Spec(
        source=source,
        protocol_version=_protocol_version(schema.document),
        methods=methods,
        side=options.side,
        types=select_types(types.types, kept=methods, dropped=dropped),
        roles=build_roles(methods, options.side),
    )
    return spec, warnings


def output_modules(side: str, stubs: Collection[str] = ("agent", "client")) -> tuple[str, ...]:
    """The modules of a package that serves ``side``, in ``OUTPUT_MODULES`` order.

    ``stubs``: the sides whose stub server the schema supports (see ``Role.stub``).
    """
    served = set(served_sides(side))
    return tuple(
        name
        for name in OUTPUT_MODULES
        if set(MODULE_SIDES.get(name, ())) <= served and (name not in STUB_MODULES or STUB_MODULES[name] in stubs)
    )


def generate(options: Options, reuse: Reuse = NOTHING, *, only: Collection[str] | None = None) -> Output:
    """Render every output file in memory. Raises :class:`DiagnosticError` on bad input.

    ``reuse`` lets a run skip validation and formatting that an earlier run already did on the
    same bytes; the output is the same with or without it. ``only`` limits rendering to the named
    modules (e.g. ``{"agent.py"}``), for tools and tests that need a part of the package quickly.
    """
    check_options(options)
    spec, warnings = build_spec(options, reuse)
    header = Header(
        generator=f"acpgen {__version__}",
        schema_name=spec.source.name,
        schema_sha256=spec.source.sha256,
        command=regenerate_command(options),
    )
    renderer = _Renderer(options.templates, {"spec": spec, "header": header, "package": options.package}, reuse)
    root = options.package.replace(".", "/")
    files: dict[str, str] = {}
    renders: dict[str, str] = {}
    for name in output_modules(spec.side, stubs={r.side for r in spec.roles if r.stub}):
        if only is None or name in only:
            path = f"{root}/{name}"
            files[path], renders[path] = renderer.module(name, path)
    for name, text in STATIC_FILES.items():
        files[f"{root}/{name}"] = text
        renders[f"{root}/{name}"] = sha256_text(text)
    return Output(files=files, warnings=warnings, schema_sha256=spec.source.sha256, renders=renders)


class _Renderer:
    """Renders modules in black's style.

    A built-in template emits black's style itself: black, pinned, would spend seconds agreeing
    with it (tests hold every built-in module to black). A module that reads a user's template,
    or has a line :func:`acpgen.layout.fit` cannot lay out, is rendered plainly and formatted by
    black.
    """

    def __init__(self, templates: Path | None, context: dict[str, object], reuse: Reuse) -> None:
        self.templates, self.context, self.reuse = templates, context, reuse
        self.env = make_environment(templates)
        self.plain_env: jinja2.Environment | None = None

    def module(self, name: str, path: str) -> tuple[str, str]:
        """The module's text and the sha256 of its render (the text before formatting)."""
        template = f"{name}.jinja"
        if not reads_user_templates(self.env, template, self.templates):
            try:
                text = self.env.get_template(template).render(self.context)
            except Unfitted:
                pass
            else:
                return self.reuse.check(text, path), sha256_text(text)
        self.plain_env = self.plain_env or make_environment(self.templates, black_style=False)
        text = self.plain_env.get_template(template).render(self.context)
        return self.reuse.format(text, path), sha256_text(text)


def check_options(options: Options) -> None:
    if not _PACKAGE_RE.match(options.package):
        raise DiagnosticError([error("", f"--package {options.package!r} is not a dotted Python name")])
    if options.side not in SIDES:
        raise DiagnosticError([error("", f"--side {options.side!r} is not one of {', '.join(SIDES)}")])
    if options.templates is not None and not options.templates.is_dir():
        raise DiagnosticError([error("", f"--templates {str(options.templates)!r} is not a folder")])


def regenerate_command(options: Options) -> str:
    """The command that remakes the output, with no absolute path in it."""
    parts = ["acpgen", "generate"]
    if options.schema is not None:
        parts += ["--schema", options.schema.name]
    if options.package != DEFAULT_PACKAGE:
        parts += ["--package", options.package]
    if options.side != "both":
        parts += ["--side", options.side]
    if options.stable_only:
        parts.append("--stable-only")
    if options.templates is not None:
        parts += ["--templates", options.templates.name]
    if options.names is not None:
        parts += ["--names", options.names.name]
    return " ".join(parts)


def _protocol_version(document: dict[str, object]) -> int:
    """The protocol version the schema states (a ``const`` on ``ProtocolVersion``), else 1."""
    defs = document.get("$defs")
    node = defs.get("ProtocolVersion") if isinstance(defs, dict) else None
    if isinstance(node, dict):
        for key in ("const", "default"):
            value = node.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return 1
