"""Requests read from a pipe start their task at once on 3.12+ (``eager_start``; on the loop's
next iteration before): the handler runs in a real task either way, nothing read before a
request is overtaken by it, and the bytes sent are the encoder's (see also
test_wire_task_semantics.py, which runs under 3.10, 3.11 and 3.13).

The tests speak raw bytes to a generated agent connection over OS pipes in this process (a
transport reads them, as from a real peer).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import sys

import acp_bindings as acp
import pytest
from acp_bindings import models
from acp_bindings._runtime.connection import _rpc
from acp_bindings._runtime.transports import _process
from acp_bindings._runtime.wire import _framing
from support.runtime import RawPeer, run_async_tests

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

_seen_by_handler: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


class Recorder(acp.Agent):
    """Records what each handler saw; ``authenticate``'s method id says what to do."""

    def __init__(self) -> None:
        self.events: list[str] = []

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        method = params.method_id
        task = asyncio.current_task()
        self.events.append(f"{method}: {'task' if task is not None else 'no task'}, {_seen_by_handler.get()}")
        _seen_by_handler.set(method)  # must not leak into the next request's handler
        if method == "timeout":
            if sys.version_info >= (3, 11):
                async with asyncio.timeout(5):  # needs the current task
                    await asyncio.sleep(0)
            else:
                await asyncio.wait_for(asyncio.sleep(0), 5)
        if method == "slow":
            await asyncio.sleep(30)
        return models.AuthenticateResponse()

    async def session_cancel(self, params: models.CancelNotification) -> None:
        self.events.append(f"cancel {params.session_id}")


async def _serve_over_pipes(agent: acp.Agent) -> tuple[acp.AgentSideConnection, RawPeer]:
    loop = asyncio.get_running_loop()
    to_agent, from_peer = os.pipe()
    to_peer, from_agent = os.pipe()
    reader = _rpc.PipeReader()
    await loop.connect_read_pipe(lambda: reader, os.fdopen(to_agent, "rb", buffering=0))
    transport, protocol = await loop.connect_write_pipe(
        _process._WriteProtocol, os.fdopen(from_agent, "wb", buffering=0)
    )
    connection = acp.AgentSideConnection(agent, reader, asyncio.StreamWriter(transport, protocol, None, loop))
    peer_reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(peer_reader), os.fdopen(to_peer, "rb", buffering=0)
    )
    peer_transport, peer_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(from_peer, "wb", buffering=0)
    )
    return connection, RawPeer(peer_reader, asyncio.StreamWriter(peer_transport, peer_protocol, peer_reader, loop))


def _authenticate(request_id: int, method: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "authenticate", "params": {"methodId": method}}


async def test_a_handler_started_at_once_runs_in_a_task_of_its_own():
    agent = Recorder()
    connection, peer = await _serve_over_pipes(agent)
    try:
        assert await peer.request(1, "authenticate", {"methodId": "timeout"}) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        assert await peer.request(2, "authenticate", {"methodId": "plain"}) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        peer.send(_authenticate(3, "slow"))  # waits: cancelled through its task
        while len(agent.events) < 3:
            await asyncio.sleep(0.01)
        peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}})
        answer = await peer.receive()
        assert answer["id"] == 3 and answer["error"]["code"] == -32800
    finally:
        await connection.close()
    assert agent.events == ["timeout: task, unset", "plain: task, unset", "slow: task, unset"]


async def test_a_request_read_with_a_notification_before_it_starts_after_it():
    agent = Recorder()
    connection, peer = await _serve_over_pipes(agent)
    try:
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
        peer.send_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in (cancel, _authenticate(1, "after"))))
        assert (await peer.receive())["id"] == 1
    finally:
        await connection.close()
    assert agent.events == ["cancel s", "after: task, unset"]


async def test_the_answers_to_one_read_leave_in_the_order_of_their_requests():
    connection, peer = await _serve_over_pipes(Recorder())
    try:
        peer.send_bytes(b"".join(json.dumps(_authenticate(n, str(n))).encode() + b"\n" for n in range(200)))
        answers = [await peer.receive() for _ in range(200)]
    finally:
        await connection.close()
    assert [a["id"] for a in answers] == list(range(200))
    assert all(a["result"] == {} for a in answers)


@pytest.mark.parametrize("request_id", [0, 7, -3, 2**70, 1.5, "a\u00e9\"\n\U0001f600", None])
@pytest.mark.parametrize("result", [{}, {"sessionId": "s\u00e9"}, [1, None, True], None, "x"])
def test_a_response_is_written_as_the_encoder_writes_its_object(request_id, result):
    expected = _framing.encode_json({"jsonrpc": "2.0", "id": request_id, "result": result})
    assert _framing.result_text(request_id, result) == expected


@pytest.mark.parametrize("method", ["session/new", "_x.y/\u00e9\"\\", ""])
@pytest.mark.parametrize("params", [None, {}, {"cwd": "/", "mcpServers": []}, [1, 2]])
def test_a_request_is_written_as_the_encoder_writes_its_object(method, params):
    message = {"jsonrpc": "2.0", "id": 41, "method": method}
    if params is not None:
        message["params"] = params
    assert _framing.request_text(41, method, params) == _framing.encode_json(message)


def test_a_body_json_has_not_is_refused_before_anything_is_written():
    with pytest.raises(ValueError):
        _framing.result_text(1, {"x": float("nan")})
    with pytest.raises(ValueError):
        _framing.request_text(1, "m", {"x": float("inf")})


run_async_tests(globals())
