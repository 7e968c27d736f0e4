"""The transport RFD's routing of the ``/acp`` endpoint ("Unified Endpoint Routing", and its
"Content Negotiation and Validation" rules), branch by branch, by status code on both profiles:
the stub agent's app under a real uvicorn on 127.0.0.1.

Each row names the branch it checks in words. ``$conn`` is a connection that has a session,
``$session``, made with ``session/new`` (its answer read from the connection's stream, which is
then left); ``$fresh`` is a connection with nothing on it yet."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from support.remote import running
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as ws_connect

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
NEW = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
PROMPT = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "$session", "prompt": [{"type": "text", "text": "hi"}]}}
CANCEL = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "$session"}}
LOAD = {"jsonrpc": "2.0", "id": 3, "method": "session/load", "params": {"sessionId": "$session", "cwd": "/", "mcpServers": []}}
JSON = {"Content-Type": "application/json"}
SSE = {"Accept": "text/event-stream"}
CONN = {"Acp-Connection-Id": "$conn"}
SESSION = {"Acp-Connection-Id": "$conn", "Acp-Session-Id": "$session"}


@dataclass(frozen=True)
class Row:
    branch: str  # the RFD's branch, in words
    method: str  # POST, GET, DELETE, PUT, or WS (a GET with Upgrade: websocket)
    headers: dict[str, str]
    body: Any  # a message (JSON), or bytes as they are
    status: int
    path: str = "/acp"


ROWS = {
    # POST /acp
    "post-initialize": Row("POST: an initialize request without Acp-Connection-Id creates a connection, 200 with JSON", "POST", JSON, INIT, 200),
    "post-no-connection": Row("POST: no Acp-Connection-Id -> 400", "POST", JSON, NEW, 400),
    "post-unknown-connection": Row("POST: unknown Acp-Connection-Id -> 404", "POST", {**JSON, "Acp-Connection-Id": "nope"}, NEW, 404),
    "post-initialize-unknown-connection": Row("POST: initialize with an unknown Acp-Connection-Id is no creating initialize: unknown -> 404", "POST", {**JSON, "Acp-Connection-Id": "nope"}, INIT, 404),
    "post-initialize-on-a-connection": Row("POST: initialize creates a connection only without Acp-Connection-Id: on an existing one -> 400", "POST", {**JSON, **CONN}, INIT, 400),
    "post-prompt-without-session": Row("POST: session-scoped request missing Acp-Session-Id -> 400", "POST", {**JSON, **CONN}, PROMPT, 400),
    "post-cancel-without-session": Row("POST: session-scoped request (a notification: session/cancel) missing Acp-Session-Id -> 400", "POST", {**JSON, **CONN}, CANCEL, 400),
    "post-prompt": Row("POST: valid Acp-Connection-Id and Acp-Session-Id -> forward to the agent, 202", "POST", {**JSON, **SESSION}, PROMPT, 202),
    "post-cancel": Row("POST: a session-scoped notification with both headers -> forward, 202", "POST", {**JSON, **SESSION}, CANCEL, 202),
    "post-new-session": Row("POST: a connection-level request with a valid Acp-Connection-Id -> forward, 202", "POST", {**JSON, **CONN}, NEW, 202),
    "post-response": Row("POST: a response with a valid Acp-Connection-Id -> forward, 202 (responses return 202)", "POST", {**JSON, **CONN}, {"jsonrpc": "2.0", "id": "never-asked", "result": {}}, 202),
    "post-load-on-a-new-connection": Row("POST: session/load of a known session on a new connection (Resume Session Flow) -> forward, 202", "POST", {**JSON, "Acp-Connection-Id": "$fresh", "Acp-Session-Id": "$session"}, LOAD, 202),
    "post-unknown-session": Row("POST: an Acp-Session-Id unknown for the connection is no valid one -> 404 (as on GET)", "POST", {**JSON, **CONN, "Acp-Session-Id": "nobody"}, {**PROMPT, "params": {"sessionId": "nobody", "prompt": []}}, 404),
    "post-mismatched-session": Row("POST: Acp-Session-Id names another session than params.sessionId -> 400", "POST", {**JSON, **CONN, "Acp-Session-Id": "nobody"}, PROMPT, 400),
    "post-content-type": Row("POST Content-Type MUST be application/json (415 otherwise)", "POST", {"Content-Type": "text/plain", **CONN}, NEW, 415),
    "post-batch": Row("Batch JSON-RPC requests return 501", "POST", {**JSON, **CONN}, [NEW], 501),
    "post-not-json": Row("POST: a body that is not JSON -> 400 with JSON-RPC's -32700", "POST", {**JSON, **CONN}, b"{not json", 400),
    # GET /acp
    "get-accept": Row("GET Accept MUST include text/event-stream (406 otherwise)", "GET", {"Accept": "application/json", **CONN}, None, 406),
    "get-no-connection": Row("GET: missing Acp-Connection-Id -> 400", "GET", SSE, None, 400),
    "get-unknown-connection": Row("GET: unknown Acp-Connection-Id -> 404", "GET", {**SSE, "Acp-Connection-Id": "nope"}, None, 404),
    "get-unknown-session": Row("GET: has Acp-Session-Id unknown for this connection -> 404", "GET", {**SSE, **CONN, "Acp-Session-Id": "nobody"}, None, 404),
    "get-session-stream": Row("GET: has Acp-Session-Id -> open the session-scoped SSE stream, 200", "GET", {**SSE, **SESSION}, None, 200),
    "get-session-stream-new-connection": Row("GET: a session-scoped stream on a new connection, before session/load (Resume Session Flow) -> 200", "GET", {**SSE, "Acp-Connection-Id": "$fresh", "Acp-Session-Id": "$session"}, None, 200),
    "get-connection-stream": Row("GET: no Acp-Session-Id -> open the connection-scoped SSE stream, 200", "GET", {**SSE, "Acp-Connection-Id": "$fresh"}, None, 200),
    # DELETE /acp
    "delete": Row("DELETE: has Acp-Connection-Id -> terminate the connection and its sessions, 202", "DELETE", CONN, None, 202),
    "delete-no-connection": Row("DELETE: no Acp-Connection-Id -> 400", "DELETE", {}, None, 400),
    "delete-unknown-connection": Row("DELETE: an unknown Acp-Connection-Id -> 404, as on POST and GET", "DELETE", {"Acp-Connection-Id": "nope"}, None, 404),
    # the endpoint
    "other-method": Row("Routing: POST, GET and DELETE only (405 otherwise)", "PUT", {**JSON, **CONN}, NEW, 405),
    "other-path": Row("Routing: the single /acp endpoint (404 elsewhere)", "POST", JSON, INIT, 404, path="/other"),
    # WebSocket
    "websocket": Row("GET with Upgrade: websocket -> WebSocket handler: 101, Acp-Connection-Id in the upgrade response", "WS", {}, None, 101),
    "websocket-other-path": Row("GET with Upgrade: websocket elsewhere than /acp -> refused before the handshake completes (404, as on POST)", "WS", {}, None, 404, path="/other"),
}


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with running("uvicorn", "acp_bindings.stub_agent:app") as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def connect(http: httpx.Client, url: str) -> str:
    response = http.post(url, json=INIT)
    assert response.status_code == 200, response.text
    return response.headers["acp-connection-id"]


def new_session(http: httpx.Client, url: str, connection: str) -> str:
    """A session made with session/new, its answer read from the connection's stream."""
    headers = {**SSE, "Acp-Connection-Id": connection}
    with http.stream("GET", url, headers=headers) as stream:
        assert http.post(url, json=NEW, headers={"Acp-Connection-Id": connection}).status_code == 202
        for line in stream.iter_lines():
            if line.startswith("data: "):
                answer = json.loads(line[6:])
                if answer.get("id") == NEW["id"]:
                    return str(answer["result"]["sessionId"])
    raise AssertionError("no answer to session/new")


def fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, names) for v in value]
    return value


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_the_rfd_decision_tree(base: str, http: httpx.Client, row: Row) -> None:
    url = f"{base}/acp"
    conn = connect(http, url)
    names = {"$conn": conn, "$session": new_session(http, url, conn), "$fresh": connect(http, url)}
    headers = fill(row.headers, names)
    target = base + row.path
    try:
        if row.method == "WS":
            ws_target = target.replace("http", "ws", 1)
            try:
                with ws_connect(ws_target, additional_headers=headers, open_timeout=10) as socket:
                    status = socket.response.status_code
                    assert socket.response.headers["acp-connection-id"]
            except InvalidStatus as refused:
                status = refused.response.status_code
        elif row.method == "GET":
            with http.stream("GET", target, headers=headers) as response:
                status = response.status_code
                if status == 200:
                    assert response.headers["content-type"].startswith("text/event-stream")
        else:
            body = row.body if isinstance(row.body, bytes) or row.body is None else json.dumps(fill(row.body, names)).encode()
            response = http.request(row.method, target, content=body, headers=headers)
            status = response.status_code
            if row.body == INIT and status == 200:
                assert response.headers["acp-connection-id"] and response.json()["id"] == 0
            if row.body == b"{not json":
                assert response.json()["error"]["code"] == -32700
        assert status == row.status, f"{row.branch}: {status}"
    finally:
        for connection in (conn, names["$fresh"]):
            http.delete(url, headers={"Acp-Connection-Id": connection})


def test_the_app_remembers_the_sessions_it_saw_last() -> None:
    """The sessions whose streams a new connection may open are the latest the app saw (100,000 by
    default): its memory stays bounded however many sessions it serves."""
    from acp_bindings._runtime.remote._http_connection import (
        KNOWN_SESSIONS,
        KnownSessions,
    )

    assert KnownSessions().limit == KNOWN_SESSIONS == 100_000
    known = KnownSessions(limit=2)
    for session in "abc":
        known.add(session)
    known.add("b")  # seen again: the latest
    known.add("d")
    assert [session in known for session in "abcd"] == [False, True, False, True]
