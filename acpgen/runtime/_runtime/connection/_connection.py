"""One JSON-RPC 2.0 connection: its lifecycle, calls and their answers, and the checks every
incoming message passes before it is handled. Its other parts are modules of their own: what the
peer sends (:mod:`._incoming`), reading on the fast path (:mod:`._fast_reader`), batches
(:mod:`._batches`) and the observer (:mod:`._observing`).

A :class:`Connection` reads messages from a wire (see :mod:`._transports`), hands requests and
notifications to a dispatcher (the typed layer decodes params and calls handlers) and sends
requests and notifications of its own. The wire rules it keeps are listed in :mod:`._rpc`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..tracing._tracing import tracing_for
from ..transports._transports import (
    MessageTransport,
    MessageWriter,
    PipeReader,
    Wire,
    make_wire,
)
from ..wire._errors import ConnectionClosed, RequestError
from ..wire._framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    HEAD_KEPT,
    WIRE_LOG,
    NotJson,
    Unrepresentable,
    decode_json,
    encode_json,
    find_id,
    is_stray_text,
    noise_text,
    notification_text,
    request_text,
    valid_id,
)
from ._batches import Batches
from ._fast_reader import FastReading
from ._incoming import CANCEL_REQUEST, Batch, Dispatcher, Incoming, in_notification
from ._observing import Observer, Observing
from ._sender import FLUSH_AT, Sender

__all__ = ["CANCEL_REQUEST", "Connection", "Observer"]

logger = logging.getLogger(WIRE_LOG)

_ = NotJson  # what decode_json raises for NaN: a ValueError like any text that is not JSON


class Connection(FastReading, Batches, Observing, Incoming):
    """One JSON-RPC connection over a reader (bytes in) and a writer (bytes out), or over a
    :class:`~._transports.MessageTransport` (``Connection(transport, None, dispatcher)``).

    Call :meth:`start` to begin reading (the typed connections do this for you).
    ``json_backend="msgspec"`` or ``"orjson"`` reads messages with that library (installed
    separately), and with the standard library whenever it refuses one or could read it
    differently; the standard library writes either way, so the wire carries the same bytes.
    ``"auto"`` (the fast path) is the first of msgspec and orjson that is importable, else
    ``"json"``; ``"json"``, the standard library alone, is the default.

    ``tracing``: carry OpenTelemetry's trace context in ``params._meta`` and make spans (see
    :mod:`._tracing`); ``None`` (the default) traces when ``opentelemetry-api`` is importable and
    the environment variable ``ACP_TRACING`` is not ``0``/``false``/``off``/``no``; ``True``
    requires the API. :attr:`tracing` turns it on or off later.

    ``batches``: the protocol's draft defines JSON-RPC batches (the generated ``methods.BATCHES``).
    A batch the peer sends is then handled entry by entry, its requests at once, and answered with
    one array (nothing for notifications alone; ``-32600`` with id null for an invalid entry, one
    ``-32600`` for an empty array), and :meth:`batch` sends one. Without them, a batch gets one
    ``-32600`` ("batches are not supported").
    """

    def __init__(
        self,
        reader: asyncio.StreamReader | PipeReader | MessageTransport | Wire,
        writer: MessageWriter | None,
        dispatcher: Dispatcher,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        name: str = "acp",
        json_backend: str = "json",
        tracing: bool | None = None,
        batches: bool = False,
    ) -> None:
        if max_message_size <= 0:
            raise ValueError("max_message_size must be positive")
        self._init_fast_reader(json_backend)
        self._wire = make_wire(reader, writer)
        self._dispatcher = dispatcher
        self.batches = batches
        self._max = max_message_size
        self._name = name
        self._loop = asyncio.get_running_loop()
        self._next_id = 0
        self._pending: dict[int, tuple[asyncio.Future[Any], bool]] = {}
        self._cancelled_by_us: set[int] = set()  # cancelled calls: late answers dropped quietly
        self._batches_out: list[list[int]] = []  # the request ids of each batch sent, unanswered
        #: a batch's first request id -> the error with id null that answered the whole batch
        self._refused_batches: dict[int, RequestError] = {}
        self._seen_message = False  # a message arrived: later garbage is not start-up output
        self._noise = b""  # the first line that was not JSON, when it came before any message
        self._eof: str | None = None  # why the peer stopped writing, once it has
        self._closed: asyncio.Future[None] = self._loop.create_future()
        #: False once no more messages are taken in (closed, or the peer's input ended)
        self.accepting = True
        self._sender = Sender(self._wire, self._closed, self._shutdown, name)
        self._tracing = tracing_for(tracing)
        self._init_observing()
        self.read_started = self._sender.read_started
        self.read_ended = self._sender.read_ended
        self._init_incoming()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start reading messages (idempotent)."""
        self._wire.start(self, self._max)

    @property
    def is_closed(self) -> bool:
        return self._closed.done()

    async def wait_closed(self) -> None:
        """Wait until the peer goes away or :meth:`close` is called."""
        await asyncio.shield(self._closed)

    async def close(self) -> None:
        """Close the connection: pending calls fail, in-flight handlers are cancelled."""
        self._shutdown("connection closed by this side")
        error = ConnectionClosed(self._sender.reason)
        while self._held:
            _, future, _, _ = self._held.popleft()
            if not future.done():
                future.set_exception(error)
        await self._wire.stop_reading()
        current = asyncio.current_task()
        tasks = [t for t in (*self._incoming.values(), *self._workers) if t is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._sender.flushed(self._peer_ended)

    @property
    def tracing(self) -> bool:
        """Whether this connection carries trace context and makes spans (see ``tracing``)."""
        return self._tracing is not None

    @tracing.setter
    def tracing(self, enabled: bool) -> None:
        self._tracing = tracing_for(enabled)

    def _peer_ended(self) -> bool:
        return self._eof is not None

    def _shutdown(self, reason: str) -> None:
        """Stop talking: calls still waiting for an answer fail, requests being handled are
        cancelled (their answers could not be sent). Notifications already received are still
        handled, and answers already received are still released after them."""
        if self._closed.done():
            return
        self.accepting = False
        self._closed.set_result(None)
        self._sender.close(reason)
        self._observed_sessions.clear()
        error = ConnectionClosed(reason)
        pending, self._pending = self._pending, {}
        for future, _ in pending.values():
            if not future.done():
                future.set_exception(error)
        for task in self._incoming.values():
            task.cancel()

    # -- sending ---------------------------------------------------------------------------

    def _write(self, message: dict[str, Any]) -> None:
        if self._closed.done():
            raise ConnectionClosed(self._sender.reason)
        self._sender.write_text(encode_json(message))  # ValueError for NaN: never sent

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and return the JSON result; raises :class:`RequestError` or :class:`ConnectionClosed`."""
        if self._eof is not None and not self._closed.done():
            raise ConnectionClosed(self._eof)  # no answer could come
        if self._closed.done():
            raise ConnectionClosed(self._sender.reason)
        request_id = self._next_id
        self._next_id += 1
        tracing = self._tracing
        if tracing is not None:
            if tracing.recording():
                return await tracing.call(self._exchange, request_id, method, params)
            params = tracing.carry(params)
        return await self._exchange(request_id, method, params)

    async def _exchange(self, request_id: int, method: str, params: Any) -> Any:
        """Send request ``request_id`` and wait for its answer."""
        text = request_text(request_id, method, params)  # ValueError for NaN: never sent
        future: asyncio.Future[Any] = self._loop.create_future()
        self._sender.write_text(text)
        self._pending[request_id] = (future, in_notification.get())
        try:
            if self._sender.buffered() >= FLUSH_AT:
                await self._sender.wait_drained()  # back pressure
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
            raise ConnectionClosed(self._sender.reason)
        if self._tracing is not None:
            params = self._tracing.carry(params)
        self._sender.write_text(notification_text(method, params))  # ValueError for NaN
        if self._sender.buffered() >= FLUSH_AT:
            await self._sender.wait_drained()  # back pressure

    def _reply(
        self,
        request_id: Any,
        result: Any = None,
        error: RequestError | None = None,
        batch: Batch | None = None,
    ) -> None:
        """Answer a request; ``batch``: the batch it came in (its answer goes in the array). An
        answer while a batch is read (to an invalid entry of it) goes in that batch's array."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if error is None:
            message["result"] = result
        else:
            message["error"] = error.to_json()
        if batch is not None or self._batch is not None:
            self._reply_in_batch(message, error, batch)
            return
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

    # -- receiving (what the wire calls) -----------------------------------------------------

    read_started: Callable[[], None]
    read_ended: Callable[[], None]

    def message_too_large(self, head: bytes, tail: bytes, size: int) -> None:
        text = f"message of {size} bytes exceeds the maximum of {self._max} bytes"
        logger.warning("%s: refused a message: %s", self._name, text)
        self._refuse(head, tail, RequestError.invalid_request({"details": text}))

    def input_ended(self, reason: str = "the peer closed the connection") -> None:
        """The peer stopped writing: calls still waiting for an answer fail, and the connection
        closes once every request already read has been answered."""
        if self._eof is not None or self._closed.done():
            return
        self._eof = reason
        self.accepting = False
        error = ConnectionClosed(self._with_noise(reason))
        pending, self._pending = self._pending, {}
        for future, _ in pending.values():
            if not future.done():
                future.set_exception(error)
        if not self._incoming:
            self._shutdown(self._with_noise(reason))
            return
        wait_closed = self._wire.wait_closed
        if wait_closed is not None:  # if the peer stops reading too, stop answering
            self._background(self._watch_writer(wait_closed))

    def _with_noise(self, reason: str) -> str:
        """``reason``, and what the peer wrote instead of messages when it wrote nothing else."""
        if self._noise and not self._seen_message:
            return f"{reason}; it sent no message, only text that is not JSON: {self._noise!r}"
        return reason

    async def _watch_writer(self, wait_closed: Callable[[], Awaitable[None]]) -> None:
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
        request_id, is_request = find_id(head, tail)
        if is_request or request_id is None:
            self._reply(request_id, error=error)
        elif request_id in self._pending:
            future, exempt = self._pending.pop(request_id)
            self._release(future, exempt, None, RequestError.internal_error(error.to_json()))
        else:
            logger.warning("%s: dropped a response to unknown id %r", self._name, request_id)

    def _on_message(self, line: bytes | str) -> None:
        try:
            message = decode_json(line if isinstance(line, str) else line.decode())
        except (Unrepresentable, RecursionError) as exc:  # JSON, but not JSON we can hold
            details = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raw = line.encode() if isinstance(line, str) else line
            self._refuse(raw, raw[-HEAD_KEPT:], RequestError.parse_error({"details": details}))
            return
        except ValueError as exc:  # not JSON: bad syntax, invalid UTF-8, NaN or Infinity
            raw = line.encode(errors="surrogatepass") if isinstance(line, str) else line
            if raw.strip():
                logger.warning("%s: %s", self._name, noise_text(raw, self._seen_message))
                if not self._seen_message and not self._noise:
                    self._noise = raw[:200]
                if not is_stray_text(raw):  # a broken message, not a stray print: answered
                    self._reply(None, error=RequestError.parse_error({"details": str(exc)[:200]}))
            return
        self._seen_message = True
        if isinstance(message, list) and self.batches:
            self._on_batch(message)
            return
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
        if self._observer is not None:
            self._saw("received", message)
        method = message.get("method")
        if method.__class__ is str and "id" not in message and message.get("jsonrpc") == "2.0":
            params = message.get("params")  # a notification, as most messages of a stream are
            if params.__class__ is dict and method != CANCEL_REQUEST:
                self._enqueue(method, params)
                return
        self._on_envelope(message)

    def _on_envelope(self, message: dict[str, Any]) -> None:
        """A message that is not a notification with object params: every check of the envelope."""
        method = message.get("method")
        has_id = "id" in message
        request_id = message.get("id")
        if has_id and type(request_id) is not int and not valid_id(request_id):
            details = "id must be a string, a number or null"
            self._reply(None, error=RequestError.invalid_request({"details": details}))
            return
        if message.get("jsonrpc") != "2.0":
            if method is not None or not has_id:
                details = 'jsonrpc must be "2.0"'
                self._reply(request_id, error=RequestError.invalid_request({"details": details}))
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
                details = "duplicate request id"
                self._reply(request_id, error=RequestError.invalid_request({"details": details}))
                return
            self._start_request(request_id, method, params)
        elif method == CANCEL_REQUEST:
            self._on_cancel(params)
        else:
            self._enqueue(method, params)

    def _on_response(self, request_id: Any, result: Any, error: RequestError | None) -> None:
        entry = self._pending.pop(request_id, None)
        if entry is not None:
            self._release(entry[0], entry[1], result, error)
            return
        if request_id in self._cancelled_by_us:
            self._cancelled_by_us.discard(request_id)
            logger.debug(
                "%s: dropped the late response to cancelled request %r", self._name, request_id
            )
        elif request_id is None and error is not None and self._refuse_batch(error):
            return
        elif request_id is None and error is not None:
            data = f" ({error.data})" if error.data is not None else ""
            logger.warning(
                "%s: the peer reported an error about no request of ours: %s %s%s",
                self._name,
                error.code,
                error.message,
                data,
            )
        else:
            logger.warning("%s: dropped a response to unknown id %r", self._name, request_id)
