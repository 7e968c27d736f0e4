"""The agent kit against sloppy agents: the stub agent with changes on the wire
(``support/sloppy_agent.py``), each break made to fail one requirement and no other.

Here the breaks run in four groups that leave each other alone (on the stub agents of v1, of the
spec's v2 draft and of the root of the TypeScript SDK's two versions); ``make conformance`` runs
each break alone (``tests/kit/matrix.py``).
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
#: TypeScript SDK's two versions.
GROUPS = {
    "v1-a": ["initialization.version-negotiation", "session.unknown-session", "prompt.cancellation",
             "capabilities.load", "capabilities.resume", "capabilities.modes", "auth.unknown-method",
             "jsonrpc.ids-echoed", "jsonrpc.parse-error", "extensibility.unknown-request",
             "transports.stdout-hygiene", "capabilities.list:unadvertised"],
    "v1-b": ["initialization.implementation-info", "session.unique-ids", "prompt.stop-reason", "capabilities.list",
             "capabilities.close", "capabilities.fork", "capabilities.logout", "capabilities.additional-directories",
             "capabilities.config-options", "capabilities.prompt-content", "jsonrpc.method-not-found", "jsonrpc.invalid-params",
             "jsonrpc.invalid-request", "jsonrpc.notification-no-reply", "extensibility.meta",
             "extensibility.unknown-notification", "transports.shutdown", "capabilities.load:unadvertised"],
    "v2": ["session-list.invalid-cursor", "session-list.omitted-params", "session-delete.unknown-session"],
    "root-v2": ["capabilities.delete"],
}


def _stub_of(group: str) -> tuple[Path, str, str, tuple[str, ...]]:
    """The folder, the package (whose kit runs), the stub agent's module and its arguments."""
    if group == "v2":
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
    broken = {b.split(":")[0] for b in breaks}
    failed = outcomes(report, "failed")
    assert failed == broken, details(report)
    assert status == 1
    if group == "v1-a":  # the list capability taken away: its paging cannot be tested
        assert {"session-list.omitted-params", "session-list.invalid-cursor"} <= outcomes(report, "not applicable")
        quoted = {r["id"]: r["detail"] for r in report["requirements"]}
        assert '"protocolVersion":999' in quoted["initialization.version-negotiation"]
        assert "sloppy agent starting up" in quoted["transports.stdout-hygiene"]


def test_every_requirement_is_broken_by_some_sloppy_agent():
    """The groups above break every requirement a package can have, each in one group."""
    grouped = [b for breaks in GROUPS.values() for b in breaks]
    assert sorted(grouped) == sorted(sloppy_breaks())
    v2 = kit_module(*reversed(v2_package("v1.7.0")))
    ids = {c.id for m in (kit_module("acp_bindings", BINDINGS), v2) for c in _checks(m)}
    assert ids == {b.split(":")[0] for b in grouped}


def _checks(module: Any) -> list[Any]:
    return list(importlib.import_module(f"{module.__package__}._runtime.kits._kit_checks").requirements(module.TARGET))
