"""The agent kit (``python -m <package>.conformance``) against agents that keep the spec.

The stub agent of each kind of package (v1, the spec's v2 draft, the root of the TypeScript SDK's
v1 and v2) over each transport (stdio, WebSocket, Streamable HTTP) under each flavour of models,
once each: a combination-covering subset (``make conformance`` runs them all); the kit's reports
(JSON, JUnit read back by a parser, the inspector's page) and its exit status. ``test_agent_kit_sloppy.py`` holds the other half: agents made to break requirements;
``tests/docs/test_docs_kits.py`` holds every agent and client of the docs and ``examples/``.
The kit runs in this process (its module's ``main``); the agents are child processes.
"""

from __future__ import annotations

import importlib
import re
import sys
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from support import BINDINGS, ROOT, docs
from support.flavours import pydantic_folder
from support.kit import (
    V2_DELAY,
    agents_import,
    details,
    kit_module,
    listening,
    outcomes,
    run_kit,
)
from support.versions import several_versions_package, v2_package


def advertised(report: dict[str, Any]) -> set[str]:
    """The unadvertised halves of capability gating: not applicable to an agent that advertises
    every capability it serves, as the stub agents do."""
    return {r["id"] for r in report["requirements"] if r["id"].endswith(".unadvertised")}


def test_the_v1_stub_agent_meets_every_requirement_with_a_junit_and_html_report(tmp_path, monkeypatch):
    """v1, stdio, dataclasses; the JUnit file read back by a JUnit parser; the page written."""
    agents_import(monkeypatch, BINDINGS)
    module = kit_module("acp_bindings", BINDINGS)
    junit, html = tmp_path / "kit.xml", tmp_path / "kit.html"
    status, report = run_kit(module, "--junit", str(junit), "--html", str(html), "--cwd", str(tmp_path), "--",
                             sys.executable, "-m", "acp_bindings.stub_agent")
    assert outcomes(report, "failed") == set(), details(report)
    assert outcomes(report, "not applicable") == advertised(report), details(report)  # it serves all it defines
    assert len(advertised(report)) == 6 and outcomes(report, "advised") == set()
    assert len(report["requirements"]) == 39 and status == report["exitStatus"] == 0
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "acp-agent-conformance-v1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {r["id"] for r in report["requirements"]}
    assert all((cases[r["id"]].find("failure") is not None) == (r["outcome"] == "failed") for r in report["requirements"])
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and "session/prompt" in page and "initialize" in page
    # the lines the guide shows are lines the kit prints for it
    from acp_bindings._runtime.kits import _kit_report as kit_report

    verdicts = [kit_report.Verdict(kit_report.Requirement(r["id"], r["level"], r["section"], r["text"]),
                                   r["outcome"], r["detail"]) for r in report["requirements"]]
    lines = kit_report.report_lines(verdicts)
    assert [line for line in OUTPUT.text.splitlines() if line not in lines] == []


def test_the_v2_stub_agent_meets_every_requirement_over_websocket():
    """The spec's v1.7.0 v2 draft, WebSocket, dataclasses: turns end with a state_update to idle."""
    folder, package = v2_package("v1.7.0")
    module = kit_module(package, folder)
    with listening(package, folder, *V2_DELAY) as port:
        status, report = run_kit(module, "--url", f"ws://127.0.0.1:{port}/acp", "--token", "s3cret")
    assert outcomes(report, "failed") == set(), details(report)
    assert outcomes(report, "not applicable") == {"transports.stdout-hygiene", "transports.shutdown"} | advertised(
        report), details(report)
    assert outcomes(report, "passed") >= {"prompt.cancellation", "capabilities.delete", "jsonrpc.parse-error"}
    assert status == report["exitStatus"] == 0
    assert report["protocolVersion"] == 2


def test_the_pydantic_stub_agent_meets_every_requirement_over_streamable_http():
    """v1, Streamable HTTP, pydantic: a bad line cannot be sent there, nor stdout read."""
    folder = pydantic_folder()
    module = kit_module("acp_pydantic", folder)
    with listening("acp_pydantic", folder) as port:
        _, report = run_kit(module, "--url", f"http://127.0.0.1:{port}/acp", "--token", "s3cret")
    assert outcomes(report, "failed") == set(), details(report)
    assert outcomes(report, "not applicable") == {"jsonrpc.parse-error", "transports.stdout-hygiene",
                                                  "transports.shutdown"} | advertised(report), details(report)


def test_the_root_of_a_package_of_two_versions_holds_an_agent_to_the_one_it_answers(monkeypatch, capfd):
    """The TypeScript SDK's v1 and v2 schemas in one package: its root's kit asks, and holds the
    root's stub agent (which answers 2) to version 2."""
    folder = several_versions_package()
    agents_import(monkeypatch, folder)
    module = kit_module("both", folder)
    status, report = run_kit(module, "--", sys.executable, "-m", "both.v2.stub_agent", *V2_DELAY)
    assert "holding it to version 2" in capfd.readouterr().err
    assert status == report["exitStatus"]
    assert report["protocolVersion"] == 2
    assert {r["section"].split("/")[1] for r in report["requirements"] if r["section"].startswith("protocol/")} == {"v2"}
    assert outcomes(report, "failed") == set(), details(report)
    assert outcomes(report, "not applicable") == advertised(report), details(report)


@pytest.mark.parametrize(("args", "message"), [
    ([], "give the agent's command after -- (or --url URL)"),
    (["--url", "ws://127.0.0.1:1/acp", "--", "agent"], "give the agent's command after --, or --url, not both"),
    (["--token", "t", "--", "agent"], "--token needs --url"),
    (["--timeout", "0", "--", "agent"], "--timeout 0: give a number of seconds above 0"),
    (["--cwd", "/no/such/folder", "--", "agent"], "--cwd /no/such/folder: no such folder"),
])
def test_a_usage_error_is_one_line_and_exit_status_2(args, message, capsys):
    module = kit_module("acp_bindings", BINDINGS)
    with pytest.raises(SystemExit) as exited:
        module.main(args)
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(f"error: {message}")


def test_an_agent_that_cannot_start_is_exit_status_1(capsys, tmp_path):
    module = kit_module("acp_bindings", BINDINGS)
    assert module.main(["--", str(tmp_path / "no-such-agent")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("conformance: ") and "no-such-agent" in err


# -- the guide -------------------------------------------------------------------------------------

(USAGE, OUTPUT) = docs.blocks("guides/conformance.md", "")


def test_the_guides_usage_names_every_option_the_kit_takes(capsys):
    with pytest.raises(SystemExit):
        kit_module("acp_bindings", BINDINGS).main(["--help"])
    options = set(re.findall(r"--[a-z]+", capsys.readouterr().out)) - {"--help"}
    assert set(re.findall(r"--[a-z]+", USAGE.text)) == options


def _table() -> dict[str, list[str]]:
    page = (ROOT / "docs" / "guides" / "conformance.md").read_text()
    section = page.split("\n## Which requirements\n")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| `")]
    return {row[0].strip("| `"): row[1:] for row in rows}


def test_the_guides_table_is_the_kits_requirements():
    """Every requirement of the bundled schema's kit and of the spec's v2 draft's, in the guide's
    table with its level, the peer and keyword of its sentence, and its sections, and nothing else."""
    table = _table()
    folder, package = v2_package("v1.7.0")
    targets = {1: kit_module("acp_bindings", BINDINGS), 2: kit_module(package, folder)}
    checks = {version: {c.id: c for c in importlib.import_module(f"{m.__package__}._runtime.kits._kit_checks").requirements(m.TARGET)}
              for version, m in targets.items()}
    assert set(table) == set(checks[1]) | set(checks[2])
    for name, (level, binds, v1, v2, *_) in table.items():
        levels = {v: checks[v][name].level(v) for v in (1, 2) if name in checks[v]}
        assert level == (f"{levels[1]} (v1), {levels[2]} (v2)" if len(set(levels.values())) > 1 else
                         next(iter(levels.values()))), name
        # the peer the cited sentence binds and its keyword: the record the level is read from
        said = {v: f"{c.binds} {c.keyword or 'no keyword'}" for v in (1, 2) if name in checks[v]
                for c in [checks[v][name].cite(v)]}
        assert binds == (f"{said[1]} (v1), {said[2]} (v2)" if len(set(said.values())) > 1 else
                         next(iter(said.values()))), name
        for version, cell in ((1, v1), (2, v2)):
            check = checks[version].get(name) or checks[3 - version][name]
            section = check.cite(version).section
            link = section if section.startswith("http") else f"https://agentclientprotocol.com/protocol/v{version}/{section}"
            assert (cell == "—") == (name not in checks[version] and version == 2), (name, cell)
            if cell != "—":
                assert cell.endswith(f"]({link})"), (name, cell, link)


def test_an_agent_that_never_answers_fails_negotiation_and_gives_no_chance_to_test_the_rest(tmp_path):
    """Started once, not once per requirement: the rest is not applicable, never passed."""
    deaf = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    status, report = run_kit(kit_module("acp_bindings", BINDINGS), "--timeout", "1", "--cwd", str(tmp_path), "--",
                             *deaf)
    assert status == 1
    assert outcomes(report, "failed") == {"initialization.version-negotiation"}
    assert outcomes(report, "passed") == set()
    assert "no answer to initialize" in report["requirements"][0]["detail"]


def test_a_method_the_schema_gates_by_a_capability_is_held_to_both_halves(monkeypatch, tmp_path):
    """A method of the schema with a capability the kit knows nothing more of (the unstable ones):
    advertised, it must not answer -32601; not advertised, it is advised to. The stub agent serves
    ``session/new`` (-32602 for empty params) and not ``nes/start`` (-32601, as it refuses every
    method it does not serve, whatever the params): with each gated by a capability it
    advertises (``loadSession``) and by one it does not, each half passes once and fails (or is
    advised on) once."""
    import asyncio
    import dataclasses

    from acp_bindings._runtime.kits import _kit_agent, _kit_features, _kit_peer

    agents_import(monkeypatch, BINDINGS)
    target = kit_module("acp_bindings", BINDINGS).TARGET

    async def connect() -> Any:
        link = await _kit_peer.StdioLink.start([sys.executable, "-m", "acp_bindings.stub_agent"], cwd=str(tmp_path))
        return _kit_peer.Peer(link, 10.0)

    def verdicts(advertised: str, not_advertised: str) -> dict[str, str]:
        capabilities = {advertised: "/result/agentCapabilities/loadSession",
                        not_advertised: "/result/agentCapabilities/kitNothing"}
        gated = dataclasses.replace(target, capabilities=capabilities)
        checks = [c for c in _kit_features.feature_checks(gated) if c.id.startswith("capabilities.") and "/" in c.id]
        found, _ = asyncio.run(_kit_agent.run(gated, checks, connect, str(tmp_path), str(tmp_path)))
        return {v.requirement.id: (v.requirement.level, v.outcome) for v in found}

    # the advertised half is a MUST (initialize answers what the agent supports); the other, advice
    assert verdicts("session/new", "nes/start") == {
        "capabilities.session/new": ("MUST", "passed"),
        "capabilities.session/new.unadvertised": ("ADVICE", "not applicable"),
        "capabilities.nes/start": ("MUST", "not applicable"),
        "capabilities.nes/start.unadvertised": ("ADVICE", "passed")}
    assert verdicts("nes/start", "session/new") == {
        "capabilities.nes/start": ("MUST", "failed"),
        "capabilities.nes/start.unadvertised": ("ADVICE", "not applicable"),
        "capabilities.session/new": ("MUST", "not applicable"),
        "capabilities.session/new.unadvertised": ("ADVICE", "advised")}
