"""Remote ACP interop, over real servers on 127.0.0.1: our client against the Python SDK's ASGI
app (uvicorn; hypercorn, with h2c) and the TypeScript SDK's Node server; the Python SDK's and the
TypeScript SDK's clients against our ASGI app under uvicorn and hypercorn (and granian, with ours
and the TypeScript client); WebSocket and Streamable HTTP each.

Every run is one full scenario (tests/interop/remote_agent.py): a turn with streamed updates, a
permission request and an ``fs/read_text_file`` on the session's stream, then a turn cancelled
with ``session/cancel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import INTEROP
from support.remote import run_client, running

HELLO = "hello file\n"
EXPECTED_TEXTS = ["start", "permission: yes", f"read: {HELLO}", "echo: hello ", "echo: remote"]

#: The agents, each under the server it runs in: (server, app).
AGENTS = {
    "ours-uvicorn": ("uvicorn", "remote_agent:app"),
    "ours-hypercorn": ("hypercorn", "remote_agent:app"),
    "ours-granian": ("granian", "remote_agent:app"),
    "sdk-uvicorn": ("uvicorn", "remote_sdk_agent:app"),
    "sdk-hypercorn": ("hypercorn", "remote_sdk_agent:app"),
    "ts-node": ("node", "remote_ts_agent.mjs"),
}
CLIENTS = {
    "ours": [sys.executable, "remote_client.py"],
    "sdk": [sys.executable, "remote_sdk_client.py"],
    "ts": ["node", "remote_ts_client.mjs"],
}
MATRIX = [
    *[("ours", agent, scheme) for agent in AGENTS for scheme in ("ws", "http")],
    ("ours", "ours-hypercorn", "http2"),
    ("ours", "sdk-hypercorn", "http2"),
    *[(client, agent, scheme) for client in ("sdk", "ts") for agent in ("ours-uvicorn", "ours-hypercorn") for scheme in ("ws", "http")],
    *[("ts", "ours-granian", scheme) for scheme in ("ws", "http")],
]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the servers' logs (``<agent>.log``): a failure shows its server's."""
    return tmp_path_factory.mktemp("remote-logs")


@pytest.fixture(scope="module")
def servers(logs: Path) -> Iterator[dict[str, int]]:
    """Each agent's server, started once for the module: name -> port."""
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(running(*AGENTS[name], log=logs / f"{name}.log")) for name in AGENTS}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("remote-cwd")
    (folder / "hello.txt").write_text(HELLO)
    return folder


@pytest.mark.parametrize(("client", "agent", "scheme"), MATRIX, ids=["-".join(case) for case in MATRIX])
def test_a_full_turn_then_a_cancelled_one(servers: dict[str, int], logs: Path, cwd: Path, client: str, agent: str, scheme: str) -> None:
    url = f"{'ws' if scheme == 'ws' else 'http'}://127.0.0.1:{servers[agent]}/acp"
    extra = ["--http2"] if scheme == "http2" else []
    result = run_client([*CLIENTS[client], url, str(cwd), *extra], timeout=90)
    server_log = (logs / f"{agent}.log").read_text(errors="replace")[-2000:]
    assert result.returncode == 0, f"{result.stderr[-3000:]}\n--- the server's log, its end:\n{server_log}"
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["texts"] == EXPECTED_TEXTS
    assert summary["stopReason"] == "end_turn"
    assert summary["reads"] == [str(cwd / "hello.txt")]
    assert summary["cancelStopReason"] == "cancelled"
    assert summary["ticked"] is True
    if client == "ours" and scheme != "ws":
        assert summary["httpVersion"] == ("HTTP/2" if scheme == "http2" else "HTTP/1.1")


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_reconnecting_is_a_new_connection_then_session_load(servers: dict[str, int], cwd: Path, scheme: str) -> None:
    url = f"{scheme}://127.0.0.1:{servers['ours-uvicorn']}/acp"
    result = run_client([*CLIENTS["ours"], url, str(cwd), "--reconnect"], timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["replayed"] == ["replay: hello remote", "replay: cancel"]
    assert summary["afterReload"] == ["end_turn", ["echo: hello ", "echo: again"]]


def test_cookies_are_kept_for_the_connection(cwd: Path) -> None:
    """Behind a cookie-sticky balancer (simulated: a request without initialize's cookie is
    answered 404) our HTTP client completes the scenario: it sent the cookie every time."""
    with running("uvicorn", "remote_agent:sticky") as port:
        result = run_client([*CLIENTS["ours"], f"http://127.0.0.1:{port}/acp", str(cwd)], timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1])["texts"] == EXPECTED_TEXTS



@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_a_reconnect_goes_back_to_its_worker_behind_a_cookie_sticky_balancer(scheme: str) -> None:
    """Two workers behind a simulated balancer that pins a client to a worker by a cookie set on
    the first answer (the WebSocket handshake's, initialize's): our client keeps the cookie for
    the process, so every reconnect lands on the first worker; with a jar of its own for each
    connection, a reconnect goes to the next worker in turn."""
    from acp_bindings import PROTOCOL_VERSION, Client
    from acp_bindings._runtime.remote import _remote
    from acp_bindings.client import connect_agent

    async def workers(url: str, jars: list[http.cookiejar.CookieJar | None]) -> list[str]:
        served = []
        for jar in jars:
            async with connect_agent(Client(), url, cookies=jar) as conn:
                answer = await conn.agent.initialize(protocol_version=PROTOCOL_VERSION)
                assert answer.protocol_version == PROTOCOL_VERSION
                served.append(conn.transport.headers["x-worker"])
        return served

    _remote.cookie_jar().clear()
    try:
        with running("uvicorn", "remote_agent:balanced") as port:
            url = f"{scheme}://127.0.0.1:{port}/acp"
            assert asyncio.run(workers(url, [None, None, None])) == ["0", "0", "0"]
            assert asyncio.run(workers(url, [http.cookiejar.CookieJar(), http.cookiejar.CookieJar()])) == ["1", "0"]
    finally:
        _remote.cookie_jar().clear()  # the process's cookies for 127.0.0.1 go with this test


def test_a_session_the_server_did_not_know_gets_its_stream_once_loaded() -> None:
    """A client loads, on a connection to the other worker (an app that never saw the session),
    a session the first worker served: the session's stream is refused (404) until the load is
    accepted, then opened, and the replayed history arrives on it."""
    from acp_bindings import PROTOCOL_VERSION, Client, builders
    from acp_bindings._runtime.wire._codec import encode
    from acp_bindings.client import connect_agent

    class Texts(Client):
        def __init__(self) -> None:
            self.texts: list[str] = []

        async def session_update(self, params) -> None:  # type: ignore[no-untyped-def]
            update = encode(params)["update"]
            if update["sessionUpdate"] == "agent_message_chunk":
                self.texts.append(update["content"]["text"])

    async def scenario(url: str, cwd: str) -> list[str]:
        async with connect_agent(Client(), url, cookies=http.cookiejar.CookieJar()) as conn:
            await conn.agent.initialize(protocol_version=PROTOCOL_VERSION)
            assert conn.transport.headers["x-worker"] == "0"
            session = (await conn.agent.session_new(cwd=cwd, mcp_servers=[])).session_id
            await conn.agent.session_prompt(session_id=session, prompt=[builders.content_block.text("flood 1")])
        client = Texts()
        async with connect_agent(client, url, cookies=http.cookiejar.CookieJar()) as conn:
            await conn.agent.initialize(protocol_version=PROTOCOL_VERSION)
            assert conn.transport.headers["x-worker"] == "1"
            await conn.agent.session_load(session_id=session, cwd=cwd, mcp_servers=[])
            for _ in range(200):  # the replay comes on the session's stream, the answer on the other
                if client.texts:
                    break
                await asyncio.sleep(0.025)
        return client.texts

    with running("uvicorn", "remote_agent:balanced") as port:
        assert asyncio.run(scenario(f"http://127.0.0.1:{port}/acp", str(INTEROP))) == ["replay: flood 1"]
