"""Our v2 stubs against the TypeScript SDK's v2 side (``@agentclientprotocol/sdk/experimental/v2``)
and its protocol router, over real pipes: a prompt turn, a permission request, and the state
updates that end the turn, both ways (peers in ``tests/interop/ts_versions_*.mjs``)."""

from __future__ import annotations

import json
import subprocess

import pytest
from support import INTEROP
from support.versions import env_for, run_stub_client, stub, v2_package

TS_AGENT = ["node", str(INTEROP / "ts_versions_agent.mjs")]
TS_CLIENT = ["node", str(INTEROP / "ts_versions_client.mjs")]


def updates_of(done) -> tuple[list[dict], dict]:
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return [line["update"] for line in lines[:-1]], lines[-1]


def chunks(updates: list[dict]) -> list[str]:
    return [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]


@pytest.mark.parametrize(("agent", "asked"), [("v2", "2"), ("router", "2"), ("router", "3")])
def test_our_stub_client_completes_a_turn_against_the_typescript_agent(tmp_path, agent, asked):
    updates, last = updates_of(run_stub_client("sdk", tmp_path, "--protocol-version", asked, "--prompt", "one two",
                                               agent=[*TS_AGENT, agent]))
    assert last == {"stopReason": "end_turn"}
    assert updates[0] == {"sessionUpdate": "state_update", "state": "running"}
    assert updates[1]["sessionUpdate"] == "user_message"
    assert updates[1]["content"] == [{"type": "text", "text": "one two"}]
    assert chunks(updates) == ['permission: {"optionId":"yes","outcome":"selected"}', "echo: one ", "echo: two"]
    assert updates[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}


def test_our_stub_client_refuses_and_the_typescript_agent_honours_it(tmp_path):
    updates, last = updates_of(run_stub_client("sdk", tmp_path, "--reject", "--prompt", "one two",
                                               agent=[*TS_AGENT, "router"]))
    assert chunks(updates) == ['permission: {"optionId":"no","outcome":"selected"}'] and last == {"stopReason": "end_turn"}


def _ts_client(tmp_path, version: str, *agent_args: str) -> dict:
    folder, package = v2_package("sdk")
    done = subprocess.run([*TS_CLIENT, "v2", version, str(tmp_path), *stub(package, "agent"), *agent_args],
                          env=env_for(folder), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_typescript_client_completes_a_turn_against_our_stub_agent(tmp_path):
    summary = _ts_client(tmp_path, "2", "--ask-permission")  # (the SDK's v2 client always asks for 2)
    assert "error" not in summary, summary
    assert summary["initialize"]["protocolVersion"] == 2
    assert summary["initialize"]["info"]["name"] == "acp-bindings-stub-agent"
    assert summary["stopReason"] == "end_turn"
    [permission] = summary["permissions"]
    assert permission["title"] == "Echo the prompt back" and [o["kind"] for o in permission["options"]] == [
        "allow_once", "reject_once"]
    updates = [u["update"] for u in summary["updates"]]
    states = [u["state"] for u in updates if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    [user] = [u for u in updates if u["sessionUpdate"] == "user_message"]
    assert user["messageId"] == summary["response"]["messageId"]
    assert "".join(chunks(updates)) == "Hello from the TypeScript client"
