"""The runtime's layers unit-tested where they live (acpgen/runtime/), below the connection:
framing, finding an id, stray text, the message wire's queue and back pressure, errors."""

from __future__ import annotations

import asyncio

import pytest

from acpgen.runtime._runtime.transports import _memory, _transports
from acpgen.runtime._runtime.wire import _errors, _framing


class Sink:
    accepting = True

    def __init__(self) -> None:
        self.messages: list[bytes | str] = []
        self.too_large: list[tuple[bytes, bytes, int]] = []

    def message_received(self, message: bytes | str) -> None:
        self.messages.append(message)

    def message_too_large(self, head: bytes, tail: bytes, size: int) -> None:
        self.too_large.append((head, tail, size))


def test_the_line_framer_joins_lines_across_chunks_and_hands_over_the_last_at_the_end():
    sink = Sink()
    framer = _framing.LineFramer(sink, 100)
    for chunk in (b'{"a":', b'1}\n{"b":2}\n{"c"', b":3}"):
        framer.feed(chunk)
    assert sink.messages == ['{"a":1}', b'{"b":2}']
    framer.finish()
    assert sink.messages[-1] == '{"c":3}'


def test_the_line_framer_keeps_only_the_ends_of_a_line_above_the_limit():
    sink = Sink()
    framer = _framing.LineFramer(sink, 10_000)
    line = b'{"id":7,"params":"' + b"x" * 50_000 + b'"}'
    for start in range(0, len(line), 4096):
        framer.feed(line[start : start + 4096])
    framer.feed(b"\n" + b'{"ok":1}\n')
    [(head, tail, size)] = sink.too_large
    assert size == len(line) and head == line[: _framing.HEAD_KEPT] and tail == line[-_framing.HEAD_KEPT :]
    assert _framing.find_id(head, tail) == (7, False)
    assert sink.messages == [b'{"ok":1}']


def test_the_line_framer_stops_when_the_sink_stops_accepting():
    sink = Sink()
    framer = _framing.LineFramer(sink, 100)
    sink.accepting = False
    framer.feed(b"{}\n{}\n")
    assert sink.messages == []


@pytest.mark.parametrize(
    "line, stray",
    [
        (b"Loading model weights...", True),
        (b"  2024-01-01 INFO ready", True),
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', False),
        (b"[1, 2", False),
        (b'"a string', False),
        (b"\xff\xfe", False),  # not text: a broken wire, answered
        (b"   ", False),
    ],
)
def test_stray_text_is_text_that_does_not_begin_like_json(line, stray):
    assert _framing.is_stray_text(line) is stray


def test_a_message_above_the_limit_from_a_message_transport_is_refused_like_a_line():
    sink = Sink()
    _framing.take_message(sink, b'{"id":"a","x":"' + b"y" * 300 + b'"}', 100)
    _framing.take_message(sink, b"{}", 100)
    assert [size for _, _, size in sink.too_large] == [317] and sink.messages == [b"{}"]


def test_a_request_error_says_its_data_and_an_exception_its_type():
    assert str(_errors.RequestError(-32000, "Nope", {"why": 1})) == 'Nope (-32000): {"why": 1}'
    assert str(_errors.RequestError(-32000, "Nope", {1, 2})) == "Nope (-32000): {1, 2}"  # not JSON
    error = _errors.RequestError.from_exception(KeyError("s"))
    assert error.to_json() == {"code": -32603, "message": "Internal error", "data": {"details": "KeyError: 's'"}}
    assert _errors.RequestError.from_exception(RuntimeError()).data == {"details": "RuntimeError"}


class SlowTransport:
    """A message transport whose sends wait until released."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.release = asyncio.Event()
        self.closed = False

    async def receive(self) -> bytes | None:
        await asyncio.Event().wait()
        return None

    async def send(self, message: bytes) -> None:
        await self.release.wait()
        self.sent.append(message)

    async def close(self) -> None:
        self.closed = True


def test_the_message_wire_queues_in_order_drains_and_closes_after_sending():
    async def main() -> None:
        transport = SlowTransport()
        wire = _transports.MessageWire(transport)
        texts = ["x" * 10_000 for _ in range(5)]
        wire.send_all(list(texts))
        wire.send("last")
        assert wire.buffered() == 50_004
        drained = asyncio.ensure_future(wire.drain())
        await asyncio.sleep(0.01)
        assert not drained.done()  # above the low-water mark: waits
        wire.close()
        assert wire.is_closing()
        transport.release.set()
        await asyncio.wait_for(drained, 5)
        assert wire.wait_closed is not None
        await asyncio.wait_for(wire.wait_closed(), 5)
        assert transport.sent == [t.encode() for t in (*texts, "last")] and transport.closed

    asyncio.run(main())


def test_a_failed_send_closes_the_message_wire_and_fails_its_drain():
    class Failing(SlowTransport):
        async def send(self, message: bytes) -> None:
            raise OSError("gone")

    async def main() -> None:
        wire = _transports.MessageWire(Failing())
        wire.send("x" * 20_000)
        await asyncio.sleep(0.01)
        assert wire.is_closing() and wire.buffered() == 0
        with pytest.raises(ConnectionError):
            await wire.drain()

    asyncio.run(main())


def test_memory_transports_carry_messages_both_ways_and_the_end():
    async def main() -> None:
        a, b = _memory.memory_transports()
        await a.send(b"one")
        await b.send(b"two")
        assert (await b.receive(), await a.receive()) == (b"one", b"two")
        await a.close()
        assert await b.receive() is None and await b.receive() is None

    asyncio.run(main())
