"""The wire's fast paths (a chunk split in C, the C scanner first, one encoder built once, a big
line's copies freed as it goes) read and write exactly what the careful paths do."""

from __future__ import annotations

import asyncio
import json
import math

import acp_bindings as acp
import pytest
from acp_bindings._runtime.connection import _rpc
from acp_bindings._runtime.wire import _framing
from support.runtime import RawPeer, run_async_tests


class Echo(acp.Agent):
    async def ext_method(self, method: str, params: dict) -> dict:
        if method == "_length":
            return {"length": len(params["text"]), "ends": params["text"][-3:]}
        return {"echo": params}


async def _serve(**options) -> tuple[acp.AgentSideConnection, RawPeer]:
    (agent_reader, agent_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.AgentSideConnection(Echo(), agent_reader, agent_writer, **options)
    return connection, RawPeer(peer_reader, peer_writer)


def _request(request_id, params, method: str = "_echo") -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()


async def test_lines_cut_anywhere_across_chunks_are_each_answered_in_order() -> None:
    connection, peer = await _serve()
    data = b"\n".join(_request(i, {"n": i, "text": "é" * i}) for i in range(40)) + b"\n"
    for start in range(0, len(data), 7):  # each piece a read of its own
        peer.send_bytes(data[start : start + 7])
        await asyncio.sleep(0)
    answers = [await peer.receive() for _ in range(40)]
    assert [a["id"] for a in answers] == list(range(40))
    assert [a["result"]["echo"]["text"] for a in answers] == ["é" * i for i in range(40)]
    await connection.close()


async def test_a_line_over_several_reads_is_held_to_the_limit_and_the_lines_after_it_are_read() -> None:
    connection, peer = await _serve(max_message_size=200)
    long, short = _request(7, {"text": "x" * 200}), _request(8, {"text": "y"})
    rest = long[160:] + b"\n" + short + b"\n"
    for piece in (long[:80], long[80:160], rest):  # reads no line of which is too long alone
        assert len(piece) <= 200
        peer.send_bytes(piece)
        await asyncio.sleep(0)
    refused = await peer.receive()
    assert refused["id"] == 7 and refused["error"]["code"] == -32600
    assert await peer.receive() == {"jsonrpc": "2.0", "id": 8, "result": {"echo": {"text": "y"}}}
    peer.send_bytes(short[:20])
    await asyncio.sleep(0)
    peer.send_bytes(short[20:] + b"\n" + _request(9, {}) + b"\n")
    assert [(await peer.receive())["id"] for _ in range(2)] == [8, 9]
    await connection.close()


async def test_white_space_around_a_message_and_crlf_endings_are_read() -> None:
    connection, peer = await _serve()
    peer.send_bytes(b"  " + _request(1, {"a": 1}) + b" \r\n\t" + _request(2, {"b": [1.5, None]}) + b"\r\n")
    assert await peer.receive() == {"jsonrpc": "2.0", "id": 1, "result": {"echo": {"a": 1}}}
    assert await peer.receive() == {"jsonrpc": "2.0", "id": 2, "result": {"echo": {"b": [1.5, None]}}}
    await connection.close()


async def test_a_big_line_over_many_chunks_is_answered_and_bad_utf8_in_one_is_a_parse_error() -> None:
    connection, peer = await _serve(max_message_size=1 << 22)
    big = "x" * 300_000 + "end"
    peer.send_bytes(_request(1, {"text": big}, "_length") + b"\n")
    answer = await peer.receive()
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": {"length": 300_003, "ends": "end"}}
    broken = _request(2, {"text": big}, "_length").replace(b"xxxx", b"x\xff\xfex", 1)
    peer.send_bytes(broken + b"\n" + _request(3, {"after": True}) + b"\n")
    refused = await peer.receive()
    assert refused["id"] is None and refused["error"]["code"] == -32700
    assert (await peer.receive())["result"] == {"echo": {"after": True}}
    await connection.close()


async def test_trailing_garbage_after_a_message_is_a_parse_error() -> None:
    connection, peer = await _serve()
    peer.send_bytes(_request(1, {}) + b" x\n" + _request(2, {}) + b"\n")
    refused = await peer.receive()
    assert refused["id"] is None and refused["error"]["code"] == -32700
    assert (await peer.receive())["id"] == 2
    await connection.close()


VALUES = [
    {"jsonrpc": "2.0", "id": 1, "result": {"text": "naïve ☃ \u2028 \"q\" \\ \x00", "n": [0, -1, 2**70, 1.5e-300]}},
    {"a": {"b": [True, False, None, [], {}]}, "é": "", "x" * 3: 1e16},
    [1, "two", 3.0],
    "just a string",
]


@pytest.mark.parametrize("value", VALUES)
def test_the_encoder_writes_what_json_dumps_writes(value) -> None:
    assert _framing.encode_json(value) == json.dumps(value, separators=(",", ":"), allow_nan=False)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_the_encoder_refuses_what_json_has_not(bad) -> None:
    with pytest.raises(ValueError):
        _framing.encode_json({"value": [bad]})


@pytest.mark.parametrize("value", VALUES)
def test_the_decoder_reads_what_json_loads_reads(value) -> None:
    text = json.dumps(value)
    assert _framing.decode_json(text) == json.loads(text)
    assert _framing.decode_json(f" \t{text}\r\n") == json.loads(text)


@pytest.mark.parametrize("text", ["", " ", "[1] [2]", '{"a": 1', "NaN", '{"a": Infinity}'])
def test_the_decoder_refuses_what_json_does_not_allow(text) -> None:
    with pytest.raises(ValueError):
        _framing.decode_json(text)


run_async_tests(globals())
