"""Both conformance kits on every version of our own stubs: the agent kit (``conformance``) against
a stub agent, the client kit (``stub_agent --check``) against a stub client, for the bundled
schema and each pair of :data:`support.versions.PAIRS`, a package of one version and one of two,
over stdio, a WebSocket and Streamable HTTP (the stub agent under uvicorn, ``--listen``).

A case names the release (``"bundled"`` or a pair's), the stub agent (``"v1"`` or ``"v2"``: the
package of that version alone; ``"both"``: the root stub agent of the package of both, which
routes each connection by its ``initialize``), the kit or the client (``"own"``: the agent's
package's; ``"v1"``, ``"v2"``: the version's of the package of both; ``"root"``: its root's, which
holds an agent to the version it answers; ``"root:N"``: the root's with ``--protocol-version N``)
and the transport. ``tests/kit/test_versions_kits.py`` runs a subset covering each release,
transport and version once; ``make conformance`` runs them all
(``tests/kit/test_versions_kits_matrix.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support import BINDINGS
from support.kit import (
    V2_DELAY,
    agents_import,
    details,
    kit_module,
    listening,
    outcomes,
    run_kit,
)
from support.versions import env_for, pair_package, v1_package, v2_package

#: What a kit cannot test over a remote transport: the agent's stdout and its end; over Streamable
#: HTTP, no line that is not JSON can be sent either.
REMOTE_NOT_APPLICABLE = {
    "stdio": set(),
    "ws": {"transports.stdout-hygiene", "transports.shutdown"},
    "http": {"transports.stdout-hygiene", "transports.shutdown", "jsonrpc.parse-error"},
}


def package(release: str, agent: str) -> tuple[Path, str]:
    """The folder and name of the package of ``agent`` (``v1``, ``v2`` or ``both``) of ``release``."""
    if release == "bundled":
        assert agent == "v1", "the bundled schema is of version 1 alone"
        return BINDINGS, "acp_bindings"
    return {"v1": v1_package, "v2": v2_package, "both": pair_package}[agent](release)


def held_to(agent: str, kit: str) -> int:
    """The version the kit holds the agent to: the one asked for, else the one the agent answers
    (the newest it speaks)."""
    if kit.startswith("root:"):
        return int(kit.partition(":")[2])
    if kit in ("v1", "v2"):
        return int(kit[1])
    return 1 if agent == "v1" else 2


def _kit(release: str, agent: str, kit: str) -> tuple[Any, list[str], Path]:
    """The kit's module, its arguments and its package's folder."""
    if kit == "own":
        folder, name = package(release, agent)
        return kit_module(name, folder), [], folder
    folder, name = pair_package(release)
    if kit in ("v1", "v2"):
        return kit_module(f"{name}.{kit}", folder), [], folder
    version = kit.partition(":")[2]
    return kit_module(name, folder), ["--protocol-version", version] if version else [], folder


def agent_kit(release: str, agent: str, kit: str, transport: str, monkeypatch: Any) -> dict[str, Any]:
    """Run the agent kit ``kit`` against the stub agent ``agent`` of ``release`` over
    ``transport``; assert every requirement passes that the transport lets it test, in the version
    it holds the agent to; return the report."""
    folder, name = package(release, agent)
    module, args, kit_folder = _kit(release, agent, kit)
    extra = () if agent == "v1" else V2_DELAY
    if transport == "stdio":
        agents_import(monkeypatch, folder, kit_folder)
        status, report = run_kit(module, *args, "--", sys.executable, "-m", f"{name}.stub_agent", *extra)
    else:
        with listening(name, folder, *extra) as port:
            status, report = run_kit(module, *args, "--url", f"{transport}://127.0.0.1:{port}/acp", "--token",
                                     "s3cret")
    assert outcomes(report, "failed") == outcomes(report, "advised") == set(), details(report)
    # what is not applicable: what the transport keeps from the kit, and the other half of each
    # capability's gating (the stub advertises all it serves, and refuses the rest -32601)
    halves = {r["id"] for r in report["requirements"] if r["outcome"] == "not applicable" and (
        r["id"].endswith(".unadvertised") and r["detail"].endswith(" is advertised")
        or r["id"].startswith("capabilities.") and r["detail"].endswith(" is not advertised"))}
    assert outcomes(report, "not applicable") - halves == REMOTE_NOT_APPLICABLE[transport], details(report)
    version = held_to(agent, kit)
    assert (status, report["protocolVersion"]) == (0, version), details(report)
    sections = {r["section"].split("/")[1] for r in report["requirements"] if r["section"].startswith("protocol/")}
    assert sections == {f"v{version}"}, sections
    return report


def _client(name: str, client: str) -> list[str]:
    """The stub client's command: the package's own, a version's of the package of both, or its
    root's asking for a version."""
    if client in ("v1", "v2"):
        return [sys.executable, "-m", f"{name}.{client}.stub_client"]
    asked = client.partition(":")[2]
    return [sys.executable, "-m", f"{name}.stub_client", *(["--protocol-version", asked] if asked else [])]


def client_kit(release: str, agent: str, client: str, transport: str, tmp_path: Path) -> dict[str, Any]:
    """Run the stub client ``client`` of ``release`` against the stub agent ``agent`` of the same
    package in checking mode (``--check``) over ``transport``; assert the client passes, in the
    version it speaks; return the report."""
    folder, name = package(release, agent)
    report, env = tmp_path / "report.json", env_for(folder)
    checking = [sys.executable, "-m", f"{name}.stub_agent", "--check", "--json", "--report", str(report)]
    command = [*_client(name, client), "--prompt", "hello kit"]
    if transport == "stdio":
        done = subprocess.run([*command, "--", *checking], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr
    else:
        with listening(name, folder, "--check", "--json", "--report", str(report)) as port:
            done = subprocess.run([*command, "--url", f"{transport}://127.0.0.1:{port}/acp", "--token", "s3cret"],
                                  cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
            assert done.returncode == 0, done.stderr
            _wait_for(report)
    document: dict[str, Any] = json.loads(report.read_text())
    found = {r["id"]: r["outcome"] for r in document["requirements"]}
    assert "failed" not in found.values() and document["exitStatus"] == 0, document
    version = held_to(agent, client)
    assert document["protocolVersion"] == version, document
    passed = {rid for rid, outcome in found.items() if outcome == "passed"}
    assert passed >= {"initialization.first", "permission.offered-option", "jsonrpc.ids"}, document
    assert ("fs.write" in passed) == (version == 1), document  # v2 has no fs/* methods
    return document


def _wait_for(report: Path, timeout: float = 20.0) -> None:
    """A remote connection's report is written as the connection ends."""
    deadline = time.monotonic() + timeout
    while not report.is_file():
        assert time.monotonic() < deadline, "no report of the connection"
        time.sleep(0.05)
