"""The router in memory (a stream reader, not a pipe): the policy, a connection that ends before
``initialize``, a line too long, and what follows ``initialize`` reaching the routed agent."""

from __future__ import annotations

import asyncio
import json

import pytest
from acp_bindings import stub_agent
from acp_bindings._versions import AgentRouter, select_version
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
    assert answers[1] == {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "stub-session-1"}}
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


run_async_tests(globals())
