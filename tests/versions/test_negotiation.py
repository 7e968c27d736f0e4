"""The golden negotiation table: the same raw lines into the TypeScript SDK's protocol router and
into ours (``_versions.AgentRouter``), answered the same. Each connection sends what must not
start it (a notification, a batch, another request, a bad ``protocolVersion``, a line that is not
JSON) and then an ``initialize`` asking for version 0 to 3; routers of versions 1 and 2, of 1
alone and of 2 alone. A result is compared by the version it answers (the agents behind the
routers differ), an error in full."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from support import BINDINGS, INTEROP, docs
from support.versions import env_for, v2_package

TS_AGENT = ["node", str(INTEROP / "ts_versions_agent.mjs")]
OURS = [sys.executable, str(INTEROP / "versions_router_agent.py"), "acp_bindings"]

NOT_YET = [
    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
    [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}],
    {"jsonrpc": "2.0", "id": "new", "method": "session/new", "params": {"cwd": "/"}},
    {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "two"}},
    {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": 65536}},
    {"jsonrpc": "2.0", "id": 4, "result": {}},
    "not json",
]


def initialize(version: int) -> dict:
    if version < 2:
        params = {"protocolVersion": version, "clientCapabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    else:
        params = {"protocolVersion": version, "capabilities": {}, "info": {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": 10 + version, "method": "initialize", "params": params}


def exchange(command: list[str], lines: list, last_id: int, env: dict | None = None) -> list[str]:
    """Send ``lines``; read answers until the one to ``last_id``; each answer as sorted JSON."""
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert process.stdin and process.stdout
    process.stdin.write(text)
    process.stdin.flush()
    answers = []
    try:
        for _ in range(len(lines)):
            message = json.loads(process.stdout.readline())
            if "result" in message:
                message["result"] = {"protocolVersion": message["result"]["protocolVersion"]}
            answers.append(json.dumps(message, sort_keys=True))
            if message.get("id") == last_id:
                break
    finally:
        process.stdin.close()
        process.wait(timeout=30)
    return sorted(answers)


@pytest.fixture(scope="module")
def ours_env():
    folder, package = v2_package("sdk")
    return env_for(BINDINGS, folder), package


ROUTERS = {"router": [1, 2], "router-v1": [1], "router-v2": [2]}
#: What each router answers an initialize asking for 0, 1, 2, 3: the version served, or -32022.
EXPECTED = {
    "router": {0: None, 1: 1, 2: 2, 3: 2},
    "router-v1": {0: 1, 1: 1, 2: 1, 3: 1},  # a v1 router alone serves every request (legacy)
    "router-v2": {0: None, 1: None, 2: 2, 3: 2},
}


@pytest.mark.parametrize("router", sorted(ROUTERS))
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_the_routers_answer_the_same(ours_env, router, version):
    env, package = ours_env
    lines = [*(NOT_YET if version == 1 or router == "router" else []), initialize(version)]
    theirs = exchange([*TS_AGENT, router], lines, 10 + version)
    mine = exchange([*OURS, package, router], lines, 10 + version, env=env)
    assert mine == theirs
    [last] = [json.loads(a) for a in mine if json.loads(a)["id"] == 10 + version]
    served = EXPECTED[router][version]
    if served is None:
        assert last["error"] == {"code": -32022, "message": "Unsupported protocol version",
                                 "data": {"requested": version, "supported": ROUTERS[router]}}
    else:
        assert last["result"] == {"protocolVersion": served}


def test_a_v2_initialize_whose_id_is_null_is_refused_as_the_typescript_router_does(ours_env):
    env, package = ours_env
    lines = [{**initialize(2), "id": None}, initialize(2)]
    theirs = exchange([*TS_AGENT, "router"], lines, 12)
    assert exchange([*OURS, package, "router"], lines, 12, env=env) == theirs
    assert json.dumps({"error": {"code": -32600, "message": "Invalid request: ACP v2 request IDs must be strings or"
                                 " integers"}, "id": None, "jsonrpc": "2.0"}, sort_keys=True) in theirs


TS_CLIENT = ["node", str(INTEROP / "ts_versions_client.mjs")]


@pytest.mark.parametrize("mode", ["v1", "v2"])
def test_the_typescript_clients_complete_a_turn_against_our_router(ours_env, tmp_path, mode):
    env, package = ours_env
    version = "1" if mode == "v1" else "2"
    done = subprocess.run([*TS_CLIENT, mode, version, str(tmp_path), *OURS, package, "router"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert "error" not in summary, summary
    assert summary["initialize"]["protocolVersion"] == int(version)
    assert summary["stopReason"] == "end_turn"
    text = "".join(u["update"]["content"]["text"] for u in summary["updates"]
                   if u["update"]["sessionUpdate"] == "agent_message_chunk")
    assert text == "Hello from the TypeScript client"
    if mode == "v2":
        states = [u["update"]["state"] for u in summary["updates"] if u["update"]["sessionUpdate"] == "state_update"]
        assert states == ["running", "idle"]


def test_our_v1_stub_client_completes_a_turn_against_the_typescript_router_and_ours(ours_env, tmp_path):
    env, package = ours_env
    for agent in ([*TS_AGENT, "router"], [*OURS, package, "router"]):
        done = subprocess.run([sys.executable, "-m", "acp_bindings.stub_client", "--prompt", "one two", "--", *agent],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, (agent, done.stderr)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        assert lines[-1] == {"stopReason": "end_turn"}
        assert "".join(line["update"]["content"]["text"] for line in lines[:-1]) == "one two"


@pytest.mark.parametrize("asked", ["2", "3"])
def test_our_v2_stub_client_completes_a_turn_against_our_router(ours_env, tmp_path, asked):
    from support.versions import run_stub_client

    _, package = ours_env
    done = run_stub_client("sdk", tmp_path, "--protocol-version", asked, agent=[*OURS, package, "router"],
                           folders=(BINDINGS,))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"stopReason": "end_turn"}


def test_our_v2_stub_client_says_so_when_the_router_serves_a_lower_version(ours_env, tmp_path):
    from support.versions import run_stub_client

    _, package = ours_env
    done = run_stub_client("sdk", tmp_path, "--protocol-version", "1", agent=[*OURS, package, "router"],
                           folders=(BINDINGS,))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == "stub_client: the agent answered protocol version 1; this client speaks 2 (it asked for 1)"


CLIENT = [sys.executable, str(INTEROP / "versions_client.py"), "acp_bindings"]


@pytest.mark.parametrize(
    ("agent", "asked", "bound"),
    [
        (["router"], 2, {"version": 2, "lower": False, "note": "the agent answered protocol version 2"}),
        (["router"], 3, {"version": 2, "lower": True, "note": "the agent answered protocol version 2, lower than"
                                                              " the 3 asked for: this connection speaks 2"}),
        (["router"], 1, {"version": 1, "lower": False, "note": "the agent answered protocol version 1"}),
        (["v1"], 2, {"version": 1, "lower": True, "note": "the agent answered protocol version 1, lower than"
                                                          " the 2 asked for: this connection speaks 1"}),
        (["router-v2"], 1, {"error": 'Unsupported protocol version (-32022): {"requested": 1, "supported": [2]}'}),
    ],
    ids=["router-2", "router-3", "router-1", "v1-agent-2", "v2-router-1"],
)
@pytest.mark.parametrize("ours", [False, True], ids=["typescript-agent", "our-agent"])
def test_our_client_binds_the_version_the_agent_answers(ours_env, tmp_path, agent, asked, bound, ours):
    env, package = ours_env
    if ours and agent == ["v1"]:
        agent_command = [sys.executable, "-m", "acp_bindings.stub_agent"]
    else:
        agent_command = [*OURS, package, *agent] if ours else [*TS_AGENT, *agent]
    done = subprocess.run([*CLIENT, package, str(asked), "--", *agent_command], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert {k: v for k, v in result.items() if k != "sessionId"} == bound
    assert ("sessionId" in result) == ("error" not in bound)


def _answer(command: list[str], request: dict, env: dict | None = None) -> dict:
    done = subprocess.run(command, input=json.dumps(request) + "\n", env=env, capture_output=True, text=True,
                          timeout=30, check=False)
    return json.loads(done.stdout.splitlines()[0])


(WIRE,) = docs.blocks("guides/protocol-versions.md", "", "What a client asking for another version gets")


def test_a_v1_client_asking_for_a_version_no_release_defines_is_answered_in_a_shape_it_reads():
    """A v1 ``initialize`` (v1's params, no ``info``) asking for 999, which no release defines:
    the guide's exchange. The root stub agent of a package of both versions serves it in the
    latest version whose agent reads it: version 1, a result v1's models decode, of the fields
    the guide shows. The TypeScript router makes up an ``info`` and serves v2: version 2 in v2's
    shape, where a v1 client finds neither ``agentInfo`` nor ``agentCapabilities``. A v2
    ``initialize`` asking for 999 gets 2 from both."""
    from support.versions import several_versions_package

    sent, shown = (json.loads(re.sub(r"\{\.\.\.\}", "{}", re.sub(r"\[\.\.\.\]", "[]", line[3:])))
                   for line in WIRE.text.splitlines())
    env = env_for(several_versions_package())
    ours = [sys.executable, "-m", "both.stub_agent"]
    mine = _answer(ours, sent, env)
    assert list(mine) == list(shown) and mine["id"] == sent["id"]
    assert list(mine["result"]) == list(shown["result"]) and mine["result"]["protocolVersion"] == 1
    read = "import json, sys; from both.v1 import models; print(models.InitializeResponse.from_json(json.load(sys.stdin)).protocol_version)"
    decoded = subprocess.run([sys.executable, "-c", read], input=json.dumps(mine["result"]), env=env,
                             capture_output=True, text=True, timeout=30, check=False)
    assert decoded.stdout.strip() == "1", decoded.stderr
    theirs = _answer([*TS_AGENT, "router"], sent)["result"]
    assert theirs["protocolVersion"] == 2 and "agentInfo" not in theirs and "info" in theirs
    v2_asking = {**initialize(2), "params": {**initialize(2)["params"], "protocolVersion": 999}}
    for command, environment in ((ours, env), ([*TS_AGENT, "router"], None)):
        assert _answer(command, v2_asking, environment)["result"]["protocolVersion"] == 2
