"""Interop over real pipes with real processes: the generated stubs against the official SDKs.

Each direction drives initialize -> session/new -> session/prompt with streamed updates ->
end_turn, one agent-to-client request (fs/read_text_file, and session/request_permission where
the agent is a peer we wrote), and one error path (-32601, an extension method nobody has).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.runtime import INTEROP, STUB_AGENT, STUB_CLIENT, child_env, make_workspace

TS_AGENT = ("node", str(INTEROP / "ts_agent.mjs"))
TS_CLIENT = ("node", str(INTEROP / "ts_client.mjs"))
SDK_AGENT = (sys.executable, str(INTEROP / "sdk_agent.py"))
SDK_CLIENT = (sys.executable, str(INTEROP / "sdk_client.py"))


def _run(args: tuple[str, ...] | list[str], cwd) -> str:
    done = subprocess.run(list(args), cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done.stdout


def _texts(updates: list[dict]) -> list[str]:
    assert all(u["update"]["sessionUpdate"] == "agent_message_chunk" for u in updates)
    return [u["update"]["content"]["text"] for u in updates]


@pytest.mark.parametrize("agent", [TS_AGENT, SDK_AGENT], ids=["typescript-sdk-agent", "python-sdk-agent"])
def test_stub_client_drives_an_official_sdk_agent(tmp_path, agent):
    cwd = make_workspace(tmp_path)
    out = _run([*STUB_CLIENT, "--prompt", "ping the other side", "--", *agent], cwd)
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[-1] == {"stopReason": "end_turn"}
    texts = _texts(lines[:-1])
    reports = {t.split(": ", 1)[0]: json.loads(t.split(": ", 1)[1]) for t in texts if not t.startswith("echo: ")}
    # agent -> client requests, answered by the stub client
    assert reports["read"] == {"ok": {"content": "hello file\n"}}
    assert reports["outside"]["code"] == -32602  # refused: outside the session's cwd
    assert reports["permission"]["ok"]["outcome"] == {"outcome": "selected", "optionId": "yes"}
    # error path: an extension method the stub client does not have
    assert reports["missing"]["code"] == -32601
    # streamed updates, in order
    assert [t[len("echo: ") :] for t in texts if t.startswith("echo: ")] == ["ping ", "the ", "other ", "side"]


@pytest.mark.parametrize("client", [TS_CLIENT, SDK_CLIENT], ids=["typescript-sdk-client", "python-sdk-client"])
def test_official_sdk_client_drives_the_stub_agent(tmp_path, client):
    cwd = make_workspace(tmp_path)
    summary = json.loads(_run([*client, str(cwd), *STUB_AGENT], cwd))
    assert summary["initialize"]["protocolVersion"] == 1
    assert summary["initialize"]["agentCapabilities"]["loadSession"] is True
    assert summary["sessionId"].startswith("stub-session-")
    texts = _texts(summary["updates"])
    sdk = "TypeScript" if client is TS_CLIENT else "Python SDK"
    # the prompt's text streamed back word by word, then the file the agent read from the client
    assert "".join(texts) == f"Hello from the {sdk} clienthello file\n"
    assert len(texts) > 3
    assert summary["reads"] == [str(cwd / "hello.txt")]  # the agent -> client request
    assert summary["stopReason"] == "end_turn"
    assert summary["updatesBeforeStop"] == len(texts)  # every update arrived before the response
    assert summary["missing"]["code"] == -32601  # error path
