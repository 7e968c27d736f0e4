"""The project's examples and the docs' Python blocks on both flavours of the models.

The tests beside each block run it against the dataclass flavour; here each runs again with
``acp_bindings`` a package of the pydantic flavour (one, generated once per session), and prints
what it prints with the dataclass one: the helpers (``SessionState``, ``ToolCallTracker``,
builders, the stubs, the inspector, the remote entry points) are one set of code for both.
The blocks of ``protocol-versions.md`` need v2 packages of their own and are run only as their
tests run them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, docs
from support.flavours import FLAVOURS, flavour_env
from support.remote import free_port, wait_listening

EXAMPLES = ROOT / "examples"
ECHO_AGENT = (sys.executable, str(EXAMPLES / "echo_agent.py"))
ECHO_CLIENT = (sys.executable, str(EXAMPLES / "echo_client.py"))
STUB_CLIENT = (sys.executable, "-m", "acp_bindings.stub_client")
STUB_AGENT = (sys.executable, "-m", "acp_bindings.stub_agent")
INSPECT = (sys.executable, "-m", "acp_bindings.inspect")

#: The blocks that run as a script of their own: (page, section, index among its Python blocks).
SCRIPTS = {
    "observer": ("guides/debugging.md", "In-process: `observe`", 0),
    "over-tcp": ("guides/remote-transports.md", "Remote transports", 0),
    "tool-call": ("guides/writing-an-agent.md", None, 1),
    "models": ("reference/models.md", "Generated models", 0),
}
(GUIDE_AGENT, _) = docs.blocks("guides/writing-an-agent.md", "python")
(VIEWER,) = docs.blocks("guides/writing-a-client.md", "python")
(REMOTE_AGENT, REMOTE_CLIENT) = docs.blocks("guides/remote-transports.md", "python", "WebSocket and Streamable HTTP")


def run(*args: str, flavour: str, cwd: Path) -> str:
    """``args`` run to its end with ``flavour``'s ``acp_bindings``: its stdout (it must exit 0
    and write nothing on stderr)."""
    done = subprocess.run(list(args), cwd=cwd, env=flavour_env(flavour), capture_output=True, text=True, timeout=60,
                          check=False)
    assert (done.returncode, done.stderr) == (0, ""), f"{flavour}: exit {done.returncode}\n{done.stderr}"
    return done.stdout


def on_both(*args: str, cwd: Path) -> str:
    """What ``args`` prints, the same with either flavour."""
    dataclasses, pydantic = (run(*args, flavour=flavour, cwd=cwd) for flavour in FLAVOURS)
    assert pydantic == dataclasses
    return pydantic


@pytest.mark.parametrize("flags", [(), ("--cancel",)], ids=["allow", "cancel"])
def test_the_example_client_and_agent_end_in_the_same_session(tmp_path, flags):
    summary = on_both(*ECHO_CLIENT, *flags, "hello brave world", *ECHO_AGENT, cwd=tmp_path)
    status = "failed" if flags else "completed"
    assert f'"toolCalls": {{"call-1": "{status}"}}' in summary


def test_the_stub_client_prints_the_same_lines_from_the_echo_agent(tmp_path):
    """The same but for the session id, fresh in every run."""
    dataclasses, pydantic = (
        re.sub(r'"sessionId":"[0-9a-f-]{36}"', '"sessionId":"ID"', run(*STUB_CLIENT, "--prompt", "hi there", "--",
                                                                       *ECHO_AGENT, flavour=flavour, cwd=tmp_path))
        for flavour in FLAVOURS)
    assert pydantic == dataclasses and '"sessionId":"ID"' in pydantic
    lines = pydantic.splitlines()
    assert '"sessionUpdate":"tool_call_update"' in lines[2] and lines[-1] == '{"stopReason":"end_turn"}'


def test_the_inspector_between_the_stubs_checks_and_passes_the_same_session(tmp_path):
    lines = on_both(*STUB_CLIENT, "--", *INSPECT, "--", *STUB_AGENT, cwd=tmp_path).splitlines()
    assert lines[-1] == '{"stopReason":"end_turn"}'


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_docs_block_prints_the_same(tmp_path, name):
    page, section, index = SCRIPTS[name]
    block = docs.blocks(page, "python", section)[index]
    (tmp_path / "block.py").write_text(block.text)
    on_both(sys.executable, "block.py", cwd=tmp_path)


def test_the_guides_client_and_agent_give_the_same_turn(tmp_path):
    (tmp_path / "agent.py").write_text(GUIDE_AGENT.text)
    (tmp_path / "viewer.py").write_text(VIEWER.text)
    (tmp_path / "notes.txt").write_text("my notes\n")
    assert on_both(sys.executable, "viewer.py", sys.executable, "agent.py", cwd=tmp_path).startswith("end_turn [")
    assert on_both(sys.executable, "viewer.py", *STUB_AGENT, cwd=tmp_path) == "end_turn ['Hello, agentmy notes\\n']\n"


def test_the_remote_blocks_serve_and_connect_with_the_pydantic_flavour(tmp_path):
    """The agent block under uvicorn, reached by the client block and the stub client over
    WebSocket and Streamable HTTP."""
    port = free_port()
    (tmp_path / "my_agent.py").write_text(REMOTE_AGENT.text)
    (tmp_path / "my_client.py").write_text(REMOTE_CLIENT.text.replace(":8000/", f":{port}/"))
    command = [sys.executable, "-m", "uvicorn", "my_agent:app", "--app-dir", str(tmp_path), "--port", str(port),
               "--log-level", "warning"]
    server = subprocess.Popen(command, env=flavour_env("pydantic"), stderr=subprocess.PIPE)
    try:
        wait_listening(port, server)
        assert run(sys.executable, "my_client.py", flavour="pydantic", cwd=tmp_path) == "protocol version 1\n"
        for scheme in ("ws", "http"):
            url = f"{scheme}://127.0.0.1:{port}/acp"
            out = run(*STUB_CLIENT, "--url", url, "--token", "s3cret", flavour="pydantic", cwd=tmp_path)
            assert out.splitlines()[-1] == '{"stopReason":"end_turn"}'
    finally:
        server.terminate()
        server.communicate(timeout=10)
