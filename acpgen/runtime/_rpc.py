"""JSON-RPC 2.0 over newline-delimited JSON: the connection core, independent of the schema.

A :class:`Connection` reads messages from an asyncio stream, hands requests and notifications to
a :class:`Dispatcher` (the typed layer decodes params and calls handlers), and sends requests and
notifications of its own. Wire rules it keeps:

* every incoming request runs as its own task, so many can be in flight at once;
* notifications that name the same ``sessionId`` are handled one after another, in arrival order;
* a response is released to its caller only after every notification that arrived before it has
  been handled, so a prompt's result never overtakes the updates sent before it;
* a line that is not JSON (bad syntax, invalid UTF-8, ``NaN``/``Infinity``) answers -32700 with id
  null; JSON this side cannot hold (nested beyond the parser's depth, a number beyond the float
  range) answers -32700 with the message's id when it can be found; a message that is not a
  JSON-RPC 2.0 object (or a batch) -32600, with its id if valid; a message above
  ``max_message_size`` bytes a -32600 refusal with its id; the connection keeps serving;
* output is strict JSON: a value with ``NaN`` or an infinity is never sent;
* ``$/cancel_request`` cancels the named request's task, which is answered with -32800;
* when the peer stops writing (end of input) the calls still waiting for it fail at once with
  :class:`ConnectionClosed`, and every request already read is still answered before closing;
* when the peer stops reading, this side stops reading too once more than 1 MiB of output waits
  (back pressure), and goes on when it drains.

Nothing here writes to stdout except through the writer it is given; logs go to ``logging``.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import functools
import json
import logging
import math
import os
import re
import sys
import threading
from collections.abc import Callable, Collection, Coroutine, Mapping
from typing import Any, NamedTuple, Protocol

from ._codec import dump_json, json_string

__all__ = [
    "CANCEL_REQUEST",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "Codec",
    "Connection",
    "ConnectionClosed",
    "Dispatcher",
    "JsonText",
    "MessageWriter",
    "PeerConnection",
    "PipeReader",
    "ProcessReader",
    "Proxy",
    "RequestError",
    "Route",
    "TypedDispatcher",
    "memory_pipe",
    "spawn",
    "stdio_streams",
]

logger = logging.getLogger(__name__)


_encode_json = dump_json  # the wire's JSON text of a value

#: The largest message accepted by default (bytes, without the newline): 32 MiB.
DEFAULT_MAX_MESSAGE_SIZE = 32 * 1024 * 1024
#: The protocol-level notification that cancels an in-flight request.
CANCEL_REQUEST = "$/cancel_request"

_READ_CHUNK = 1 << 16
_FLUSH_AT = 1 << 16  # bytes of gathered messages written at once, and the back-pressure mark
_PAUSE_READING_AT = 1 << 20  # bytes waiting to be written above which reading pauses
_FLUSH_PATIENCE = 1.0  # seconds without progress after which closing gives up on a peer's reading
_HEAD_KEPT = 1 << 12  # bytes of an oversized message kept at each end to find its id
_in_notification: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "acp_in_notification", default=False
)


class RequestError(Exception):
    """A JSON-RPC error: raised by a handler to answer with its own code, or by a call the peer refused."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_json(cls, error: Any) -> RequestError:
        if not isinstance(error, dict):
            return cls(-32603, "malformed error object", error)
        code = error.get("code")
        message = error.get("message")
        return cls(
            code if isinstance(code, int) and not isinstance(code, bool) else -32603,
            message if isinstance(message, str) else "error",
            error.get("data"),
        )

    @classmethod
    def parse_error(cls, data: Any = None) -> RequestError:
        return cls(-32700, "Parse error", data)

    @classmethod
    def invalid_request(cls, data: Any = None) -> RequestError:
        return cls(-32600, "Invalid request", data)

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        return cls(-32601, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, data: Any = None) -> RequestError:
        return cls(-32602, "Invalid params", data)

    @classmethod
    def internal_error(cls, data: Any = None) -> RequestError:
        return cls(-32603, "Internal error", data)

    @classmethod
    def request_cancelled(cls, data: Any = None) -> RequestError:
        return cls(-32800, "Request cancelled", data)

    @classmethod
    def auth_required(cls, data: Any = None) -> RequestError:
        return cls(-32000, "Authentication required", data)

    @classmethod
    def resource_not_found(cls, uri: str | None = None) -> RequestError:
        return cls(-32002, "Resource not found", None if uri is None else {"uri": uri})


class JsonText:
    """A value written as JSON text already (by a codec's ``encode_text``): a connection sends it
    as it is where it takes a JSON value, a request's or notification's params or a result."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class ConnectionClosed(ConnectionError):
    """The connection is closed: the peer went away, or this side closed it."""


class Dispatcher(Protocol):
    """What a :class:`Connection` calls for incoming messages (the typed layer implements it)."""

    async def handle_request(self, method: str, params: Any) -> Any:
        """Return the JSON result, or raise :class:`RequestError`."""
        ...

    async def handle_notification(self, method: str, params: Any) -> None: ...


class MessageWriter(Protocol):
    """The part of :class:`asyncio.StreamWriter` a connection uses."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...

    def is_closing(self) -> bool: ...


class PipeReader(asyncio.Protocol):
    """Reads a pipe straight into a :class:`Connection` (no stream buffer, no reader task).

    Data that arrives before a connection is attached is kept and handed over on attach.
    """

    def __init__(self) -> None:
        self._connection: Connection | None = None
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

    def attach(self, connection: Connection) -> None:
        self._connection = connection
        early, self._early = self._early, []
        for data in early:
            connection.feed_data(data)
        if self._eof is not None:
            connection.feed_eof(self._eof)

    def data_received(self, data: bytes) -> None:
        if self._connection is None:
            self._early.append(data)
        else:
            self._connection.feed_data(data)

    def eof_received(self) -> bool | None:
        self._lost("the peer closed the connection")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost("the peer closed the connection" if exc is None else f"reading failed: {exc}")

    def _lost(self, reason: str) -> None:
        if self._connection is None:
            self._eof = self._eof or reason
        else:
            self._connection.feed_eof(reason)


class Connection:
    """One JSON-RPC connection over a reader (bytes in) and a writer (bytes out).

    Call :meth:`start` to begin reading (the typed connections do this for you).
    ``json_backend="orjson"`` reads lines with orjson (installed separately), and with the
    standard library whenever orjson refuses a line or could read it differently; lines are
    written by the standard library either way, so the wire carries the same bytes.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader | PipeReader,
        writer: MessageWriter,
        dispatcher: Dispatcher,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        name: str = "acp",
        json_backend: str = "json",
    ) -> None:
        if max_message_size <= 0:
            raise ValueError("max_message_size must be positive")
        if json_backend not in ("json", "orjson"):
            raise ValueError(f"json_backend must be 'json' or 'orjson', got {json_backend!r}")
        self._fast_decode = _orjson_reader() if json_backend == "orjson" else None
        self._reader = reader
        self._writer = writer
        self._dispatcher = dispatcher
        self._max = max_message_size
        self._name = name
        self._next_id = 0
        self._pending: dict[int, tuple[asyncio.Future[Any], bool]] = {}
        self._incoming: dict[Any, asyncio.Task[Any]] = {}
        self._unstarted = 0  # request tasks made but not yet run
        self._cancelled_by_peer: set[Any] = set()
        self._cancelled_by_us: set[int] = set()  # cancelled calls: late answers dropped quietly
        self._seen_message = False  # a message arrived: later garbage is not start-up output
        self._noise = b""  # the first line that was not JSON, when it came before any message
        self._queues: dict[Any, collections.deque[tuple[int, str, Any]]] = {}
        self._workers: set[asyncio.Task[None]] = set()
        self._seq = 0  # notifications received so far
        self._unfinished: dict[int, None] = {}  # seq of notifications not yet handled, in order
        self._held: collections.deque[tuple[int, asyncio.Future[Any], Any, RequestError | None]] = (
            collections.deque()
        )
        self._loop = asyncio.get_running_loop()
        self._eager = _eager_task if self._loop.get_task_factory() is None else None
        self._out: list[str] = []  # messages gathered during this loop iteration
        self._out_size = 0
        self._flush_scheduled = False
        self._sent = False  # a message went out at once since the last read or flush
        self._feeding = False  # handling a chunk read: what it answers goes out at its end
        self._read_task: asyncio.Task[None] | None = None
        self._parts: list[bytes] = []  # the incomplete line read so far
        self._size = 0
        self._oversized = False
        self._tail = b""  # the last bytes of an oversized line
        self._eof: str | None = None  # why the peer stopped writing, once it has
        self._transport: Any = getattr(writer, "transport", None)
        # A stream writer only passes these on to its transport: call the transport's own.
        self._put: Callable[[bytes], None] = writer.write
        self._is_closing: Callable[[], bool] = writer.is_closing
        if type(writer) is asyncio.StreamWriter and self._transport is not None:
            self._put, self._is_closing = self._transport.write, self._transport.is_closing
        self._drain_waiters: set[asyncio.Future[None]] = set()
        self._drainer: asyncio.Task[None] | None = None
        self._reading_paused: asyncio.Event | None = None  # set again when reading goes on
        self._closed: asyncio.Future[None] = self._loop.create_future()
        self._close_reason = "connection closed"

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start reading messages (idempotent)."""
        if isinstance(self._reader, PipeReader):
            self._reader.attach(self)
        elif self._read_task is None:
            self._read_task = self._loop.create_task(self._read_loop())

    @property
    def is_closed(self) -> bool:
        return self._closed.done()

    async def wait_closed(self) -> None:
        """Wait until the peer goes away or :meth:`close` is called."""
        await asyncio.shield(self._closed)

    async def close(self) -> None:
        """Close the connection: pending calls fail, in-flight handlers are cancelled."""
        self._shutdown("connection closed by this side")
        error = ConnectionClosed(self._close_reason)
        while self._held:
            _, future, _, _ = self._held.popleft()
            if not future.done():
                future.set_exception(error)
        if self._read_task is not None and self._read_task is not asyncio.current_task():
            self._read_task.cancel()
            await asyncio.gather(self._read_task, return_exceptions=True)
        current = asyncio.current_task()
        tasks = [t for t in (*self._incoming.values(), *self._workers) if t is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._flushed()

    async def _flushed(self) -> None:
        """Wait until the writer has sent everything and closed. After the peer's end of input
        (the answers to what it sent wait there) as long as it takes; when this side closes
        first, while the peer makes progress reading."""
        wait_closed = getattr(self._writer, "wait_closed", None)
        if wait_closed is None:
            return
        waiter = asyncio.ensure_future(wait_closed())  # never cancelled: it ends with the pipe
        left = None
        while True:
            done, _ = await asyncio.wait({waiter}, timeout=_FLUSH_PATIENCE)
            if done:
                if not waiter.cancelled():
                    waiter.exception()  # retrieved: a pipe closing with an error is fine
                return
            size = self._transport.get_write_buffer_size() if self._transport else 0
            if self._eof is None and left is not None and size >= left:  # not read: give up
                logger.warning("%s: dropped %d unsent bytes on close", self._name, size)
                self._transport.abort()
                return
            left = size

    def _shutdown(self, reason: str) -> None:
        """Stop talking: calls still waiting for an answer fail, requests being handled are
        cancelled (their answers could not be sent). Notifications already received are still
        handled, and answers already received are still released after them."""
        if self._closed.done():
            return
        self._close_reason = reason
        self._closed.set_result(None)
        error = ConnectionClosed(reason)
        pending, self._pending = self._pending, {}
        for future, _ in pending.values():
            if not future.done():
                future.set_exception(error)
        for task in self._incoming.values():
            task.cancel()
        try:
            if self._out and not self._writer.is_closing():
                self._out.append("")
                self._writer.write("\n".join(self._out).encode())
            self._out.clear()
            self._writer.close()
        except Exception:  # the transport may already be gone
            logger.debug("%s: closing the writer failed", self._name, exc_info=True)

    # -- sending ---------------------------------------------------------------------------

    def _write(self, message: dict[str, Any]) -> None:
        """Queue one message (see :meth:`_write_text`)."""
        if self._closed.done():
            raise ConnectionClosed(self._close_reason)
        self._write_text(_encode_json(message))  # ValueError for NaN or an infinity: never sent

    def _write_text(self, data: str) -> None:
        """Queue one message's JSON text. The answers to a chunk read are gathered and written
        together once the chunk is handled. Otherwise a message goes out at once, unless one
        already did since the last read: then it and the ones after it are gathered and written
        together at the end of the loop iteration (fewer system calls and wake-ups for the peer),
        or as soon as they pass ``_FLUSH_AT`` bytes. Either way messages leave in order."""
        if not (self._feeding or self._flush_scheduled):
            if not self._sent:
                self._sent = True
                self._send_bytes((data + "\n").encode())
                return
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)
        self._out.append(data)
        self._out_size += len(data)
        if self._out_size >= _FLUSH_AT:
            self._flush()

    def _flush(self) -> None:
        self._flush_scheduled = False
        self._sent = False
        if self._out and not self._closed.done():
            self._out.append("")
            data = "\n".join(self._out).encode()
            self._out.clear()
            self._out_size = 0
            try:
                self._send_bytes(data)
            except ConnectionClosed:
                logger.debug("%s: dropped %d bytes: connection closed", self._name, len(data))

    def _send_bytes(self, data: bytes) -> None:
        if self._is_closing():
            self._shutdown("the peer closed the connection")
            raise ConnectionClosed(self._close_reason)
        self._put(data)
        if (
            self._reading_paused is None
            and self._transport is not None
            and self._transport.get_write_buffer_size() > _PAUSE_READING_AT
        ):
            self._pause_reading()

    def _pause_reading(self) -> None:
        """The peer is not reading: read no more from it until what waits has been written."""
        logger.debug("%s: the peer is not reading; reading paused", self._name)
        self._reading_paused = asyncio.Event()
        if isinstance(self._reader, PipeReader):
            self._reader.pause_reading()
        resume = self._loop.create_task(self._resume_reading())
        self._workers.add(resume)
        resume.add_done_callback(self._workers.discard)

    async def _resume_reading(self) -> None:
        try:
            await self._wait_drained()
        except ConnectionClosed:
            pass
        finally:
            paused, self._reading_paused = self._reading_paused, None
            if paused is not None:
                paused.set()
            if isinstance(self._reader, PipeReader):
                self._reader.resume_reading()

    async def _wait_drained(self) -> None:
        """Wait for the writer to drain. One task drains it for every waiter, so that any
        number of waiters cost linear time, even when they are all cancelled at once."""
        if self._closed.done():
            raise ConnectionClosed(self._close_reason)
        if self._drainer is None:
            self._drainer = self._loop.create_task(self._drain_writer())
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._drain_waiters.add(waiter)
        try:
            await waiter
        finally:
            self._drain_waiters.discard(waiter)

    async def _drain_writer(self) -> None:
        error: ConnectionClosed | None = None
        try:
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            self._shutdown(f"connection lost while writing: {exc}")
            error = ConnectionClosed(self._close_reason)
        finally:
            self._drainer = None
            waiters, self._drain_waiters = self._drain_waiters, set()
            for waiter in waiters:
                if not waiter.done():
                    if error is None:
                        waiter.set_result(None)
                    else:
                        waiter.set_exception(error)

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and return the JSON result; raises :class:`RequestError` or :class:`ConnectionClosed`."""
        if self._eof is not None and not self._closed.done():
            raise ConnectionClosed(self._eof)  # no answer could come
        if self._closed.done():
            raise ConnectionClosed(self._close_reason)
        request_id = self._next_id
        self._next_id += 1
        text = _request_text(request_id, method, params)  # ValueError for NaN: never sent
        future: asyncio.Future[Any] = self._loop.create_future()
        self._write_text(text)
        self._pending[request_id] = (future, _in_notification.get())
        try:
            transport = self._transport
            if transport is not None and transport.get_write_buffer_size() >= _FLUSH_AT:
                await self._wait_drained()  # back pressure
            return await future
        except asyncio.CancelledError:
            if self._pending.pop(request_id, None) is not None and not self._closed.done():
                self._cancelled_by_us.add(request_id)
                try:
                    self._write(
                        {
                            "jsonrpc": "2.0",
                            "method": CANCEL_REQUEST,
                            "params": {"requestId": request_id},
                        }
                    )
                except ConnectionClosed:
                    pass
            raise

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification; raises :class:`ConnectionClosed` if the connection is gone."""
        if self._closed.done():
            raise ConnectionClosed(self._close_reason)
        self._write_text(_notification_text(method, params))  # ValueError for NaN: never sent
        transport = self._transport
        if transport is not None and transport.get_write_buffer_size() >= _FLUSH_AT:
            await self._wait_drained()  # back pressure

    def _reply(
        self, request_id: Any, result: Any = None, error: RequestError | None = None
    ) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if error is None:
            message["result"] = result
        else:
            message["error"] = error.to_json()
        try:
            try:
                self._write(message)
            except (ValueError, TypeError, RecursionError):  # data that cannot be sent as JSON
                if error is None:
                    raise
                message["error"] = {"code": error.code, "message": error.message}
                self._write(message)
        except ConnectionClosed:
            logger.debug(
                "%s: dropped the response to %r: connection closed", self._name, request_id
            )

    # -- receiving -------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        assert isinstance(self._reader, asyncio.StreamReader)
        reason = "the peer closed the connection"
        try:
            while True:
                if self._reading_paused is not None:
                    await self._reading_paused.wait()
                chunk = await self._reader.read(_READ_CHUNK)
                if not chunk:
                    break
                self.feed_data(chunk)
        except asyncio.CancelledError:
            self._shutdown(self._close_reason)
            return
        except Exception as exc:
            reason = f"reading failed: {exc}"
            logger.debug("%s: read loop failed", self._name, exc_info=True)
        self.feed_eof(reason)

    def feed_data(self, chunk: bytes) -> None:
        """Take bytes from the peer: split them into lines, handle each complete message. What
        handling them writes goes out together, once the whole chunk is handled."""
        self._sent = False
        self._feeding = True
        try:
            if self._parts or self._oversized or len(chunk) > self._max:
                self._feed_lines(chunk)
                return
            # The common case: no line begun before, none too long. Split in C.
            *lines, rest = chunk.split(b"\n")
            closed = self._closed
            for line in lines:
                if closed.done() or self._eof is not None:
                    return
                self._handle_line(line)
            if rest and not closed.done() and self._eof is None:
                self._parts.append(rest)
                self._size = len(rest)
        finally:
            self._feeding = False
            if self._out:
                self._flush()

    def _feed_lines(self, chunk: bytes) -> None:
        """:meth:`feed_data` when a line is under way or may be too long: line by line."""
        start = 0
        while not self._closed.done() and self._eof is None:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._take(chunk[start:])
                return
            if self._parts or self._oversized or end - start > self._max:
                self._take(chunk[start:end])
                self._end_of_line()
            else:  # the common case: a whole line in this chunk
                self._handle_line(chunk[start:end])
            start = end + 1

    def _take(self, piece: bytes) -> None:
        """Keep ``piece`` of the line being read; of an oversized one, only its two ends."""
        if not piece:
            return
        self._size += len(piece)
        if self._oversized:
            self._tail = (self._tail + piece)[-_HEAD_KEPT:]
        elif self._size > self._max:
            self._oversized = True
            whole = b"".join(self._parts) + piece
            self._parts = [whole[:_HEAD_KEPT]]
            self._tail = whole[-_HEAD_KEPT:]
        else:
            self._parts.append(piece)

    def _end_of_line(self) -> None:
        """A line is complete: forget it as the current one, then handle it."""
        parts, size, oversized, tail = self._parts, self._size, self._oversized, self._tail
        self._parts, self._size, self._oversized, self._tail = [], 0, False, b""
        if oversized:
            text = f"message of {size} bytes exceeds the maximum of {self._max} bytes"
            logger.warning("%s: refused a message: %s", self._name, text)
            self._refuse(parts[0], tail, RequestError.invalid_request({"details": text}))
        else:
            # Keep at most two copies of a big message alive at once: its pieces and the line,
            # the line and its text, the text and its value.
            line = b"".join(parts)
            parts.clear()
            try:
                text = line.decode()
            except UnicodeDecodeError:
                self._handle_line(line)  # answered as not JSON
                return
            del line
            self._handle_line(text)

    def _handle_line(self, line: bytes | str) -> None:
        try:
            if self._fast_decode is None:
                self._on_message(line)
            else:
                self._on_line(line)
        except Exception:  # a bug here must not stop the connection, nor lose the next lines
            logger.exception("%s: a message could not be handled", self._name)

    def feed_eof(self, reason: str = "the peer closed the connection") -> None:
        """The peer stopped writing: the last line (even without its newline) is handled, calls
        still waiting for an answer fail, and the connection closes once every request already
        read has been answered."""
        if self._eof is not None or self._closed.done():
            return
        if self._parts or self._oversized:
            self._end_of_line()
        self._eof = reason
        error = ConnectionClosed(self._with_noise(reason))
        pending, self._pending = self._pending, {}
        for future, _ in pending.values():
            if not future.done():
                future.set_exception(error)
        if not self._incoming:
            self._shutdown(self._with_noise(reason))
            return
        wait_closed = getattr(self._writer, "wait_closed", None)
        if wait_closed is not None:  # if the peer stops reading too, stop answering
            watch = self._loop.create_task(self._watch_writer(wait_closed))
            self._workers.add(watch)
            watch.add_done_callback(self._workers.discard)

    def _with_noise(self, reason: str) -> str:
        """``reason``, and what the peer wrote instead of messages when it wrote nothing else."""
        if self._noise and not self._seen_message:
            return f"{reason}; it sent no message, only text that is not JSON: {self._noise!r}"
        return reason

    async def _watch_writer(self, wait_closed: Callable[[], Any]) -> None:
        try:
            await asyncio.shield(wait_closed())  # cancelled on close: the writer's waiter stays
        except NotImplementedError:  # a writer that cannot tell: answers go on until written
            return
        except (OSError, RuntimeError):
            logger.debug("%s: the writer closed with an error", self._name, exc_info=True)
        self._shutdown("the peer went away")

    def _refuse(self, head: bytes, tail: bytes, error: RequestError) -> None:
        """Answer a message this side cannot take in, known only by its first and last bytes:
        with its id when it can be found, else with id null."""
        members = _top_level_members(head)
        end = _MEMBERS_AT_END.search(tail)
        if end is not None:
            for key, value in _MEMBER.findall(end.group(1)):
                members.setdefault(key, value)
        request_id: Any = None
        raw = members.get(b'"id"')
        if raw is not None:
            try:
                request_id = json.loads(raw)
            except ValueError:
                request_id = None
            if not _valid_id(request_id):
                request_id = None
        if b'"method"' in members or request_id is None:
            self._reply(request_id, error=error)
        elif request_id in self._pending:
            self._resolve(request_id, None, RequestError.internal_error(error.to_json()))
        else:
            logger.warning("%s: dropped a response to unknown id %r", self._name, request_id)

    def _on_line(self, line: bytes | str) -> None:
        message: Any = _UNREAD
        if self._fast_decode is not None and isinstance(line, bytes):
            try:
                message = self._fast_decode(line)
            except ValueError:  # the standard library's reader says what is wrong
                pass
        if message is _UNREAD or not isinstance(message, dict):  # the careful path
            self._on_message(line)
        else:
            self._on_value(message)

    def _on_message(self, line: bytes | str) -> None:
        try:
            message = _decode_json(line if isinstance(line, str) else line.decode())
        except (_Unrepresentable, RecursionError) as exc:  # JSON, but not JSON we can hold
            details = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raw = line.encode() if isinstance(line, str) else line
            self._refuse(raw, raw[-_HEAD_KEPT:], RequestError.parse_error({"details": details}))
            return
        except ValueError as exc:  # not JSON: bad syntax, invalid UTF-8, NaN or Infinity
            raw = line.encode(errors="surrogatepass") if isinstance(line, str) else line
            if raw.strip():
                logger.warning("%s: %s", self._name, _noise_text(raw, self._seen_message))
                if not self._seen_message and not self._noise:
                    self._noise = raw[:200]
                self._reply(None, error=RequestError.parse_error({"details": str(exc)[:200]}))
            return
        self._seen_message = True
        if not isinstance(message, dict):
            what = (
                "batches are not supported"
                if isinstance(message, list)
                else "not a JSON-RPC object"
            )
            self._reply(None, error=RequestError.invalid_request({"details": what}))
            return
        self._on_value(message)

    def _on_value(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        has_id = "id" in message
        request_id = message.get("id")
        if has_id and type(request_id) is not int and not _valid_id(request_id):
            self._reply(
                None,
                error=RequestError.invalid_request(
                    {"details": "id must be a string, a number or null"}
                ),
            )
            return
        if message.get("jsonrpc") != "2.0":
            if method is not None or not has_id:
                self._reply(
                    request_id,
                    error=RequestError.invalid_request({"details": 'jsonrpc must be "2.0"'}),
                )
            else:
                logger.warning(
                    "%s: dropped a response without jsonrpc 2.0 (id %r)", self._name, request_id
                )
            return
        if method is None:
            if has_id and ("result" in message or "error" in message):
                error = None if "result" in message else RequestError.from_json(message["error"])
                self._on_response(request_id, message.get("result"), error)
            else:
                self._reply(
                    request_id, error=RequestError.invalid_request({"details": "no method"})
                )
            return
        params = message.get("params")
        if not isinstance(method, str) or not (params is None or isinstance(params, (dict, list))):
            what = (
                "method must be a string"
                if not isinstance(method, str)
                else "params must be an object"
            )
            # an invalid request object is answered even without an id (with id null)
            self._reply(request_id, error=RequestError.invalid_request({"details": what}))
            return
        if has_id:
            if request_id in self._incoming:
                self._reply(
                    request_id,
                    error=RequestError.invalid_request({"details": "duplicate request id"}),
                )
                return
            self._start_request(request_id, method, params)
        elif method == CANCEL_REQUEST:
            self._on_cancel(params)
        else:
            self._enqueue(method, params)

    def _on_cancel(self, params: Any) -> None:
        target = params.get("requestId") if isinstance(params, dict) else None
        task = self._incoming.get(target) if _valid_id(target) else None
        if task is None:
            logger.debug("%s: cancel for unknown request %r ignored", self._name, target)
            return
        self._cancelled_by_peer.add(target)
        task.cancel()
        task.add_done_callback(functools.partial(self._cancelled_before_start, target))

    def _cancelled_before_start(self, request_id: Any, task: asyncio.Task[None]) -> None:
        """A task cancelled before it ran never enters its ``try``: answer it here."""
        if self._incoming.get(request_id) is not task:
            return  # it ran, and answered
        del self._incoming[request_id]
        self._unstarted -= 1
        self._cancelled_by_peer.discard(request_id)
        if not self._closed.done():
            self._reply(request_id, error=RequestError.request_cancelled())
        if self._eof is not None and not self._incoming:
            self._shutdown(self._eof)

    def _start_request(self, request_id: Any, method: str, params: Any) -> None:
        """Run a request's handler in a task of its own. When the request was read by a
        transport (not inside a task) and nothing read before it still waits to start (a
        notification not yet handled, a request's task not yet run), the task starts at once: a
        handler that finishes without waiting answers within the chunk that brought its request,
        and no message overtakes one that arrived before it."""
        eager = self._eager
        if (
            eager is not None
            and not self._unfinished
            and not self._unstarted
            and _current_task(self._loop) is None  # read by a transport, not by a task
        ):
            eager(self._run_request(request_id, method, params, False), self._loop)
            return
        self._unstarted += 1
        coroutine = self._run_request(request_id, method, params, True)
        self._incoming[request_id] = self._loop.create_task(coroutine)

    async def _run_request(self, request_id: Any, method: str, params: Any, queued: bool) -> None:
        if queued:
            self._unstarted -= 1
        else:  # started at once: its task is known only now
            task = _current_task(self._loop)
            if task is not None:
                self._incoming[request_id] = task
        try:
            result = await self._dispatcher.handle_request(method, params)
            if self._closed.done():
                raise ConnectionClosed(self._close_reason)
            self._write_text(_result_text(request_id, result))
        except RequestError as exc:
            self._reply(request_id, error=exc)
        except asyncio.CancelledError:
            if request_id in self._cancelled_by_peer and not self._closed.done():
                self._reply(request_id, error=RequestError.request_cancelled())
            else:
                raise
        except ConnectionClosed as exc:
            if self._closed.done():
                logger.debug("%s: no response to %r: connection closed", self._name, request_id)
            else:  # the handler's own call to the peer failed: the peer stopped writing
                self._reply(request_id, error=RequestError.internal_error({"details": str(exc)}))
        except Exception as exc:
            logger.exception("%s: handler for %s failed", self._name, method)
            self._reply(
                request_id,
                error=RequestError.internal_error({"details": str(exc) or type(exc).__name__}),
            )
        finally:
            self._incoming.pop(request_id, None)
            self._cancelled_by_peer.discard(request_id)
            if self._eof is not None and not self._incoming:
                self._shutdown(self._eof)  # every request read before the end is answered
        transport = self._transport
        if transport is not None and transport.get_write_buffer_size() >= _FLUSH_AT:
            try:
                await self._wait_drained()  # back pressure
            except ConnectionClosed:
                pass

    # -- notifications, in order per session ---------------------------------------------------

    def _enqueue(self, method: str, params: Any) -> None:
        seq = self._seq
        self._seq += 1
        self._unfinished[seq] = None
        key = params.get("sessionId") if isinstance(params, dict) else None
        if not isinstance(key, str):
            key = None
        queue = self._queues.get(key)
        if queue is not None:
            queue.append((seq, method, params))
            return
        self._queues[key] = collections.deque([(seq, method, params)])
        worker = self._loop.create_task(self._work(key))
        self._workers.add(worker)
        worker.add_done_callback(self._workers.discard)

    async def _work(self, key: Any) -> None:
        _in_notification.set(True)
        queue = self._queues[key]
        try:
            while queue:
                seq, method, params = queue[0]
                try:
                    await self._dispatcher.handle_notification(method, params)
                except Exception:
                    logger.exception("%s: notification handler for %s failed", self._name, method)
                finally:
                    queue.popleft()
                    self._finished(seq)
        finally:
            del self._queues[key]

    def _finished(self, seq: int) -> None:
        del self._unfinished[seq]
        if not self._held:
            return
        first = next(iter(self._unfinished), self._seq)
        while self._held and self._held[0][0] <= first:
            _, future, result, error = self._held.popleft()
            _settle(future, result, error)

    # -- responses -----------------------------------------------------------------------------

    def _on_response(self, request_id: Any, result: Any, error: RequestError | None) -> None:
        entry = self._pending.pop(request_id, None)
        if entry is not None:
            future, exempt = entry
            if exempt or not self._unfinished:
                _settle(future, result, error)
            else:  # hold it until every notification that arrived before it has been handled
                self._held.append((self._seq, future, result, error))
            return
        if request_id in self._cancelled_by_us:
            self._cancelled_by_us.discard(request_id)
            logger.debug(
                "%s: dropped the late response to cancelled request %r", self._name, request_id
            )
        elif request_id is None and error is not None:
            logger.warning(
                "%s: the peer reported an error about no request of ours: %s",
                self._name,
                _error_text(error),
            )
        else:
            logger.warning("%s: dropped a response to unknown id %r", self._name, request_id)

    def _resolve(self, request_id: Any, result: Any, error: RequestError | None) -> None:
        future, exempt = self._pending.pop(request_id)
        if exempt or not self._unfinished:
            _settle(future, result, error)
        else:
            # Hold it until every notification that arrived before it has been handled.
            self._held.append((self._seq, future, result, error))


_quoted = json_string  # a str as the encoder writes it
_current_task = asyncio.current_task


def _body(value: Any) -> str:
    """The JSON text of a params or result value: as it is when written already."""
    return value.text if value.__class__ is JsonText else _encode_json(value)


def _result_text(request_id: Any, result: Any) -> str:
    """The JSON text of a response, as :func:`_encode_json` writes its object, envelope first."""
    head = str(request_id) if type(request_id) is int else _encode_json(request_id)
    return '{"jsonrpc":"2.0","id":' + head + ',"result":' + _body(result) + "}"


def _request_text(request_id: int, method: str, params: Any) -> str:
    """The JSON text of a request, as :func:`_encode_json` writes its object, envelope first."""
    head = '{"jsonrpc":"2.0","id":' + str(request_id) + ',"method":' + _quoted(method)
    return head + "}" if params is None else head + ',"params":' + _body(params) + "}"


def _notification_text(method: str, params: Any) -> str:
    """The JSON text of a notification, as :func:`_encode_json` writes its object."""
    head = '{"jsonrpc":"2.0","method":' + _quoted(method)
    return head + "}" if params is None else head + ',"params":' + _body(params) + "}"


_eager_task: Callable[[Coroutine[Any, Any, None], Any], asyncio.Task[None]] | None = None
if sys.version_info >= (3, 12):

    def _task_started_at_once(
        coroutine: Coroutine[Any, Any, None], loop: Any
    ) -> asyncio.Task[None]:
        """A task that runs at once, until its coroutine first waits."""
        return asyncio.Task(coroutine, loop=loop, eager_start=True)

    _eager_task = _task_started_at_once

else:

    class _TaskStartedAtOnce(asyncio.tasks._PyTask):  # type: ignore[name-defined, misc]
        """What 3.12's ``eager_start`` does, for 3.10 and 3.11: asyncio's own (Python) task,
        whose first step runs at once instead of on the loop's next iteration. Its fields are
        those ``Task.__init__`` sets on these (frozen) versions; only its scheduling differs."""

        def __init__(self, coroutine: Coroutine[Any, Any, None], loop: Any) -> None:
            asyncio.futures._PyFuture.__init__(self, loop=loop)  # type: ignore[attr-defined]
            self._name = "acp-request"
            self._num_cancels_requested = 0
            self._must_cancel = False
            self._fut_waiter = None
            self._coro = coroutine
            self._context = contextvars.copy_context()
            self._context.run(self._Task__step)
            if not self.done():
                asyncio.tasks._register_task(self)

    _eager_task = _TaskStartedAtOnce


def _noise_text(line: bytes, seen_message: bool) -> str:
    """What a line that is not JSON is: start-up output before the first message, or garbage."""
    shown = line[:200] + (b"..." if len(line) > 200 else b"")
    when = "between messages" if seen_message else "before its first message"
    return f"the peer wrote {len(line)} bytes that are not JSON {when} (a stray print?): {shown!r}"


def _error_text(error: RequestError) -> str:
    return f"{error.code} {error.message}" + (f" ({error.data})" if error.data is not None else "")


def _settle(future: asyncio.Future[Any], result: Any, error: RequestError | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


def _valid_id(value: Any) -> bool:
    """A JSON-RPC id: a string, a finite number (not a boolean) or null."""
    if isinstance(value, float):
        return math.isfinite(value)
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


# -- reading JSON strictly, and finding the id of a message that cannot be read ------------------


class _Unrepresentable(ValueError):
    """Valid JSON that Python cannot hold as it is: a number beyond the float range."""


class _NotJson(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``, which JSON does not have."""


def _no_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not JSON")


_UNREAD = object()
_DIGITS = b"0123456789"
_LONG_NUMBER = re.compile(rb"\d{19}")


def _orjson_reader() -> Callable[[bytes], Any]:
    """orjson's ``loads`` where it reads what the standard library reads (``ValueError`` else)."""
    try:
        import orjson  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise ImportError("json_backend='orjson' needs orjson: pip install orjson") from None
    loads: Callable[[bytes], Any] = orjson.loads

    def read(line: bytes) -> Any:
        # orjson reads an integer beyond 64 bits as a float: such lines go to the standard library
        if len(line) - len(line.translate(None, _DIGITS)) >= 19 and _LONG_NUMBER.search(line):
            raise ValueError("a long number")
        return loads(line)

    return read


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Unrepresentable(f"the number {text[:40]} is beyond the float range")
    return value


def _decode_json(text: str) -> Any:
    try:
        try:
            value, end = _scan_once(text, 0)  # the C scanner straight away: the common case
        except StopIteration:
            end = -1
        if end == len(text):
            return value
        return _decoder.decode(text)  # white space around it, or not JSON: the full story
    except (json.JSONDecodeError, _NotJson, _Unrepresentable):
        raise
    except ValueError as exc:  # from int(): more digits than Python converts
        raise _Unrepresentable(str(exc)) from None


_decoder = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)
_scan_once: Callable[[str, int], tuple[Any, int]] = getattr(_decoder, "scan_once")  # noqa: B009

_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_SCALAR = rb"(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|" + _STRING + rb"|null|true|false)"
_STRING_AT = re.compile(_STRING)
_VALUE_AT = re.compile(rb"\s*:\s*" + _SCALAR)
_NEXT_AT_TOP = re.compile(rb'["\[\]{}]')
_NEXT_INSIDE = re.compile(rb'["\]}]')
#: A key with a scalar value, inside a run of them.
_MEMBER = re.compile(rb"(" + _STRING + rb")\s*:\s*" + _SCALAR)
#: The scalar members that end a JSON object: the last bytes of ``..., "id": 7}``.
_MEMBERS_AT_END = re.compile(rb"((?:[,{]\s*" + _STRING + rb"\s*:\s*" + _SCALAR + rb"\s*)+)\}\s*\Z")


def _top_level_members(data: bytes) -> dict[bytes, bytes]:
    """The scalar members of the JSON object that ``data`` starts with (as far as it goes), raw
    key -> raw value; nested values are skipped without being parsed."""
    found: dict[bytes, bytes] = {}
    start = re.match(rb"\s*\{", data)
    if start is None:
        return found
    pos, depth = start.end(), 1
    while True:
        if depth == 1:
            token = _NEXT_AT_TOP.search(data, pos)
            if token is None:
                return found
            at = token.start()
            char = data[at : at + 1]
            if char == b'"':
                key = _STRING_AT.match(data, at)
                if key is None:
                    return found
                value = _VALUE_AT.match(data, key.end())
                if value is not None:
                    found[key.group()] = value.group(1)
                pos = key.end() if value is None else value.end()
                continue
            if char == b"}" or char == b"]":
                return found
            depth += 1
            pos = at + 1
        else:
            token = _NEXT_INSIDE.search(data, pos)
            if token is None:
                return found
            at = token.start()
            depth += data.count(b"[", pos, at) + data.count(b"{", pos, at)
            if data[at : at + 1] == b'"':
                string = _STRING_AT.match(data, at)
                if string is None:
                    return found
                pos = string.end()
            else:
                depth -= 1
                pos = at + 1


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


# -- the typed layer's plumbing: routes, codec, proxies, connections, streams --------------------


class Codec(NamedTuple):
    """How JSON becomes typed values and back (the generated models' ``decode`` / ``encode``)."""

    decode: Callable[[Any, Any], Any]
    encode: Callable[[Any], Any]
    error: type[Exception]  # raised by ``decode``; has ``.path``, a JSON pointer
    #: A value's wire JSON text, the same as ``encode``'s JSON but written faster; None: through
    #: ``encode``.
    encode_text: Callable[[Any], str] | None = None

    def writer(self) -> Callable[[Any], JsonText]:
        """What writes a typed value for a connection to send as it is."""
        encode_text = self.encode_text
        if encode_text is None:
            encode = self.encode
            return lambda value: JsonText(_encode_json(encode(value)))
        return lambda value: JsonText(encode_text(value))


class Route(NamedTuple):
    """One method a side handles: its wire name, the handler's attribute name and its params type.

    A side may handle one wire name both as a request and as a notification (two routes)."""

    method: str
    handler: str
    params_type: Any
    is_request: bool


class TypedDispatcher:
    """Decodes params, calls the handler object's method, encodes its result."""

    def __init__(
        self, target: Any, routes: Collection[Route], codec: Codec, name: str = "acp"
    ) -> None:
        self._requests = {
            r.method: (getattr(target, r.handler), r.params_type) for r in routes if r.is_request
        }
        self._notifications = {
            r.method: (getattr(target, r.handler), r.params_type)
            for r in routes
            if not r.is_request
        }
        self._ext_method = target.ext_method
        self._ext_notification = target.ext_notification
        self._codec = codec
        self._as_text = codec.writer()
        self._name = name

    def _decode(self, method: str, params_type: Any, params: Any) -> Any:
        try:
            return self._codec.decode(params_type, params)
        except self._codec.error as exc:
            path = getattr(exc, "path", "")
            raise RequestError.invalid_params(
                {"method": method, "path": path, "message": str(exc)}
            ) from exc

    async def handle_request(self, method: str, params: Any) -> Any:
        entry = self._requests.get(method)
        if entry is None:
            if method.startswith("_"):
                return await self._ext_method(method, {} if params is None else params)
            raise RequestError.method_not_found(method)
        handler, params_type = entry
        result = await handler(self._decode(method, params_type, params))
        return {} if result is None else self._as_text(result)

    async def handle_notification(self, method: str, params: Any) -> None:
        entry = self._notifications.get(method)
        if entry is None:
            if method.startswith("_"):
                await self._ext_notification(method, {} if params is None else params)
            else:
                logger.debug("%s: ignored notification %s: no handler", self._name, method)
            return
        handler, params_type = entry
        try:
            value = self._decode(method, params_type, params)
        except RequestError as exc:
            logger.warning("%s: dropped notification %s: %s", self._name, method, exc.data)
            return
        await handler(value)


def log_unhandled(method: str) -> None:
    """What a handler base does with a notification nobody overrode."""
    logger.debug("ignored notification %s: no handler", method)


class Proxy:
    """Calls the peer's methods over a connection; subclasses add one typed method per method."""

    def __init__(self, connection: Connection, codec: Codec) -> None:
        self._connection = connection
        self._codec = codec
        self._as_text = codec.writer()

    def _request(self, method: str, params: Any) -> Coroutine[Any, Any, Any]:
        # the connection's coroutine itself, awaited by the caller: one coroutine less per call
        return self._connection.request(method, self._as_text(params))

    def _notify(self, method: str, params: Any) -> Coroutine[Any, Any, None]:
        return self._connection.notify(method, self._as_text(params))

    async def ext_method(self, method: str, params: dict[str, Any] | list[Any]) -> Any:
        """Call an extension method (its wire name starts with ``_``); returns the JSON result."""
        _check_extension(method)
        return await self._connection.request(method, params)

    async def ext_notification(self, method: str, params: dict[str, Any] | list[Any]) -> None:
        """Send an extension notification (its wire name starts with ``_``)."""
        _check_extension(method)
        await self._connection.notify(method, params)


def params_of(
    params_type: Callable[..., Any], args: tuple[Any, ...], fields: dict[str, Any]
) -> Any:
    """A typed proxy call's params object: the one given (``args``), else one built from its keywords."""
    if not args:
        return params_type(**fields)
    if len(args) > 1 or fields:
        name = getattr(params_type, "__name__", "params object")
        raise TypeError(f"pass one {name}, or its fields as keywords, not both")
    return args[0]


def _check_extension(method: str) -> None:
    if not method.startswith("_"):
        raise ValueError(f"extension method names start with '_', got {method!r}")


class PeerConnection:
    """What the typed connections share: lifetime and the JSON-RPC connection underneath."""

    process: asyncio.subprocess.Process | None = (
        None  # the peer's process, when this side started it
    )

    def __init__(self, rpc: Connection) -> None:
        self.rpc = rpc

    @property
    def is_closed(self) -> bool:
        return self.rpc.is_closed

    async def close(self) -> None:
        await self.rpc.close()

    async def wait_closed(self) -> None:
        await self.rpc.wait_closed()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


class _WriteProtocol(asyncio.streams.FlowControlMixin):
    """The protocol of a pipe written through a :class:`asyncio.StreamWriter`: flow control, and
    ``writer.wait_closed()`` (which waits until everything written has gone out)."""

    def __init__(self) -> None:
        super().__init__()
        self._gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self._gone.done():
            self._gone.set_result(None)

    def _get_close_waiter(self, stream: object) -> asyncio.Future[None]:
        return asyncio.shield(self._gone)  # a waiter cancelled must not cancel the others


async def stdio_streams() -> tuple[PipeReader, MessageWriter]:
    """This process's stdin and stdout as the wire.

    The wire keeps a private copy of the stdout file descriptor, and file descriptor 1 is pointed
    at stderr, so a stray ``print`` can never corrupt a message.
    """
    loop = asyncio.get_running_loop()
    sys.stdout.flush()
    wire = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    reader = PipeReader()
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    try:
        await loop.connect_read_pipe(lambda: reader, stdin)
    except ValueError:  # a regular file: read it in a thread
        _feed_from_thread(loop, reader, stdin)
    writer: MessageWriter
    try:
        transport, protocol = await loop.connect_write_pipe(_WriteProtocol, wire)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    except ValueError:  # a regular file: write it directly
        writer = _FileWriter(wire)
    return reader, writer


async def spawn(
    command: str,
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: int | None = None,
) -> tuple[asyncio.subprocess.Process, ProcessReader, asyncio.StreamWriter]:
    """Start ``command`` with its stdin and stdout connected to the returned reader and writer.

    With ``stderr=None`` the child's stderr is passed through to ours line by line, and its last
    lines are kept: when the child goes away, the reason every pending call fails with names its
    exit status and those lines (see :class:`ProcessReader`).
    """
    loop = asyncio.get_running_loop()
    child_stdin, to_child = os.pipe()
    from_child, child_stdout = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            stdin=child_stdin,
            stdout=child_stdout,
            stderr=asyncio.subprocess.PIPE if stderr is None else stderr,
            cwd=cwd,
            env=env,
        )
    except BaseException:
        os.close(to_child)
        os.close(from_child)
        raise
    finally:
        os.close(child_stdin)
        os.close(child_stdout)
    reader = ProcessReader(process)
    await loop.connect_read_pipe(lambda: reader, os.fdopen(from_child, "rb", buffering=0))
    transport, protocol = await loop.connect_write_pipe(
        _WriteProtocol, os.fdopen(to_child, "wb", buffering=0)
    )
    return process, reader, asyncio.StreamWriter(transport, protocol, None, loop)


class ProcessReader(PipeReader):
    """Reads a child process's stdout; when it ends, says how the child went away.

    The reason pending calls fail with names the exit status (waiting up to ``grace`` seconds for
    the child to exit) and the last lines it wrote to a piped stderr, which is passed through.
    """

    TAIL_LINES = 10

    def __init__(self, process: asyncio.subprocess.Process, grace: float = 2.0) -> None:
        super().__init__()
        self.process = process
        self.grace = grace
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=self.TAIL_LINES)
        self._stderr_done: asyncio.Future[None] | None = None
        self._report_task: asyncio.Future[None] | None = None
        if process.stderr is not None:
            self._stderr_done = asyncio.ensure_future(self._pass_stderr(process.stderr))

    async def _pass_stderr(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self.stderr_tail.append(line.decode(errors="replace").rstrip("\r\n"))
            out = getattr(sys.stderr, "buffer", None)
            if out is not None:
                out.write(line)
            else:
                sys.stderr.write(line.decode(errors="replace"))
            sys.stderr.flush()

    def _lost(self, reason: str) -> None:
        if self._report_task is None:
            self._report_task = asyncio.ensure_future(self._report(reason))

    async def finished(self) -> None:
        """Wait until the child's stderr is passed through and its end is reported."""
        for task in (self._stderr_done, self._report_task):
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)

    async def _report(self, reason: str) -> None:
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self.process.wait())]
        if self._stderr_done is not None:
            waits.append(self._stderr_done)
        await asyncio.wait(waits, timeout=self.grace)
        PipeReader._lost(
            self, describe_exit(reason, self.process.returncode, tuple(self.stderr_tail))
        )


def describe_exit(reason: str, returncode: int | None, stderr_tail: tuple[str, ...]) -> str:
    """``reason`` with how the peer process ended: its exit status and the last lines of its stderr."""
    if returncode is None:
        text = f"{reason} (the process is still running)"
    elif returncode < 0:
        text = f"{reason}: the process was killed by signal {-returncode}"
    else:
        text = f"{reason}: the process exited with status {returncode}"
    if stderr_tail:
        text += "; the last lines of its stderr:\n" + "\n".join(f"  {line}" for line in stderr_tail)
    return text


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: PipeReader, source: Any) -> None:
    def pump() -> None:
        while True:
            data = source.read(_READ_CHUNK)
            if not data:
                loop.call_soon_threadsafe(reader.eof_received)
                return
            loop.call_soon_threadsafe(reader.data_received, data)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


class _FileWriter:
    def __init__(self, file: Any) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        self._file.write(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self._file.close()

    def is_closing(self) -> bool:
        return bool(self._file.closed)


async def stop_process(process: asyncio.subprocess.Process, grace: float) -> None:
    """Wait for ``process`` to exit after its stdin closed; terminate, then kill, if it does not."""
    waiter = asyncio.ensure_future(process.wait())
    for action in (None, process.terminate, process.kill):
        if action is not None:
            try:
                action()
            except ProcessLookupError:
                break
        done, _ = await asyncio.wait({waiter}, timeout=grace)
        if done:
            return
    await waiter
