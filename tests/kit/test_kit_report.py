"""The conformance kits' report (``acpgen/runtime/_runtime/kits/_kit_report.py``): one line per requirement, the
whole report as JSON, JUnit XML read back by a parser, and the exit status a CI reads."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from acpgen.runtime._runtime.kits._kit_report import (
    FAILED,
    NOT_APPLICABLE,
    PASSED,
    Requirement,
    Verdict,
    exit_status,
    report_json,
    report_lines,
    write_junit,
)

NEGOTIATION = Requirement("initialization.version-negotiation", "MUST", 'initialization.mdx, "Version Negotiation"',
                          "The agent answers the version asked when it speaks it, else its latest.")
INFO = Requirement("initialization.implementation-info", "SHOULD", 'initialization.mdx, "Implementation Information"',
                   "initialize names the agent.")
LOAD = Requirement("capabilities.load-session", "MUST", 'session-setup.mdx, "Loading Sessions"',
                   "session/load, advertised, replays the session.")
BROKE = '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1000}}'
VERDICTS = [Verdict(NEGOTIATION, FAILED, f"asked for 999, answered: {BROKE}"),
            Verdict(INFO, PASSED),
            Verdict(LOAD, NOT_APPLICABLE, "the agent does not advertise loadSession")]


def test_one_line_per_requirement_then_the_totals():
    lines = report_lines(VERDICTS)
    assert len(lines) == 4
    assert lines[0].startswith("FAIL MUST   initialization.version-negotiation  initialization.mdx")
    assert lines[0].endswith(BROKE)
    assert lines[1].startswith("PASS SHOULD initialization.implementation-info ")
    assert lines[2].startswith("N/A  MUST   capabilities.load-session ") and "does not advertise" in lines[2]
    assert lines[3] == "1 passed, 1 failed (1 MUST), 1 not applicable"


def test_the_json_report_holds_every_verdict():
    report = json.loads(json.dumps(report_json(VERDICTS, subject="python sloppy.py")))
    assert report["subject"] == "python sloppy.py"
    assert [(r["id"], r["level"], r["outcome"]) for r in report["requirements"]] == [
        ("initialization.version-negotiation", "MUST", "failed"),
        ("initialization.implementation-info", "SHOULD", "passed"),
        ("capabilities.load-session", "MUST", "not applicable")]
    assert report["requirements"][0]["detail"].endswith(BROKE)
    assert report["summary"] == {"passed": 1, "failed": 1, "advised": 0, "not applicable": 1, "failed MUST": 1}
    assert report["exitStatus"] == 1


def test_junit_reads_back_one_case_per_requirement(tmp_path):
    path = tmp_path / "report.xml"
    write_junit(VERDICTS, path, suite="agent-conformance")
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("skipped")) == (
        "agent-conformance", "3", "1", "1")
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("agent-conformance.MUST", "initialization.version-negotiation"),
        ("agent-conformance.SHOULD", "initialization.implementation-info"),
        ("agent-conformance.MUST", "capabilities.load-session")]
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("message", "").endswith(BROKE)
    assert cases[1].find("failure") is None and cases[1].find("skipped") is None
    skipped = cases[2].find("skipped")
    assert skipped is not None and "loadSession" in skipped.get("message", "")
    properties = {p.get("name"): p.get("value") for p in cases[0].iter("property")}
    assert properties["section"] == 'initialization.mdx, "Version Negotiation"'
    assert [p.name for p in tmp_path.iterdir()] == ["report.xml"]  # no temporary file left


def test_only_a_failed_must_fails_the_run():
    assert exit_status(VERDICTS) == 1
    assert exit_status([Verdict(INFO, FAILED, "no agentInfo"), Verdict(LOAD, NOT_APPLICABLE, "n/a")]) == 0
    assert exit_status([Verdict(NEGOTIATION, PASSED)]) == 0
    assert exit_status([]) == 0


def test_a_misspelt_level_or_outcome_is_refused():
    with pytest.raises(ValueError, match="level 'MAY'"):
        Requirement("x", "MAY", "s", "t")
    with pytest.raises(ValueError, match="outcome 'ok'"):
        Verdict(INFO, "ok")


PARSE = Requirement("jsonrpc.parse-error", "ADVICE", "protocol/v1/transports#stdio",
                    "a line that is not JSON is answered -32700", binds="client", keyword="MUST NOT",
                    says="the client writes nothing on the agent's stdin but valid ACP messages")
ADVISED_ON = [Verdict(INFO, PASSED), Verdict(PARSE, FAILED, "a line that is not JSON was answered nothing")]


def test_advice_not_followed_is_a_note_never_a_failure(tmp_path):
    """A requirement of the level ADVICE that the peer does not keep: its line opens NOTE, the JSON
    says "advised", JUnit passes it with the advice in its properties and system-out, and the exit
    status is 0."""
    assert ADVISED_ON[1].outcome == "advised" and not ADVISED_ON[1].breaks
    lines = report_lines(ADVISED_ON)
    assert lines[1].split()[:4] == ["NOTE", "ADVICE", "jsonrpc.parse-error", "protocol/v1/transports#stdio:"]
    assert lines[2] == "1 passed, 0 failed (0 MUST), 1 advised, 0 not applicable"
    report = report_json(ADVISED_ON, subject="agent")
    assert report["summary"] == {"passed": 1, "failed": 0, "advised": 1, "not applicable": 0, "failed MUST": 0}
    parse = report["requirements"][1]
    assert (parse["level"], parse["outcome"], parse["binds"], parse["keyword"]) == (
        "ADVICE", "advised", "client", "MUST NOT")
    assert report["exitStatus"] == exit_status(ADVISED_ON) == 0
    path = tmp_path / "report.xml"
    write_junit(ADVISED_ON, path, suite="kit")
    (suite,) = ET.parse(path).getroot().findall("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "0")
    case = suite.findall("testcase")[1]
    assert case.get("classname") == "kit.ADVICE" and case.find("failure") is None and case.find("skipped") is None
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["advice"] == "a line that is not JSON was answered nothing"
    assert (properties["binds"], properties["keyword"]) == ("client", "MUST NOT")
    out = case.find("system-out")
    assert out is not None and (out.text or "").startswith("advice: a line that is not JSON was answered nothing")
