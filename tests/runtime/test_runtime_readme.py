"""The README's runtime section: its examples run, type-check, and say what is true.

The section's Python blocks are, in order, an agent, a client (run against that agent and the
stub agent), and a tool call with permission tested in memory. The table of the official SDK's
helpers names only what exists on both sides, and the line counts it states are the examples'.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import acp
import acp.contrib
import acp.helpers
import acp_bindings
from acp_bindings import builders, models, session
from support.runtime import BINDINGS, INTEROP, ROOT, STUB_AGENT, child_env

README = (ROOT / "README.md").read_text()
SECTION = README[README.index("## The runtime: speaking ACP from Python") : README.index("### Stub servers")]
BLOCKS = re.findall(r"```python\n(.*?)```", SECTION, re.DOTALL)


def _write(tmp_path: Path) -> list[Path]:
    paths = []
    for name, code in zip(("readme_agent.py", "readme_viewer.py", "readme_tools.py"), BLOCKS):
        (tmp_path / name).write_text(code)
        paths.append(tmp_path / name)
    return paths


def _run(*args: str, cwd: Path) -> str:
    done = subprocess.run(list(args), cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done.stdout


def test_the_section_has_an_agent_a_client_and_a_tool_call_example():
    assert len(BLOCKS) == 3
    assert "class EchoAgent(acp.Agent)" in BLOCKS[0] and "spawn_agent" in BLOCKS[1]
    assert "ToolCallTracker" in BLOCKS[2] and "in_memory_pair" in BLOCKS[2]


def test_the_readme_client_drives_the_readme_agent_and_the_stub_agent(tmp_path):
    agent, viewer, _ = _write(tmp_path)
    expected = "end_turn ['Hello, agent']\n"
    assert _run(sys.executable, str(viewer), sys.executable, str(agent), cwd=tmp_path) == expected
    assert _run(sys.executable, str(viewer), *STUB_AGENT, cwd=tmp_path) == expected


def test_the_readme_tool_call_example_runs(tmp_path):
    _, _, tools = _write(tmp_path)
    assert _run(sys.executable, str(tools), cwd=tmp_path) == ""


def test_the_readme_examples_pass_mypy_strict(tmp_path):
    paths = _write(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *map(str, paths)],
        cwd=tmp_path, env={**child_env(), "MYPYPATH": str(BINDINGS)}, capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stdout


def test_the_sdk_table_names_what_exists_on_both_sides():
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
