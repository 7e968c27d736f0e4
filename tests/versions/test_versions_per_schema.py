"""Which protocol version each schema of a package of several is: told from the schemas
themselves (the TypeScript SDK 2.4.0 ships its v1 and v2 schemas without a meta.json, but their
descriptions link to the protocol's v1 and v2 documentation), or given beside each schema
(``--schema a.json --protocol-version 1 --schema b.json --protocol-version 2``; ``protocol-version
= [1, 2]`` beside ``schema = [...]`` in ``[tool.acpgen]``), recorded in the manifest so that
``check`` and ``diff`` replay it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from support import INTEROP, one_error_line, tree
from support.versions import SDK_SCHEMAS, env_for

from acpgen.schema.protocol import how_stated


def _unlinked(name: str, to: os.PathLike[str]) -> None:
    """The SDK's schema ``name`` with its links to the protocol's documentation taken out: a
    schema that states no version at all."""
    text = (SDK_SCHEMAS / name).read_text()
    for version in ("v1", "v2"):
        text = text.replace(f"agentclientprotocol.com/protocol/{version}/", "example.org/")
    with open(to, "w") as handle:
        handle.write(text)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project holding the SDK's pair as it ships (``schemas/v1-schema.json``,
    ``schemas/v2-schema.json``) and copies that state no version (``schemas/first.json``,
    ``schemas/second.json``), with the package of each pair: ``plain/both`` made by the bare
    command, ``given/both`` with a version given per schema."""
    from click.testing import CliRunner

    from acpgen.cli import main

    root = tmp_path_factory.mktemp("per-schema")
    (root / "schemas").mkdir()
    for name in ("v1-schema.json", "v2-schema.json"):
        shutil.copy(SDK_SCHEMAS / name, root / "schemas" / name)
    _unlinked("v1-schema.json", root / "schemas" / "first.json")
    _unlinked("v2-schema.json", root / "schemas" / "second.json")
    here = os.getcwd()
    os.chdir(root)
    try:
        runner = CliRunner()
        for args in (["--schema", "schemas/v1-schema.json", "--schema", "schemas/v2-schema.json", "--out", "plain"],
                     ["--schema", "schemas/first.json", "--protocol-version", "1", "--schema", "schemas/second.json",
                      "--protocol-version", "2", "--out", "given"]):
            result = runner.invoke(main, ["generate", *args, "--package", "both"], catch_exceptions=False)
            assert result.exit_code == 0, result.stderr
    finally:
        os.chdir(here)
    return root


def test_the_sdk_pair_states_its_versions_by_its_links():
    for name, number in (("v1-schema.json", 1), ("v2-schema.json", 2), ("v2-schema.unstable.json", 2)):
        document = json.loads((SDK_SCHEMAS / name).read_text())
        assert how_stated(document, SDK_SCHEMAS / name) == (
            number, f"its links to the protocol's v{number} documentation")


def test_the_sdk_pair_makes_one_package_without_a_flag(project):
    package = project / "plain" / "both"
    for number in (1, 2):
        assert f"PROTOCOL_VERSION = {number}\n" in (package / f"v{number}" / "methods.py").read_text()
    assert "--protocol-version" not in (package / "__init__.py").read_text().splitlines()[1]
    # imported (no type checker), each version routes its own methods, and the root stubs speak both
    code = ("import both, both.v1.agent as a1, both.v2.agent as a2\n"
            "for n, a in enumerate((a1, a2), 1): print(n, *(f'{r.handler}:{r.params_type.__module__}' for r in"
            " a.AGENT_ROUTES if r.method in ('initialize', 'session/prompt')))")
    done = subprocess.run([sys.executable, "-c", code], env=env_for(project / "plain"), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{n} initialize:both.v{n}.models session_prompt:both.v{n}.models"
                                        for n in (1, 2)]
    for number in ("1", "2"):
        command = [sys.executable, "-m", "both.stub_client", "--protocol-version", number, "--prompt", "hi", "--",
                   sys.executable, "-m", "both.stub_agent"]
        done = subprocess.run(command, cwd=project, env=env_for(project / "plain"), capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.splitlines()[-1]) == {"stopReason": "end_turn"}


def test_a_version_given_per_schema_is_recorded_and_replayed(cli, project, monkeypatch):
    monkeypatch.chdir(project)
    package = project / "given" / "both"
    for number in (1, 2):
        assert f"PROTOCOL_VERSION = {number}\n" in (package / f"v{number}" / "methods.py").read_text()
    assert (package / "methods.py").read_text().endswith("from .v1.methods import *\n")  # the root's: v1's
    header = (package / "__init__.py").read_text().splitlines()[1]
    assert ("acpgen generate --schema schemas/first.json --protocol-version 1 --schema schemas/second.json"
            " --protocol-version 2 --out given --package both`") in header
    manifest = json.loads((package / "acpgen-manifest.json").read_text())
    assert manifest["options"]["protocol-version"] == [1, 2]
    before = tree(project / "given")
    # check and diff take the versions from the manifest: the schemas alone would both be version 1
    assert cli("check", "--out", "given/both").exit_code == 0
    diff = cli("diff", "--out", "given/both")
    assert diff.exit_code == 0, diff.stderr
    assert [line for line in diff.stdout.splitlines() if line.startswith("v")] == ["v1:", "v2:"]
    assert tree(project / "given") == before


def test_the_config_gives_a_version_per_schema(cli, project, monkeypatch):
    monkeypatch.chdir(project)
    config = ('[tool.acpgen]\nschema = ["schemas/first.json", "schemas/second.json"]\nout = "given"\n'
              'package = "both"\nprotocol-version = [{}]\n')
    (project / "pyproject.toml").write_text(config.format("1, 2"))
    try:
        assert cli("check").exit_code == 0
        diff = cli("diff")  # each configured schema against its version's recorded one
        assert diff.exit_code == 0, diff.stderr
        assert [line for line in diff.stdout.splitlines() if line.startswith("v")] == ["v1:", "v2:"]
        (project / "pyproject.toml").write_text(config.format("2, 1"))
        swapped = cli("check")
        assert swapped.exit_code == 1
        assert ("acpgen check: --protocol-version is [2, 1] here (pyproject.toml: [tool.acpgen] protocol-version)"
                " but the package was generated with --protocol-version 1 --protocol-version 2") in swapped.stderr
    finally:
        (project / "pyproject.toml").unlink()


def test_schemas_that_state_no_version_name_the_flag_to_give(cli, project, monkeypatch, tmp_path):
    monkeypatch.chdir(project)
    result = cli("generate", "--schema", "schemas/first.json", "--schema", "schemas/second.json", "--out", tmp_path)
    assert one_error_line(result) == (
        "error: --schema first.json and second.json are both of protocol version 1 (neither states its own): give"
        " each its version, --schema first.json --protocol-version N --schema second.json --protocol-version M")
    result = cli("generate", "--schema", "schemas/v1-schema.json", "--schema", "schemas/first.json", "--out", tmp_path)
    assert one_error_line(result).endswith("(first.json states none): give each its version, --schema"
                                           " v1-schema.json --protocol-version N --schema first.json --protocol-version M")
    assert tree(tmp_path) == {}


@pytest.mark.parametrize(("args", "config", "message"), [
    (["--protocol-version", "two", "--protocol-version", "2"], None,
     "--protocol-version 'two' is not a protocol version: an integer from 0 to 65535"),
    (["--protocol-version", "2"], None,
     "--protocol-version gives 1 version for 2 schemas (--schema): give one per schema, in the same order"),
    (["--protocol-version", "1", "--protocol-version", "2", "--protocol-version", "3"], None,
     "--protocol-version gives 3 versions for 2 schemas (--schema): give one per schema, in the same order"),
    (["--protocol-version", "2", "--protocol-version", "2"], None,
     "--schema first.json and second.json are both of protocol version 2 (--protocol-version): one schema per version"),
    ([], '[2, "2"]', ("pyproject.toml: [tool.acpgen] protocol-version must be an integer from 0 to 65535, or a list of"
     " them (one per schema), found [2, '2']")),
    ([], "[1, 2, 3]", ("pyproject.toml: [tool.acpgen] protocol-version gives 3 versions for 2 schemas"
     " (pyproject.toml: [tool.acpgen] schema): give one per schema, in the same order")),
], ids=["not-an-integer", "one-for-two", "three-for-two", "twice-the-same", "config-not-an-integer", "config-count"])
def test_a_bad_version_per_schema_is_one_line(cli, project, monkeypatch, tmp_path, args, config, message):
    monkeypatch.chdir(tmp_path)
    for name in ("first.json", "second.json"):
        shutil.copy(project / "schemas" / name, tmp_path / name)
    if config is None:
        result = cli("generate", "--schema", "first.json", "--schema", "second.json", *args, "--out", "out")
    else:
        (tmp_path / "pyproject.toml").write_text(
            f'[tool.acpgen]\nschema = ["first.json", "second.json"]\nprotocol-version = {config}\n')
        result = cli("generate", "--out", "out")
    assert one_error_line(result) == f"error: {message}"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("flags", "echoed"), [([], True), (["--reject"], False)])
def test_the_root_stub_agent_takes_its_versions_flags(project, flags, echoed):
    # --ask-permission is v2's stub agent's: the root passes it on to the versions that take it
    command = [sys.executable, "-m", "both.stub_client", "--protocol-version", "2", *flags, "--prompt", "hi", "--",
               sys.executable, "-m", "both.stub_agent", "--ask-permission"]
    done = subprocess.run(command, cwd=project, env=env_for(project / "plain"), capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    updates = [json.loads(line).get("update", {}) for line in done.stdout.splitlines()]
    assert {"sessionUpdate": "state_update", "state": "requires_action"} in updates
    assert any(u.get("sessionUpdate") == "agent_message_chunk" for u in updates) == echoed


#: A client of the package's v2 calling ``initialize`` itself (the entry point, not the stub).
V2_CLIENT = """
import asyncio, sys
from both.v2 import client, models
async def main():
    async with client.spawn_agent(client.Client(), sys.executable, "-m", AGENT) as connection:
        request = models.InitializeRequest.from_json({"protocolVersion": 2, "info": {"name": "c", "version": "1"}})
        try:
            await connection.agent.initialize(request)
        except ValueError as exc:
            print(f"{type(exc).__name__}: {exc}")
asyncio.run(main())
"""


@pytest.mark.parametrize(("client", "agent", "said"), [
    ("both.v1.stub_client", "both.v2.stub_agent", ('stub_client: the agent answered with an error: Unsupported protocol'
     ' version (-32022): {"requested": 1, "supported": [2], "message": "the client speaks protocol version 1; this'
     ' agent speaks 2"}')),
    ("both.v2.stub_client", "both.v1.stub_agent",
     "stub_client: the agent answered protocol version 1; this client speaks 2 (it asked for 2)"),
], ids=["v1-client-v2-agent", "v2-client-v1-agent"])
def test_a_stub_client_of_another_version_is_told_both_versions(project, client, agent, said):
    # the v2 agent's initialize does not decode v1's params (no info): it answers which versions,
    # not "at /info: required property 'info' is missing"
    command = [sys.executable, "-m", client, "--prompt", "hi", "--", sys.executable, "-m", agent]
    done = subprocess.run(command, cwd=project, env=env_for(project / "plain"), capture_output=True, text=True,
                          timeout=60, check=False)
    assert (done.returncode, done.stderr.strip()) == (1, said)


def test_the_client_entry_point_names_both_versions(project):
    # a v1 agent answers a v2 initialize with version 1, whose answer is not one of v2's models
    code = V2_CLIENT.replace("AGENT", repr("both.v1.stub_agent"))
    done = subprocess.run([sys.executable, "-c", code], cwd=project, env=env_for(project / "plain"),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "UnsupportedVersion: the agent answered protocol version 1; this client speaks 2\n"


def test_a_typescript_client_of_version_1_is_told_both_versions(project, tmp_path):
    command = ["node", str(INTEROP / "ts_versions_client.mjs"), "v1", "1", str(tmp_path),
               sys.executable, "-m", "both.v2.stub_agent"]
    done = subprocess.run(command, env=env_for(project / "plain"), capture_output=True, text=True, timeout=60,
                          check=False)
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["error"]["code"] == -32022, summary
    assert summary["error"]["data"]["message"] == "the client speaks protocol version 1; this agent speaks 2"


def test_the_config_lists_the_sdk_pair_and_nothing_else(cli, project, monkeypatch, tmp_path):
    for name in ("v1-schema.json", "v2-schema.json"):
        shutil.copy(project / "schemas" / name, tmp_path / name)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.acpgen]\nschema = ["v1-schema.json", "v2-schema.json"]\npackage = "both"\n')
    monkeypatch.chdir(tmp_path)
    assert cli("generate").exit_code == 0
    for number in (1, 2):  # the same modules as the command line's, but for the header's command
        made = (tmp_path / "generated" / "both" / f"v{number}" / "models.py").read_text().splitlines()
        assert made[2:] == (project / "plain" / "both" / f"v{number}" / "models.py").read_text().splitlines()[2:]
    assert cli("check").exit_code == 0
