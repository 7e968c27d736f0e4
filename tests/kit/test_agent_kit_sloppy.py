"""The agent kit against sloppy agents: the stub agent with changes on the wire
(``support/sloppy_agent.py``), each break made to fail one requirement and no other (or, for a
requirement of the level ADVICE, to be advised on it, never failed).

Here the breaks run in groups that leave each other alone (on the stub agents of v1, of the spec's
v2 draft and of the root of the TypeScript SDK's two versions), one of them ("advice") breaking
only what the text does not require: exit status 0. ``make conformance`` runs each break alone
(``tests/kit/test_agent_kit_matrix.py``). A demanding agent, which breaks nothing the text asks,
fails nothing.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
from support import BINDINGS
from support.kit import (
    V2_DELAY,
    agents_import,
    details,
    kit_module,
    outcomes,
    run_kit,
    sloppy_breaks,
    sloppy_command,
)
from support.versions import several_versions_package, v2_package

#: The breaks of the sloppy agent in groups that leave each other alone, each on the stub agent of
#: a package: the bundled schema's (v1), the spec's v1.7.0 v2 draft's, the v2 of the root of the
#: TypeScript SDK's two versions. The group "advice" breaks only what the text does not require.
GROUPS = {
    "v1-a": ["initialization.version-negotiation", "prompt.cancellation", "capabilities.load", "capabilities.resume",
             "jsonrpc.ids-echoed", "transports.stdout-hygiene", "capabilities.list.unadvertised",
             "capabilities.close.unadvertised", "capabilities.fork.unadvertised",
             "capabilities.logout.unadvertised"],
    "v1-b": ["initialization.implementation-info", "session.unique-ids", "prompt.stop-reason",
             "prompt.no-update-after-cancel", "capabilities.list",
             "capabilities.close", "capabilities.fork", "capabilities.logout", "capabilities.additional-directories",
             "capabilities.config-options", "capabilities.prompt-content", "jsonrpc.method-not-found",
             "jsonrpc.notification-no-reply", "extensibility.unknown-notification", "capabilities.resume.unadvertised",
             "extensibility.unknown-request",
             "session-load.replay-first"],
    "advice": ["session.unknown-session", "capabilities.modes", "auth.unknown-method", "jsonrpc.invalid-params",
               "jsonrpc.invalid-request", "jsonrpc.parse-error", "extensibility.meta", "extensibility.method-not-found",
               "transports.shutdown", "capabilities.load.unadvertised"],
    "v2": ["session-list.invalid-cursor", "session-list.omitted-params", "session-delete.unknown-session"],
    "v2-b": ["capabilities.delete.unadvertised", "capabilities.logout.unadvertised"],
    "root-v2": ["capabilities.delete"],
}


def _stub_of(group: str) -> tuple[Path, str, str, tuple[str, ...]]:
    """The folder, the package (whose kit runs), the stub agent's module and its arguments."""
    if group.startswith("v2"):
        folder, package = v2_package("v1.7.0")
        return folder, package, f"{package}.stub_agent", V2_DELAY
    if group == "root-v2":
        return several_versions_package(), "both", "both.v2.stub_agent", V2_DELAY
    return BINDINGS, "acp_bindings", "acp_bindings.stub_agent", ()


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_a_sloppy_agent_fails_just_the_requirements_it_breaks(group, monkeypatch):
    breaks = GROUPS[group]
    folder, package, stub, extra = _stub_of(group)
    agents_import(monkeypatch, folder)
    module = kit_module(package, folder)
    status, report = run_kit(module, "--timeout", "3", "--",
                             *sloppy_command(breaks, [sys.executable, "-m", stub, *extra]))
    levels = {r["id"]: r["level"] for r in report["requirements"]}
    # a break of what the text requires fails it; of what it does not, is advised on, never a failure
    assert outcomes(report, "failed") == {b for b in breaks if levels[b] != "ADVICE"}, details(report)
    assert outcomes(report, "advised") == {b for b in breaks if levels[b] == "ADVICE"}, details(report)
    assert status == report["exitStatus"] == (1 if any(levels[b] == "MUST" for b in breaks) else 0)
    if group == "advice":  # every lapse one the text does not forbid: it passes, with advice
        assert status == 0 and outcomes(report, "failed") == set()
    if group == "v1-a":  # the list capability taken away: its paging cannot be tested
        assert {"session-list.omitted-params", "session-list.invalid-cursor"} <= outcomes(report, "not applicable")
        quoted = {r["id"]: r["detail"] for r in report["requirements"]}
        assert '"protocolVersion":999' in quoted["initialization.version-negotiation"]
        assert "sloppy agent starting up" in quoted["transports.stdout-hygiene"]


def test_every_requirement_is_broken_by_some_sloppy_agent():
    """The groups above break every requirement a package can have (one of both versions, in a
    group of each)."""
    grouped = [b for breaks in GROUPS.values() for b in breaks]
    assert sorted(set(grouped)) == sorted(sloppy_breaks())
    v2 = kit_module(*reversed(v2_package("v1.7.0")))
    ids = {c.id for m in (kit_module("acp_bindings", BINDINGS), v2) for c in _checks(m)}
    assert ids == set(grouped)


def _checks(module: Any) -> list[Any]:
    return list(importlib.import_module(f"{module.__package__}._runtime.kits._kit_checks").requirements(module.TARGET))


def test_a_demanding_agent_that_keeps_the_text_passes(monkeypatch):
    """An agent that loads, resumes, forks, closes and lists only sessions that have had a turn,
    answers a prompt on a closed session -32603, refuses an image that is no PNG and answers a
    change of configuration with an option it brings; that follows a load's answer with the
    session's commands and title (claude-agent-acp, opencode), answers a request whose method is
    a number -32600 with the id null (claude-agent-acp) and sends another live session's
    commands during a turn (qwen-code): all the text allows, so the kit, asking as a client
    would, fails nothing of it and advises nothing."""
    agents_import(monkeypatch, BINDINGS)
    module = kit_module("acp_bindings", BINDINGS)
    status, report = run_kit(module, "--timeout", "3", "--",
                             *sloppy_command(["demanding"], [sys.executable, "-m", "acp_bindings.stub_agent"]))
    assert outcomes(report, "failed") == outcomes(report, "advised") == set(), details(report)
    assert {"capabilities.load", "capabilities.resume", "capabilities.fork", "capabilities.close",
            "capabilities.list", "capabilities.config-options", "capabilities.prompt-content",
            "session-load.replay-first", "jsonrpc.invalid-request", "prompt.stop-reason"} <= outcomes(report, "passed")
    assert status == 0
