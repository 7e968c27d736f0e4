"""In-memory transports, for tests and in-process use: a byte-stream pipe and a message pair."""

from __future__ import annotations

import asyncio

from ..wire._errors import ConnectionClosed
from ._transports import MessageTransport, MessageWriter

__all__ = ["memory_pipe", "memory_transports"]


class _MemoryWriter:
    """A writer that feeds an in-process :class:`asyncio.StreamReader`."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._closing = False

    def write(self, data: bytes) -> None:
        if self._closing:
            raise ConnectionClosed("in-memory pipe closed")
        self._reader.feed_data(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._reader.feed_eof()

    def is_closing(self) -> bool:
        return self._closing


def memory_pipe() -> (
    tuple[tuple[asyncio.StreamReader, MessageWriter], tuple[asyncio.StreamReader, MessageWriter]]
):
    """Two connected ends, each a ``(reader, writer)``: what one end writes, the other reads."""
    a_in, b_in = asyncio.StreamReader(), asyncio.StreamReader()
    return (a_in, _MemoryWriter(b_in)), (b_in, _MemoryWriter(a_in))


class _MemoryTransport:
    """One end of :func:`memory_transports`."""

    def __init__(
        self, inbox: asyncio.Queue[bytes | None], outbox: asyncio.Queue[bytes | None]
    ) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False

    async def receive(self) -> bytes | None:
        message = await self._inbox.get()
        if message is None:
            self._inbox.put_nowait(None)  # the end stays the end
        return message

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionClosed("in-memory transport closed")
        await self._outbox.put(message)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._outbox.put(None)


def memory_transports(maxsize: int = 0) -> tuple[MessageTransport, MessageTransport]:
    """Two connected message transports: what one sends, the other receives, message by message
    (``maxsize`` messages may wait in each direction, 0 for any number)."""
    a_in: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize)
    b_in: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize)
    return _MemoryTransport(a_in, b_in), _MemoryTransport(b_in, a_in)
