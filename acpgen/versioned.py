"""One package for several protocol versions: ``acpgen generate --schema V1 --schema V2``.

Each schema makes the package of its protocol version as a subpackage, ``<package>/v1/`` and
``<package>/v2/``: what ``--package <package>.v1`` would make of it alone (its names, its
schema's copy), but for the runtime, which the versions share. The package root has one copy of
it (``<package>/_rpc.py``, ...), which each version's modules import (``from .._rpc import
...``, see :mod:`acpgen.render.relocate`): a connection, its errors and its codec are the same
classes whichever version it speaks. The models register their decoders with the shared codec by
class, so two versions' types of the same name never meet. The root also has what ties the
versions together: ``__init__.py`` (``VERSIONS``), ``stub_agent.py``, which serves every version
on one connection through the router (``_versions.serve_versions``), ``stub_client.py``, whose
``--protocol-version N`` picks the version it speaks, ``inspect.py``, which checks a
connection against the version its first ``initialize`` asks for, and ``conformance.py``, which
holds an agent to the version it answers. The names lock records each
version's names under ``v<N>/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .diagnostics import Diagnostic, DiagnosticError, error
from .model.spec import Spec
from .output.manifest import sha256_text
from .output.reuse import NOTHING, Reuse
from .pipeline import (
    SHARED_MODULES,
    STATIC_FILES,
    Header,
    Options,
    Output,
    Renderer,
    build_spec,
    generate,
    output_modules,
)
from .schema.protocol import how_stated
from .version import __version__


@dataclass(frozen=True)
class Version:
    """One version of a several-version package, as the root's templates print it."""

    number: int
    module: str  # "v2": the subpackage
    agent_stub: bool  # the subpackage has a stub agent
    client_stub: bool  # ... and a stub client
    asks: bool  # its stub client takes --protocol-version (its turns end through state updates)
    login: bool = False  # its stub agent takes --auth-method (it can require a login)

    @property
    def stub_options(self) -> tuple[str, ...]:
        """The options its stub agent takes besides ``delay``, which the root's passes on: its
        ``--ask-permission``, its ``--auth-method``."""
        return (("ask_permission",) if self.asks else ()) + (("auth_methods",) if self.login else ())

    @property
    def stub_arguments(self) -> tuple[str, ...]:
        """The root's connector's arguments to its ``StubAgent``: ``delay=delay``,
        ``all_updates=all_updates``, ``check=check`` and each option it takes (:attr:`stub_options`)."""
        return ("delay=delay", "all_updates=all_updates", "check=check", *(f"{name}={name}" for name in self.stub_options))


#: The package root's modules: one template each, under ``versions/``.
ROOT_MODULES = ("__init__.py", "stub_agent.py", "stub_client.py", "inspect.py", "conformance.py")


def generate_versions(
    options: Options,
    schemas: Sequence[Path],
    reuse: Reuse = NOTHING,
    *,
    locked: Mapping[str, str] | None = None,
) -> Output:
    """Every file of the package of ``schemas``, one subpackage per protocol version.

    Each schema is of the version ``options.protocol_versions`` gives it (in the same order), else
    of the one it states. Raises :class:`DiagnosticError` when two schemas are of the same version.
    """
    found: dict[int, Path] = {}
    specs: dict[int, Spec] = {}
    versions: list[Version] = []
    given = dict(zip(schemas, options.protocol_versions))
    for schema in schemas:
        spec, _ = build_spec(replace(options, schema=schema, schemas=(), protocol_version=given.get(schema),
                                     protocol_versions=()), reuse)
        number = spec.protocol_version
        if number in found:
            raise DiagnosticError([error(None, _one_version_twice(found[number], schema, number, bool(given)))])
        specs[number] = spec
        stubs = spec.stub_sides
        flows = spec.stub_flows
        versions.append(Version(number, f"v{number}", "agent" in stubs, "client" in stubs, flows is not None,
                                flows is not None and flows.login is not None))
        found[number] = schema
    versions.sort(key=lambda v: v.number)
    files: dict[str, str] = {}
    renders: dict[str, str] = {}
    names: dict[str, str] = {}
    warnings: list[Diagnostic] = []
    shas = []
    for number in sorted(found):
        module = f"v{number}"
        prefix = f"{module}/"
        mine = {k[len(prefix):]: v for k, v in (locked or {}).items() if k.startswith(prefix)}
        sub = replace(options, schema=found[number], package=f"{options.package}.{module}", schemas=(),
                      protocol_version=number, protocol_versions=())
        output = generate(sub, reuse, locked=mine if locked is not None else None, shared_runtime=True)
        files.update(output.files)
        renders.update(output.renders)
        names.update({prefix + k: v for k, v in output.names.items()})
        warnings.extend(output.warnings)
        shas.append(output.schema_sha256)
    header = Header(
        generator=f"acpgen {__version__}",
        schema_name=" + ".join(found[n].name for n in sorted(found)),
        schema_sha256=sha256_text("\n".join(shas)),
        command=options.command or "acpgen generate",
    )
    root = options.package.replace(".", "/")
    newest = {"spec": specs[versions[-1].number], "header": header, "package": options.package,
              "flavour": options.models}
    renderer = Renderer(options.templates, header, newest, reuse)
    for name in _shared_modules(specs.values(), options.models):
        files[f"{root}/{name}"], renders[f"{root}/{name}"] = renderer.module(name, f"{root}/{name}")
    for name, text in STATIC_FILES.items():
        files[f"{root}/{name}"], renders[f"{root}/{name}"] = text, sha256_text(text)
    for name in ROOT_MODULES:
        if name == "stub_agent.py" and not any(v.agent_stub for v in versions):
            continue
        if name == "stub_client.py" and not any(v.client_stub for v in versions):
            continue
        if name == "inspect.py" and not (
            f"{root}/_versions.py" in files and all(f"{root}/{v.module}/inspect.py" in files for v in versions)):
            continue
        if name == "conformance.py" and not all(f"{root}/{v.module}/conformance.py" in files for v in versions):
            continue
        # laid out as any built-in template is: no black needed
        files[f"{root}/{name}"], renders[f"{root}/{name}"] = renderer.module(
            f"versions/{name}", f"{root}/{name}", versions=versions)
    return Output(files=files, warnings=tuple(warnings), schema_sha256=header.schema_sha256,
                  renders=renders, names=names)



def root_version(configured: Sequence[int], previous: int | None) -> int:
    """The protocol version whose API a package's root holds: the one it held before (``previous``,
    from the package's manifest) while it is still configured, else the lowest configured. So adding
    a version to a package keeps its root, as the TypeScript SDK's root export stays v1 beside v2;
    removing the root's version moves the root to another one, a break ``acpgen diff`` reports."""
    return previous if previous is not None and previous in configured else min(configured)


def _one_version_twice(first: Path, second: Path, number: int, given: bool) -> str:
    """The line for two schemas of one protocol version: how each states it, and the flag that
    tells them apart when one states none."""
    both = f"--schema {first.name} and {second.name} are both of protocol version {number}"
    if given:
        return f"{both} (--protocol-version): one schema per version"
    hows = []
    for path in (first, second):
        try:
            hows.append(how_stated(json.loads(path.read_text(encoding="utf-8")), path)[1])
        except (OSError, ValueError, DiagnosticError):
            hows.append("")
    if all(hows):
        return f"{both} ({first.name}: {hows[0]}; {second.name}: {hows[1]}): one schema per version"
    silent = "neither states its own" if not any(hows) else f"{second.name if hows[0] else first.name} states none"
    return (f"{both} ({silent}): give each its version, --schema {first.name} --protocol-version N"
            f" --schema {second.name} --protocol-version M")


def _shared_modules(specs: Iterable[Spec], models: str) -> list[str]:
    """The shared modules some version needs, in the order of a package's modules."""
    names: dict[str, None] = {}
    for spec in specs:
        modules = output_modules(spec.side, spec.stub_sides, models, turns=spec.stub_flows is not None)
        names.update(dict.fromkeys(n for n in modules if n in SHARED_MODULES))
    return list(names)
