"""Our ASGI app under a real uvicorn on 127.0.0.1: the RFD's status codes and streams, and the
guard in front of both profiles (foreign Origin, rebound Host, missing or wrong token), refused
before anything reaches the agent."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.remote import environment, running
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as ws_connect

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
JSON = {"Content-Type": "application/json"}
SSE = {"Accept": "text/event-stream"}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running("uvicorn", "remote_agent:quick") as port:
        yield f"http://127.0.0.1:{port}/acp"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def initialize(http: httpx.Client, url: str) -> str:
    response = http.post(url, json=INIT)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["protocolVersion"] == 1
    return response.headers["acp-connection-id"]


def events(lines: Iterator[str], count: int) -> list[Any]:
    """The next ``count`` messages of an event stream (comments skipped)."""
    found = []
    for line in lines:
        if line.startswith("data: "):
            found.append(json.loads(line[6:]))
            if len(found) == count:
                break
    return found


def test_initialize_opens_a_connection_and_answers_at_once(http: httpx.Client, url: str) -> None:
    connection = initialize(http, url)
    assert len(connection) >= 16
    again = http.post(url, json=INIT, headers={"Acp-Connection-Id": connection})
    assert again.status_code == 400
    assert http.delete(url, headers={"Acp-Connection-Id": connection}).status_code == 202


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b'{"jsonrpc":"2.0","id":0,"method":"initialize"}', {"Content-Type": "text/plain"}, 415),
        (b"{not json", JSON, 400),
        (b'[{"jsonrpc":"2.0","id":0,"method":"initialize"}]', JSON, 501),
        (b"3", JSON, 400),
        (b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}', JSON, 400),  # no connection
        (b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}', {**JSON, "Acp-Connection-Id": "nope"}, 404),
        (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"pad":"' + b"x" * 5000 + b'"}}', JSON, 413),
    ],
    ids=["media-type", "bad-json", "batch", "not-an-object", "no-connection", "unknown-connection", "too-large"],
)
def test_a_post_the_rfd_refuses(http: httpx.Client, url: str, body: bytes, headers: dict[str, str], status: int) -> None:
    response = http.post(url, content=body, headers=headers)
    assert response.status_code == status, response.text
    if body == b"{not json":
        assert response.json()["error"]["code"] == -32700


def test_other_methods_and_paths(http: httpx.Client, url: str) -> None:
    assert http.put(url, json=INIT).status_code == 405
    assert http.post(url.replace("/acp", "/other"), json=INIT).status_code == 404
    assert http.get(url, headers={"Accept": "application/json", "Acp-Connection-Id": "x"}).status_code == 406
    assert http.get(url, headers=SSE).status_code == 400
    assert http.get(url, headers={**SSE, "Acp-Connection-Id": "nope"}).status_code == 404
    assert http.delete(url).status_code == 400
    assert http.delete(url, headers={"Acp-Connection-Id": "nope"}).status_code == 404


def test_answers_come_on_the_streams_and_delete_ends_the_connection(http: httpx.Client, url: str) -> None:
    connection = initialize(http, url)
    scoped = {"Acp-Connection-Id": connection}
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    assert http.post(url, json=new, headers=scoped).status_code == 202  # answered before any reader
    with http.stream("GET", url, headers={**SSE, **scoped}) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        (answer,) = events(lines, 1)
        session = answer["result"]["sessionId"]
        assert http.get(url, headers={**SSE, **scoped}).status_code == 409  # one reader per stream
        # A keepalive comment while nothing is sent (every 0.2 s in this app; 15 s by default).
        assert next(line for line in lines if line) == ": keepalive"
        prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": session, "prompt": []}}
        unknown = http.post(url, json=prompt, headers={**scoped, "Acp-Session-Id": "nobody"})
        assert unknown.status_code in (400, 404)  # mismatched with params, or unknown
        assert http.post(url, json={**prompt, "params": {"sessionId": "nobody", "prompt": []}}, headers={**scoped, "Acp-Session-Id": "nobody"}).status_code == 404
        assert http.post(url, json=prompt, headers={**scoped, "Acp-Session-Id": "other"}).status_code == 400
        assert http.post(url, json=prompt, headers={**scoped, "Acp-Session-Id": session}).status_code == 202
        with http.stream("GET", url, headers={**SSE, **scoped, "Acp-Session-Id": session}) as session_stream:
            # What names the session comes on the session's stream: an update, a request.
            session_lines = session_stream.iter_lines()
            update, asked = events(session_lines, 2)
            assert update["method"] == "session/update" and update["params"]["sessionId"] == session
            assert asked["method"] == "session/request_permission" and "id" in asked
            assert http.delete(url, headers=scoped).status_code == 202
            assert [line for line in session_lines if line.startswith("data:")] == []  # it ends
        assert all(not line.startswith("data:") for line in lines)
    assert http.post(url, json=new, headers=scoped).status_code == 404


def test_a_reader_that_vanishes_frees_its_stream(http: httpx.Client, url: str) -> None:
    connection = initialize(http, url)
    scoped = {**SSE, "Acp-Connection-Id": connection}
    with http.stream("GET", url, headers=scoped) as stream:
        assert stream.status_code == 200
    deadline = time.monotonic() + 5  # the server sees http.disconnect, and lets the next reader in
    while True:
        with httpx.Client(timeout=10) as other, other.stream("GET", url, headers=scoped) as again:
            if again.status_code == 200 or time.monotonic() > deadline:
                assert again.status_code == 200
                break
        time.sleep(0.05)
    http.delete(url, headers={"Acp-Connection-Id": connection})


def test_websocket_one_message_per_text_frame_binary_ignored(url: str) -> None:
    with ws_connect(url.replace("http", "ws", 1), open_timeout=10) as socket:
        assert socket.response.headers["acp-connection-id"]
        socket.send(b"\x00binary frames are ignored")
        socket.send("{not json")
        assert json.loads(socket.recv(timeout=10))["error"]["code"] == -32700  # and it keeps serving
        socket.send(json.dumps(INIT))
        assert json.loads(socket.recv(timeout=10))["result"]["protocolVersion"] == 1


# -- the guard ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    log = tmp_path_factory.mktemp("guard") / "agent.log"
    env = environment(ACP_TOKEN="s3cret", ACP_AGENT_LOG=str(log))
    with running("uvicorn", "remote_agent:app", env=env) as port:
        yield f"http://127.0.0.1:{port}/acp", log


GOOD = {"Authorization": "Bearer s3cret"}
REFUSED = [
    ({}, 401),
    ({"Authorization": "Bearer wrong"}, 401),
    ({"Authorization": "Basic s3cret"}, 401),
    ({**GOOD, "Origin": "http://evil.example"}, 403),
    ({**GOOD, "Host": "evil.example"}, 403),
]
REFUSED_IDS = ["no-token", "wrong-token", "not-bearer", "foreign-origin", "rebound-host"]


@pytest.mark.parametrize(("headers", "status"), REFUSED, ids=REFUSED_IDS)
def test_streamable_http_refuses(guarded: tuple[str, Path], headers: dict[str, str], status: int) -> None:
    url, log = guarded
    with httpx.Client(timeout=10) as http:
        response = http.post(url, json=INIT, headers=headers)
        assert response.status_code == status
        if status == 401:
            assert response.headers["www-authenticate"] == "Bearer"
        assert http.get(url, headers={**headers, **SSE, "Acp-Connection-Id": "x"}).status_code == status
    assert not log.exists() or log.read_text() == ""  # nothing reached the agent


@pytest.mark.parametrize(("headers", "status"), REFUSED, ids=REFUSED_IDS)
def test_websocket_refuses(guarded: tuple[str, Path], headers: dict[str, str], status: int) -> None:
    """A refused WebSocket handshake is answered with the status an HTTP request gets (uvicorn
    offers the denial response extension), and its reason."""
    url, log = guarded
    origin = headers.get("Origin")
    rest = {k: v for k, v in headers.items() if k not in ("Origin", "Host")}
    target = url.replace("http", "ws", 1)
    port = int(target.rsplit(":", 1)[1].split("/")[0])
    if "Host" in headers:  # the URL names the host; the socket goes to 127.0.0.1
        target = target.replace("127.0.0.1", headers["Host"])
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    with pytest.raises(InvalidStatus) as refused:
        ws_connect(target, sock=sock, additional_headers=rest, origin=origin, open_timeout=10)
    answer = refused.value.response
    assert answer.status_code == status
    assert (answer.headers.get("www-authenticate"), bytes(answer.body or b"")) == (
        ("Bearer", b"Unauthorized") if status == 401 else (None, b"Origin not allowed" if "Origin" in headers else b"Host not allowed")
    )
    assert not log.exists() or log.read_text() == ""


def test_websocket_refused_without_the_denial_extension_is_closed_before_accepted() -> None:
    """Under an ASGI server without ``websocket.http.response``, a refusal closes the handshake
    before it is accepted (which the server answers 403)."""
    import asyncio

    from acp_bindings._runtime.remote._asgi import AcpApp

    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    app = AcpApp(lambda connection: None, token="s3cret")  # type: ignore[arg-type, return-value]
    scope = {"type": "websocket", "path": "/acp", "server": ("127.0.0.1", 1), "headers": [(b"host", b"127.0.0.1")]}
    asyncio.run(app(scope, receive, send))
    assert sent == [{"type": "websocket.close", "code": 1008}]


def test_the_token_lets_plain_clients_in_on_both_profiles(guarded: tuple[str, Path]) -> None:
    url, log = guarded
    with httpx.Client(timeout=10) as http:
        response = http.post(url, json=INIT, headers=GOOD)
        assert response.status_code == 200
        http.delete(url, headers={**GOOD, "Acp-Connection-Id": response.headers["acp-connection-id"]})
    with ws_connect(url.replace("http", "ws", 1), additional_headers=GOOD, open_timeout=10) as socket:
        socket.send(json.dumps(INIT))
        assert json.loads(socket.recv(timeout=10))["id"] == 0
    deadline = time.monotonic() + 5
    while log.read_text().count("initialize") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log.read_text() == "initialize\ninitialize\n"


def test_a_reader_that_does_not_read_makes_the_agent_wait_and_loses_nothing(http: httpx.Client, url: str) -> None:
    """The app buffers at most 64 KiB for readers here: the agent's 200 updates of 2 KB wait,
    and so does the client's next request, until the session's stream is read; then every
    update arrives, in order."""
    connection = initialize(http, url)
    scoped = {"Acp-Connection-Id": connection}
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    with http.stream("GET", url, headers={**SSE, **scoped}) as stream:
        lines = stream.iter_lines()
        assert http.post(url, json=new, headers=scoped).status_code == 202
        session = events(lines, 1)[0]["result"]["sessionId"]
        flood = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "flood 200"}]}}
        assert http.post(url, json=flood, headers={**scoped, "Acp-Session-Id": session}).status_code == 202
        time.sleep(0.5)  # the agent fills the buffer, then waits
        later = {**new, "id": 3}
        with pytest.raises(httpx.ReadTimeout):  # a request waits while the output does
            http.post(url, json=later, headers=scoped, timeout=1.0)
        with http.stream("GET", url, headers={**SSE, **scoped, "Acp-Session-Id": session}) as session_stream:
            got = events(session_stream.iter_lines(), 201)
        assert [m["params"]["update"]["content"]["text"][:5] for m in got[:200]] == [f"{i:05}" for i in range(200)]
        assert got[200] == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
    http.delete(url, headers=scoped)


def test_a_connection_whose_client_vanished_ends(http: httpx.Client, url: str) -> None:
    """No reader and no request for the idle timeout (1 s in this app; 60 s by default): the
    connection ends. A reader keeps it alive."""
    gone = initialize(http, url)
    kept = initialize(http, url)
    with http.stream("GET", url, headers={**SSE, "Acp-Connection-Id": kept}) as stream:
        assert stream.status_code == 200
        time.sleep(2.0)
        assert http.get(url, headers={**SSE, "Acp-Connection-Id": gone}).status_code == 404
        new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
        assert http.post(url, json=new, headers={"Acp-Connection-Id": kept}).status_code == 202
    http.delete(url, headers={"Acp-Connection-Id": kept})

