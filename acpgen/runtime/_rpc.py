"""JSON-RPC 2.0 over newline-delimited JSON: the connection core, independent of the schema.

A :class:`Connection` reads messages from an asyncio stream, hands requests and notifications to
a :class:`Dispatcher` (the typed layer decodes params and calls handlers), and sends requests and
notifications of its own. Wire rules it keeps:

* every incoming request runs as its own task, so many can be in flight at once;
* notifications that name the same ``sessionId`` are handled one after another, in arrival order;
* a response is released to its caller only after every notification that arrived before it has
  been handled, so a prompt's result never overtakes the updates sent before it;
* invalid JSON answers -32700, a message that is not a JSON-RPC 2.0 object (or a batch) -32600,
  a message above ``max_message_size`` bytes a -32600 refusal; the connection keeps serving;
* ``$/cancel_request`` cancels the named request's task, which is answered with -32800;
* when the peer goes away every pending call fails at once with :class:`ConnectionClosed`.

Nothing here writes to stdout except through the writer it is given; logs go to ``logging``.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any, NamedTuple, Protocol

__all__ = [
    "CANCEL_REQUEST",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "Codec",
    "Connection",
    "ConnectionClosed",
    "Dispatcher",
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

#: The largest message accepted by default (bytes, without the newline): 32 MiB.
DEFAULT_MAX_MESSAGE_SIZE = 32 * 1024 * 1024
#: The protocol-level notification that cancels an in-flight request.
CANCEL_REQUEST = "$/cancel_request"

_READ_CHUNK = 1 << 16
_FLUSH_AT = 1 << 16  # bytes of gathered messages written at once, and the back-pressure mark
_encode_json = json.JSONEncoder(separators=(",", ":")).encode
_HEAD_KEPT = 1 << 12  # bytes of an oversized message kept to find its id
_ID_IN_HEAD = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
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
    """

    def __init__(
        self,
        reader: asyncio.StreamReader | PipeReader,
        writer: MessageWriter,
        dispatcher: Dispatcher,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        name: str = "acp",
    ) -> None:
        if max_message_size <= 0:
            raise ValueError("max_message_size must be positive")
        self._reader = reader
        self._writer = writer
        self._dispatcher = dispatcher
        self._max = max_message_size
        self._name = name
        self._next_id = 0
        self._pending: dict[int, tuple[asyncio.Future[Any], bool]] = {}
        self._incoming: dict[Any, asyncio.Task[None]] = {}
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
        self._drain_lock = asyncio.Lock()
        self._loop = asyncio.get_running_loop()
        self._out: list[str] = []  # messages gathered during this loop iteration
        self._out_size = 0
        self._flush_scheduled = False
        self._read_task: asyncio.Task[None] | None = None
        self._parts: list[bytes] = []  # the incomplete line read so far
        self._size = 0
        self._oversized = False
        self._closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._close_reason = "connection closed"

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start reading messages (idempotent)."""
        if isinstance(self._reader, PipeReader):
            self._reader.attach(self)
        elif self._read_task is None:
            self._read_task = asyncio.get_running_loop().create_task(self._read_loop())

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
        """Queue one message. The first message of a loop iteration goes out at once; the ones
        after it are gathered and written together at the end of the iteration (fewer system
        calls and wake-ups for the peer), or as soon as they pass ``_FLUSH_AT`` bytes."""
        if self._closed.done():
            raise ConnectionClosed(self._close_reason)
        data = _encode_json(message)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)
            self._send_bytes(data.encode() + b"\n")
            return
        self._out.append(data)
        self._out_size += len(data)
        if self._out_size >= _FLUSH_AT:
            self._flush()

    def _flush(self) -> None:
        self._flush_scheduled = False
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
        if self._writer.is_closing():
            self._shutdown("the peer closed the connection")
            raise ConnectionClosed(self._close_reason)
        self._writer.write(data)

    async def _drain(self) -> None:
        """Wait while the transport holds more than its high-water mark (back pressure)."""
        transport = getattr(self._writer, "transport", None)
        if transport is None or transport.get_write_buffer_size() < _FLUSH_AT:
            return
        try:
            async with self._drain_lock:
                await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            self._shutdown(f"connection lost while writing: {exc}")
            raise ConnectionClosed(self._close_reason) from exc

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and return the JSON result; raises :class:`RequestError` or :class:`ConnectionClosed`."""
        request_id = self._next_id
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._write(message)
        self._pending[request_id] = (future, _in_notification.get())
        try:
            await self._drain()
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
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)
        await self._drain()

    def _reply(
        self, request_id: Any, result: Any = None, error: RequestError | None = None
    ) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if error is None:
            message["result"] = result
        else:
            message["error"] = error.to_json()
        try:
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
            while chunk := await self._reader.read(_READ_CHUNK):
                self.feed_data(chunk)
        except asyncio.CancelledError:
            reason = self._close_reason
        except Exception as exc:
            reason = f"reading failed: {exc}"
            logger.debug("%s: read loop failed", self._name, exc_info=True)
        self._shutdown(self._with_noise(reason))

    def feed_data(self, chunk: bytes) -> None:
        """Take bytes from the peer: split them into lines, handle each complete message."""
        start = 0
        while not self._closed.done():
            end = chunk.find(b"\n", start)
            if end < 0:
                rest = chunk[start:]
                self._size += len(rest)
                if self._oversized:
                    pass
                elif self._size > self._max:
                    self._oversized = True
                    self._parts = [(b"".join(self._parts) + rest[:_HEAD_KEPT])[:_HEAD_KEPT]]
                elif rest:
                    self._parts.append(rest)
                return
            piece = chunk[start:end]
            self._size += len(piece)
            start = end + 1
            if self._oversized or self._size > self._max:
                head = (
                    b"".join(self._parts)
                    if self._oversized
                    else b"".join(self._parts) + piece[:_HEAD_KEPT]
                )
                self._refuse_oversized(head[:_HEAD_KEPT], self._size)
            elif self._parts:
                self._parts.append(piece)
                self._on_line(b"".join(self._parts))
            else:
                self._on_line(piece)
            self._parts = []
            self._size = 0
            self._oversized = False

    def feed_eof(self, reason: str = "the peer closed the connection") -> None:
        """The peer is gone: close, failing every pending call."""
        self._shutdown(self._with_noise(reason))

    def _with_noise(self, reason: str) -> str:
        """``reason``, and what the peer wrote instead of messages when it wrote nothing else."""
        if self._noise and not self._seen_message:
            return f"{reason}; it sent no message, only text that is not JSON: {self._noise!r}"
        return reason

    def _refuse_oversized(self, head: bytes, size: int) -> None:
        text = f"message of {size} bytes exceeds the maximum of {self._max} bytes"
        logger.warning("%s: refused a message: %s", self._name, text)
        error = RequestError.invalid_request({"details": text})
        params_at = head.find(b'"params"')
        match = _ID_IN_HEAD.search(head if params_at < 0 else head[:params_at])
        request_id: Any = None
        if match is not None:
            try:
                request_id = json.loads(match.group(1))
            except ValueError:
                request_id = None
        if b'"method"' in head or request_id is None:
            self._reply(request_id, error=error)
        elif request_id in self._pending:
            self._resolve(
                request_id,
                None,
                RequestError(-32603, "Internal error", {"details": f"response {text}"}),
            )

    def _on_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError as exc:
            if line.strip():
                logger.warning("%s: %s", self._name, _noise_text(line, self._seen_message))
                if not self._seen_message and not self._noise:
                    self._noise = line[:200]
                self._reply(None, error=RequestError.parse_error({"details": str(exc)}))
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
        method = message.get("method")
        has_id = "id" in message
        request_id = message.get("id")
        if has_id and not _valid_id(request_id):
            self._reply(
                None,
                error=RequestError.invalid_request(
                    {"details": "id must be a string or an integer"}
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
            if has_id:
                self._reply(request_id, error=RequestError.invalid_request({"details": what}))
            else:
                logger.warning("%s: dropped an invalid notification: %s", self._name, what)
            return
        if has_id:
            if request_id in self._incoming:
                self._reply(
                    request_id,
                    error=RequestError.invalid_request({"details": "duplicate request id"}),
                )
                return
            task = asyncio.get_running_loop().create_task(
                self._run_request(request_id, method, params)
            )
            self._incoming[request_id] = task
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

    async def _run_request(self, request_id: Any, method: str, params: Any) -> None:
        try:
            result = await self._dispatcher.handle_request(method, params)
            self._write({"jsonrpc": "2.0", "id": request_id, "result": result})
        except RequestError as exc:
            self._reply(request_id, error=exc)
        except asyncio.CancelledError:
            if request_id in self._cancelled_by_peer and not self._closed.done():
                self._reply(request_id, error=RequestError.request_cancelled())
            else:
                raise
        except ConnectionClosed:
            logger.debug("%s: no response to %r: connection closed", self._name, request_id)
        except Exception as exc:
            logger.exception("%s: handler for %s failed", self._name, method)
            self._reply(
                request_id,
                error=RequestError.internal_error({"details": str(exc) or type(exc).__name__}),
            )
        finally:
            self._incoming.pop(request_id, None)
            self._cancelled_by_peer.discard(request_id)
        try:
            await self._drain()
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
        worker = asyncio.get_running_loop().create_task(self._work(key))
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
        if request_id not in self._pending:
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
            return
        self._resolve(request_id, result, error)

    def _resolve(self, request_id: Any, result: Any, error: RequestError | None) -> None:
        future, exempt = self._pending.pop(request_id)
        if exempt or not self._unfinished:
            _settle(future, result, error)
        else:
            # Hold it until every notification that arrived before it has been handled.
            self._held.append((self._seq, future, result, error))


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
    return (
        (isinstance(value, int) and not isinstance(value, bool))
        or isinstance(value, str)
        or value is None
    )


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
        return {} if result is None else self._codec.encode(result)

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

    async def _request(self, method: str, params: Any) -> Any:
        return await self._connection.request(method, self._codec.encode(params))

    async def _notify(self, method: str, params: Any) -> None:
        await self._connection.notify(method, self._codec.encode(params))

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
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, wire)
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
        asyncio.streams.FlowControlMixin, os.fdopen(to_child, "wb", buffering=0)
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
