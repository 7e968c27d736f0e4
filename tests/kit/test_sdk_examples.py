"""The official SDKs' example agents held to the agent kit, from their published packages: each
fails the requirements it breaks, the same ones at every run (docs/guides/conformance.md quotes
them).

The TypeScript SDK 0.12.0 ships its example agent built (``dist/examples/agent.js``; 2.4.0 ships
none); tests/interop/package.json installs it beside 2.4.0 as ``sdk-0.12``. Its example client
starts an agent of its own (``npx tsx agent.ts``) and asks a person at the terminal to choose
each permission, so no kit can hold it. The Python SDK's examples are in its repository only,
not in its published package.
"""

from __future__ import annotations

import shutil

from support import BINDINGS, ROOT
from support.kit import details, kit_module, outcomes, run_kit

EXAMPLE_AGENT = ROOT / "tests" / "interop" / "node_modules" / "sdk-0.12" / "dist" / "examples" / "agent.js"

#: What the example agent breaks, each quoted in the guide: it names no agent in ``initialize``,
#: answers a prompt for a session it never made with -32603, takes an auth method it never
#: advertised, answers a request whose method is a number with -32603
#: (``method.startsWith is not a function``), and does not answer a line that is not JSON.
BROKEN = {
    "initialization.implementation-info",
    "session.unknown-session",
    "auth.unknown-method",
    "jsonrpc.invalid-request",
    "jsonrpc.parse-error",
}


def test_the_typescript_sdks_example_agent_fails_just_what_it_breaks(tmp_path, monkeypatch):
    node = shutil.which("node")
    assert node is not None and EXAMPLE_AGENT.is_file(), "make test installs node and tests/interop's packages"
    status, report = run_kit(kit_module("acp_bindings", BINDINGS), "--cwd", str(tmp_path), "--", node,
                             str(EXAMPLE_AGENT))
    assert outcomes(report, "failed") == BROKEN, details(report)
    assert status == 1  # two of them are MUSTs
    assert {r["id"] for r in report["requirements"] if r["outcome"] == "failed" and r["level"] == "MUST"} == {
        "jsonrpc.invalid-request", "jsonrpc.parse-error"}
    assert "method.startsWith is not a function" in details(report)
