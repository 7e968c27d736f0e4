"""Nothing a peer sends can crash, jam or silence the runtime, nor make it lose a message.

The cases of the wire's hardening one by one: end of input right after the requests, nesting
deeper than the parser goes, numbers JSON has not or Python cannot hold, invalid UTF-8, ids of
every JSON-RPC kind, oversized messages with the id last, and a peer that stops reading.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading

import acp_bindings as acp
import pytest
from acp_bindings import models
from acp_bindings._runtime.connection import _rpc
from acp_bindings._runtime.transports import _process
from support.runtime import STUB_AGENT, RawPeer, child_env, run_async_tests

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _strict(line: bytes) -> dict:
    """A line parsed as a strict JSON parser would (no NaN, no Infinity)."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} was sent")

    value = json.loads(line, parse_constant=refuse)
    assert isinstance(value, dict)
    return value


class Slow(acp.Agent):
    """Answers authenticate after a little while; returns what it is asked to in ext methods."""

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        await asyncio.sleep(0.05)
        return models.AuthenticateResponse(meta={"method": params.method_id})

    async def ext_method(self, method: str, params: dict) -> dict:
        if method == "_nan":
            return {"value": float("nan")}
        return {"echo": params}


async def _serve_raw(agent: acp.Agent, **options) -> tuple[acp.AgentSideConnection, RawPeer]:
    (agent_reader, agent_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.AgentSideConnection(agent, agent_reader, agent_writer, **options)
    return connection, RawPeer(peer_reader, peer_writer)


def _request(request_id, method: str, params=None) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


async def _line(peer: RawPeer) -> bytes:
    line = await asyncio.wait_for(peer.reader.readline(), 10)
    assert line, "the connection closed"
    return line


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


# -- the end of input ----------------------------------------------------------------------------


def _one_shot(data: bytes) -> list[dict]:
    """Write ``data`` to a fresh stub agent, close its stdin at once, and read every answer."""
    done = subprocess.run(
        STUB_AGENT, input=data, capture_output=True, env=child_env(), timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return [_strict(line) for line in done.stdout.splitlines()]


def test_requests_written_just_before_the_end_of_input_are_all_answered():
    # 5,000 answers are more than a pipe holds: the agent must flush them all before it exits
    data = _request(1, "initialize", {"protocolVersion": 1}) + b"".join(
        _request(n, "session/new", {"cwd": "/", "mcpServers": []}) for n in range(2, 5001)
    )
    answers = _one_shot(data)
    assert sorted(a["id"] for a in answers) == list(range(1, 5001))
    assert all("result" in a for a in answers)


def test_answers_waiting_for_a_slow_reader_are_all_sent_before_the_agent_exits(tmp_path):
    requests = tmp_path / "requests.jsonl"  # a file: read to its end at once
    requests.write_bytes(b"".join(_request(n, "initialize", {"protocolVersion": 1}) for n in range(3000)))
    with requests.open("rb") as stdin:
        process = subprocess.Popen(STUB_AGENT, stdin=stdin, stdout=subprocess.PIPE, env=child_env())
    assert process.stdout is not None
    try:
        process.wait(3)  # time to go wrong: to exit with answers still unsent (more than a pipe holds)
    except subprocess.TimeoutExpired:
        pass
    answers = process.stdout.read().splitlines()
    assert process.wait(60) == 0
    assert sorted(_strict(line)["id"] for line in answers) == list(range(3000))


def test_a_last_request_without_its_newline_is_answered():
    answers = _one_shot(_request(1, "initialize", {"protocolVersion": 1}).rstrip(b"\n"))
    assert [a["id"] for a in answers] == [1] and "result" in answers[0]


async def test_a_request_in_flight_when_the_peer_stops_writing_is_answered():
    connection, peer = await _serve_raw(Slow())
    peer.send_bytes(_request(7, "authenticate", {"methodId": "m"}))
    peer.writer.close()  # the peer's end of input, right after its request
    reply = await peer.receive()
    assert reply == {"jsonrpc": "2.0", "id": 7, "result": {"_meta": {"method": "m"}}}
    await asyncio.wait_for(connection.wait_closed(), 5)
    await connection.close()


def test_a_deep_line_waiting_at_start_up_does_not_kill_the_agent():
    deep = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + _deep(30_000).encode() + b"}\n"
    answers = _one_shot(deep + _request(2, "initialize", {"protocolVersion": 1}))
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [(1, -32700), (2, None)]


# -- lines the parser cannot take ----------------------------------------------------------------


async def test_deeply_nested_lines_are_refused_with_their_id_and_the_same_read_goes_on():
    connection, peer = await _serve_raw(Slow())
    id_first = '{"jsonrpc":"2.0","id":1,"method":"_x","params":{"a":' + _deep(30_000) + "}}"
    id_last = '{"jsonrpc":"2.0","method":"_x","params":{"a":' + _deep(30_000) + '},"id":"three"}'
    nested_id = '{"jsonrpc":"2.0","method":"_x","params":{"id":9,"a":' + _deep(30_000) + "},\"id\":5}"
    big = '{"jsonrpc":"2.0","id":6,"method":"_x","params":{"a":' + _deep(40_000) + "}}"  # > 64 KiB
    lines = [id_first, _request(2, "_x", {}).decode(), id_last, nested_id, big, _request(7, "_x", {}).decode()]
    peer.send_bytes("\n".join(line.rstrip("\n") for line in lines).encode() + b"\n")  # one write
    answers = {}
    for _ in lines:
        reply = _strict(await _line(peer))
        answers[reply["id"]] = reply.get("error", {}).get("code")
    assert answers == {1: -32700, 2: None, "three": -32700, 5: -32700, 6: -32700, 7: None}
    await connection.close()


@pytest.mark.parametrize(
    "text, expected_id",
    [
        ('{"jsonrpc":"2.0","id":1,"method":"_x","params":{"a":NaN}}', None),  # not JSON
        ('{"jsonrpc":"2.0","id":2,"method":"_x","params":{"a":-Infinity}}', None),
        ('{"jsonrpc":"2.0","id":3,"method":"_x","params":{"a":1e400}}', 3),  # JSON, beyond a float
        ('{"jsonrpc":"2.0","method":"_x","params":{"a":[-1E999]},"id":4}', 4),
    ],
    ids=["nan", "infinity", "1e400", "1e999-id-last"],
)
async def test_numbers_beyond_json_or_a_float_are_parse_errors(text, expected_id):
    connection, peer = await _serve_raw(Slow())
    peer.send_bytes(text.encode() + b"\n")
    reply = _strict(await _line(peer))
    assert reply["id"] == expected_id and reply["error"]["code"] == -32700
    assert (await peer.request(9, "_x", {"ok": 1}))["result"] == {"echo": {"ok": 1}}
    await connection.close()


async def test_a_result_holding_nan_is_never_sent():
    connection, peer = await _serve_raw(Slow())
    peer.send_bytes(_request(1, "_nan", {}))
    reply = _strict(await _line(peer))
    assert reply["id"] == 1 and reply["error"]["code"] == -32603
    await connection.close()


@pytest.mark.parametrize(
    "data",
    [b'"\xed\xa0\x80"', b'{"jsonrpc":"2.0","id":1,"method":"_\xff"}', b"\xfe\xff", b'{"a":"\xc3"}'],
    ids=["encoded-surrogate", "bad-byte-in-method", "bom-bytes", "cut-sequence"],
)
async def test_invalid_utf8_is_a_parse_error(data):
    connection, peer = await _serve_raw(Slow())
    peer.send_bytes(data + b"\n")
    reply = _strict(await _line(peer))
    assert reply["id"] is None and reply["error"]["code"] == -32700
    assert (await peer.request(9, "_x", {}))["result"] == {"echo": {}}
    await connection.close()


async def test_a_request_cancelled_in_the_same_read_that_brought_it_is_answered():
    connection, peer = await _serve_raw(Slow())
    cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 4}}
    peer.send_bytes(_request(4, "authenticate", {"methodId": "m"}) + json.dumps(cancel).encode() + b"\n")
    reply = _strict(await _line(peer))
    assert reply["id"] == 4 and reply["error"]["code"] == -32800
    peer.writer.close()  # and nothing is left in flight: the connection closes
    await asyncio.wait_for(connection.wait_closed(), 5)
    await connection.close()


# -- ids and request objects ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [{"jsonrpc": "2.0", "method": 1}, {"jsonrpc": "2.0", "method": None}, {"jsonrpc": "2.0", "method": "_x", "params": 3}],
    ids=["method-1", "method-null", "params-3"],
)
async def test_an_invalid_request_without_an_id_is_answered_with_id_null(message):
    connection, peer = await _serve_raw(Slow())
    peer.send(message)
    reply = _strict(await _line(peer))
    assert reply["id"] is None and reply["error"]["code"] == -32600
    await connection.close()


async def test_numeric_ids_are_answered_as_sent():
    connection, peer = await _serve_raw(Slow())
    for raw in (b"1.0", b"1.5", b"-3", b"100000000000000000000", b"2e3"):
        peer.send_bytes(b'{"jsonrpc":"2.0","id":' + raw + b',"method":"_x"}\n')
        line = await _line(peer)
        assert _strict(line)["id"] == json.loads(raw) and "result" in _strict(line)
        assert b'"id":' + json.dumps(json.loads(raw)).encode() in line
    for bad in (b"true", b"[1]", b"{}"):
        peer.send_bytes(b'{"jsonrpc":"2.0","id":' + bad + b',"method":"_x"}\n')
        reply = _strict(await _line(peer))
        assert reply["id"] is None and reply["error"]["code"] == -32600
    await connection.close()


async def test_an_oversized_message_with_its_id_last_is_refused_with_its_id():
    connection, peer = await _serve_raw(Slow(), max_message_size=10_000)
    params = {"_meta": {"id": 13, "blob": "x" * 50_000}}
    peer.send_bytes(json.dumps({"jsonrpc": "2.0", "method": "_x", "params": params, "id": 77}).encode() + b"\n")
    reply = _strict(await _line(peer))
    assert reply["id"] == 77 and reply["error"]["code"] == -32600
    peer.send_bytes(b'{"params":{"id":13,"b":"' + b"y" * 50_000 + b'"},"id":"last","jsonrpc":"2.0","method":"_x"}\n')
    reply = _strict(await _line(peer))
    assert reply["id"] == "last" and reply["error"]["code"] == -32600
    assert (await peer.request(8, "_x", {}))["result"] == {"echo": {}}
    await connection.close()


# -- a peer that stops reading -------------------------------------------------------------------


def _is_reading(transport: asyncio.ReadTransport) -> bool:
    """``transport.is_reading()``; Python 3.10's pipe transport lacks it, and keeps ``_paused``."""
    if sys.version_info >= (3, 11):
        return transport.is_reading()
    return not transport._paused  # type: ignore[attr-defined]


async def test_a_peer_that_stops_reading_stops_being_read_and_nothing_is_lost():
    loop = asyncio.get_running_loop()
    to_agent_r, to_agent_w = os.pipe()
    from_agent_r, from_agent_w = os.pipe()
    reader = _rpc.PipeReader()
    read_transport, _ = await loop.connect_read_pipe(lambda: reader, os.fdopen(to_agent_r, "rb", buffering=0))
    transport, protocol = await loop.connect_write_pipe(
        _process._WriteProtocol, os.fdopen(from_agent_w, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    connection = acp.AgentSideConnection(Slow(), reader, writer)
    count = 30_000
    requests = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"no/such"}\n' % n for n in range(count))
    feeding = threading.Thread(target=_write_all, args=(to_agent_w, requests))
    feeding.start()
    # nobody reads the answers: the connection must stop reading once its output piles up
    for _ in range(2000):
        if not _is_reading(read_transport):
            break
        await asyncio.sleep(0.005)
    assert not _is_reading(read_transport), "the connection kept reading a peer that does not read"
    assert transport.get_write_buffer_size() < 4 << 20
    answers: list[bytes] = []
    draining = threading.Thread(target=_read_all, args=(from_agent_r, answers))
    draining.start()
    await loop.run_in_executor(None, feeding.join)
    os.close(to_agent_w)
    await asyncio.wait_for(connection.wait_closed(), 60)
    await connection.close()
    await loop.run_in_executor(None, draining.join)
    ids = sorted(_strict(line)["id"] for line in b"".join(answers).splitlines())
    assert ids == list(range(count))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_all(fd: int, into: list[bytes]) -> None:
    while chunk := os.read(fd, 1 << 16):
        into.append(chunk)
    os.close(fd)


run_async_tests(globals())
