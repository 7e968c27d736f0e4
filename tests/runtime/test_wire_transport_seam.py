"""A connection over a message transport (one JSON-RPC message per ``receive``/``send``, as a
WebSocket frame or an HTTP body carries it) keeps the same wire rules as over a byte stream: the
answers to what cannot be read, the size limit, per-session order, back pressure."""

from __future__ import annotations

import asyncio
import json

import acp_bindings as acp
import pytest
from acp_bindings import models
from acp_bindings._runtime.connection import _rpc
from support.runtime import run_async_tests

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


class Agent(acp.Agent):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return models.NewSessionResponse(session_id="s-1")

    async def session_cancel(self, params: models.CancelNotification) -> None:
        await asyncio.sleep(0.001 * (len(self.seen) % 3))  # handlers that take different times
        self.seen.append(params.session_id + str(len(self.seen)))

    async def ext_method(self, method: str, params: dict | list) -> dict:
        return {"echo": params}


class Peer:
    """The far end of a message transport, speaking raw messages."""

    def __init__(self, transport: _rpc.MessageTransport) -> None:
        self.transport = transport

    async def send(self, message: bytes | dict) -> None:
        await self.transport.send(message if isinstance(message, bytes) else json.dumps(message).encode())

    async def receive(self) -> dict:
        data = await asyncio.wait_for(self.transport.receive(), 5)
        assert data is not None, "the connection closed"
        return json.loads(data)


async def _serve(**options) -> tuple[acp.AgentSideConnection, Peer, Agent]:
    ours, theirs = _rpc.memory_transports()
    agent = Agent()
    return acp.AgentSideConnection(agent, ours, **options), Peer(theirs), agent


async def test_a_typed_pair_talks_over_message_transports():
    agent_end, client_end = _rpc.memory_transports()
    agent_side = acp.AgentSideConnection(Agent(), agent_end)
    client_side = acp.ClientSideConnection(acp.Client(), client_end)
    response = await client_side.agent.session_new(models.NewSessionRequest(cwd="/", mcp_servers=[]))
    assert response.session_id == "s-1"
    await client_side.close()
    await asyncio.wait_for(agent_side.wait_closed(), 5)  # the peer's close is the end of input
    await agent_side.close()


async def test_a_message_with_newlines_inside_is_one_message():
    connection, peer, _ = await _serve()
    await peer.send(b'{"jsonrpc": "2.0",\n "id": 1,\n "method": "_x", "params": {"a": "\\n"}}')
    assert await peer.receive() == {"jsonrpc": "2.0", "id": 1, "result": {"echo": {"a": "\n"}}}
    await connection.close()


@pytest.mark.parametrize(
    "message, code, answer_id",
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700, None),
        (b'{"jsonrpc":"2.0","id":2,"method":"_x","params":{"a":NaN}}', -32700, None),
        (b'{"jsonrpc":"2.0","id":3,"method":"_x","params":{"a":1e400}}', -32700, 3),
        (b"[1, 2]", -32600, None),
        (b'{"jsonrpc":"1.0","id":4,"method":"_x"}', -32600, 4),
    ],
    ids=["cut", "nan", "beyond-float", "batch", "old-version"],
)
async def test_what_cannot_be_read_gets_the_same_answer_as_over_a_stream(message, code, answer_id):
    connection, peer, _ = await _serve()
    await peer.send(message)
    reply = await peer.receive()
    assert (reply["id"], reply["error"]["code"]) == (answer_id, code)
    await peer.send({"jsonrpc": "2.0", "id": 9, "method": "_x", "params": {}})
    assert (await peer.receive())["result"] == {"echo": {}}  # the connection keeps serving
    await connection.close()


async def test_stray_text_is_logged_not_answered(caplog):
    connection, peer, _ = await _serve()
    await peer.send(b"Loading model weights...")
    await peer.send({"jsonrpc": "2.0", "id": 1, "method": "_x", "params": {}})
    assert (await peer.receive())["id"] == 1  # the first answer is the request's
    assert any("not JSON" in r.getMessage() for r in caplog.records)
    await connection.close()


async def test_a_message_above_the_size_limit_is_refused_with_its_id():
    connection, peer, _ = await _serve(max_message_size=1000)
    big = {"jsonrpc": "2.0", "id": 7, "method": "_x", "params": {"text": "x" * 2000}}
    await peer.send(big)
    reply = await peer.receive()
    assert (reply["id"], reply["error"]["code"]) == (7, -32600)
    await connection.close()


async def test_notifications_of_one_session_are_handled_in_order_before_a_later_answer():
    connection, peer, agent = await _serve()
    for _ in range(5):
        await peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})
    await peer.send({"jsonrpc": "2.0", "id": 1, "method": "_x", "params": {}})
    assert (await peer.receive())["id"] == 1
    await asyncio.sleep(0.05)
    assert agent.seen == ["s0", "s1", "s2", "s3", "s4"]
    await connection.close()


async def test_a_peer_that_does_not_receive_holds_back_the_sender():
    ours, theirs = _rpc.memory_transports(maxsize=1)  # one message may wait
    client = acp.ClientSideConnection(acp.Client(), ours)
    chunk = models.SessionNotification(
        session_id="s", update=models.AgentMessageChunk(content=models.Text(text="x" * 10_000))
    )
    sent = 0

    async def flood() -> None:
        nonlocal sent
        for _ in range(1000):
            await client.rpc.notify("session/update", acp.encode(chunk))
            sent += 1

    task = asyncio.ensure_future(flood())
    await asyncio.sleep(0.2)
    assert 0 < sent < 100  # waiting: the queue holds at most about FLUSH_AT bytes
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await theirs.close()
    await client.close()


run_async_tests(globals())
