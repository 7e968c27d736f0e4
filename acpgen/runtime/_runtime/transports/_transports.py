"""Transports: what a :class:`~._connection.Connection` reads messages from and writes them to.

A connection sees one interface, :class:`Wire`. Two kinds implement it:

* :class:`StreamWire`, a byte stream (a pipe, a socket, stdio, an in-memory pipe) carrying
  newline-delimited JSON, read through :class:`PipeReader` or an :class:`asyncio.StreamReader`;
* :class:`MessageWire`, over any :class:`MessageTransport`: one whole JSON-RPC message per
  ``receive``/``send`` (a WebSocket frame, an HTTP body). It is the seam for other transports.

Both keep the same wire rules, because the connection applies them: the size limit, the answers to
what cannot be read, back pressure (a wire's ``buffered()`` bytes), per-session order.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from ..wire._errors import ConnectionClosed
from ..wire._framing import READ_CHUNK, WIRE_LOG, LineFramer, MessageSink, take_message

__all__ = [
    "MessageTransport",
    "MessageWire",
    "MessageWriter",
    "PipeReader",
    "StreamWire",
    "Wire",
    "WireSink",
]

logger = logging.getLogger(WIRE_LOG)


@runtime_checkable
class MessageTransport(Protocol):
    """A message-oriented transport: each message is one whole JSON-RPC message (UTF-8 JSON text)."""

    async def receive(self) -> bytes | None:
        """The next message; None at the end of input. A :class:`ConnectionError` raised here
        ends the connection, its message the reason every waiting call fails with."""
        ...

    async def send(self, message: bytes) -> None:
        """Send one message; may wait (back pressure)."""
        ...

    async def close(self) -> None: ...


class WireSink(MessageSink, Protocol):
    """What a wire reports to: messages (see :class:`MessageSink`), and when reading starts and
    ends. What handling one read writes goes out together, at its end."""

    def read_started(self) -> None: ...

    def read_ended(self) -> None: ...

    def input_ended(self, reason: str) -> None:
        """The peer stopped writing."""
        ...


class Wire(Protocol):
    """What a connection sees of its transport."""

    #: waits until everything written is sent and the wire closed; None when it cannot tell
    wait_closed: Callable[[], Awaitable[None]] | None

    def buffered(self) -> int:
        """Bytes written and not yet sent (the connection's back pressure)."""
        ...

    def is_closing(self) -> bool: ...

    def closed(self) -> bool:
        """Closed with nothing left to send: ``wait_closed`` has nothing worth waiting for."""
        ...

    def start(self, sink: WireSink, max_size: int) -> None:
        """Start reading into ``sink``."""
        ...

    def send(self, text: str) -> None:
        """Write one message's JSON text."""
        ...

    def send_all(self, texts: list[str]) -> None:
        """Write several, in order (the list may be changed)."""
        ...

    async def drain(self) -> None: ...

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...

    async def stop_reading(self) -> None: ...

    def close(self) -> None:
        """Close once everything written is sent."""
        ...

    def abort(self) -> None:
        """Close now, dropping what is not sent."""
        ...


class MessageWriter(Protocol):
    """The part of :class:`asyncio.StreamWriter` a connection uses."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...

    def is_closing(self) -> bool: ...


def _nothing() -> int:
    return 0


class PipeReader(asyncio.Protocol):
    """Reads a pipe straight into a :class:`StreamWire` (no stream buffer, no reader task).

    Data that arrives before a wire is attached is kept and handed over on attach.
    """

    def __init__(self) -> None:
        self._wire: StreamWire | None = None
        self._early: list[bytes] = []
        self._eof: str | None = None
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def pause_reading(self) -> None:
        """Stop reading the pipe (back pressure), until :meth:`resume_reading`."""
        if isinstance(self._transport, asyncio.ReadTransport) and not self._transport.is_closing():
            self._transport.pause_reading()

    def resume_reading(self) -> None:
        if isinstance(self._transport, asyncio.ReadTransport) and not self._transport.is_closing():
            self._transport.resume_reading()

    def attach(self, wire: StreamWire) -> None:
        self._wire = wire
        early, self._early = self._early, []
        for data in early:
            wire.feed_data(data)
        if self._eof is not None:
            wire.feed_eof(self._eof)

    def data_received(self, data: bytes) -> None:
        if self._wire is None:
            self._early.append(data)
        else:
            self._wire.feed_data(data)

    def eof_received(self) -> bool | None:
        self._lost("the peer closed the connection")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost("the peer closed the connection" if exc is None else f"reading failed: {exc}")

    def _lost(self, reason: str) -> None:
        if self._wire is None:
            self._eof = self._eof or reason
        else:
            self._wire.feed_eof(reason)


class StreamWire:
    """Newline-delimited JSON over a byte stream: a reader (:class:`PipeReader` or
    :class:`asyncio.StreamReader`) and a writer (:class:`MessageWriter`)."""

    def __init__(self, reader: asyncio.StreamReader | PipeReader, writer: MessageWriter) -> None:
        self._reader = reader
        self._writer = writer
        transport: Any = getattr(writer, "transport", None)
        self._transport = transport
        # A stream writer only passes these on to its transport: call the transport's own.
        self._put: Callable[[bytes], None] = writer.write
        self.is_closing: Callable[[], bool] = writer.is_closing
        if type(writer) is asyncio.StreamWriter and transport is not None:
            self._put, self.is_closing = transport.write, transport.is_closing
        self.buffered: Callable[[], int] = (
            _nothing if transport is None else transport.get_write_buffer_size
        )
        self.wait_closed: Callable[[], Awaitable[None]] | None = getattr(
            writer, "wait_closed", None
        )
        self._sink: WireSink | None = None
        self._framer: LineFramer | None = None
        self._read_task: asyncio.Task[None] | None = None
        self._paused: asyncio.Event | None = (
            None  # a stream reader's: set again when reading goes on
        )

    def closed(self) -> bool:
        """The transport closes with its buffer empty: what remains (its ``connection_lost``) is
        already scheduled, so a connection's close need not wait for it (nor a task that serves
        a socket outlive the server that waits for its connections)."""
        transport = self._transport
        if transport is None or not transport.is_closing():
            return False
        return not transport.get_write_buffer_size()

    def start(self, sink: WireSink, max_size: int) -> None:
        if self._sink is not None:
            return
        self._sink, self._framer = sink, LineFramer(sink, max_size)
        if isinstance(self._reader, PipeReader):
            self._reader.attach(self)
        else:
            self._read_task = asyncio.get_running_loop().create_task(self._read_loop())

    def feed_data(self, chunk: bytes) -> None:
        """Bytes read from the peer."""
        assert self._sink is not None and self._framer is not None
        sink = self._sink
        sink.read_started()
        try:
            self._framer.feed(chunk)
        finally:
            sink.read_ended()

    def feed_eof(self, reason: str = "the peer closed the connection") -> None:
        """The peer stopped writing: the last line, even without its newline, is handled."""
        assert self._sink is not None and self._framer is not None
        if self._sink.accepting:
            self._framer.finish()
        self._sink.input_ended(reason)

    async def _read_loop(self) -> None:
        assert isinstance(self._reader, asyncio.StreamReader)
        reason = "the peer closed the connection"
        try:
            while True:
                if self._paused is not None:
                    await self._paused.wait()
                chunk = await self._reader.read(READ_CHUNK)
                if not chunk:
                    break
                self.feed_data(chunk)
        except asyncio.CancelledError:
            return
        except Exception as exc:
            reason = f"reading failed: {exc}"
            logger.debug("reading the stream failed", exc_info=True)
        self.feed_eof(reason)

    def send(self, text: str) -> None:
        self._put((text + "\n").encode())

    def send_all(self, texts: list[str]) -> None:
        texts.append("")
        self._put("\n".join(texts).encode())

    async def drain(self) -> None:
        await self._writer.drain()

    def pause_reading(self) -> None:
        if isinstance(self._reader, PipeReader):
            self._reader.pause_reading()
        elif self._paused is None:
            self._paused = asyncio.Event()

    def resume_reading(self) -> None:
        if isinstance(self._reader, PipeReader):
            self._reader.resume_reading()
        elif self._paused is not None:
            self._paused.set()
            self._paused = None

    async def stop_reading(self) -> None:
        task = self._read_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def close(self) -> None:
        self._writer.close()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()


class MessageWire:
    """A :class:`MessageTransport` as a :class:`Wire`: messages go out one ``send`` each, in
    order, from a queue whose size in bytes is the back pressure the connection sees."""

    LOW_WATER = 1 << 14  # drain() returns once no more than this many bytes wait

    def __init__(self, transport: MessageTransport) -> None:
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._queue: collections.deque[bytes] = collections.deque()
        self._queued = 0
        self._sender: asyncio.Task[None] | None = None
        self._receiver: asyncio.Task[None] | None = None
        self._closer: asyncio.Task[None] | None = None
        self._closing = False
        self._error: Exception | None = None
        self._done: asyncio.Future[None] = self._loop.create_future()
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._paused: asyncio.Event | None = None
        self.wait_closed: Callable[[], Awaitable[None]] | None = self._wait_closed

    def buffered(self) -> int:
        return self._queued

    def is_closing(self) -> bool:
        return self._closing

    def closed(self) -> bool:
        return self._done.done()

    def start(self, sink: WireSink, max_size: int) -> None:
        if self._receiver is None:
            self._receiver = self._loop.create_task(self._receive(sink, max_size))

    async def _receive(self, sink: WireSink, max_size: int) -> None:
        reason = "the peer closed the connection"
        try:
            while sink.accepting:
                if self._paused is not None:
                    await self._paused.wait()
                message = await self._transport.receive()
                if message is None:
                    break
                sink.read_started()
                try:
                    take_message(sink, message, max_size)
                finally:
                    sink.read_ended()
        except asyncio.CancelledError:
            return
        except ConnectionError as exc:  # the transport says why the connection ended
            reason = str(exc) or type(exc).__name__
            logger.debug("the transport ended", exc_info=True)
        except Exception as exc:
            reason = f"reading failed: {exc}"
            logger.debug("receiving a message failed", exc_info=True)
        sink.input_ended(reason)

    def send(self, text: str) -> None:
        self._enqueue(text.encode())

    def send_all(self, texts: list[str]) -> None:
        for text in texts:
            self._enqueue(text.encode())

    def _enqueue(self, data: bytes) -> None:
        if self._closing:
            raise ConnectionClosed("the transport is closed")
        self._queue.append(data)
        self._queued += len(data)
        if self._sender is None:
            self._sender = self._loop.create_task(self._send_queued())

    async def _send_queued(self) -> None:
        try:
            while self._queue:
                data = self._queue[0]
                await self._transport.send(data)
                self._queue.popleft()
                self._queued -= len(data)
                if self._queued <= self.LOW_WATER:
                    self._wake_drainers()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.debug("sending a message failed", exc_info=True)
            self._error = exc
            self._closing = True
            self._queue.clear()
            self._queued = 0
        finally:
            self._sender = None
            self._wake_drainers()
        if self._closing:
            self._close_soon()

    def _wake_drainers(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                if self._error is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(ConnectionError(f"sending failed: {self._error}"))

    async def drain(self) -> None:
        if self._error is not None:
            raise ConnectionError(f"sending failed: {self._error}")
        if self._queued <= self.LOW_WATER:
            return
        waiter = self._loop.create_future()
        self._drain_waiters.append(waiter)
        await waiter

    def pause_reading(self) -> None:
        if self._paused is None:
            self._paused = asyncio.Event()

    def resume_reading(self) -> None:
        if self._paused is not None:
            self._paused.set()
            self._paused = None

    async def stop_reading(self) -> None:
        task = self._receiver
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        if self._sender is None:  # nothing waits to be sent: close now
            self._close_soon()

    def abort(self) -> None:
        self._closing = True
        self._queue.clear()
        self._queued = 0
        if self._sender is not None:
            self._sender.cancel()
        self._close_soon()

    def _close_soon(self) -> None:
        """Close the transport, once (in a task of its own)."""
        if self._closer is None:
            self._closer = self._loop.create_task(self._close_transport())

    async def _close_transport(self) -> None:
        try:
            await self._transport.close()
        except Exception as exc:
            logger.debug("closing the transport failed", exc_info=True)
            self._error = self._error or exc
        finally:
            if not self._done.done():
                self._done.set_result(None)

    async def _wait_closed(self) -> None:
        await asyncio.shield(self._done)


def make_wire(reader: Any, writer: MessageWriter | None) -> Wire:
    """The wire of a reader and a writer, or of a :class:`MessageTransport` (``writer=None``)."""
    if writer is not None:
        return StreamWire(reader, writer)
    if isinstance(reader, (StreamWire, MessageWire)):
        return reader
    if isinstance(reader, MessageTransport):
        return MessageWire(reader)
    raise TypeError(f"expected a MessageTransport, or a reader and a writer, got {reader!r}")
