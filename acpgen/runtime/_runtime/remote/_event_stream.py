"""A Streamable HTTP event stream: one reader's ``GET``, sent the messages its stream holds as
server-sent events, kept alive while quiet, and cut off when the reader stops taking them."""

from __future__ import annotations

import asyncio
import logging
import sys

from ._asgi_messages import Receive, Send, disconnected, start
from ._http_connection import HttpConnection, Stream

__all__ = ["Stall", "stream_events"]

logger = logging.getLogger(__name__)


async def stream_events(
    connection: HttpConnection,
    stream: Stream,
    receive: Receive,
    send: Send,
    *,
    keepalive: float,
    stall_timeout: float,
) -> None:
    """Send ``stream``'s messages to its reader as server-sent events until the stream finishes or
    the reader leaves: a comment every ``keepalive`` seconds while it is quiet, and the reader cut
    off once it has taken nothing for ``stall_timeout`` seconds while messages wait (what it did
    not take stays queued for the stream's next reader)."""
    headers = [(b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]
    await send(start(200, b"text/event-stream", headers))
    loop = asyncio.get_running_loop()
    gone = asyncio.ensure_future(disconnected(receive))
    gone.add_done_callback(lambda _: stream.wake("gone"))
    stall = Stall(stall_timeout)
    try:
        while not gone.done():
            if stream.queue:
                batch: list[bytes] = []
                size = 0
                while stream.queue and size < 1 << 16:
                    message = stream.queue.popleft()
                    batch.append(message)
                    size += len(message)
                if not await stall.send(send, b"".join([b"data: %b\n\n" % m for m in batch])):
                    stream.queue.extendleft(reversed(batch))  # for the stream's next reader
                    break
                connection.taken(size)
                continue
            if stream.finished:
                break
            # One future, woken by a message, the end, the reader leaving or the keepalive timer.
            waiter = stream.waiter = loop.create_future()
            timer = loop.call_later(keepalive, stream.wake, "keepalive")
            try:
                why = await waiter
            finally:
                timer.cancel()
                stream.waiter = None
            if why == "keepalive" and not await stall.send(send, b": keepalive\n\n"):
                break
        if stall.stalled:  # the app returns, the server drops the response
            logger.warning(
                "cut off an event stream's reader: it took nothing for %s s", stall_timeout
            )
        elif not gone.done():
            await send({"type": "http.response.body", "body": b""})
    finally:
        stall.close()
        gone.cancel()


class Stall:
    """Gives up a send to an event stream that its reader has not taken for ``limit`` seconds. One
    timer a stream, armed when a send starts and none is armed, so a send costs no timer."""

    def __init__(self, limit: float) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.task = task
        self.limit = limit
        self.loop = asyncio.get_running_loop()
        self.since: float | None = None  # when the send in progress started
        self.timer: asyncio.TimerHandle | None = None
        self.stalled = False

    async def send(self, send: Send, body: bytes) -> bool:
        """Send a part of the stream; False, the send given up, once it has waited ``limit``."""
        self.since = self.loop.time()
        if self.timer is None:
            self.timer = self.loop.call_at(self.since + self.limit, self._check)
        try:
            await send({"type": "http.response.body", "body": body, "more_body": True})
        except asyncio.CancelledError:
            if not self.stalled:
                raise
            if sys.version_info >= (3, 11):
                self.task.uncancel()
            return False
        finally:
            self.since = None
        return True

    def _check(self) -> None:
        self.timer = None
        if self.since is None:
            return
        due = self.since + self.limit
        if due > self.loop.time():
            self.timer = self.loop.call_at(due, self._check)
        else:
            self.stalled = True
            self.task.cancel()

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
