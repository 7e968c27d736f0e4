"""Packages of protocol version 2 (the corpus's v2 drafts and the TypeScript SDK's newer one),
generated once per test session, and the stub processes they run."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from acpgen.pipeline import Options
from support import CORPUS, DATA, write_package
from support.run_cache import generated_files

SDK_SCHEMAS = DATA / "sdk-schemas"
#: The v2 drafts the stub tests run: the first whose turns end through state updates, the first
#: with v2's names (``UpdateSessionNotification``), the first whose permission requests have a
#: ``title``, the newest release's two, and the TypeScript SDK's (which has no meta.json: the
#: version is given).
V2_SCHEMAS = {
    "v0.13.8": CORPUS / "v0.13.8--v2-schema.json",
    "v1.2.0": CORPUS / "v1.2.0--v2-schema.json",
    "v1.3.0": CORPUS / "v1.3.0--v2-schema.json",
    "v1.7.0": CORPUS / "v1.7.0--v2-schema.json",
    "v1.7.0 unstable": CORPUS / "v1.7.0--v2-schema.unstable.json",
    "sdk": SDK_SCHEMAS / "v2-schema.json",
    "sdk unstable": SDK_SCHEMAS / "v2-schema.unstable.json",
}
_FOLDER = Path(tempfile.mkdtemp(prefix="acpgen-v2-"))
atexit.register(shutil.rmtree, _FOLDER, ignore_errors=True)


def _package_name(release: str) -> str:
    return "v2_" + re.sub(r"\W", "_", release)


@functools.cache
def v2_package(release: str) -> tuple[Path, str]:
    """The folder holding the package of the release ``release`` (a key of :data:`V2_SCHEMAS`),
    and the package's name."""
    schema = V2_SCHEMAS[release]
    version = 2 if schema.parent == SDK_SCHEMAS else None
    name = _package_name(release)
    folder = _FOLDER / name
    write_package(generated_files(Options(schema=schema, package=name, protocol_version=version)), folder)
    return folder, name


def env_for(*folders: Path) -> dict[str, str]:
    path = os.pathsep.join([*(str(f) for f in folders), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "PYTHONPATH": path}


def stub(package: str, side: str) -> list[str]:
    return [sys.executable, "-m", f"{package}.stub_{side}"]


def run_stub_client(release: str, cwd: Path, *args: str, agent: list[str] | None = None,
                    folders: tuple[Path, ...] = ()) -> subprocess.CompletedProcess[str]:
    """The release's stub client against ``agent`` (default: the release's stub agent)."""
    folder, package = v2_package(release)
    command = [*stub(package, "client"), *args, "--", *(agent or stub(package, "agent"))]
    return subprocess.run(command, cwd=cwd, env=env_for(folder, *folders), capture_output=True, text=True,
                          timeout=60, check=False)


@functools.cache
def several_versions_package() -> Path:
    """The folder holding ``both``: the package of the TypeScript SDK's v1 and v2 schemas (what
    ``acpgen generate --schema v1-schema.json --schema v2-schema.json --package both`` writes)."""
    from acpgen.versioned import generate_versions

    schemas = _FOLDER / "both-schemas"
    schemas.mkdir()
    for name in ("v1-schema.json", "v2-schema.json"):
        shutil.copy(SDK_SCHEMAS / name, schemas / name)
    (schemas / "v2-meta.json").write_text('{"version": 2}\n')
    given = [schemas / "v1-schema.json", schemas / "v2-schema.json"]
    folder = _FOLDER / "both"
    write_package(generate_versions(Options(package="both"), given).files, folder)
    return folder


@functools.cache
def guide_versions_package() -> Path:
    """The folder holding ``both`` as the "Two protocol versions" guide makes it: the bundled
    schema (version 1) and the v2 draft of the spec's release v1.7.0 (version 2, by the
    ``meta.json`` beside it), what ``acpgen generate --package both --schema schema.unstable.json
    --schema v2/schema.json`` writes."""
    from acpgen.versioned import generate_versions

    schemas = _FOLDER / "guide-schemas" / "v2"
    schemas.mkdir(parents=True)
    shutil.copy(CORPUS / "v0.12.2--schema.unstable.json", schemas.parent / "schema.unstable.json")
    shutil.copy(CORPUS / "v1.7.0--v2-schema.json", schemas / "schema.json")
    shutil.copy(CORPUS / "v1.7.0--v2-meta.json", schemas / "meta.json")
    folder = _FOLDER / "guide-both"
    write_package(generate_versions(Options(package="both"), [schemas.parent / "schema.unstable.json",
                                                               schemas / "schema.json"]).files, folder)
    return folder


@contextlib.contextmanager
def imported_from(package: str, folder: Path) -> Iterator[None]:
    """``package`` imported from ``folder`` while inside: two packages of one name (the guide's
    ``both`` and the TypeScript SDK schemas' ``both``) may be tested in one process, and neither
    leaves its modules behind for the other."""
    def ours(name: str) -> bool:
        return name == package or name.startswith(f"{package}.")

    before = {name: module for name, module in sys.modules.items() if ours(name)}
    for name in before:
        del sys.modules[name]
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if ours(name)]:
            del sys.modules[name]
        sys.modules.update(before)
