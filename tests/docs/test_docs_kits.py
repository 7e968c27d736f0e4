"""Every agent and client of the docs (the guides, the README, ``examples/``) held to the kit of the
package it was written for: an agent to the agent kit (``python -m <package>.conformance --
AGENT_CMD``, run in this process), a client to the client kit (the stub agent's checking mode,
``python -m <package>.stub_agent --check --json --report FILE``, started by the client as its
agent). Each must pass: no requirement failed, exit status 0, whatever its level.

An example that is not a program of its own (classes run in memory, a block that defines an
agent and a client in one) is run with its last line replaced by the few lines that serve its
agent on stdio or connect its client to a command; the harness only starts what the guide wrote.
The guard at the end fails on a block that defines an agent or a client and is in no row here.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from support import BINDINGS, ROOT, docs
from support.kit import agents_import, details, kit_module, outcomes, run_kit
from support.remote import free_port, running, stop, wait_listening
from support.versions import env_for, guide_versions_package, imported_from

EXAMPLES = ROOT / "examples"
VERSIONS_SECTION = "Serving and connecting several versions: the `versions` module"


def _python(page: str, index: int, section: str | None = None) -> docs.Block:
    return docs.blocks(page, "python", section)[index]


def _instead_of_last_line(block: docs.Block, last: str, harness: str) -> str:
    """The block with its last line, which must be ``last``, replaced by ``harness``."""
    lines = block.text.rstrip("\n").splitlines()
    assert lines[-1] == last, f"{block.page}:{block.line}: the block no longer ends with {last!r}"
    return "\n".join([*lines[:-1], harness, ""])


_README = re.search(r"<<'EOF'\n(.*?)^EOF$", docs.blocks("README.md", "sh", "Quick start")[0].text, re.DOTALL | re.MULTILINE)
assert _README, "README.md: the quick start writes no agent"

_DRIVE_ALLOWING = """\
import os
import sys


async def drive(command: list[str]) -> None:  # the test's: one turn of the guide's client
    async with acp.spawn_agent(Allowing(), *command) as conn:
        await conn.agent.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.agent.session_new(cwd=os.getcwd(), mcp_servers=[])
        await conn.agent.session_prompt(session_id=session.session_id, prompt=[content.text("read")])


asyncio.run(drive(sys.argv[1:]))"""


class Peer(NamedTuple):  # a NamedTuple: the docs' guard imports this module unregistered
    where: str  # the page and line (or the file) it is written at
    source: str  # the program run
    package: str = "acp_bindings"  # the package (and kit) it is written for
    args: tuple[str, ...] = ()  # a client's arguments before the agent's command
    passes: frozenset[str] = frozenset()  # requirements it must have given the kit a chance to test


def _block_peer(block: docs.Block, source: str | None = None, package: str = "acp_bindings",
                args: tuple[str, ...] = (), passes: frozenset[str] = frozenset()) -> Peer:
    return Peer(f"{block.page}:{block.line}", block.text if source is None else source, package, args, passes)


_WRITING_AGENT = docs.blocks("guides/writing-an-agent.md", "python")
_REMOTE = _python("guides/remote-transports.md", 0, "Remote transports")
_OBSERVED = _python("guides/debugging.md", 0, "In-process: `observe`")
(_BOTH_AGENTS, _BOTH_CLIENT) = docs.blocks("guides/protocol-versions.md", "python", VERSIONS_SECTION)
#: The test's: the guide's agent of version 1 served alone, to hold it to version 1's kit.
_SERVE_V1 = "    asyncio.run(versions.serve_versions({1: AGENTS[1]}, **RULES))"

AGENTS = {
    "readme-quick-start": Peer("README.md: Quick start", _README.group(1)),
    "guide-echo-agent": _block_peer(_WRITING_AGENT[0]),
    "guide-tool-call-reader": _block_peer(_WRITING_AGENT[1], _instead_of_last_line(
        _WRITING_AGENT[1], "asyncio.run(main())", "asyncio.run(acp.run_agent(Reader()))")),
    "guide-tcp-hello": _block_peer(_REMOTE, _instead_of_last_line(
        _REMOTE, "asyncio.run(main())", "asyncio.run(acp.run_agent(Hello()))")),
    "guide-observed-agent": _block_peer(_OBSERVED, _instead_of_last_line(
        _OBSERVED, "asyncio.run(main())", "from acp_bindings import run_agent\nasyncio.run(run_agent(MyAgent()))")),
    "guide-both-versions-v1": _block_peer(_BOTH_AGENTS, _instead_of_last_line(
        _BOTH_AGENTS, "    asyncio.run(versions.serve_versions(AGENTS, **RULES))", _SERVE_V1),
        "both.v1"),
    "guide-both-versions": _block_peer(_BOTH_AGENTS, package="both"),
    "examples-echo-agent": Peer("examples/echo_agent.py", (EXAMPLES / "echo_agent.py").read_text()),
}

_VIEWER = _python("guides/writing-a-client.md", 0)
#: What a client that runs a turn gives the kit to test: the permission request the guide's
#: Viewer once answered -32601 among them.
_TURN = frozenset({"permission.offered-option", "capabilities.agent-advertised", "prompt.known-session"})
CLIENTS = {
    "guide-viewer": _block_peer(_VIEWER, passes=_TURN),
    "guide-tool-call-allowing": _block_peer(_WRITING_AGENT[1], _instead_of_last_line(
        _WRITING_AGENT[1], "asyncio.run(main())", _DRIVE_ALLOWING), passes=_TURN),
    "guide-both-client-v1": _block_peer(_BOTH_CLIENT, package="both", args=("1", "--")),
    "guide-both-client-v2": _block_peer(_BOTH_CLIENT, package="both", args=("2", "--")),
    "examples-echo-client": Peer("examples/echo_client.py", (EXAMPLES / "echo_client.py").read_text(),
                                 args=("hello brave world",), passes=_TURN),
}


def _folder(package: str) -> Path:
    return BINDINGS if package == "acp_bindings" else guide_versions_package()


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_every_agent_of_the_docs_passes_the_agent_kit(name, tmp_path, monkeypatch):
    peer = AGENTS[name]
    agent = tmp_path / "agent.py"
    agent.write_text(peer.source)
    folder = _folder(peer.package)
    agents_import(monkeypatch, folder)
    root = peer.package.split(".")[0]
    with contextlib.nullcontext() if root == "acp_bindings" else imported_from(root, folder):
        status, report = run_kit(kit_module(peer.package, folder), "--cwd", str(tmp_path), "--", sys.executable,
                                 str(agent))
    assert outcomes(report, "failed") == set(), f"{peer.where}\n{details(report)}"
    assert status == report["exitStatus"] == 0
    assert {"initialization.version-negotiation", "session.unique-ids", "prompt.stop-reason"} <= outcomes(
        report, "passed"), details(report)


def _client_kit(command: list[str], tmp_path: Path, package: str, *options: str) -> dict:
    """``command`` (a client) run with the kit's stub agent as its agent; the kit's JSON report."""
    report = tmp_path / "report.json"
    agent = [sys.executable, "-m", f"{package.split('.')[0]}.stub_agent", "--check", "--delay", "0", "--json",
             "--report", str(report), *options]
    (tmp_path / "notes.txt").write_text("my notes\n")
    done = subprocess.run([*command, *agent], cwd=tmp_path, env=env_for(_folder(package)), capture_output=True,
                          text=True, timeout=90, check=False)
    assert report.is_file(), done.stdout + done.stderr
    assert done.returncode == 0, done.stderr
    return json.loads(report.read_text())


def _failed(report: dict) -> dict[str, str]:
    return {r["id"]: r["detail"] for r in report["requirements"] if r["outcome"] == "failed"}


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_every_client_of_the_docs_passes_the_client_kit(name, tmp_path):
    peer = CLIENTS[name]
    client = tmp_path / "client.py"
    client.write_text(peer.source)
    report = _client_kit([sys.executable, str(client), *peer.args], tmp_path, peer.package)
    assert _failed(report) == {}, peer.where
    assert report["exitStatus"] == 0
    passed = {r["id"] for r in report["requirements"] if r["outcome"] == "passed"}
    assert {"initialization.first", *peer.passes} <= passed, report["requirements"]


# -- a permission request no option of the client's policy fits ---------------------------------


def _client_class(tmp_path: Path, name: str, source: str, cls: str) -> type:
    """The class ``cls`` of a client's ``source``, imported as a module (its last line, which
    runs it, left out where it has no ``__main__`` guard)."""
    (tmp_path / f"{name}.py").write_text(source)
    spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, cls)


async def _asked(client: object, kinds: list[str]) -> tuple[object, bool]:
    """An agent asks ``client`` a permission request offering options of ``kinds`` once in a turn:
    the outcome it was answered, and whether the client cancelled the turn."""
    import acp_bindings as acp
    from acp_bindings import models

    class Asking(acp.Agent):
        cancelled = False

        async def session_cancel(self, params: models.CancelNotification) -> None:
            self.cancelled = True

        async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
            options = [models.PermissionOption(option_id=f"{kind}-{i}", name=kind, kind=kind) for i, kind in enumerate(kinds)]
            answer = await self.client.session_request_permission(
                session_id=params.session_id, tool_call=models.ToolCallUpdate(tool_call_id="call-1"), options=options)
            self.outcome = answer.outcome
            return models.PromptResponse(stop_reason="cancelled" if self.cancelled else "end_turn")

    agent = Asking()
    async with acp.in_memory_pair(agent, client) as (_, conn):
        session = await conn.agent.session_new(cwd=str(ROOT), mcp_servers=[])
        await conn.agent.session_prompt(session_id=session.session_id, prompt=[])
    return agent.outcome, agent.cancelled


def test_the_guides_and_examples_clients_answer_an_option_offered_or_cancel_the_turn(tmp_path):
    """The Viewer rejects, and cancels the turn when offered nothing to reject; the echo client
    allows, and cancels the turn when offered nothing to allow: never an option not offered."""
    from acp_bindings import models

    viewer = _client_class(tmp_path, "viewer", _instead_of_last_line(
        _VIEWER, "asyncio.run(main(sys.argv[1:]))  # python viewer.py python echo_agent.py", ""), "Viewer")
    echo = _client_class(tmp_path, "echo_client", (EXAMPLES / "echo_client.py").read_text(), "EchoClient")
    for client, kinds, answered in [
        (viewer(), ["allow_once", "reject_once"], ("selected", "reject_once-1", False)),
        (viewer(), ["allow_once", "allow_always"], ("cancelled", None, True)),
        (echo(cancel=False), ["reject_once", "allow_once"], ("selected", "allow_once-1", False)),
        (echo(cancel=False), ["reject_once", "reject_always"], ("cancelled", None, True)),
    ]:
        outcome, cancelled = asyncio.run(_asked(client, kinds))
        chosen = outcome.option_id if isinstance(outcome, models.Selected) else None
        assert (outcome.to_json()["outcome"], chosen, cancelled) == answered, (type(client).__name__, kinds)


# -- over the network --------------------------------------------------------------------------

(_REMOTE_AGENT, _REMOTE_CLIENT) = docs.blocks("guides/remote-transports.md", "python", "WebSocket and Streamable HTTP")


def test_the_remote_agent_of_the_docs_passes_the_agent_kit_over_a_websocket(tmp_path):
    (tmp_path / "my_agent.py").write_text(_REMOTE_AGENT.text)
    with running("uvicorn", "my_agent:app", env=env_for(BINDINGS, tmp_path), cwd=tmp_path) as port:
        status, report = run_kit(kit_module("acp_bindings", BINDINGS), "--url", f"ws://127.0.0.1:{port}/acp",
                                 "--token", "s3cret")
    assert outcomes(report, "failed") == set(), details(report)
    assert status == report["exitStatus"] == 0 and "prompt.cancellation" in outcomes(report, "passed")


def test_the_remote_client_of_the_docs_passes_the_client_kit_over_a_websocket(tmp_path):
    """``my_client.py`` as written but for the port: the kit's stub agent listens on a free one."""
    port, report = free_port(), tmp_path / "report.json"
    source = _REMOTE_CLIENT.text.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    assert source != _REMOTE_CLIENT.text, "the guide's client no longer connects to port 8000"
    (tmp_path / "my_client.py").write_text(source)
    agent = [sys.executable, "-m", "acp_bindings.stub_agent", "--check", "--json", "--report", str(report),
             "--listen", f"127.0.0.1:{port}", "--token", "s3cret"]
    server = subprocess.Popen(agent, env=env_for(BINDINGS), stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        wait_listening(port, server)
        done = subprocess.run([sys.executable, "my_client.py"], cwd=tmp_path, env=env_for(BINDINGS),
                              capture_output=True, text=True, timeout=60, check=False)
        assert (done.returncode, done.stdout) == (0, "protocol version 1\n"), done.stderr
        deadline = time.monotonic() + 20
        while not report.is_file() or not report.read_text().rstrip().endswith("}"):
            assert time.monotonic() < deadline, "no report of the connection"
            time.sleep(0.05)
    finally:
        stop(server)
    document = json.loads(report.read_text())
    assert _failed(document) == {} and document["exitStatus"] == 0, document


# -- the guard ---------------------------------------------------------------------------------

_PEER = re.compile(r"^class \w+\([\w.]*\b(Agent|Client)\):|\bClient\(\)|\basgi_app\(", re.MULTILINE)
#: Blocks that make a peer and are held above through another block: the base ``Client()`` that
#: only asks ``initialize`` in memory or over TCP is the one ``my_client.py`` connects with.
HELD_ELSEWHERE = {f"{_REMOTE.page}:{_REMOTE.line}", f"{_OBSERVED.page}:{_OBSERVED.line}"}


def test_every_block_and_example_that_makes_an_agent_or_a_client_is_held_to_a_kit():
    held = {peer.where for peer in [*AGENTS.values(), *CLIENTS.values()]} | HELD_ELSEWHERE
    held |= {f"{b.page}:{b.line}" for b in (_REMOTE_AGENT, _REMOTE_CLIENT)}
    making = {f"{b.page}:{b.line}" for page in docs.pages() for b in docs.all_blocks(page)
              if b.language == "python" and _PEER.search(b.text)}
    making |= {f"examples/{p.name}" for p in EXAMPLES.glob("*.py") if _PEER.search(p.read_text())}
    assert making - held == set()
    assert len(making) >= 10  # the guard sees them: a pattern that matched nothing would pass anything
