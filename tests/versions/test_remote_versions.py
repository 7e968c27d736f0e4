"""Several versions over the network: the root ``stub_agent``'s ASGI app (under uvicorn, and with
``--listen``) routes every WebSocket and Streamable HTTP connection by its first ``initialize``,
as the stdio router does; v2's stub agent listens as v1's does. Real peers over real sockets on
127.0.0.1: the TypeScript SDK's v1 and v2 clients (its experimental WebSocket and HTTP streams),
the Python SDK's client (which speaks v1), raw frames and POSTs compared with the TypeScript
router's answers, and our root stub client."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from support import INTEROP
from support.remote import free_port, running, wait_listening
from support.versions import env_for, several_versions_package, stub, v2_package
from test_negotiation import NOT_YET, TS_AGENT, exchange, initialize
from websockets.sync.client import connect

TS_CLIENT = ["node", str(INTEROP / "ts_versions_client.mjs")]
TEXT = "Hello from the TypeScript client"


@pytest.fixture(scope="module")
def both() -> Iterator[tuple[dict[str, str], int]]:
    """The environment that imports ``both``, and ``uvicorn both.stub_agent:app`` on a port."""
    env = env_for(several_versions_package())
    with running("uvicorn", "both.stub_agent:app", env=env) as port:
        yield env, port


def ts_client(mode: str, asks: str, url: str, cwd, env: dict[str, str]) -> dict:
    done = subprocess.run([*TS_CLIENT, mode, asks, str(cwd), url], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def echoed(summary: dict) -> str:
    return "".join(u["update"]["content"]["text"] for u in summary["updates"]
                   if u["update"]["sessionUpdate"] == "agent_message_chunk")


@pytest.mark.parametrize("scheme", ["ws", "http"])
@pytest.mark.parametrize(("mode", "version"), [("v1", 1), ("v2", 2)])
def test_each_typescript_client_gets_its_version_from_the_root_app(both, tmp_path, mode, version, scheme):
    env, port = both
    summary = ts_client(mode, str(version), f"{scheme}://127.0.0.1:{port}/acp", tmp_path, env)
    assert "error" not in summary, summary
    assert summary["initialize"]["protocolVersion"] == version
    assert summary["stopReason"] == "end_turn" and echoed(summary) == TEXT
    states = [u["update"]["state"] for u in summary["updates"] if u["update"]["sessionUpdate"] == "state_update"]
    assert states == ([] if mode == "v1" else ["running", "idle"])


def test_the_python_sdks_http_client_which_speaks_v1_gets_v1_from_the_root_app(both, tmp_path):
    env, port = both
    done = subprocess.run([sys.executable, str(INTEROP / "remote_sdk_client.py"), f"http://127.0.0.1:{port}/acp",
                           str(tmp_path), "--echo"], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"protocolVersion": 1, "texts": ["hello ", "remote"], "stopReason": "end_turn"}


REFUSED = {"code": -32022, "message": "Unsupported protocol version", "data": {"requested": 0, "supported": [1, 2]}}
NOT_INITIALIZED = {"code": -32600, "message": "Invalid request", "data": "first ACP request must be initialize"}


def test_an_unsupported_version_is_refused_and_the_websocket_then_serves_v1(both, tmp_path):
    env, port = both
    summary = ts_client("v1", "0,1", f"ws://127.0.0.1:{port}/acp", tmp_path, env)
    assert summary["refused"] == [{**REFUSED, "next": NOT_INITIALIZED}]
    assert summary["initialize"]["protocolVersion"] == 1
    assert summary["stopReason"] == "end_turn" and echoed(summary) == TEXT


def test_an_unsupported_version_over_http_is_answered_and_the_connection_keeps_answering(both, tmp_path):
    """A refused ``initialize`` still opens the Streamable HTTP connection (as the TypeScript
    SDK's server does): what is sent on it next is answered on its stream."""
    env, port = both
    summary = ts_client("v1", "0,", f"http://127.0.0.1:{port}/acp", tmp_path, env)
    assert summary["refused"] == [{**REFUSED, "next": NOT_INITIALIZED}]
    assert "error" not in summary and "initialize" not in summary


def _normal(message: dict) -> str:
    if "result" in message:  # the agents behind the routers differ: compare the version
        message = {**message, "result": {"protocolVersion": message["result"]["protocolVersion"]}}
    return json.dumps(message, sort_keys=True)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_a_websocket_is_answered_as_the_typescript_router_answers_stdio(both, version):
    """What must not start a connection (a notification, a batch, another request, bad versions,
    a frame that is not JSON), then ``initialize`` for ``version``: frame by frame over one
    WebSocket, the same answers as the TypeScript SDK's router gives on stdio."""
    _, port = both
    lines = [*NOT_YET, initialize(version)]
    answers = []
    with connect(f"ws://127.0.0.1:{port}/acp", open_timeout=10) as socket:
        for line in lines:
            socket.send(line if isinstance(line, str) else json.dumps(line))
        for _ in lines:
            answers.append(json.loads(socket.recv(timeout=10)))
            if answers[-1].get("id") == 10 + version:
                break
    assert sorted(map(_normal, answers)) == exchange([*TS_AGENT, "router"], lines, 10 + version)
    assert answers[-1].get("result", {}).get("protocolVersion") == {0: None, 1: 1, 2: 2, 3: 2}[version]


@pytest.mark.parametrize("version", [0, 3])  # (1 and 2: the TypeScript clients above)
def test_an_initialize_post_is_answered_as_the_typescript_router_answers_stdio(both, version):
    _, port = both
    answer = httpx.post(f"http://127.0.0.1:{port}/acp", json=initialize(version), timeout=10)
    assert answer.status_code == 200 and answer.headers["acp-connection-id"]
    assert [_normal(answer.json())] == exchange([*TS_AGENT, "router"], [initialize(version)], 10 + version)


def test_the_root_stub_agent_listens_with_a_token_and_the_root_stub_client_gets_v1(tmp_path):
    env = env_for(several_versions_package())
    port = free_port()
    agent = subprocess.Popen([*stub("both", "agent"), "--listen", f"127.0.0.1:{port}", "--token", "s3cret"], env=env,
                             stderr=subprocess.PIPE)
    try:
        wait_listening(port, agent)
        client = [*stub("both", "client"), "--protocol-version", "1", "--prompt", "one two", "--url",
                  f"ws://127.0.0.1:{port}/acp"]
        done = subprocess.run([*client, "--token", "s3cret"], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == '{"stopReason":"end_turn"}'
        refused = subprocess.run(client, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                                 check=False)
        assert refused.returncode == 1 and "the server requires a token (HTTP 401)" in refused.stderr
    finally:
        agent.terminate()
        agent.communicate(timeout=10)


@pytest.fixture(scope="module")
def v2_listening() -> Iterator[tuple[dict[str, str], int]]:
    """``python -m v2_sdk.stub_agent --ask-permission --listen 127.0.0.1:PORT --token s3cret``."""
    folder, package = v2_package("sdk")
    env = {**env_for(folder), "ACP_TOKEN": "s3cret"}
    port = free_port()
    command = [*stub(package, "agent"), "--ask-permission", "--listen", f"127.0.0.1:{port}", "--token", "s3cret"]
    agent = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    try:
        wait_listening(port, agent)
        yield env, port
    finally:
        agent.terminate()
        agent.communicate(timeout=10)


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_the_v2_stub_agent_listens_and_asks_permission_over_the_network(v2_listening, tmp_path, scheme):
    env, port = v2_listening
    summary = ts_client("v2", "2", f"{scheme}://127.0.0.1:{port}/acp", tmp_path, env)
    assert "error" not in summary, summary
    assert [p["title"] for p in summary["permissions"]] == ["Echo the prompt back"]
    states = [u["update"]["state"] for u in summary["updates"] if u["update"]["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    assert summary["stopReason"] == "end_turn" and echoed(summary) == TEXT
    unauthorized = ts_client("v2", "2", f"{scheme}://127.0.0.1:{port}/acp", tmp_path, {**env, "ACP_TOKEN": "no"})
    assert "401" in unauthorized["error"]["message"] + json.dumps(unauthorized["error"]["data"])  # either profile


def test_the_v2_stub_app_under_uvicorn(tmp_path):
    folder, package = v2_package("sdk")
    env = {**env_for(folder), "ACP_TOKEN": "t"}
    with running("uvicorn", f"{package}.stub_agent:app", env=env) as port:
        summary = ts_client("v2", "2", f"http://127.0.0.1:{port}/acp", tmp_path, env)
        assert "error" not in summary, summary
        assert summary["stopReason"] == "end_turn" and echoed(summary) == TEXT
        assert summary["permissions"] == []  # the app's stub does not ask


@pytest.mark.parametrize(
    ("which", "args", "message"),
    [  # (the one partial prints both stubs' checks; v1's are tested in full in tests/runtime)
        ("v2", ["--listen", "0.0.0.0:8000"], "argument --listen: 0.0.0.0 is beyond loopback: give a --token"),
        ("root", ["--token", "t"], "argument --token: only with --listen"),
    ],
)
def test_their_listen_flags_are_checked_as_v1s_are(which, args, message):
    folder, package = v2_package("sdk") if which == "v2" else (several_versions_package(), "both")
    done = subprocess.run([*stub(package, "agent"), *args], env=env_for(folder), capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(f"error: {message}")
