"""The client kit: the stub agent's checking mode (``stub_agent --check``) holds the client that
connects to it to what the spec asks of a client, and reports each requirement in the agent
kit's forms. Both ways, over real pipes and sockets: clients that keep every requirement pass
(our stub clients, clients written with the official Python and TypeScript SDKs, and the sloppy
client told to break nothing), and the sloppy client (``sloppy_client.py``) made to break one
requirement fails just that one.

The default run covers each kind of peer once (v1 on stdio, the v2 draft of v1.7.0 over a
WebSocket) and two of the sloppy client's breaks; ``make conformance-client`` runs every break.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import INTEROP, TESTS
from support.remote import free_port, stop, wait_listening
from support.runtime import child_env
from support.versions import env_for, stub, v2_package

from acpgen.runtime._runtime.kits._client_kit import REQUIREMENTS

SLOPPY = TESTS / "kit" / "sloppy_client.py"
MUSTS = {r.id for r in REQUIREMENTS if r.level == "MUST"}
#: The breaks the default run tries (one of the transcript's, one of the permission answers');
#: ``make conformance-client`` sets ACPGEN_CLIENT_KIT_ALL=1 and tries them all.
DEFAULT_BREAKS = ["jsonrpc.ids", "permission.offered-option"]
BREAKS = [r.id for r in REQUIREMENTS] if os.environ.get("ACPGEN_CLIENT_KIT_ALL") == "1" else DEFAULT_BREAKS
#: What breaking one requirement leaves untestable: the client wrote no file to read back.
LEFT_UNTESTED = {"fs.write": {"fs.read"}}


def checked(tmp_path: Path, client: list[str], *options: str) -> tuple[dict, int]:
    """Run ``client`` against the v1 stub agent in checking mode (with ``options``); its JSON
    report and exit status (read from the JUnit file too)."""
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    agent = [sys.executable, "-m", "acp_bindings.stub_agent", "--check", "--delay", "0", "--json",
             "--report", str(report), "--junit", str(junit), *options]
    done = subprocess.run([*client, *agent], cwd=tmp_path, env=child_env(), capture_output=True, text=True,
                          timeout=60, check=False)
    assert report.is_file(), done.stdout + done.stderr
    document = json.loads(report.read_text())
    cases = ET.parse(junit).getroot().iter("testcase")
    failed = {case.get("name") for case in cases if case.find("failure") is not None}
    assert failed == {r["id"] for r in document["requirements"] if r["outcome"] == "failed"}
    return document, done.returncode


def outcomes(document: dict) -> dict[str, str]:
    return {r["id"]: r["outcome"] for r in document["requirements"]}


def test_every_requirement_has_a_mode_of_the_sloppy_client_that_breaks_it():
    modes = set(re.findall(r'MODE == "([\w.-]+)"', SLOPPY.read_text()))
    modes |= {m for group in re.findall(r"MODE in \(([^)]*)\)", SLOPPY.read_text())
              for m in re.findall(r'"([\w.-]+)"', group)}
    assert {r.id for r in REQUIREMENTS} <= modes


def test_a_client_that_keeps_every_requirement_passes_each(tmp_path):
    """The sloppy client told to break nothing, and to cancel its turn while the permission
    request is pending (so that every requirement is tested), passes all; exit status 0."""
    page = tmp_path / "session.html"
    document, status = checked(tmp_path, [sys.executable, str(SLOPPY), "cancel", "--"], "--html", str(page))
    assert set(outcomes(document).values()) == {"passed"}, document
    assert (status, document["exitStatus"]) == (0, 0)
    assert len(list(ET.parse(tmp_path / "junit.xml").getroot().iter("testcase"))) == len(REQUIREMENTS)
    assert "session/request_permission" in page.read_text(), "the inspector's page of the connection"


@pytest.mark.parametrize("requirement", BREAKS)
def test_a_sloppy_client_fails_just_the_requirement_it_breaks(tmp_path, requirement):
    document, status = checked(tmp_path, [sys.executable, str(SLOPPY), requirement, "--"])
    found = outcomes(document)
    assert [rid for rid, outcome in found.items() if outcome == "failed"] == [requirement], document
    detail = next(r["detail"] for r in document["requirements"] if r["id"] == requirement)
    assert detail, "a failure quotes what broke it"
    untested = {"permission.cancelled-after-cancel"} - {requirement} | LEFT_UNTESTED.get(requirement, set())
    assert {rid for rid, outcome in found.items() if outcome == "not applicable"} == untested
    assert status == (1 if requirement in MUSTS else 0)


@pytest.mark.parametrize("client", ["stub client", "Python SDK", "TypeScript SDK"])
def test_our_stub_client_and_clients_of_the_official_sdks_pass(tmp_path, client):
    command = {
        "stub client": [sys.executable, "-m", "acp_bindings.stub_client", "--allow-terminal", "--"],
        "Python SDK": [sys.executable, str(INTEROP / "sdk_kit_client.py")],
        "TypeScript SDK": ["node", str(INTEROP / "ts_kit_client.mjs")],
    }[client]
    document, status = checked(tmp_path, command)
    found = outcomes(document)
    assert "failed" not in found.values() and status == 0, document
    applicable = {rid for rid, outcome in found.items() if outcome != "not applicable"}
    assert applicable >= {"permission.offered-option", "fs.write", "fs.read", "jsonrpc.ids", "prompt.known-session"}
    assert ("terminal.run" in applicable) == (client == "stub client")  # only it advertises terminals
    assert not list(tmp_path.glob(".acp-client-check*")), "the kit leaves no file behind"


def test_a_v2_client_over_a_websocket_is_reported_as_its_connection_ends(tmp_path):
    """``--check --listen``: each connection is reported as it ends. The TypeScript SDK's v2
    client, on its own draft over a WebSocket, which has no fs/* or terminal/* (not applicable)."""
    folder, package = v2_package("sdk")
    port, report = free_port(), tmp_path / "report.txt"
    server = subprocess.Popen([*stub(package, "agent"), "--check", "--listen", f"127.0.0.1:{port}", "--report",
                               str(report)], env=env_for(folder), stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, server)
        done = subprocess.run(["node", str(INTEROP / "ts_versions_client.mjs"), "v2", "2", str(tmp_path),
                               f"ws://127.0.0.1:{port}/acp"], env=env_for(folder), capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 20
        while not report.is_file():
            assert time.monotonic() < deadline, "no report of the connection"
            time.sleep(0.05)
    finally:
        stop(server)
    lines = report.read_text().splitlines()
    assert lines[-1] == "7 passed, 0 failed (0 MUST), 4 not applicable", lines
    assert any(line.startswith("N/A  MUST   fs.read ") and "has no fs/read_text_file" in line for line in lines)
    assert any(line.startswith("PASS MUST   permission.offered-option ") for line in lines)


def test_the_root_stub_agent_of_several_versions_checks_the_client_in_the_version_it_speaks(tmp_path):
    from support.versions import several_versions_package

    folder = several_versions_package()
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "both.stub_client", "--protocol-version", "1", "--prompt", "hi", "--",
                           sys.executable, "-m", "both.stub_agent", "--check", "--json", "--report", str(report)],
                          cwd=tmp_path, env=env_for(folder), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    document = json.loads(report.read_text())
    assert document["protocolVersion"] == 1 and document["exitStatus"] == 0, document
    assert outcomes(document)["permission.offered-option"] == "passed"


def test_the_example_client_cancelling_its_turn_answers_the_pending_permission_request_cancelled(tmp_path):
    """``examples/echo_client.py --cancel`` cancels the turn when asked for permission: a real
    client keeping ``permission.cancelled-after-cancel``; it advertises no file system and no
    terminal, which are not applicable."""
    example = Path(__file__).resolve().parents[2] / "examples" / "echo_client.py"
    document, status = checked(tmp_path, [sys.executable, str(example), "--cancel", "hello"])
    found = outcomes(document)
    assert found["permission.cancelled-after-cancel"] == "passed" and status == 0, document
    assert {rid for rid, outcome in found.items() if outcome == "not applicable"} == {"fs.write", "fs.read",
                                                                                      "terminal.run"}
