"""``json_backend="orjson"`` / ``"msgspec"``: the same answers, byte for byte, as the standard library's reader,
for every kind of line (orjson refuses, or reads differently, some that JSON-RPC still answers)."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys

import acp_bindings as acp
import pytest
from acp_bindings import models
from acp_bindings._runtime.connection import _rpc
from acp_bindings._runtime.wire._codec import decode, encode
from support import BINDINGS
from support.runtime import RawPeer, run_async_tests


class Echo(acp.Agent):
    def session_known(self, session_id: str) -> bool:
        return True  # the lines prompt a session they never opened

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        """Answers with the params as the typed layer read them, written back (unknown fields and
        explicit nulls kept)."""
        return decode(models.PromptResponse, {"stopReason": "end_turn", "read": encode(params)})

    async def ext_method(self, method: str, params: dict) -> dict:
        return {"echo": params, "types": [type(v).__name__ for v in params.values()]}

    async def ext_notification(self, method: str, params: dict) -> None:
        return None


def _ext(request_id, body: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"method":"_echo","params":' + body.encode() + b"}"


#: A prompt with unknown fields and explicit nulls, at the root and inside a content block.
PROMPT = (
    b'{"sessionId":"s","prompt":[{"type":"text","text":"hi","annotations":null,"x-extra":[1,{"y":null}]}],'
    b'"messageId":null,"x-vendor":{"k":1.5}}'
)
LINES = [
    _ext(1, '{"text": "na\\u00efve \\u2603 caf\u00e9", "n": 1.5e-300, "z": -0.0}'),
    _ext(2, '{"big": 123456789012345678901234567890, "neg": -9223372036854775809}'),
    _ext(3, '{"u64": 18446744073709551615, "i64": -9223372036854775808, "f": 1e16}'),
    _ext(4, '{"lone": "\\ud800", "dup": 1, "dup": 2}'),
    _ext(5, '{"deep": ' + "[" * 1500 + "]" * 1500 + "}"),
    _ext(6, '{"inf": 1e400}'),
    _ext(7, '{"nan": NaN}'),
    b'[{"jsonrpc":"2.0","id":8,"method":"_echo"}]',
    b'"just a string"',
    b'{"jsonrpc":"2.0","id":9,"method":"_echo","params":{"a":1},}',
    b"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"_echo\",\"params\":{\"bad\":\"\xff\"}}",
    b"   ",
    b'{"jsonrpc":"2.0","method":"_note","params":{}}',
    b'{"jsonrpc":"1.0","id":11,"method":"_echo"}',
    b"  " + _ext(12, '{"ws": true}') + b" \r",
    _ext(13, '{"pad": "' + "x" * 5000 + '"}'),  # above the size limit (4096 bytes here)
    b'{"jsonrpc":"2.0","id":14,"method":"session/prompt","params":' + PROMPT + b"}",
]


async def _answers(backend: str) -> bytes:
    (agent_reader, agent_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.AgentSideConnection(Echo(), agent_reader, agent_writer, json_backend=backend, max_message_size=4096)
    peer = RawPeer(peer_reader, peer_writer)
    peer.send_bytes(b"\n".join(LINES) + b"\n")
    peer.send_bytes(_ext(99, "{}") + b"\n")  # the last answer
    out = []
    while b'"id":99' not in (line := await asyncio.wait_for(peer_reader.readline(), 10)):
        out.append(line)
    await connection.close()
    return b"".join(sorted(out))  # requests run as tasks: compare the set of answers


@pytest.mark.parametrize("backend", ["orjson", "msgspec", "auto"])
async def test_the_fast_path_answers_every_line_with_the_bytes_the_standard_library_gives(backend) -> None:
    standard, fast = await _answers("json"), await _answers(backend)
    assert fast == standard
    assert standard.count(b"\n") == len(LINES) - 2  # every line but the blank one and the notification
    answers = {json.loads(line)["id"]: json.loads(line) for line in standard.splitlines()}
    assert answers[13]["error"]["code"] == -32600  # too large: refused with its id
    assert answers[14]["result"]["read"] == json.loads(PROMPT)  # the typed layer's round trip is lossless
    assert answers[2]["result"]["echo"] == {"big": 123456789012345678901234567890, "neg": -9223372036854775809}
    assert answers[6]["error"]["code"] == -32700  # 1e400: beyond the float range
    # not JSON (NaN, a trailing comma, invalid UTF-8), a batch, not an object: answered with id null
    unnamed = [json.loads(line)["error"]["code"] for line in standard.splitlines() if json.loads(line)["id"] is None]
    assert sorted(unnamed) == [-32700, -32700, -32700, -32600, -32600]
    assert answers[3]["result"]["echo"] == {"u64": 18446744073709551615, "i64": -9223372036854775808, "f": 1e16}
    assert answers[4]["result"]["echo"] == {"lone": "\ud800", "dup": 2}  # the last of duplicate keys


async def test_orjson_writes_the_same_bytes_for_the_same_values() -> None:
    for backend in ("json", "orjson"):
        (agent_reader, agent_writer), (peer_reader, _peer_writer) = _rpc.memory_pipe()
        connection = acp.AgentSideConnection(Echo(), agent_reader, agent_writer, json_backend=backend)
        await connection.client.ext_notification("_x", {"s": "é\u2028", "n": [1e16, 2**70, -0.0]})
        line = await asyncio.wait_for(peer_reader.readline(), 10)
        assert line == b'{"jsonrpc":"2.0","method":"_x","params":{"s":"\\u00e9\\u2028","n":[1e+16,1180591620717411303424,-0.0]}}\n'
        await connection.close()


@pytest.mark.parametrize("backend", ["json", "orjson", "msgspec"])
async def test_text_after_a_message_read_on_any_backend_is_noise_between_messages(backend, caplog) -> None:
    (agent_reader, agent_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.AgentSideConnection(Echo(), agent_reader, agent_writer, json_backend=backend)
    peer = RawPeer(peer_reader, peer_writer)
    with caplog.at_level(logging.WARNING, logger="acp_bindings._rpc"):
        peer.send_bytes(b'{"jsonrpc":"2.0","method":"_note","params":{}}\nLoading...\n' + _ext(1, "{}") + b"\n")
        await asyncio.wait_for(peer_reader.readline(), 10)
    noise = [r.getMessage() for r in caplog.records if "not JSON" in r.getMessage()]
    assert noise == ["agent: the peer wrote 10 bytes that are not JSON between messages (a stray print?): b'Loading...'"]
    await connection.close()


async def test_an_unknown_backend_is_refused() -> None:
    (agent_reader, agent_writer), _ = _rpc.memory_pipe()
    with pytest.raises(ValueError, match="json_backend must be 'json', 'orjson', 'msgspec' or 'auto'"):
        acp.AgentSideConnection(Echo(), agent_reader, agent_writer, json_backend="simplejson")


def test_orjson_is_used_only_when_asked_for() -> None:
    code = (
        f"import sys, asyncio; sys.path.insert(0, {str(BINDINGS)!r})\n"
        "import acp_bindings as acp\nfrom acp_bindings import _rpc\n"
        "async def main():\n"
        "    (r, w), _ = _rpc.memory_pipe()\n"
        "    await acp.AgentSideConnection(acp.Agent(), r, w).close()\n"
        "    print('orjson' in sys.modules)\n"
        "    (r, w), _ = _rpc.memory_pipe()\n"
        "    await acp.AgentSideConnection(acp.Agent(), r, w, json_backend='orjson').close()\n"
        "    print('orjson' in sys.modules)\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


@pytest.mark.parametrize(
    ("blocked", "used"),
    [((), "msgspec"), (("msgspec",), "orjson"), (("msgspec", "orjson"), None)],
    ids=["both-installed", "orjson-alone", "neither"],
)
def test_auto_reads_with_msgspec_else_orjson_where_importable_and_the_standard_library_otherwise(blocked, used) -> None:
    code = (
        "import asyncio, importlib.abc, sys\n"
        "class Blocker(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name in {blocked!r}:\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Blocker())\n"
        f"sys.path.insert(0, {str(BINDINGS)!r})\n"
        "import acp_bindings as acp\nfrom acp_bindings import _rpc\n"
        "async def main():\n"
        "    (r, w), (pr, pw) = _rpc.memory_pipe()\n"
        "    connection = acp.AgentSideConnection(acp.Agent(), r, w, json_backend='auto')\n"
        "    pw.write(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"_x\"}\\n')\n"
        "    print(connection.rpc._fast_loads is not None, 'msgspec' in sys.modules, 'orjson' in sys.modules,"
        " (await pr.readline()).decode().strip())\n"
        "    await connection.close()\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    answer = '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"method":"_x"}}}'
    assert out.split(" ", 3) == [str(used is not None), str(used == "msgspec"), str(used == "orjson"), answer + "\n"]


run_async_tests(globals())
