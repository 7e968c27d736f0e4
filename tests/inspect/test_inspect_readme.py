"""The "Debugging a connection" guide's commands work as written, with a real agent put in."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from support import BINDINGS, docs
from support.runtime import STUB_AGENT, STUB_CLIENT, child_env, make_workspace

PAGE = "guides/debugging.md"
(ZED,) = docs.blocks(PAGE, "json")


def section() -> str:
    return docs.section(PAGE, "Debugging a connection")


def test_the_zed_settings_put_the_inspector_in_front_of_the_agent(tmp_path):
    (server,) = json.loads(ZED.text)["agent_servers"].values()
    assert (server["type"], server["command"]) == ("custom", "python3")
    args = server["args"]
    transcript = tmp_path / "transcript.ndjson"
    # this machine's paths and agent for the guide's placeholders; the command stays as written
    args = [str(transcript) if a == "/tmp/acp-transcript.ndjson" else a for a in args]
    args = [*args[: args.index("--") + 1], *STUB_AGENT]
    env = {**child_env(), **{k: str(BINDINGS) for k in server["env"]}}
    cwd = make_workspace(tmp_path)
    done = subprocess.run(
        [*STUB_CLIENT, "--prompt", "through the readme", "--", sys.executable, *args],
        check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"stopReason": "end_turn"}
    assert "inspect:" not in done.stderr
    assert len(transcript.read_text().splitlines()) == 6 + 3  # 3 round trips, 3 updates


def test_the_stub_client_command_line_of_the_readme(tmp_path):
    (line,) = re.findall(r"`(python -m acp_bindings\.stub_client -- .*?)`", section())
    words = line.split()
    assert words[:4] == ["python", "-m", "acp_bindings.stub_client", "--"]
    rest = words[4:]
    assert rest[:4] == ["python", "-m", "acp_bindings.inspect", "--"]
    command = [sys.executable, *words[1:4], sys.executable, *rest[1:4], *STUB_AGENT]
    done = subprocess.run(command, check=False, cwd=make_workspace(tmp_path), env=child_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"stopReason": "end_turn"}
