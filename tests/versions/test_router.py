"""The router in memory (a stream reader, not a pipe): the policy, a connection that ends before
``initialize``, a line too long, and what follows ``initialize`` reaching the routed agent; the
router over a message transport: the same answers, then the rewritten ``initialize`` replayed."""

from __future__ import annotations

import asyncio
import json

import pytest
from acp_bindings import stub_agent
from acp_bindings._runtime.versions._versions import (
    AgentRouter,
    route_transport,
    select_version,
)
from acp_bindings.agent import AgentSideConnection
from support.runtime import run_async_tests


@pytest.mark.parametrize(
    ("requested", "supported", "served"),
    [(0, (1, 2), None), (1, (1, 2), 1), (2, (1, 2), 2), (3, (1, 2), 2), (0, (1,), 1), (5, (1,), 1),
     (1, (2,), None), (7, (2, 5), 5), (4, (2, 5), 2)],
)
def test_the_highest_version_at_or_below_the_one_asked(requested, supported, served):
    assert select_version(requested, supported) == served


class _Writer:
    def __init__(self) -> None:
        self.lines: list[dict] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.lines += [json.loads(line) for line in data.splitlines()]

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


def _router(max_message_size: int = 1 << 20) -> tuple[asyncio.StreamReader, _Writer, AgentRouter]:
    reader, writer = asyncio.StreamReader(), _Writer()
    connect = {1: lambda r, w: AgentSideConnection(stub_agent.StubAgent(), r, w)}
    return reader, writer, AgentRouter(connect, reader, writer, max_message_size=max_message_size)


async def _answers(writer: _Writer, count: int) -> list[dict]:
    for _ in range(200):
        if len(writer.lines) >= count:
            break
        await asyncio.sleep(0.01)
    return writer.lines


async def test_a_client_that_leaves_before_initialize_ends_the_connection():
    reader, writer, router = _router()
    reader.feed_data(b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}\n')
    reader.feed_eof()
    await asyncio.wait_for(router.wait_closed(), 5)
    assert router.version is None and router.connection is None
    assert [line["error"]["data"] for line in writer.lines] == ["first ACP request must be initialize"]


async def test_what_follows_initialize_reaches_the_routed_agent_in_order():
    reader, writer, router = _router()
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 0}}
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    reader.feed_data((json.dumps(initialize) + "\n" + json.dumps(new)[:20]).encode())
    reader.feed_data((json.dumps(new)[20:] + "\n").encode())
    answers = await _answers(writer, 2)
    assert router.version == 1
    assert answers[0]["result"]["protocolVersion"] == 1  # a v1 router alone: the version is rewritten to 1
    assert answers[1]["id"] == 2 and answers[1]["result"]["sessionId"] == "stub-session-1"
    reader.feed_eof()
    await asyncio.wait_for(router.wait_closed(), 5)
    await router.close()


@pytest.mark.parametrize("apart", [False, True], ids=["one-read", "line-still-coming"])
async def test_a_line_too_long_before_initialize_is_refused_once_and_the_connection_goes_on(apart):
    reader, writer, router = _router(max_message_size=100)
    reader.feed_data(b"x" * 300)
    if apart:  # the router sees the line outgrow the limit before its end comes
        await asyncio.sleep(0.05)
        reader.feed_data(b"x" * 300)
        await asyncio.sleep(0.05)
    reader.feed_data(b"\n" + json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                         "params": {"protocolVersion": 1}}).encode() + b"\n")
    answers = await _answers(writer, 2)
    await asyncio.sleep(0.05)
    assert len(answers) == 2, answers
    assert answers[0] == {"jsonrpc": "2.0", "id": None,
                          "error": {"code": -32600, "message": "Invalid request", "data": "message too large"}}
    assert answers[1]["id"] == 1 and answers[1]["result"]["protocolVersion"] == 1
    await router.close()


class _Transport:
    """A message transport that delivers ``incoming``, then its end, and keeps what is sent."""

    def __init__(self, *incoming: bytes) -> None:
        self.incoming = list(incoming)
        self.sent: list[dict] = []

    async def receive(self) -> bytes | None:
        return self.incoming.pop(0) if self.incoming else None

    async def send(self, message: bytes) -> None:
        self.sent.append(json.loads(message))

    async def close(self) -> None:
        pass


class _Reads:
    """A routed connection that only reads its transport to the end."""

    def __init__(self, transport: _Transport) -> None:
        self.read: list[dict] = []
        self._task = asyncio.ensure_future(self._run(transport))

    async def _run(self, transport: _Transport) -> None:
        while (message := await transport.receive()) is not None:
            self.read.append(json.loads(message))

    async def wait_closed(self) -> None:
        await self._task

    async def close(self) -> None:
        pass


async def test_a_transport_is_answered_then_handed_over_with_the_initialize_rewritten():
    made: list[tuple[int, object, _Reads]] = []

    def connector(version: int):
        def connect(transport, writer):
            made.append((version, writer, _Reads(transport)))
            return made[-1][2]
        return connect

    initialize = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 3}}
    new = {"jsonrpc": "2.0", "id": 8, "method": "session/new", "params": {"cwd": "/"}}
    early = {"jsonrpc": "2.0", "id": "e", "method": "session/new", "params": {}}
    transport = _Transport(b" ", b"[" * 200, json.dumps(early).encode(), json.dumps(initialize).encode(),
                           json.dumps(new).encode())
    routing = route_transport({1: connector(1), 2: connector(2)}, transport, max_message_size=100)
    await asyncio.wait_for(routing, 5)
    assert transport.sent == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request", "data": "message too large"}},
        {"jsonrpc": "2.0", "id": "e", "error": {"code": -32600, "message": "Invalid request",
                                                "data": "first ACP request must be initialize"}},
    ]
    [(version, writer, routed)] = made
    assert (version, writer) == (2, None)
    assert routed.read == [{**initialize, "params": {"protocolVersion": 2}}, new]


async def test_a_batch_before_initialize_over_a_transport_is_answered_in_one_array_where_the_draft_has_them():
    """Each entry as alone (a notification: nothing), an ``initialize`` in it refused; one
    message answers the batch (a WebSocket frame); without the draft's batches, one -32600."""
    made: list[_Reads] = []

    def connect(transport, writer):
        made.append(_Reads(transport))
        return made[-1]

    batch = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
             {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
             {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}}]
    for batches in (True, False):
        transport = _Transport(json.dumps(batch).encode())
        await asyncio.wait_for(route_transport({1: connect}, transport, batches=batches), 5)
        if batches:
            assert transport.sent == [[
                {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid request", "data":
                                                       "initialize must come alone, not in a batch: it picks the"
                                                       " protocol version"}},
                {"jsonrpc": "2.0", "id": 2, "error": {"code": -32600, "message": "Invalid request",
                                                       "data": "first ACP request must be initialize"}},
            ]]
        else:
            assert transport.sent == [{"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": "Invalid request: JSON-RPC batches are not supported"}}]
    assert made == []  # never routed


async def test_a_transport_that_ends_before_initialize_ends_the_routing():
    transport = _Transport(b'{"jsonrpc":"2.0","method":"session/cancel","params":{}}')
    await asyncio.wait_for(route_transport({1: lambda t, w: None}, transport), 5)  # type: ignore[arg-type,return-value]
    assert transport.sent == []


run_async_tests(globals())
