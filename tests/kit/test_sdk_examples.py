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
import sys
from pathlib import Path

import pytest
from support import BINDINGS, ROOT
from support.kit import details, kit_module, outcomes, run_kit

EXAMPLE_AGENT = ROOT / "tests" / "interop" / "node_modules" / "sdk-0.12" / "dist" / "examples" / "agent.js"

#: What the example agent breaks, each quoted in the guide: it names no agent in ``initialize``
#: (a SHOULD of v1's text). And what it does that the text does not forbid, advised on: it takes an
#: auth method it never advertised, answers a request whose method is a number with -32603
#: (``method.startsWith is not a function``) and does not answer a line that is not JSON. Its
#: -32603 for a prompt on a session it never made is an error, as the text allows.
BROKEN = {"initialization.implementation-info"}
ADVISED = {"auth.unknown-method", "jsonrpc.invalid-request", "jsonrpc.parse-error"}


def test_the_typescript_sdks_example_agent_fails_just_what_it_breaks(tmp_path, monkeypatch):
    node = shutil.which("node")
    assert node is not None and EXAMPLE_AGENT.is_file(), "make test installs node and tests/interop's packages"
    status, report = run_kit(kit_module("acp_bindings", BINDINGS), "--cwd", str(tmp_path), "--", node,
                             str(EXAMPLE_AGENT))
    assert outcomes(report, "failed") == BROKEN, details(report)
    assert outcomes(report, "advised") == ADVISED, details(report)
    assert status == report["exitStatus"] == 0  # no MUST broken: a SHOULD and advice
    assert {"session.unknown-session", "prompt.cancellation", "jsonrpc.method-not-found"} <= outcomes(
        report, "passed")
    assert "method.startsWith is not a function" in details(report)


NEW_USER_AGENT = Path(__file__).with_name("sdk_new_user_agent.py")
#: What the SDK does that the text does not forbid, advised on: a turn for a session it never made,
#: -32601 for a request whose method is a number, and nothing for a line that is not JSON.
SDK_ADVISED = {"session.unknown-session", "jsonrpc.invalid-request", "jsonrpc.parse-error"}


@pytest.mark.parametrize("keeps_the_text", [False, True])
def test_a_python_sdk_agent_fails_the_version_must_and_is_advised_on_the_rest(keeps_the_text, tmp_path):
    """The official Python SDK's agent that echoes the version asked for (999) fails the MUST of
    version negotiation, and the SHOULD of naming itself; answering the version it speaks and
    naming itself, its only lapses are ones the text does not forbid: exit status 0, with advice."""
    extra = ["--keeps-the-text"] if keeps_the_text else []
    status, report = run_kit(kit_module("acp_bindings", BINDINGS), "--cwd", str(tmp_path), "--", sys.executable,
                             str(NEW_USER_AGENT), *extra)
    assert outcomes(report, "advised") == SDK_ADVISED, details(report)
    if keeps_the_text:
        assert outcomes(report, "failed") == set() and status == 0, details(report)
    else:
        assert outcomes(report, "failed") == {"initialization.version-negotiation",
                                              "initialization.implementation-info"}, details(report)
        assert status == 1 and '"protocolVersion":999' in details(report)
