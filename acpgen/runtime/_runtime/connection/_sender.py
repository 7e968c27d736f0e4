"""The sending side of a connection: messages gathered into few writes, and back pressure.

A message goes out at once, unless one already did since the last read: then it and the ones after
it are gathered and written together at the end of the loop iteration (fewer system calls and
wake-ups for the peer), or as soon as they pass ``FLUSH_AT`` bytes. The answers to one read are
gathered and written together once the read is handled. Either way messages leave in order.

When the peer stops reading and more than ``PAUSE_READING_AT`` bytes wait, reading pauses until
they drain; callers that send wait (``wait_drained``) once ``FLUSH_AT`` bytes wait.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..transports._transports import Wire
from ..wire._errors import ConnectionClosed
from ..wire._framing import WIRE_LOG

__all__ = ["FLUSH_AT", "Sender"]

logger = logging.getLogger(WIRE_LOG)

FLUSH_AT = 1 << 16  # bytes of gathered messages written at once, and the back-pressure mark
PAUSE_READING_AT = 1 << 20  # bytes waiting to be written above which reading pauses
FLUSH_PATIENCE = 1.0  # seconds without progress after which closing gives up on a peer's reading


class Sender:
    """Writes a connection's messages to its wire. ``lost(reason)`` is called when the wire is
    found closed; ``closed`` is the connection's, done once it is closed."""

    def __init__(
        self, wire: Wire, closed: asyncio.Future[None], lost: Callable[[str], None], name: str
    ) -> None:
        self._wire = wire
        self._closed = closed
        self._lost = lost
        self._name = name
        self._loop = asyncio.get_running_loop()
        self.reason = "connection closed"  # why the connection closed, once it has
        #: bytes written and not yet sent
        self.buffered: Callable[[], int] = wire.buffered
        self._is_closing = wire.is_closing
        self._out: list[str] = []  # messages gathered during this loop iteration
        self._out_size = 0
        self._flush_scheduled = False
        self._sent = False  # a message went out at once since the last read or flush
        self._reading = False  # handling a read: what it answers goes out at its end
        self._drain_waiters: set[asyncio.Future[None]] = set()
        self._drainer: asyncio.Task[None] | None = None
        self._resumer: asyncio.Task[None] | None = None
        #: called with each message's text as it is queued, when the connection is observed
        self.observe: Callable[[str], None] | None = None

    def read_started(self) -> None:
        self._sent = False
        self._reading = True

    def read_ended(self) -> None:
        self._reading = False
        if self._out:
            self._write_out()

    def gather_soon(self) -> None:
        """Gather what is written from now until the callbacks already scheduled on the loop
        have run (a request's task started by this read), and write it together then."""
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self.flush)

    def write_text(self, data: str) -> None:
        """Queue one message's JSON text (see the module's docstring)."""
        if self.observe is not None:
            self.observe(data)
        if not (self._reading or self._flush_scheduled):
            if not self._sent:
                self._sent = True
                if self._is_closing():
                    self._gone()
                self._wire.send(data)
                self._check_buffer()
                return
            self._flush_scheduled = True
            self._loop.call_soon(self.flush)
        self._out.append(data)
        self._out_size += len(data)
        if self._out_size >= FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        self._flush_scheduled = False
        self._sent = False
        self._write_out()

    def _write_out(self) -> None:
        if self._out and not self._closed.done():
            out, self._out = self._out, []
            self._out_size = 0
            try:
                if self._is_closing():
                    self._gone()
                self._wire.send_all(out)
            except ConnectionClosed:
                logger.debug("%s: dropped %d messages: connection closed", self._name, len(out))
                return
            self._check_buffer()

    def _gone(self) -> None:
        self._lost("the peer closed the connection")
        raise ConnectionClosed(self.reason)

    def _check_buffer(self) -> None:
        if self._resumer is None and self.buffered() > PAUSE_READING_AT:
            logger.debug("%s: the peer is not reading; reading paused", self._name)
            self._wire.pause_reading()
            self._resumer = self._loop.create_task(self._resume_reading())

    async def _resume_reading(self) -> None:
        try:
            await self.wait_drained()
        except ConnectionClosed:
            pass
        finally:
            self._resumer = None
            self._wire.resume_reading()

    async def wait_drained(self) -> None:
        """Wait for the wire to drain. One task drains it for every waiter, so that any number
        of waiters cost linear time, even when they are all cancelled at once."""
        if self._closed.done():
            raise ConnectionClosed(self.reason)
        if self._drainer is None:
            self._drainer = self._loop.create_task(self._drain())
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._drain_waiters.add(waiter)
        try:
            await waiter
        finally:
            self._drain_waiters.discard(waiter)

    async def _drain(self) -> None:
        error: ConnectionClosed | None = None
        try:
            await self._wire.drain()
        except (ConnectionError, RuntimeError) as exc:
            self._lost(f"connection lost while writing: {exc}")
            error = ConnectionClosed(self.reason)
        finally:
            self._drainer = None
            waiters, self._drain_waiters = self._drain_waiters, set()
            for waiter in waiters:
                if not waiter.done():
                    if error is None:
                        waiter.set_result(None)
                    else:
                        waiter.set_exception(error)

    def close(self, reason: str) -> None:
        """Write what is gathered, then close the wire (once it has sent everything)."""
        self.reason = reason
        try:
            if self._out and not self._is_closing():
                self._wire.send_all(self._out)
            self._out = []
            self._wire.close()
        except Exception:  # the transport may already be gone
            logger.debug("%s: closing the writer failed", self._name, exc_info=True)

    async def flushed(self, peer_ended: Callable[[], bool]) -> None:
        """Wait until the wire has sent everything and closed. After the peer's end of input
        (``peer_ended()``: the answers to what it sent wait there) as long as it takes; when this
        side closes first, while the peer makes progress reading."""
        if self._resumer is not None:
            self._resumer.cancel()
        wait_closed = self._wire.wait_closed
        if wait_closed is None or self._wire.closed():
            return
        waiter = asyncio.ensure_future(wait_closed())  # never cancelled: it ends with the pipe
        left = None
        while True:
            done, _ = await asyncio.wait({waiter}, timeout=FLUSH_PATIENCE)
            if done:
                if not waiter.cancelled():
                    waiter.exception()  # retrieved: a pipe closing with an error is fine
                return
            size = self.buffered()
            if not peer_ended() and left is not None and size >= left:  # not read: give up
                logger.warning("%s: dropped %d unsent bytes on close", self._name, size)
                self._wire.abort()
                return
            left = size
