"""The guides to writing an agent and a client: their examples run, type-check, and say what is true.

The agent guide's Python blocks are an agent and a tool call with permission tested in memory;
the client guide's, a client (run against that agent and the stub agent, and as the guide's shell
block runs it). The table of the official SDK's helpers names only what exists on both sides, and
the line counts it states are the examples'.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import acp_bindings
from acp_bindings import builders, models, session
from support import docs
from support.runtime import BINDINGS, INTEROP, ROOT, STUB_AGENT, child_env
from support.typecheck import mypy_strict

AGENT_PAGE, CLIENT_PAGE = "guides/writing-an-agent.md", "guides/writing-a-client.md"
AGENT, TOOLS = (block.text for block in docs.blocks(AGENT_PAGE, "python"))
(VIEWER,) = (block.text for block in docs.blocks(CLIENT_PAGE, "python"))
(VIEWER_RUN,) = docs.blocks(CLIENT_PAGE, "sh")
(EXAMPLES_RUN,) = docs.blocks(AGENT_PAGE, "sh")
SECTION = docs.read(AGENT_PAGE)
BLOCKS = [AGENT, VIEWER, TOOLS]


def _write(tmp_path: Path) -> list[Path]:
    paths = []
    for name, code in zip(("echo_agent.py", "viewer.py", "tools.py"), BLOCKS):
        (tmp_path / name).write_text(code)
        paths.append(tmp_path / name)
    return paths


def _run(*args: str, cwd: Path) -> str:
    done = subprocess.run(list(args), cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done.stdout


def test_the_guides_have_an_agent_a_client_and_a_tool_call_example():
    assert "class EchoAgent(acp.Agent)" in BLOCKS[0] and "spawn_agent" in BLOCKS[1]
    assert "ToolCallTracker" in BLOCKS[2] and "in_memory_pair" in BLOCKS[2]


def test_the_client_drives_the_guide_agent_and_the_stub_agent(tmp_path):
    agent, viewer, _ = _write(tmp_path)
    (tmp_path / "notes.txt").write_text("my notes\n")
    echoed = _run(sys.executable, str(viewer), sys.executable, str(agent), cwd=tmp_path)
    assert echoed.startswith("end_turn ['Hello, agent")  # the echo agent sends the link back, unread
    # the stub agent reads the linked file through the client, which advertised that it can
    assert _run(sys.executable, str(viewer), *STUB_AGENT, cwd=tmp_path) == "end_turn ['Hello, agentmy notes\\n']\n"


def test_the_client_guide_shell_block_prints_what_it_says(tmp_path):
    """The block as written, in a folder that holds the generated package as ``generated/``."""
    _ = _write(tmp_path)
    (tmp_path / "generated").symlink_to(BINDINGS)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", VIEWER_RUN.text], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    (stated,) = re.findall(r"prints `(end_turn [^`]*)`", docs.read(CLIENT_PAGE))
    assert done.stdout == stated.replace("\\\\n", "\\n") + "\n"
    assert (tmp_path / "notes.txt").read_text() == "my notes\n"


def test_the_examples_run_as_the_agent_guide_says(tmp_path):
    """From a folder laid out as acpgen's root: ``generated/`` (the fresh package), ``examples/``."""
    (tmp_path / "generated").symlink_to(BINDINGS)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(["bash", "-e", "-c", EXAMPLES_RUN.text], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines.count('{"stopReason":"end_turn"}') == 1  # the stub client's last line
    (stated,) = re.findall(r"prints what the session came to: `([^`]*)`", " ".join(SECTION.split()))
    assert lines[-1] == stated


def test_a_client_that_does_not_advertise_fs_is_not_asked_for_files(tmp_path):
    """Without the capability the stub agent leaves the link unread: the advertising matters."""
    _ = _write(tmp_path)
    (tmp_path / "notes.txt").write_text("my notes\n")
    (tmp_path / "viewer.py").write_text(VIEWER.replace(", client_capabilities=READS_FILES", ""))
    assert "my notes" not in _run(sys.executable, str(tmp_path / "viewer.py"), *STUB_AGENT, cwd=tmp_path)


def test_the_tool_call_example_runs(tmp_path):
    _, _, tools = _write(tmp_path)
    assert _run(sys.executable, str(tools), cwd=tmp_path) == ""


def test_the_guide_examples_pass_mypy_strict(tmp_path):
    paths = _write(tmp_path)
    done = mypy_strict(*paths, cwd=tmp_path, env={**child_env(), "MYPYPATH": str(BINDINGS)})
    assert done.returncode == 0, done.stdout


def test_the_sdk_table_names_what_exists_on_both_sides():
    import acp.contrib  # the official SDK: imported here, where it is used (a second of pydantic models)
    import acp.helpers

    table = SECTION[SECTION.index("| official SDK | generated package |") :]
    rows = [line.split(" | ")[:2] for line in table.splitlines() if line.startswith("| `")]
    sdk_names = {name for left, _ in rows for name in re.findall(r"`(?:contrib\.)?([a-zA-Z_]+)[(`]", left)}
    sdk_names |= {name for left, _ in rows for name in re.findall(r", `?([a-z_]+)`", left)}
    helpers = {
        name for name, value in inspect.getmembers(acp.helpers, inspect.isfunction)
        if value.__module__ == "acp.helpers" and not name.startswith("_")
    }
    assert len(helpers) == 25 and helpers <= sdk_names, helpers - sdk_names
    for name in sdk_names - helpers:
        assert hasattr(acp.contrib, name), name
    ours = {dotted for _, right in rows for dotted in re.findall(r"\b([A-Za-z_]+\.[A-Za-z_]+)(?:\(|`| )", right)}
    assert len(ours) >= 20
    for dotted in ours:
        namespace, name = dotted.split(".")
        owners = {"models": models, "session": session, "tracker": session.ToolCallTracker,
                  "ToolCallTracker": session.ToolCallTracker}
        owner = owners.get(namespace) or getattr(builders, namespace, None)
        assert owner is not None and hasattr(owner, name), dotted


def test_the_stated_line_counts_are_the_examples():
    ours, theirs = (len(p.read_text().splitlines()) for p in (ROOT / "examples" / "echo_agent.py",
                                                             INTEROP / "echo_sdk_agent.py"))
    assert f"({ours} lines here, {theirs} there)" in SECTION
    assert acp_bindings.Agent  # the package the examples import
