"""The agent kit against agents as real ones behave on the wire (``support/rough_agent.py``, in
front of the stub agent): a turn that streams for a minute, a flood of updates, a silent turn, a
login that never answers, an agent that answers with the wrong id, refuses everything, dies after
``initialize`` or prints garbage, and one that leaves a child holding its pipes. Each verdict is
one line that says what the wire shows, within the times the guide gives."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import BINDINGS, ROOT
from support.interpreters import interpreters
from support.kit import agents_import, details, kit_module, outcomes, run_kit
from support.processes import alive, started_pids

ROUGH = ROOT / "tests" / "support" / "rough_agent.py"
STUB = [sys.executable, "-m", "acp_bindings.stub_agent"]


def rough(modes: str, *stub_args: str) -> list[str]:
    return [sys.executable, str(ROUGH), modes, "--", *STUB, *stub_args]


def kit(monkeypatch: Any, tmp_path: Path, modes: str, *args: str, stub_args: tuple[str, ...] = ()) -> tuple[
        int, dict[str, Any], float]:
    """The kit's exit status, report and wall time against the stub agent behind ``modes``."""
    agents_import(monkeypatch, BINDINGS)
    started = time.monotonic()
    status, report = run_kit(kit_module("acp_bindings", BINDINGS), *args, "--cwd", str(tmp_path), "--",
                             *rough(modes, *stub_args))
    return status, report, time.monotonic() - started


def verdict(report: dict[str, Any], requirement: str) -> tuple[str, str]:
    found = next(r for r in report["requirements"] if r["id"] == requirement)
    return found["outcome"], found["detail"] or ""


def checks_run(monkeypatch: Any, tmp_path: Path, command: list[str], ids: set[str], patience: float) -> dict[
        str, tuple[str, str]]:
    """Only the checks ``ids``, against ``command``, with ``patience`` (the --timeout)."""
    from acp_bindings._runtime.kits import _kit_agent, _kit_checks, _kit_peer

    agents_import(monkeypatch, BINDINGS)
    target = kit_module("acp_bindings", BINDINGS).TARGET

    async def connect() -> Any:
        return _kit_peer.Peer(await _kit_peer.StdioLink.start(command, cwd=str(tmp_path)), patience)

    checks = [c for c in _kit_checks.requirements(target) if c.id in ids]
    found, _ = asyncio.run(_kit_agent.run(target, checks, connect, str(tmp_path), str(tmp_path)))
    return {v.requirement.id: (v.outcome, v.detail or "") for v in found}


# -- timeouts ---------------------------------------------------------------------------------------


def test_a_turn_that_streams_for_a_minute_passes_with_the_default_timeout(monkeypatch, tmp_path):
    """The first turn (prompt.stop-reason's) streams an update every half second for 60 s: the
    default --timeout (10 s) bounds the silence, not the turn."""
    status, report, took = kit(monkeypatch, tmp_path, "stream=60:0.5:1")
    assert outcomes(report, "failed") == set(), details(report)
    assert verdict(report, "prompt.stop-reason")[0] == "passed" and status == 0
    assert took >= 60


def test_a_flood_of_updates_before_end_turn_passes_the_turns_requirements(monkeypatch, tmp_path):
    """Each turn streams updates for 3 s (hundreds a second) before it ends; --timeout 2."""
    ids = {"prompt.stop-reason", "prompt.cancellation", "prompt.no-update-after-cancel", "extensibility.meta"}
    found = checks_run(monkeypatch, tmp_path, rough("stream=3:0.002:0"), ids, 2.0)
    assert found == dict.fromkeys(ids, ("passed", "")), found


def test_a_silent_turn_is_called_stuck_after_the_idle_time(monkeypatch, tmp_path):
    started = time.monotonic()
    found = checks_run(monkeypatch, tmp_path, rough("silent"), {"prompt.stop-reason"}, 2.0)
    took = time.monotonic() - started
    outcome, detail = found["prompt.stop-reason"]
    assert outcome == "failed" and "nothing of that session came for 2 s (--timeout)" in detail, detail
    assert 2 <= took < 10


def test_the_runs_bound_fails_the_check_it_cuts_short_and_runs_no_other(monkeypatch, tmp_path):
    status, report, took = kit(monkeypatch, tmp_path, "stream=60:0.5:1", "--run-timeout", "8")
    cut = [r for r in report["requirements"] if r["detail"] == "the run's bound of 8 s (--run-timeout) passed during it"]
    # the first check that runs a turn (a prompt for a session never made: advice, so advised)
    assert [(r["id"], r["outcome"]) for r in cut] == [("session.unknown-session", "advised")]
    assert outcomes(report, "passed") >= {"initialization.version-negotiation", "session.unique-ids"}
    assert all(verdict(report, r)[1].startswith("not run: the run's bound") for r in outcomes(report, "not applicable"))
    assert status == 1 and took < 20


# -- wire-true diagnoses, each a line within 15 s with the default timeout ---------------------------


def test_an_answer_to_an_id_no_request_carried_is_quoted(monkeypatch, tmp_path):
    status, report, took = kit(monkeypatch, tmp_path, "wrong-id")
    outcome, detail = verdict(report, "initialization.version-negotiation")
    assert outcome == "failed" and "it answered an id no request carried" in detail and '"id":"zzz"' in detail
    outcome, detail = verdict(report, "jsonrpc.ids-echoed")
    assert outcome == "failed" and '"id":"zzz"' in detail
    assert status == 1 and took < 15


def test_an_agent_refusing_everything_is_reported_by_the_first_refusal(monkeypatch, tmp_path):
    status, report, took = kit(monkeypatch, tmp_path, "refuse")
    outcome, detail = verdict(report, "session.unique-ids")
    assert outcome == "failed" and '"code":-32601' in detail, detail
    assert not any("no longer serves" in (r["detail"] or "") for r in report["requirements"]), details(report)
    for requirement in ("prompt.stop-reason", "extensibility.unknown-notification", "jsonrpc.parse-error"):
        outcome, detail = verdict(report, requirement)
        assert outcome == "not applicable" and "refused from the first" in detail and "session.unique-ids" in detail
    assert status == 1 and took < 15


def test_an_agent_dying_after_initialize_is_reported_once(monkeypatch, tmp_path):
    status, report, took = kit(monkeypatch, tmp_path, "die-after-initialize")
    assert outcomes(report, "failed") == {"session.unique-ids"}, details(report)
    detail = verdict(report, "session.unique-ids")[1]
    assert "exited with status 3" in detail and "rough agent: giving up after initialize" in detail
    assert outcomes(report, "passed") <= {"initialization.version-negotiation", "initialization.implementation-info",
                                          "transports.stdout-hygiene"}  # what it wrote was JSON-RPC
    assert status == 1 and took < 15


def test_an_agent_printing_garbage_is_reported_with_what_it_printed(monkeypatch, tmp_path):
    """Its lines, one every 0.3 s, are no sign of life: the default 10 s of silence end it."""
    status, report, took = kit(monkeypatch, tmp_path, "garbage")
    outcome, detail = verdict(report, "initialization.version-negotiation")
    assert outcome == "failed" and "not JSON-RPC, the first: Loading the model" in detail, detail
    assert verdict(report, "transports.stdout-hygiene")[0] == "failed"
    assert status == 1 and took < 15


def test_every_diagnosis_is_one_line(monkeypatch, tmp_path):
    for modes in ("wrong-id", "die-after-initialize"):
        _, report, _ = kit(monkeypatch, tmp_path, modes)
        assert all("\n" not in (r["detail"] or "") for r in report["requirements"])


# -- cancellation, authentication, children ----------------------------------------------------------


def test_cancellation_it_could_not_test_says_why(monkeypatch, tmp_path):
    """Every turn ends at once, before the agent reads on: both tries come too late."""
    found = checks_run(monkeypatch, tmp_path, rough("instant"), {"prompt.cancellation"}, 3.0)
    outcome, detail = found["prompt.cancellation"]
    assert outcome == "not applicable" and detail.startswith("could not test it: with the prompt, the turn ended")
    assert "during a long turn" in detail


def test_the_kit_logs_in_only_when_an_answer_asks(monkeypatch, tmp_path, capfd):
    from acp_bindings._runtime.kits import _kit_agent, _kit_checks, _kit_peer

    agents_import(monkeypatch, BINDINGS)
    target = kit_module("acp_bindings", BINDINGS).TARGET
    for args in ((), ("--require-auth",)):
        async def connect(args: tuple[str, ...] = args) -> Any:
            return _kit_peer.Peer(await _kit_peer.StdioLink.start([*STUB, *args], cwd=str(tmp_path)), 10.0)

        checks = [c for c in _kit_checks.requirements(target) if c.id in {"session.unique-ids", "prompt.stop-reason"}]
        found, ran = asyncio.run(_kit_agent.run(target, checks, connect, str(tmp_path), str(tmp_path)))
        assert [v.outcome for v in found] == ["passed", "passed"], [v.detail for v in found]
        sent = [line for _, direction, line in ran.peers[0].transcript if direction == _kit_peer.CLIENT_TO_AGENT]
        logins = [line for line in sent if b'"method":"authenticate"' in line]
        assert len(logins) == (1 if args else 0)
    said = capfd.readouterr().err
    assert said.count("asking for authentication: calling authenticate") == 1, said


def test_a_login_that_never_answers_is_reported_as_such(monkeypatch, tmp_path):
    status, report, took = kit(monkeypatch, tmp_path, "deaf-login", "--timeout", "2", stub_args=("--require-auth",))
    outcome, detail = verdict(report, "session.unique-ids")
    assert outcome == "failed" and "asking for authentication; authenticate with" in detail, detail
    assert "nothing came for 2 s" in detail
    assert verdict(report, "prompt.stop-reason")[0] == "not applicable"
    assert verdict(report, "initialization.version-negotiation")[0] == "passed"
    assert status == 1 and took < 15


def test_an_agent_whose_child_holds_its_pipes_is_ended_in_bounded_time(monkeypatch, tmp_path):
    """It leaves behind a process that holds stdout and stderr and ignores SIGTERM; the kit
    ends it (the agent's process group) each time it closes a connection."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("ROUGH_PIDS", str(pids))
    try:
        status, report, took = kit(monkeypatch, tmp_path, "launcher", "--timeout", "3")
        assert outcomes(report, "failed") == set(), details(report)
        assert status == 0 and took < 30
        assert [pid for pid in started_pids(pids) if alive(pid)] == []
    finally:
        started_pids(pids, end=True)


@pytest.mark.parametrize("version", [(3, 10), (3, 13)], ids=["3.10", "3.13"])
def test_the_kit_ends_such_an_agent_under_the_oldest_and_newest_python(version, tmp_path):
    """The kit in a process of its own under that Python (asyncio waits for a child's pipes
    differently across versions), against the same agent."""
    found = interpreters()
    assert version in found, f"no Python {version} found: {sorted(found)}"
    pids = tmp_path / "pids"
    env = {**os.environ, "PYTHONPATH": str(BINDINGS), "ROUGH_PIDS": str(pids)}
    try:
        done = subprocess.run([found[version], "-m", "acp_bindings.conformance", "--timeout", "3", "--cwd",
                               str(tmp_path), "--", *rough("launcher")], env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "FAIL" not in done.stdout
        assert [pid for pid in started_pids(pids) if alive(pid)] == []
    finally:
        started_pids(pids, end=True)
