"""The client kit: the stub agent's checking mode (``stub_agent --check``) holds the client that
connects to it to what the spec asks of a client, and reports each requirement in the agent
kit's forms. Both ways, over real pipes and sockets: clients that keep every requirement pass
(our stub clients, clients written with the official Python and TypeScript SDKs, and the sloppy
client told to break nothing), and the sloppy client (``sloppy_client.py``) made to break one
requirement fails just that one (an ADVICE: shown, exit status 0). Each level is read from the
record of the sentence it cites, and the guides' table and CI recipe are held to the kit.

The default run covers each kind of peer once (v1 on stdio, the v2 draft of v1.7.0 over a
WebSocket) and four of the sloppy client's breaks; ``make conformance-client`` runs every way.
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
from support import INTEROP, ROOT, TESTS, docs
from support.remote import free_port, stop, wait_listening
from support.runtime import child_env
from support.versions import env_for, stub, v2_package

from acpgen.runtime._runtime.kits._client_kit import RULES
from acpgen.runtime._runtime.kits._client_rules import BY_ID
from acpgen.runtime._runtime.kits._kit_report import ADVICE, MUST, SHOULD, level_for

SLOPPY = TESTS / "kit" / "sloppy_client.py"
MUSTS = {r.id for r in RULES if r.level == "MUST"}
#: Each way the sloppy client breaks a requirement (``id+how`` where there are several).
MODES = sorted(set(re.findall(r'MODE == "([\w.+-]+)"', SLOPPY.read_text()))
               | {m for group in re.findall(r"MODE in \(([^)]*)\)", SLOPPY.read_text())
                  for m in re.findall(r'"([\w.+-]+)"', group)})
#: The breaks the default run tries (a MUST of the transcript's, the refused initialize, a
#: notification nothing answers, an ADVICE); ``make conformance-client`` sets ACPGEN_CLIENT_KIT_ALL=1 and tries them all.
DEFAULT_BREAKS = ["jsonrpc.ids", "initialization.first+refused", "capabilities.agent-advertised",
                  "permission.offered-option"]
BREAKS = ([m for m in MODES if m.partition("+")[0] in {r.id for r in RULES}]
          if os.environ.get("ACPGEN_CLIENT_KIT_ALL") == "1" else DEFAULT_BREAKS)
#: The options of the checking agent a break needs: what the agent must not advertise.
AGENT_OPTIONS = {"session.additional-directories": ("--disable", "additional-directories")}
#: What a break leaves untestable: an initialize refused, the agent serves nothing after it.
LEFT_UNTESTED = {"initialization.first+refused": {r.id for r in RULES} - {
    "initialization.first", "jsonrpc.envelope", "capabilities.known-method", "capabilities.agent-advertised"}}


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
    assert {r["id"]: r["level"] for r in document["requirements"]} == {r.id: r.level for r in RULES}
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    failed = {case.get("name") for case in cases if case.find("failure") is not None}
    advised = {case.get("name") for case in cases if "advice: " in (case.findtext("system-out") or "")}
    for names, advice in ((failed, False), (advised, True)):
        assert names == {r["id"] for r in document["requirements"]
                         if r["outcome"] in ("failed", "advised") and (r["level"] == "ADVICE") == advice}
    return document, done.returncode


def outcomes(document: dict) -> dict[str, str]:
    return {r["id"]: r["outcome"] for r in document["requirements"]}


_PAGES = json.loads((TESTS / "data" / "spec_anchors_v1.7.0.json").read_text())
ANCHORS = {page for page in _PAGES if page.startswith("protocol/")} | {
    f"{page}#{anchor}" for page, anchors in _PAGES.items() if page.startswith("protocol/") for anchor in anchors
}


def test_each_level_is_the_keyword_its_cited_sentence_gives_the_client():
    """A level is read from the record of the sentence it rests on (the section, the peer it
    binds, its keyword), never set: MUST and SHOULD only where the sentence binds the client so;
    each section a page or heading of ACP v1.7.0's docs (or JSON-RPC 2.0's text)."""
    assert level_for("client", "MUST NOT", "client") == MUST and level_for("either", "SHOULD", "client") == SHOULD
    assert level_for("agent", "MUST", "client") == level_for("client", "MAY", "client") == level_for("", "", "client") == ADVICE
    for rule in RULES:
        assert rule.binds in ("client", "agent", "either", ""), rule
        assert rule.keyword in ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY", ""), rule
        assert rule.binds or not rule.keyword, f"{rule.id}: a keyword binds some peer"
        for version in (1, 2):
            requirement = rule.requirement(version)
            assert requirement.level == level_for(rule.binds, rule.keyword, "client")
            section = requirement.section
            assert section.startswith("https://www.jsonrpc.org/specification#") or section in ANCHORS, section
    assert BY_ID["fs.read"].requirement(2).section == "protocol/v1/file-system#reading-files"  # v2: none


def _transcript(*messages: tuple[str, dict]) -> list[tuple[float, str, dict]]:
    return [(float(i), direction, {"jsonrpc": "2.0", **m}) for i, (direction, m) in enumerate(messages)]


HELLO = ("received", {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
ADVERTISED = ("sent", {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {"loadSession": False}}})
NEW = (("received", {"id": 1, "method": "session/new", "params": {"cwd": "/"}}),
       ("sent", {"id": 1, "result": {"sessionId": "s"}}))


def test_judged_on_the_wire_an_error_ends_a_turn_and_a_refused_initialize_is_none():
    """What acplint found: a prompt answered with an error ends its turn (the next is no second
    one); a client whose only initialize was refused did not initialize; a notification of a
    method the agent did not advertise breaks the capability, though nothing answers it. Advice
    not taken opens its line NOTE and leaves the exit status 0."""
    from acpgen.runtime._runtime.kits._client_rules import judge
    from acpgen.runtime._runtime.kits._kit_report import exit_status, report_lines

    def found(*messages):
        return {v.requirement.id: (v.outcome, v.detail) for v in judge(_transcript(*messages), {}, 1, GATES)}

    GATES = {"session/load": "/result/agentCapabilities/loadSession"}
    prompt = {"method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}
    turns = found(HELLO, ADVERTISED, *NEW, ("received", {"id": 2, **prompt}),
                  ("sent", {"id": 2, "error": {"code": -32602, "message": "Invalid params"}}),
                  ("received", {"id": 3, **prompt}), ("sent", {"id": 3, "result": {"stopReason": "end_turn"}}))
    assert turns["prompt.one-at-a-time"] == ("passed", "") and turns["initialization.first"] == ("passed", "")
    refused = found(HELLO, ("sent", {"id": 0, "error": {"code": -32602, "message": "Invalid params"}}), *NEW)
    assert refused["initialization.first"][0] == "failed" and "refused" in refused["initialization.first"][1]
    never = found(("received", {"id": 5, "method": "authenticate", "params": {"methodId": "x"}}))
    assert never["initialization.first"][0] == "failed"
    loaded = found(HELLO, ADVERTISED, ("received", {"method": "session/load", "params": {"sessionId": "s"}}))
    assert loaded["capabilities.agent-advertised"][0] in ("failed", "advised") and "loadSession" in loaded["capabilities.agent-advertised"][1]
    overlapping = judge(_transcript(HELLO, ADVERTISED, *NEW, ("received", {"id": 2, **prompt}),
                                    ("received", {"id": 3, **prompt})), {}, 1, GATES)
    lines = report_lines(overlapping)
    assert any(line.startswith("NOTE ADVICE prompt.one-at-a-time ") for line in lines), lines
    assert exit_status(overlapping) == 0


def test_with_its_initialize_refused_a_client_calling_a_gated_method_breaks_the_capability():
    """What acplint did: its initialize refused, it called session/load. With no initialize
    answered nothing is advertised, so a capability-gated call fails (one not gated passes)."""
    from acpgen.runtime._runtime.kits._client_rules import judge

    gates = {"session/load": "/result/agentCapabilities/loadSession"}
    refused = ("sent", {"id": 0, "error": {"code": -32602, "message": "Invalid params"}})
    load = ("received", {"id": 2, "method": "session/load", "params": {"sessionId": "s", "cwd": "/"}})
    loaded = {v.requirement.id: v for v in judge(_transcript(HELLO, refused, *NEW, load), {}, 1, gates)}
    verdict = loaded["capabilities.agent-advertised"]
    assert verdict.outcome == "failed" and "session/load" in verdict.detail, verdict
    plain = {v.requirement.id: v for v in judge(_transcript(HELLO, refused, *NEW), {}, 1, gates)}
    assert plain["capabilities.agent-advertised"].outcome == "passed"


def test_every_requirement_has_a_mode_of_the_sloppy_client_that_breaks_it():
    assert {r.id for r in RULES} <= {m.partition("+")[0] for m in MODES}


def test_a_client_that_keeps_every_requirement_passes_each(tmp_path):
    """The sloppy client told to break nothing, and to cancel its turn while the permission
    request is pending (so that every requirement is tested), passes all; exit status 0."""
    page = tmp_path / "session.html"
    document, status = checked(tmp_path, [sys.executable, str(SLOPPY), "cancel", "--"], "--html", str(page))
    assert set(outcomes(document).values()) == {"passed"}, document
    assert (status, document["exitStatus"]) == (0, 0)
    assert len(list(ET.parse(tmp_path / "junit.xml").getroot().iter("testcase"))) == len(RULES)
    assert "session/request_permission" in page.read_text(), "the inspector's page of the connection"


def test_a_client_that_reads_but_never_writes_is_asked_to_read_a_file_the_agent_put_there(tmp_path):
    """``fs.read`` is tested wherever the client advertises reads: the agent puts the file in the
    session's cwd itself (and removes it)."""
    document, status = checked(tmp_path, [sys.executable, str(SLOPPY), "read-only", "--"])
    found = outcomes(document)
    assert (found["fs.write"], found["fs.read"], status) == ("not applicable", "passed", 0), document
    assert not list(tmp_path.glob(".acp-client-check*")), "the kit leaves no file behind"


def test_a_package_of_one_side_offers_no_html_page(tmp_path):
    """Neither kit of a package of one side, which has no inspector, offers ``--html``: ``--help``
    does not name it, and it is a usage error."""
    from support import write_package

    from acpgen import Options, generate

    write_package(generate(Options(side="client", package="one_side")).files, tmp_path)
    env = env_for(tmp_path)
    for module in ("one_side.stub_agent", "one_side.conformance"):
        helped = subprocess.run([sys.executable, "-m", module, "--help"], env=env, capture_output=True, text=True,
                                timeout=30, check=False)
        assert helped.returncode == 0 and "--json" in helped.stdout and "--html" not in helped.stdout, helped
        refused = subprocess.run([sys.executable, "-m", module, "--check" if "stub" in module else "--json",
                                  "--html", "page.html", "--", "true"], env=env, capture_output=True, text=True,
                                 timeout=30, check=False, cwd=tmp_path)
        assert refused.returncode == 2 and "unrecognized arguments: --html" in refused.stderr, refused
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("mode", BREAKS)
def test_a_sloppy_client_fails_just_the_requirement_it_breaks(tmp_path, mode):
    """Each break fails its requirement alone; an ADVICE (what the text does not require of a
    client) is shown, in the JSON and the JUnit file, and leaves the exit status 0."""
    requirement = mode.partition("+")[0]
    document, status = checked(tmp_path, [sys.executable, str(SLOPPY), mode, "--"], *AGENT_OPTIONS.get(mode, ()))
    found = outcomes(document)
    assert [rid for rid, outcome in found.items() if outcome in ("failed", "advised")] == [requirement], document
    detail = next(r["detail"] for r in document["requirements"] if r["id"] == requirement)
    assert detail, "a failure quotes what broke it"
    untested = LEFT_UNTESTED.get(mode, {"permission.cancelled-after-cancel"} - {requirement})
    assert {rid for rid, outcome in found.items() if outcome == "not applicable"} == untested
    assert (status, document["exitStatus"]) == ((1, 1) if requirement in MUSTS else (0, 0))


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
    assert applicable >= {"initialization.first", "capabilities.agent-advertised", "session.additional-directories",
                          "permission.offered-option", "fs.write", "fs.read", "jsonrpc.ids", "prompt.known-session",
                          "jsonrpc.envelope"}
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
    assert lines[-1] == "9 passed, 0 failed (0 MUST), 4 not applicable", lines
    assert any(line.startswith("PASS MUST   session.additional-directories ") for line in lines), lines
    # the draft's own pages cited, v1's where it has none (it has no file system)
    assert any(line.startswith("PASS MUST   initialization.first ") and line.endswith(" protocol/v2/initialization")
               for line in lines), lines
    assert any(line.startswith("N/A  ADVICE fs.read ") and " protocol/v1/file-system#reading-files: " in line
               and "has no fs/read_text_file" in line for line in lines), lines
    assert any(line.startswith("PASS ADVICE permission.offered-option ") for line in lines)


def test_the_root_stub_agent_of_several_versions_checks_the_client_in_the_version_it_speaks(tmp_path):
    from support.versions import several_versions_package

    folder = several_versions_package()
    report, page = tmp_path / "report.json", tmp_path / "page.html"
    done = subprocess.run([sys.executable, "-m", "both.stub_client", "--protocol-version", "1", "--prompt", "hi", "--",
                           sys.executable, "-m", "both.stub_agent", "--check", "--json", "--report", str(report),
                           "--html", str(page)],
                          cwd=tmp_path, env=env_for(folder), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    document = json.loads(report.read_text())
    assert document["protocolVersion"] == 1 and document["exitStatus"] == 0, document
    assert outcomes(document)["permission.offered-option"] == "passed"
    assert "session/request_permission" in page.read_text(), "the page of the version spoken"


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


# -- the guides ------------------------------------------------------------------------------------

(CI,) = docs.blocks("guides/conformance.md", "sh", "In CI")


def _recipe_folder(tmp_path: Path, *client_options: str) -> dict[str, str]:
    """``./my-agent`` (the stub agent) and ``./my-client`` (a client written with the official
    Python SDK) in ``tmp_path``; the environment the recipe runs in."""
    for name, command in (("my-agent", f"{sys.executable} -m acp_bindings.stub_agent"),
                          ("my-client", f"{sys.executable} {INTEROP / 'sdk_kit_client.py'} {' '.join(client_options)}")):
        (tmp_path / name).write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        (tmp_path / name).chmod(0o755)
    env = child_env()
    return {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', os.environ['PATH'])}"}


def _run(text: str, tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", text], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_ci_recipe_runs_both_kits_as_written(tmp_path):
    done = _run(CI.text, tmp_path, _recipe_folder(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "client-kit.json").read_text())["exitStatus"] == 0
    for junit in ("agent-kit.xml", "client-kit.xml"):
        cases = list(ET.parse(tmp_path / junit).getroot().iter("testcase"))
        assert cases and not [c for c in cases if c.find("failure") is not None], junit


def test_the_ci_recipe_fails_a_client_that_swallows_its_agents_verdict(tmp_path):
    """A client written with the official Python SDK shows neither its agent's exit status nor
    its stderr: breaking ``fs.write`` (MUST), it exits 0 and prints no report; the recipe's last
    line reads the verdict from the report, and fails."""
    env = _recipe_folder(tmp_path, "--null-write")
    client = CI.text[CI.text.index("# a client"):]
    start, read = client.splitlines()[1:3], client.splitlines()[3]
    assert start[1].startswith("./my-client ") and read.startswith("python -c ")
    started = _run("\n".join(start), tmp_path, env)
    assert started.returncode == 0 and "fs.write" not in started.stdout + started.stderr, started
    report = json.loads((tmp_path / "client-kit.json").read_text())
    assert outcomes(report)["fs.write"] == "failed" and report["exitStatus"] == 1, report
    assert _run(read, tmp_path, env).returncode == 1
    (tmp_path / "client-kit.json").unlink()
    assert _run(read, tmp_path, env).returncode != 0, "no report: the job fails"


def test_the_guides_table_is_the_client_kits_requirements():
    """The table of Writing a client: every requirement, its level, the peer it binds and its
    section (v1's), as the kit records them, and nothing else."""
    page = (ROOT / "docs" / "guides" / "writing-a-client.md").read_text()
    table = page[page.index("| id | level | binds | section |"):]
    rows = [line.split(" | ") for line in table.splitlines()[2:] if line.startswith("| `")]
    assert [row[0].strip("| `") for row in rows] == [r.id for r in RULES]
    for (_, level, binds, section, *_), rule in zip(rows, RULES):
        requirement = rule.requirement(1)
        link = requirement.section if requirement.section.startswith("http") else \
            f"https://agentclientprotocol.com/{requirement.section}"
        assert (level, section.endswith(f"]({link})")) == (rule.level, True), (rule.id, level, section)
        assert binds.startswith(rule.binds or "—"), (rule.id, binds)
