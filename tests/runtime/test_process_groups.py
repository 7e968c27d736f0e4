"""Stopping an agent is bounded, whatever it leaves behind: ``spawn_agent`` (and the stub client
that runs on it) and the inspector end an agent whose child holds its pipes open and ignores
SIGTERM (as the child of a launcher, an npm entry's node, does). The agent is the stub agent
behind ``support/rough_agent.py launcher``; ``spawn_agent`` under Python 3.10, 3.13 and this
one, since how long asyncio waits for a child's pipes is not the same in each."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from support import ROOT
from support.interpreters import interpreters
from support.processes import alive, started_pids
from support.runtime import STUB_AGENT, STUB_CLIENT, child_env

LAUNCHED = (sys.executable, str(ROOT / "tests" / "support" / "rough_agent.py"), "launcher", "--", *STUB_AGENT)

SPAWN = f"""
import asyncio, sys, time
import acp_bindings as acp

async def main():
    started = time.monotonic()
    async with acp.spawn_agent(acp.Client(), *{list(LAUNCHED)!r}, grace=1.0) as connection:
        await connection.agent.initialize(acp.models.InitializeRequest(protocol_version=1))
    print(round(time.monotonic() - started, 2))

asyncio.run(main())
"""


def _pythons() -> list[str]:
    found = interpreters()
    assert (3, 10) in found and (3, 13) in found, f"Python 3.10 and 3.13 are needed: {sorted(found)}"
    return list(dict.fromkeys([found[(3, 10)], found[(3, 13)], sys.executable]))


@pytest.mark.parametrize("python", _pythons())
def test_spawn_agent_ends_an_agent_whose_child_holds_its_pipes(python, tmp_path):
    pids = tmp_path / "pids"
    try:
        done = subprocess.run([python, "-c", SPAWN], env={**child_env(), "ROUGH_PIDS": str(pids)},
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert float(done.stdout) < 10, done.stdout
        assert [pid for pid in started_pids(pids) if alive(pid)] == []
    finally:
        started_pids(pids, end=True)


def test_the_stub_client_ends_such_an_agent_after_its_turn(tmp_path):
    pids = tmp_path / "pids"
    started = time.monotonic()
    try:
        done = subprocess.run([*STUB_CLIENT, "--", *LAUNCHED], env={**child_env(), "ROUGH_PIDS": str(pids)},
                              capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - started < 20
        assert [pid for pid in started_pids(pids) if alive(pid)] == []
    finally:
        started_pids(pids, end=True)


def test_the_inspector_ends_what_the_agent_left_behind(tmp_path):
    """The client's input ends; the agent exits, its child holding the inspector's stdout and
    stderr: the inspector kills the agent's group, so its own stderr ends (the client reading it
    is not left waiting) and it exits with the agent's status."""
    pids = tmp_path / "pids"
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "acp_bindings.inspect", "--", *LAUNCHED],
                              input=json.dumps(initialize) + "\n", env={**child_env(), "ROUGH_PIDS": str(pids)},
                              capture_output=True, text=True, timeout=60, check=False)
        assert json.loads(done.stdout.splitlines()[0])["id"] == 1, done.stdout
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - started < 20
        assert [pid for pid in started_pids(pids) if alive(pid)] == []
    finally:
        started_pids(pids, end=True)
