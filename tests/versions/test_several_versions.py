"""One package for several protocol versions: ``acpgen generate --schema V1 --schema V2`` (or
``schema = [...]``) writes ``<package>/v1/`` and ``<package>/v2/``, records both schemas, checks,
and its root stubs negotiate: the stub agent serves the TypeScript SDK's v1 and v2 clients, the
stub client asks for ``--protocol-version N`` against the TypeScript router."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import CORPUS, INTEROP, one_error_line, tree
from support.typecheck import mypy_strict
from support.versions import SDK_SCHEMAS, env_for

from acpgen.render.environment import RUNTIME
from acpgen.render.modules import BY_NAME, MODULES, Source, room_inits

#: The TypeScript SDK's schemas, which its peers speak: v1's states no version (1), v2's is given
#: by a meta.json the project puts beside it.
V1, V2 = "v1-schema.json", "v2-schema.json"
TS_AGENT = ["node", str(INTEROP / "ts_versions_agent.mjs")]
TS_CLIENT = ["node", str(INTEROP / "ts_versions_client.mjs")]


def files_under(folder: Path) -> list[str]:
    """The files in ``folder`` and its subfolders, as paths relative to it (bytecode aside)."""
    return [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project with both schemas (and their meta files) and the package generated from them."""
    from click.testing import CliRunner

    from acpgen.cli import main

    root = tmp_path_factory.mktemp("several")
    (root / "schemas").mkdir()
    for name in (V1, V2):
        shutil.copy(SDK_SCHEMAS / name, root / "schemas" / name)
    (root / "schemas" / "v2-meta.json").write_text('{"version": 2}\n')
    runner = CliRunner()
    import os

    here = os.getcwd()
    os.chdir(root)
    try:
        result = runner.invoke(main, ["generate", "--schema", f"schemas/{V1}", "--schema", f"schemas/{V2}",
                                      "--package", "both", "--out", "out"], catch_exceptions=False)
    finally:
        os.chdir(here)
    assert result.exit_code == 0, result.stderr
    return root


def test_the_layout_one_subpackage_per_version_over_one_runtime(project):
    package = project / "out" / "both"
    for version in (1, 2):
        assert f"PROTOCOL_VERSION = {version}\n" in (package / f"v{version}" / "methods.py").read_text()
        assert (package / f"v{version}" / "acpgen-schema.json").read_bytes() == (
            SDK_SCHEMAS / (V1 if version == 1 else V2)).read_bytes()
        # the stubs read what they take from the schema from _stub_data (and the session state of a
        # version whose turns end through state updates too); the session state of the other, from
        # _session_data
        versioned = ["_session_data.py", "_session_state.py", "_stub_agent.py", "_stub_client.py",
                     "_stub_data.py"] if version == 1 else [
            "_session_turns.py", "_stub_data.py", "_turns_agent.py", "_turns_client.py", "_turns_offers.py"]
        versioned = [BY_NAME[name].path if name in BY_NAME else name for name in versioned]
        assert sorted(files_under(package / f"v{version}")) == sorted([
            "__init__.py", "_models_codec.py", "acpgen-schema.json", "agent.py", "builders.py", "client.py",
            "conformance.py", "inspect.py", "methods.py", "models.py", "pair.py", "py.typed", "session.py", "stub_agent.py",
            "stub_client.py", *versioned, *room_inits(versioned)])
    # the shared runtime of the table of modules: every file of acpgen/runtime/ but those importing a
    # version's modules (pair.py, inspect.py, the stubs') and, in a package of the dataclass flavour,
    # the pydantic flavour's
    runtime = [m.path for m in MODULES if m.source is Source.RUNTIME and m.shared and m.flavour is None]
    own = [m.path for m in MODULES if m.source is Source.RUNTIME and (not m.shared or m.flavour == "pydantic")]
    assert sorted(runtime) == sorted(p for p in files_under(RUNTIME) if p.rsplit("/", 1)[-1] != "__init__.py"
                                     and p not in own)
    # the root: the tools of several versions, and the API of its version (v1's: the lowest) as modules
    # that re-export v1's, so that code written for a package of v1 alone imports as it did
    api = ["agent.py", "builders.py", "client.py", "methods.py", "models.py", "pair.py", "session.py"]
    assert sorted(p for p in files_under(package) if p.split("/")[0] not in ("v1", "v2")) == sorted([
        "__init__.py", "acpgen-manifest.json", "conformance.py", "inspect.py", "py.typed", "stub_agent.py", "stub_client.py",
        *runtime, *room_inits(runtime), *api])
    for name in api:
        assert (package / name).read_text().split("\n", 2)[2].endswith(
            f"from .v1.{name.removesuffix('.py')} import *\n"), name
    for name in runtime:  # the runtime as it is, behind the header
        text = (package / name).read_text()
        assert text.split("\n", 2)[2] == (RUNTIME / name).read_text(), name
    command = f"acpgen generate --schema schemas/{V1} --schema schemas/{V2} --out out --package both"
    for module in ("__init__.py", "stub_agent.py", BY_NAME["_rpc.py"].path, "v1/agent.py", "v2/models.py"):
        assert f"regenerate with `{command}`" in (package / module).read_text()
    manifest = json.loads((package / "acpgen-manifest.json").read_text())
    assert manifest["options"]["schema"] == [f"schemas/{V1}", f"schemas/{V2}"]
    assert {key.split("/")[0] for key in manifest["names"]} == {"v1", "v2"}
    assert (manifest["versions"], manifest["root_version"]) == ([1, 2], 1)
    code = """
import both, both.models, both.agent, both.builders, both.stub_agent
from both import Agent, PROTOCOL_VERSION, RequestError, models, run_agent
from both.v1 import agent as a1, builders as b1, models as m1, stub_agent as s1
from both.v2 import models as m2
assert (both.VERSIONS, both.ROOT_VERSION, PROTOCOL_VERSION) == ((1, 2), 1, 1)
assert models.ContentBlock is both.models.ContentBlock is m1.ContentBlock is not m2.ContentBlock
assert Agent is both.agent.Agent is a1.Agent and run_agent is a1.run_agent
assert both.builders.content_block is b1.content_block and both.stub_agent.StubAgent is s1.StubAgent
assert isinstance(both.models.TextContent(text="hi"), m1.TextContent)
print("root")
"""
    done = subprocess.run([sys.executable, "-c", code], env=env_for(project / "out"), capture_output=True,
                          text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "root\n"), done.stderr


def test_the_versions_share_the_runtime_and_keep_their_own_types(project):
    """One connection class, one error class, one codec for both versions; the codec decodes each
    version's types of one name as that version's classes."""
    code = f"""
import asyncio, json
import importlib
_codec = importlib.import_module("both.{BY_NAME['_codec.py'].dotted}")
_rpc = importlib.import_module("both.{BY_NAME['_rpc.py'].dotted}")
from both.v1 import agent as a1, client as c1, models as m1
from both.v2 import agent as a2, client as c2, models as m2
assert a1.RequestError is a2.RequestError is _rpc.RequestError
import both.v1, both.v2
assert both.v1.RequestError is both.v2.RequestError is _rpc.RequestError
assert a1._rpc is a2._rpc is c1._rpc is c2._rpc is _rpc is both._rpc
assert m1.Model is m2.Model is _codec.Model
assert m1.ContentBlock != m2.ContentBlock
text = {{"type": "text", "text": "hi"}}
one, two = _codec.decode(m1.TextContent, text), _codec.decode(m2.TextContent, text)
assert type(one) is m1.TextContent and type(two) is m2.TextContent and type(one) is not type(two)
assert _codec.encode(one) == _codec.encode(two) == text
print("shared")
"""
    done = subprocess.run([sys.executable, "-c", code], env=env_for(project / "out"), capture_output=True,
                          text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "shared\n"), done.stderr


def test_the_package_passes_mypy_strict_and_ruff(project, tmp_path):
    done = mypy_strict("--no-error-summary", "both", cwd=project / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--target-version", "py310", "--quiet", "both"],
                          cwd=project / "out", capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_it_regenerates_nothing_and_checks_with_or_without_the_flags(cli, project, monkeypatch):
    monkeypatch.chdir(project)
    before = tree(project / "out")
    flags = ["--schema", f"schemas/{V1}", "--schema", f"schemas/{V2}", "--package", "both", "--out", "out"]
    assert cli("generate", *flags).stderr.strip() == "acpgen: both under out: all 114 files up to date"
    assert tree(project / "out") == before
    assert cli("check", *flags).exit_code == 0
    assert cli("check", "--out", "out", "--package", "both").exit_code == 0  # the schemas from the manifest
    one = cli("check", "--schema", f"schemas/{V1}", "--out", "out", "--package", "both")
    assert one.exit_code == 1 and "but the package was generated with --schema" in one.stderr


def test_two_schemas_of_one_version_are_one_line(cli, project, monkeypatch, tmp_path):
    monkeypatch.chdir(project)
    shutil.copy(CORPUS / "v1.6.0--v2-schema.json", project / "schemas")
    shutil.copy(CORPUS / "v1.6.0--v2-meta.json", project / "schemas")  # (this run writes nothing)
    result = cli("generate", "--schema", f"schemas/{V2}", "--schema", "schemas/v1.6.0--v2-schema.json",
                 "--out", str(tmp_path / "out"))
    assert one_error_line(result) == (f"error: --schema {V2} and v1.6.0--v2-schema.json are both of protocol"
                                      f" version 2 ({V2}: its v2-meta.json; v1.6.0--v2-schema.json: its"
                                      " v1.6.0--v2-meta.json): one schema per version")
    assert tree(tmp_path / "out") == {}


def test_the_config_lists_the_schemas(cli, project, monkeypatch, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.acpgen]\nschema = ["{project}/schemas/{V1}", "{project}/schemas/{V2}"]\npackage = "both"\n')
    monkeypatch.chdir(tmp_path)
    assert cli("generate").exit_code == 0
    for version in (1, 2):  # the same modules, but for the header's command
        made = (tmp_path / "generated" / "both" / f"v{version}" / "methods.py").read_text().splitlines()
        assert made[2:] == (project / "out" / "both" / f"v{version}" / "methods.py").read_text().splitlines()[2:]
        assert made[1].count("--schema ") == 2
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\nschema = ["only-one.json"]\n')
    assert one_error_line(cli("generate")) == (
        "error: pyproject.toml: [tool.acpgen] schema must be a path or a list of two or more, found ['only-one.json']")


@pytest.mark.parametrize(("mode", "version"), [("v1", 1), ("v2", 2)])
def test_the_root_stub_agent_serves_both_typescript_clients(project, tmp_path, mode, version):
    command = [*TS_CLIENT, mode, str(version), str(tmp_path), sys.executable, "-m", "both.stub_agent"]
    done = subprocess.run(command, env=env_for(project / "out"), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert "error" not in summary, summary
    assert summary["initialize"]["protocolVersion"] == version and summary["stopReason"] == "end_turn"


@pytest.mark.parametrize(("asked", "states"), [("1", False), ("2", True), ("3", True)])
def test_the_root_stub_client_asks_for_the_version_given(project, tmp_path, asked, states):
    command = [sys.executable, "-m", "both.stub_client", "--protocol-version", asked, "--prompt", "hi", "--",
               *TS_AGENT, "router"]
    done = subprocess.run(command, cwd=tmp_path, env=env_for(project / "out"), capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1] == {"stopReason": "end_turn"}
    assert any(line.get("update", {}).get("sessionUpdate") == "state_update" for line in lines) == states


@pytest.mark.parametrize("side", ["agent", "client"])
def test_a_package_of_one_side_has_the_runtime_its_root_modules_import(cli, project, monkeypatch, tmp_path, side):
    """The router and ``connect_versions`` (``_versions``) are there for either side: the root's
    stubs, one of them the test peer, import it."""
    monkeypatch.chdir(project)
    flags = ["--schema", f"schemas/{V1}", "--schema", f"schemas/{V2}", "--package", "one", "--side", side]
    assert cli("generate", *flags, "--out", str(tmp_path)).exit_code == 0
    assert (tmp_path / "one" / BY_NAME["_versions.py"].path).is_file()
    code = "import one.stub_agent, one.stub_client, one.v1, one.v2; print(one.v2.RequestError.__module__)"
    done = subprocess.run([sys.executable, "-c", code], env=env_for(tmp_path), capture_output=True, text=True,
                          timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "one\n"), done.stderr  # named where the root exports it
