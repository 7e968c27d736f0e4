"""The layout of a generated package: its root shows the API, the runtime is in the rooms of one
private package (``_runtime/``), and a package made before the rooms is regenerated into them.

Every public entry point is imported and run from a vendored copy (a dotted package in a user's
``src/``), in both flavours of models, with one protocol version and two, for one side and both:
each combination once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import DATA

from acpgen.render.modules import BY_NAME, MODULES, RUNTIME_PACKAGE, Source
from acpgen.schema.bundled import bundled_schema

BEFORE = DATA / "before-rooms" / "manifest.json"  # the acpgen-manifest.json of the package
PUBLIC = {"__init__.py", "models.py", "agent.py", "client.py", "builders.py", "methods.py", "session.py", "pair.py",
          "versions.py", "inspect.py", "conformance.py", "stub_agent.py", "stub_client.py"}
DATA_MODULES = {"_models_codec.py", "_stub_data.py", "_session_data.py"}
STATIC = {"py.typed", "acpgen-manifest.json", "acpgen-schema.json"}


def root_listing(package: Path) -> set[str]:
    return {p.name for p in package.iterdir() if p.name != "__pycache__"}


def test_regenerating_a_package_made_before_the_rooms_moves_its_private_modules(cli, tmp_path):
    """The package as committed before the rooms (its manifest; each file it lists stands for what
    acpgen wrote): ``acpgen diff`` finds nothing that changes for code importing it, and a
    regeneration writes the runtime into its rooms, removes every old module it wrote, keeps a file
    it did not write, and keeps every name the lock recorded."""
    src = tmp_path / "src"
    package = src / "acp_bindings"
    package.mkdir(parents=True)
    old = json.loads(BEFORE.read_text())
    for rel in old["files"]:
        (src / rel).write_text("# written by acpgen before the rooms\n")
    (package / "acpgen-manifest.json").write_text(BEFORE.read_text())
    (package / "acpgen-schema.json").write_bytes(bundled_schema().read_bytes())
    (package / "mine.py").write_text("# mine\n")
    flat = {rel.split("/", 1)[1] for rel in old["files"]}

    diff = cli("diff", "--out", src, "--format", "json", "--fail-on", "any")
    assert (diff.exit_code, json.loads(diff.stdout)) == (0, []), diff.stderr  # nothing moves for its users

    result = cli("generate", "--out", src)
    assert result.exit_code == 0, result.stderr
    moved = [m for m in MODULES if m.room is not None and m.name in flat]
    assert len(moved) > 40  # the runtime's private modules were at the root
    assert [m.name for m in moved if (package / m.name).exists()] == []  # none left behind
    assert [m.path for m in moved if not (package / m.path).is_file()] == []
    assert "removed" in result.stderr and str(len(moved)) in result.stderr, result.stderr
    assert (package / "mine.py").read_text() == "# mine\n"
    listing = root_listing(package)
    assert listing == PUBLIC | DATA_MODULES | STATIC | {RUNTIME_PACKAGE, "mine.py"}
    new = json.loads((package / "acpgen-manifest.json").read_text())
    assert old["names"].items() <= new["names"].items()  # the names lock carried over
    assert new["options"] == old["options"] | {"out": new["options"]["out"]}
    assert cli("check", "--out", src).exit_code == 0
    turn = run_module(src, "acp_bindings.stub_client", "--", sys.executable, "-m", "acp_bindings.stub_agent")
    assert turn.stdout.splitlines()[-1] == '{"stopReason":"end_turn"}', turn.stdout


def run_module(src: Path, module: str, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    """``python -m module args`` with ``src`` on the path; fails unless it exits ``code``."""
    command = [sys.executable, *(("-c",) if module == "-c" else ("-m", module)), *args]
    done = subprocess.run(command, check=False, capture_output=True, text=True, cwd=src.parent,
                          env={**os.environ, "PYTHONPATH": str(src)}, timeout=120)
    assert done.returncode == code, (module, done.stdout[-2000:], done.stderr[-2000:])
    return done


VENDORED = "myproject._vendor.acp"

#: Imports every public module of a vendored package (and of each version's subpackage), its root's
#: API, and the names a user sees of the runtime; prints them for the test to read.
IMPORTS = """
import importlib, pathlib, pickle, sys
import {package} as acp
from {package} import *
root = pathlib.Path(acp.__file__).parent
public = sorted(p.stem for p in root.glob("*.py") if not p.stem.startswith("_"))
versions = sorted(p.name for p in root.glob("v[0-9]*") if p.is_dir())
for name in public:
    importlib.import_module(f"{package}.{{name}}")
for version in versions:
    for p in sorted((root / version).glob("*.py")):
        if not p.stem.startswith("_"):
            importlib.import_module(f"{package}.{{version}}.{{p.stem}}")
error = acp.RequestError(-32602, "bad params")
again = pickle.loads(pickle.dumps(error))
assert type(again) is acp.RequestError and again.code == -32602, again
print(" ".join(public))
print(" ".join(versions))
names = (type(error).__module__ + "." + type(error).__qualname__, acp.ConnectionClosed.__module__)
print(*names, acp._rpc.__name__.removeprefix("{package}."))
"""


@pytest.mark.parametrize(
    "models, schemas, side",
    [
        ("dataclasses", ("v1-schema.json", "v2-schema.json"), "both"),  # two versions, both sides
        ("pydantic", (), "agent"),  # one version (the bundled schema), one side
    ],
)
def test_every_public_entry_point_runs_from_a_vendored_copy(cli, tmp_path, models, schemas, side):
    """The package in ``src/myproject/_vendor/acp/``: every public module imports, ``from acp import
    *`` works, an error pickles, and a prompt turn runs through the stub client, the inspector and
    the stub agent, each started as ``python -m`` (the kit's command line answers too); its root
    holds the public modules, the generated data and one private runtime package."""
    src = tmp_path / "src"
    (src / "myproject").mkdir(parents=True)
    (src / "myproject" / "__init__.py").write_text("")
    args = [a for name in schemas for a in ("--schema", DATA / "sdk-schemas" / name)]
    result = cli("generate", "--out", src, "--package", VENDORED, "--models", models, "--side", side, *args)
    assert result.exit_code == 0, result.stderr
    package = src / "myproject" / "_vendor" / "acp"
    listing = root_listing(package)
    assert len(listing) <= 20 and RUNTIME_PACKAGE in listing, sorted(listing)
    assert listing - {RUNTIME_PACKAGE, "v1", "v2"} <= PUBLIC | DATA_MODULES | STATIC, sorted(listing)
    runtime_modules = {m.name for m in MODULES if m.source is Source.RUNTIME and m.room is not None}
    assert not listing & runtime_modules  # no private runtime module at the root

    imported = run_module(src, "-c", IMPORTS.format(package=VENDORED)).stdout.splitlines()
    public, versions, names = imported
    expected = {"agent", "client", "pair", "stub_agent", "stub_client", "versions", "conformance"}
    assert expected | ({"inspect"} if side == "both" else set()) <= set(public.split()), public
    assert versions.split() == [f"v{n}" for n in (1, 2)][: len(schemas)] if schemas else versions == ""
    # the errors a user sees are named where the root exports them; the runtime's facade is in its room
    assert names.split() == [f"{VENDORED}.RequestError", VENDORED, BY_NAME["_rpc.py"].dotted]

    inspector = ("-m", f"{VENDORED}.inspect", "--", sys.executable) if side == "both" else ()  # it needs both sides
    turn = run_module(src, f"{VENDORED}.stub_client", "--", sys.executable, *inspector, "-m", f"{VENDORED}.stub_agent")
    assert turn.stdout.splitlines()[-1] == '{"stopReason":"end_turn"}', turn.stdout
    assert "usage:" in run_module(src, f"{VENDORED}.conformance", "--help").stdout
