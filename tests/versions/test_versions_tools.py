"""``diff``, ``validate`` and the inspector on a package of several protocol versions: ``diff --out``
compares each version's recorded schema (and names) with its new one, ``validate
--protocol-version`` checks a v2 transcript against a schema that states no version, and the v2
subpackage's inspector checks a session the root stubs negotiated at version 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from support import CORPUS, one_error_line
from support.versions import SDK_SCHEMAS

V1 = CORPUS / "v0.12.2--schema.unstable.json"
V2 = CORPUS / "v1.7.0--v2-schema.json"  # version 2 by the meta.json beside it


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    """The folder holding the package ``acp`` of versions 1 and 2."""
    from click.testing import CliRunner

    from acpgen.cli import main

    out = tmp_path_factory.mktemp("tools") / "out"
    result = CliRunner().invoke(main, ["generate", "--schema", str(V1), "--schema", str(V2), "--package", "acp",
                                       "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return out


def test_diff_out_compares_every_version_with_its_recorded_schema(cli, output):
    result = cli("diff", "--out", output, "--package", "acp")  # the schemas the manifest records
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "v1:\nv2:\n"
    root = (output / "acp").as_posix()
    v1, v2 = (os.path.relpath(path) for path in (V1, V2))  # as the manifest records them: from the project
    assert result.stderr.splitlines() == [
        f"acpgen diff: v1: 0 change(s) from {root}/v1 (acpgen-schema.json) to {v1}",
        f"acpgen diff: v2: 0 change(s) from {root}/v2 (acpgen-schema.json) to {v2}",
    ]
    markdown = cli("diff", "--out", output, "--package", "acp", "--format", "markdown").stdout
    assert markdown == (f"### acpgen diff: `{root}/v1 (acpgen-schema.json)` -> `{v1}`\n\n**0 change(s)**\n\n"
                        f"### acpgen diff: `{root}/v2 (acpgen-schema.json)` -> `{v2}`\n\n**0 change(s)**\n")


def test_diff_out_matches_new_to_its_version_by_its_protocol_version(cli, output, tmp_path):
    newer = SDK_SCHEMAS / "v2-schema.json"  # no meta.json: its links to the v2 documentation say 2
    as_v2 = cli("diff", "--out", output, "--package", "acp", "--protocol-version", "2", newer, "--format", "json")
    assert as_v2.exit_code == 0, as_v2.stderr
    report = json.loads(as_v2.stdout)
    assert list(report) == ["v2"] and report["v2"]
    assert as_v2.stdout == cli("diff", "--out", output, "--package", "acp", newer, "--format", "json").stdout
    unstated = tmp_path / "v2-schema.json"  # without its links it states no version: 1 unless told
    unstated.write_text(newer.read_text().replace("agentclientprotocol.com/protocol/v2/", "example.org/"))
    as_v1 = cli("diff", "--out", output, "--package", "acp", unstated, "--format", "json")
    assert as_v1.exit_code == 0, as_v1.stderr
    assert list(json.loads(as_v1.stdout)) == ["v1"]
    alone = cli("diff", V2, newer, "--format", "json")  # the same as comparing the two schemas
    assert report["v2"] == json.loads(alone.stdout)
    assert cli("diff", "--out", output, "--package", "acp", "--protocol-version", "2", newer,
               "--fail-on", "breaking").exit_code == 1


def test_diff_out_reads_each_version_s_names_from_its_prefix(cli, output, tmp_path):
    copy = tmp_path / "out"
    shutil.copytree(output, copy)
    manifest = copy / "acp" / "acpgen-manifest.json"
    data = json.loads(manifest.read_text())
    assert data["names"]["v2/defs/AgentCapabilities"] == "AgentCapabilities"
    data["names"]["v2/defs/AgentCapabilities"] = "KeptAgentCapabilities"
    manifest.write_text(json.dumps(data))
    result = cli("diff", "--out", copy, "--package", "acp", V2)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("v2:\n")
    assert "recorded name KeptAgentCapabilities, the rules give AgentCapabilities" in result.stdout


def test_diff_out_refuses_a_version_the_output_does_not_hold(cli, output):
    result = cli("diff", "--out", output, "--package", "acp", "--protocol-version", "3", V2)
    assert result.exit_code == 2
    assert one_error_line(result) == (
        f"error: {V2.as_posix()} is of protocol version 3; {(output / 'acp').as_posix()} holds versions 1, 2"
        " (give --protocol-version when the schema does not state its own)")


def test_diff_protocol_version_is_only_for_several_versions(cli, tmp_path):
    out = tmp_path / "one"
    assert cli("generate", "--schema", V1, "--out", out).exit_code == 0
    result = cli("diff", "--out", out, "--protocol-version", "2", V1)
    assert result.exit_code == 2
    assert one_error_line(result) == "error: --protocol-version: only with --out on a package of several protocol versions"


@pytest.fixture(scope="module")
def transcript(output, tmp_path_factory):
    """A v2 session between the root stubs (negotiated at 2), through the v2 subpackage's inspector."""
    path = tmp_path_factory.mktemp("transcript") / "v2.ndjson"
    env = {**os.environ, "PYTHONPATH": str(output)}
    agent = [sys.executable, "-m", "acp.v2.inspect", "--transcript", str(path), "--", sys.executable, "-m",
             "acp.stub_agent"]
    done = subprocess.run([sys.executable, "-m", "acp.stub_client", "--protocol-version", "2", "--", *agent],
                          check=False, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "inspect:" not in done.stderr  # the v2 inspector found nothing wrong
    assert done.stdout.endswith('{"stopReason":"end_turn"}\n')
    return path


def test_the_v2_inspector_records_a_v2_session(transcript):
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    first = lines[0]["message"]
    assert first["method"] == "initialize" and first["params"]["protocolVersion"] == 2
    assert lines[1]["message"]["result"]["protocolVersion"] == 2
    states = [m["message"]["params"]["update"].get("state") for m in lines
              if m["message"].get("method") == "session/update"]
    assert states[-1] == "idle"


def test_validate_a_v2_transcript(cli, output, transcript, tmp_path):
    assert cli("validate", "--schema", V2, transcript).exit_code == 0  # its meta.json says 2
    recorded = output / "acp" / "v2" / "acpgen-schema.json"  # with no meta.json beside: its links say 2
    assert cli("validate", "--schema", recorded, transcript).exit_code == 0
    copy = tmp_path / "unstated.json"  # and without its links to the v2 documentation, it states none
    copy.write_text(recorded.read_text().replace("agentclientprotocol.com/protocol/v2/", "example.org/"))
    unstated = cli("validate", "--schema", copy, transcript, "--format", "json")
    assert unstated.exit_code == 1
    assert [f["kind"] for f in json.loads(unstated.stdout)["problems"]] == ["protocol-version"]
    given = cli("validate", "--schema", copy, "--protocol-version", "2", transcript)
    assert given.exit_code == 0, given.stdout
    assert given.stdout.endswith(f"{transcript.name}: 14 messages, 0 errors, 0 warnings\n")


def _session(output, version: int, inspector: str) -> subprocess.CompletedProcess[str]:
    """The root stubs negotiating ``version`` through ``python -m <inspector>``."""
    env = {**os.environ, "PYTHONPATH": str(output)}
    agent = [sys.executable, "-m", inspector, "--", sys.executable, "-m", "acp.stub_agent"]
    return subprocess.run([sys.executable, "-m", "acp.stub_client", "--protocol-version", str(version), "--", *agent],
                          check=False, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("asked", "checked"), [(1, 1), (2, 2), (3, 2)])
def test_the_root_inspector_checks_the_version_the_first_initialize_asks_for(output, asked, checked):
    done = _session(output, asked, "acp.inspect")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("inspect:")]
    assert lines == [f"inspect: the client asks for protocol version {asked}: checking against version {checked}"]


def test_the_root_inspector_checks_a_v1_client_asking_for_999_against_the_version_it_is_served(output):
    """The router serves a v1 ``initialize`` asking for 999 in version 1 (the v2 agent cannot read
    it): the root inspector checks against 1 too, and finds no problem in the session."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": 999, "clientCapabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}]
    env = {**os.environ, "PYTHONPATH": str(output)}
    done = subprocess.run([sys.executable, "-m", "acp.inspect", "--", sys.executable, "-m", "acp.stub_agent"],
                          input="".join(json.dumps(line) + "\n" for line in lines), env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["result"].get("protocolVersion") for a in answers[:1]] == [1] and answers[1]["result"]["sessionId"]
    assert done.stderr.splitlines() == ["inspect: the client asks for protocol version 999: checking against version 1"]


def test_a_version_s_inspector_on_the_other_version_s_session_finds_problems(output):
    done = _session(output, 1, "acp.v2.inspect")  # what the root inspector spares a v1 client
    assert done.returncode == 0, done.stderr
    assert "inspect: error: client-to-agent initialize" in done.stderr
