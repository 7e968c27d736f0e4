"""One package for several protocol versions: ``acpgen generate --schema V1 --schema V2``.

Each schema makes the package of its protocol version as a subpackage, ``<package>/v1/`` and
``<package>/v2/``: what ``--package <package>.v1`` would make of it alone (its names, its
schema's copy), but for the runtime, which the versions share. The package root has one copy of
it (``<package>/_rpc.py``, ...), which each version's modules import (``from .._rpc import
...``, see :mod:`acpgen.render.relocate`): a connection, its errors and its codec are the same
classes whichever version it speaks. The models register their decoders with the shared codec by
class, so two versions' types of the same name never meet.

The root also holds the API of one version, the root version (:func:`root_version`: the one it
held before while still configured, else the lowest): its ``__init__`` exports what that
version's package alone exports, and each public module of the version (``models.py``,
``agent.py``, ...) has a module at the root that re-exports it (``from .v1.models import *``), so
``<package>.models.X is <package>.v1.models.X``, and adding a version to a package breaks no
import of the package it was. Besides, the root has what ties the versions together:
``VERSIONS`` and ``ROOT_VERSION`` in ``__init__.py``; ``stub_agent.py``, which serves every
version on one connection through the router (``versions.serve_versions``) and keeps the root
version's ``StubAgent``; ``stub_client.py``, which runs its turn in the version the agent answers
(``--protocol-version N``: the version to ask for); ``inspect.py``, which checks a
connection against the version its first ``initialize`` asks for; and ``conformance.py``, which
holds an agent to the version it answers.

The names lock records each version's names under ``v<N>/``, a single-version package's
unprefixed: :func:`previous_package` reads either as each version's lock, so a version keeps its
names from a package of its own to one of several and back. The manifest records the versions
and the root version."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from .diagnostics import Diagnostic, DiagnosticError, error
from .model.spec import Spec
from .options import Options
from .output.manifest import SCHEMA_COPY_NAME, Manifest, sha256_text
from .output.reuse import NOTHING, Reuse
from .pipeline import (
    SHARED_MODULES,
    STATIC_FILES,
    Header,
    Output,
    Renderer,
    generate,
    output_modules,
    spec_of,
)
from .render.modules import BY_NAME, room_inits
from .schema.bundled import bundled_schema
from .schema.loader import load_schema
from .schema.protocol import how_stated, protocol_version
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


#: The package root's tools of several versions: one template each, under ``versions/``.
TOOL_MODULES = ("stub_agent.py", "stub_client.py", "inspect.py", "conformance.py")

_VERSION_FOLDER = re.compile(r"v[0-9]+")


def generate_versions(
    options: Options,
    schemas: Sequence[Path],
    reuse: Reuse = NOTHING,
    *,
    locked: Mapping[int, Mapping[str, str]] | None = None,
    previous_root: int | None = None,
) -> Output:
    """Every file of the package of ``schemas``, one subpackage per protocol version, and at the
    root the API of the root version (:func:`root_version` of the versions and ``previous_root``).

    Each schema is of the version ``options.protocol_versions`` gives it (in the same order), else
    of the one it states. ``locked``: each version's names lock (see :func:`previous_package`);
    None names everything by the rules. Raises :class:`DiagnosticError` when two schemas are of
    the same version.
    """
    found: dict[int, Path] = {}
    specs: dict[int, Spec] = {}
    versions: list[Version] = []
    given = dict(zip(schemas, options.protocol_versions))
    for schema in schemas:
        sub = replace(options, schema=schema, schemas=(), protocol_version=given.get(schema), protocol_versions=())
        loaded = load_schema(schema, validated=reuse.validated_schemas)
        number = protocol_version(loaded.document, schema, given.get(schema))
        if number in found:
            raise DiagnosticError([error(None, _one_version_twice(found[number], schema, number, bool(given)))])
        spec, _ = spec_of(loaded, sub, reuse, _lock(locked, number))
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
        sub = replace(options, schema=found[number], package=f"{options.package}.{module}", schemas=(),
                      protocol_version=number, protocol_versions=())
        output = generate(sub, reuse, locked=_lock(locked, number), shared_runtime=True)
        files.update(output.files)
        renders.update(output.renders)
        names.update({f"{module}/{k}": v for k, v in output.names.items()})
        warnings.extend(output.warnings)
        shas.append(output.schema_sha256)
    header = Header(
        generator=f"acpgen {__version__}",
        schema_name=" + ".join(found[n].name for n in sorted(found)),
        schema_sha256=sha256_text("\n".join(shas)),
        command=options.command or "acpgen generate",
    )
    root = options.package.replace(".", "/")
    top = next(v for v in versions if v.number == root_version(sorted(found), previous_root))
    newest = {"spec": specs[versions[-1].number], "header": header, "package": options.package,
              "flavour": options.models}
    renderer = Renderer(options.templates, header, newest, reuse)
    shared = _shared_modules(specs.values(), options.models)
    for rel in room_inits([BY_NAME[name].path for name in shared]):  # the shared runtime's packages
        files[f"{root}/{rel}"], renders[f"{root}/{rel}"] = renderer.room_init(rel)
    for name in shared:
        path = f"{root}/{BY_NAME[name].path}"
        files[path], renders[path] = renderer.module(name, path)
    for name, text in STATIC_FILES.items():
        files[f"{root}/{name}"], renders[f"{root}/{name}"] = text, sha256_text(text)
    tools = [name for name in TOOL_MODULES if _has_tool(name, files, root, versions)]
    for name in tools:
        # laid out as any built-in template is: no black needed
        files[f"{root}/{name}"], renders[f"{root}/{name}"] = renderer.module(
            f"versions/{name}", f"{root}/{name}", versions=versions, root=top)
    # the root version's API at the root: its __init__ as a package of that version alone has it,
    # and each of its public modules as one that re-exports the version's
    api = Renderer(options.templates, header, {**newest, "spec": specs[top.number]}, reuse)
    files[f"{root}/__init__.py"], renders[f"{root}/__init__.py"] = api.module(
        "versions/__init__.py", f"{root}/__init__.py", versions=versions, root=top)
    for name in root_api_modules(files, root, top, tools):
        files[f"{root}/{name}"], renders[f"{root}/{name}"] = api.module(
            "versions/root_module.py", f"{root}/{name}", root=top, stem=name.removesuffix(".py"))
    return Output(files=files, warnings=tuple(warnings), schema_sha256=header.schema_sha256,
                  renders=renders, names=names, versions=tuple(v.number for v in versions), root_version=top.number)


def root_api_modules(files: Mapping[str, str], root: str, top: Version, tools: Collection[str]) -> list[str]:
    """The public modules of the root version's subpackage (``models.py``, ``agent.py``, ...)
    that the package root re-exports: all but its ``__init__`` and the root's own tools."""
    prefix = f"{root}/{top.module}/"
    names = [path[len(prefix):] for path in files if path.startswith(prefix)]
    return [n for n in names if n.endswith(".py") and "/" not in n and not n.startswith("_") and n not in tools]


def _has_tool(name: str, files: Mapping[str, str], root: str, versions: Sequence[Version]) -> bool:
    """The root has the several-version tool ``name``: a stub agent when some version has one,
    likewise a stub client; the agent kit when every version has one; the inspector when the
    router is there and every version has one."""
    if name == "stub_agent.py":
        return any(v.agent_stub for v in versions)
    if name == "stub_client.py":
        return any(v.client_stub for v in versions)
    if name == "conformance.py":
        return all(f"{root}/{v.module}/conformance.py" in files for v in versions)
    return f"{root}/{BY_NAME['_versions.py'].path}" in files and all(f"{root}/{v.module}/inspect.py" in files for v in versions)


def _lock(locked: Mapping[int, Mapping[str, str]] | None, number: int) -> Mapping[str, str] | None:
    """Version ``number``'s names lock; empty for a version the previous package did not have."""
    return None if locked is None else locked.get(number, {})


@dataclass(frozen=True)
class Previous:
    """What a package's previous output says of its versions."""

    locks: dict[int, dict[str, str]]  # each version's names lock (its part of the manifest's names)
    root: int | None  # the version whose API its root held; None: no version's (an earlier acpgen's)


def previous_package(manifest: Manifest, out: Path, package: str, recorded_schema: Path | None) -> Previous:
    """What the manifest of ``package`` under ``out`` records of its versions. A single-version
    package records its names unprefixed, a package of several each version's under ``v<N>/``.

    An earlier acpgen's manifest records no versions: a package of several has a ``v<N>/`` folder
    per version and held none at its root; a single-version package is of the version its
    recorded ``--protocol-version`` gives, else that its schema's copy states (its meta file
    read beside ``recorded_schema``, the schema it was generated from, when that is there).
    """
    locks: dict[int, dict[str, str]] = {}
    single: dict[str, str] = {}
    for key, name in manifest.names.items():
        head, _, rest = key.partition("/")
        if _VERSION_FOLDER.fullmatch(head):
            locks.setdefault(int(head[1:]), {})[rest] = name
        else:
            single[key] = name
    root = PurePosixPath(package.replace(".", "/"))
    several = bool(locks) or any(p.parent.parent == root and _VERSION_FOLDER.fullmatch(p.parent.name)
                                 for p in map(PurePosixPath, manifest.files))
    if several:
        return Previous(locks, manifest.root_version)
    number = manifest.root_version
    if number is None:
        recorded = manifest.options.protocol_version if manifest.options is not None else None
        number = recorded if isinstance(recorded, int) else _copy_version(out / str(root), recorded_schema)
    return Previous({number: single} if number is not None else {}, number)


def schema_version(schema: Path | None, given: int | None) -> int | None:
    """The protocol version ``schema`` (None: the bundled one) is generated as; None when it
    cannot be read (generating it says why)."""
    path = schema or bundled_schema()
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return protocol_version(document, schema, given) if isinstance(document, dict) else None
    except (OSError, ValueError, DiagnosticError):
        return None


def _copy_version(folder: Path, recorded_schema: Path | None) -> int | None:
    """The protocol version the schema's copy in a package's ``folder`` states, its meta file
    read beside ``recorded_schema`` when that is there."""
    beside = recorded_schema if recorded_schema is not None and recorded_schema.is_file() else None
    try:
        document = json.loads((folder / SCHEMA_COPY_NAME).read_text(encoding="utf-8"))
        return protocol_version(document, beside) if isinstance(document, dict) else None
    except (OSError, ValueError, DiagnosticError):
        return None


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
