"""One JSON-RPC 2.0 connection: its lifecycle, calls and their answers, and the checks every
incoming message passes before it is handled.

A :class:`Connection` reads messages from a wire (see :mod:`._transports`), hands requests and
notifications to a dispatcher (the typed layer decodes params and calls handlers) and sends
requests and notifications of its own. The wire rules it keeps are listed in :mod:`._rpc`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

from ._errors import ConnectionClosed, RequestError
from ._framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    HEAD_KEPT,
    WIRE_LOG,
    FastReader,
    NotJson,
    Unrepresentable,
    decode_json,
    encode_json,
    find_id,
    is_stray_text,
    msgspec_reader,
    noise_text,
    notification_text,
    orjson_reader,
    request_text,
    valid_id,
)
from ._incoming import Batch, Dispatcher, Incoming, in_notification
from ._sender import FLUSH_AT, Sender
from ._tracing import tracing_for
from ._transports import MessageTransport, MessageWriter, PipeReader, Wire, make_wire

__all__ = ["CANCEL_REQUEST", "Connection", "Observer"]

logger = logging.getLogger(WIRE_LOG)

#: The protocol-level notification that cancels an in-flight request.
CANCEL_REQUEST = "$/cancel_request"
_ = NotJson  # what decode_json raises for NaN: a ValueError like any text that is not JSON

#: What :meth:`Connection.observe` calls for each message: ``observer(direction, message,
#: session_id)``, with ``direction`` ``"sent"`` or ``"received"``, ``message`` the JSON-RPC
#: message as parsed JSON (a dict; not to be modified) and ``session_id`` the ACP session it
#: belongs to (its params' ``sessionId``; for a response, its request's, or its result's), or None.
Observer = Callable[[str, dict[str, Any], "str | None"], None]


def _never(line: bytes) -> bool:
    return False


class Connection(Incoming):
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
        readers = {"orjson": [orjson_reader], "msgspec": [msgspec_reader]}
        readers["auto"] = [msgspec_reader, orjson_reader]  # the first importable, else json
        if json_backend not in ("json", *readers):
            raise ValueError(
                "json_backend must be 'json', 'orjson', 'msgspec' or 'auto', "
                f"got {json_backend!r}"
            )
        fast: FastReader | None = None
        for fast_reader in readers.get(json_backend, []):
            try:
                fast = fast_reader()
                break
            except ImportError:  # not installed: "auto" tries the next; else it is an error
                if json_backend != "auto":
                    raise
        # the fast reader's parts, read by message_received without a call in between
        self._fast_loads = None if fast is None else fast.loads
        self._fast_errors: tuple[type[Exception], ...] = () if fast is None else fast.errors
        self._fast_check_from = 0 if fast is None else fast.check_from
        self._fast_suspect = _never if fast is None else fast.suspect
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
        self._observer: Observer | None = None
        self._tracing = tracing_for(tracing)
        self._observed_sessions: dict[tuple[bool, Any], str] = {}  # (sent by us, id) -> session
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

    def observe(self, observer: Observer | None) -> None:
        """Call ``observer(direction, message, session_id)`` (see :data:`Observer`) for every
        message this connection sends, as it is queued, and for every JSON object it reads, before
        it is handled; ``None`` stops. It runs in the connection's own code: it must be quick and
        must not block (log, count, put on a queue); what it raises is logged and ignored. A line
        that is not JSON, or above the size limit, is answered as ever and not observed. Unobserved,
        it costs nothing."""
        self._observer = observer
        self._sender.observe = None if observer is None else self._saw_sent
        if observer is None:
            self._observed_sessions.clear()

    def _saw_sent(self, text: str) -> None:
        message = decode_json(text)
        for entry in message if isinstance(message, list) else [message]:  # a batch: each entry
            self._saw("sent", entry)

    def _saw(self, direction: str, message: dict[str, Any]) -> None:
        observer = self._observer
        if observer is None:
            return
        try:
            observer(direction, message, self._session_of(direction == "sent", message))
        except Exception:  # an observer's bug must not stop the connection
            logger.exception("%s: the observer failed on a message", self._name)

    def _session_of(self, sent: bool, message: dict[str, Any]) -> str | None:
        """The session of an observed message; a request's is kept until its response is seen."""
        request_id = message.get("id")
        if "method" in message:
            params = message.get("params")
            session = params.get("sessionId") if isinstance(params, dict) else None
            if not isinstance(session, str):
                return None
            if "id" in message and valid_id(request_id):
                self._observed_sessions[(sent, request_id)] = session
            return session
        request_session = (
            self._observed_sessions.pop((not sent, request_id), None)
            if valid_id(request_id)
            else None
        )
        result = message.get("result")
        session = result.get("sessionId") if isinstance(result, dict) else None
        return session if isinstance(session, str) else request_session

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

    async def batch(
        self,
        requests: Sequence[tuple[str, Any]],
        *,
        notifications: Sequence[tuple[str, Any]] = (),
    ) -> list[Any]:
        """Send one JSON-RPC batch: ``requests`` as ``(method, params)`` pairs, then
        ``notifications`` the same way, in one array; return each request's answer in the order
        of ``requests``: its JSON result, or the :class:`RequestError` the peer answered it with
        (returned, not raised). Only where the protocol's draft defines batches (``batches``);
        raises :class:`ConnectionClosed` if the connection is gone, and ``ValueError`` for an
        empty batch. A single error with id null while none of the batch's requests is answered
        (a peer that takes no batches answers one so) answers the whole batch: it is raised at
        once. Cancelled, it sends ``$/cancel_request`` for each request not answered."""
        if not self.batches:
            raise ValueError("this protocol's draft defines no JSON-RPC batches")
        if not requests and not notifications:
            raise ValueError("a batch must not be empty")
        if self._eof is not None and not self._closed.done():
            raise ConnectionClosed(self._eof)
        if self._closed.done():
            raise ConnectionClosed(self._sender.reason)
        carry = self._tracing.carry if self._tracing is not None else None
        ids = list(range(self._next_id, self._next_id + len(requests)))
        self._next_id += len(requests)
        texts = [
            request_text(i, method, carry(params) if carry else params)
            for i, (method, params) in zip(ids, requests)
        ]
        texts += [
            notification_text(method, carry(params) if carry else params)
            for method, params in notifications
        ]
        batch_text = "[" + ",".join(texts) + "]"  # ValueError for NaN: never sent
        futures: list[asyncio.Future[Any]] = [self._loop.create_future() for _ in ids]
        self._sender.write_text(batch_text)
        exempt = in_notification.get()
        for request_id, future in zip(ids, futures):
            self._pending[request_id] = (future, exempt)
        self._batches_out.append(ids)
        try:
            if self._sender.buffered() >= FLUSH_AT:
                await self._sender.wait_drained()  # back pressure
            answers = await asyncio.gather(*futures, return_exceptions=True)
        except asyncio.CancelledError:
            for request_id in ids:
                if self._pending.pop(request_id, None) is not None and not self._closed.done():
                    self._cancelled_by_us.add(request_id)
                    try:
                        params = {"requestId": request_id}
                        self._write({"jsonrpc": "2.0", "method": CANCEL_REQUEST, "params": params})
                    except ConnectionClosed:
                        pass
            raise
        finally:
            self._batches_out.remove(ids)
            refused = self._refused_batches.pop(ids[0], None) if ids else None
        if refused is not None:
            raise refused
        for answer in answers:
            if isinstance(answer, BaseException) and not isinstance(answer, RequestError):
                raise answer
        return list(answers)

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

    def _reply_in_batch(
        self, message: dict[str, Any], error: RequestError | None, batch: Batch | None
    ) -> None:
        text: str | None
        try:
            text = encode_json(message)
        except (ValueError, TypeError, RecursionError):  # data that cannot be sent as JSON
            if error is None:
                raise
            message["error"] = {"code": error.code, "message": error.message}
            text = encode_json(message)
        if self._closed.done():
            text = None  # dropped: nothing more is sent
        if batch is not None:
            batch.answered(text)
        elif self._batch is not None and text is not None:
            self._batch.answer(text)

    # -- receiving (what the wire calls) -----------------------------------------------------

    read_started: Callable[[], None]
    read_ended: Callable[[], None]

    def message_received(self, message: bytes | str) -> None:
        try:
            loads = self._fast_loads
            if (
                loads is None
                or message.__class__ is not bytes
                or (len(message) >= self._fast_check_from and self._fast_suspect(message))
            ):
                self._on_message(message)
                return
            try:
                value = loads(message)
            except self._fast_errors:  # the standard library's reader says what is wrong
                self._on_message(message)
                return
            self._on_fast_value(value, message)
        except Exception:  # a bug here must not stop the connection, nor lose the next messages
            logger.exception("%s: a message could not be handled", self._name)

    def lines_received(self, lines: list[bytes]) -> None:
        """Whole lines read at once, in order: :meth:`message_received` for each, with the fast
        path's reading and queueing of a notification written out (no call per line)."""
        loads = self._fast_loads
        if loads is None or self._observer is not None:
            self._each_received(iter(lines))
            return
        check_from, suspect, errors = self._fast_check_from, self._fast_suspect, self._fast_errors
        queues = self._queues
        rest = iter(lines)
        for line in rest:
            try:
                if len(line) >= check_from and suspect(line):
                    self._on_message(line)
                else:
                    try:
                        value = loads(line)
                    except errors:  # the standard library's reader says what is wrong
                        self._on_message(line)
                    else:
                        if value.__class__ is dict:
                            # a notification, as most messages of a stream are: queued, and
                            # nothing else happens (see _enqueue)
                            method = value.get("method")
                            params = value.get("params")
                            if (
                                params.__class__ is dict
                                and method.__class__ is str
                                and "id" not in value
                                and value.get("jsonrpc") == "2.0"
                                and method != CANCEL_REQUEST
                            ):
                                self._seen_message = True
                                key = params.get("sessionId")
                                queue = queues.get(key if key.__class__ is str else None)
                                if queue is None:
                                    self._enqueue(method, params)
                                else:
                                    seq = self._seq
                                    self._seq = seq + 1
                                    queue.append((seq, method, params))
                                continue
                        self._on_fast_value(value, line)
            except Exception:  # a bug here must not stop the connection, nor lose the next
                logger.exception("%s: a message could not be handled", self._name)
            # what was handled may have closed the connection, or set an observer
            if not self.accepting or self._observer is not None:
                self._each_received(rest)
                return

    def _each_received(self, lines: Iterator[bytes]) -> None:
        for line in lines:
            if not self.accepting:
                return
            self.message_received(line)

    def _on_fast_value(self, value: Any, line: bytes) -> None:
        """What the fast path read from ``line``: an object is handled, anything else answered
        by the careful path."""
        if value.__class__ is not dict:  # an array or a scalar: the careful path answers it
            self._on_message(line)
            return
        self._seen_message = True
        self._on_value(value)

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

    def _on_batch(self, entries: list[Any]) -> None:
        """A batch (the draft defines them): each entry handled as if alone, each request at
        once in a task of its own; their answers, and those to invalid entries, in one array."""
        if not entries:
            details = "a batch must not be empty"
            self._reply(None, error=RequestError.invalid_request({"details": details}))
            return
        batch = Batch(self._write_batch)
        self._batch = batch
        try:
            for entry in entries:
                if isinstance(entry, dict):
                    self._on_value(entry)
                else:
                    details = "a batch entry must be a JSON-RPC object"
                    self._reply(None, error=RequestError.invalid_request({"details": details}))
        finally:
            self._batch = None
        batch.answered()  # read: the array is written once its requests are answered

    def _write_batch(self, text: str) -> None:
        if self._closed.done():
            return
        self._sender.write_text(text)

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

    def _refuse_batch(self, error: RequestError) -> bool:
        """An error with id null answers the first batch sent none of whose requests is answered
        yet (JSON-RPC answers a batch it cannot take with one error): each of its calls fails
        with it. False: no batch waits so."""
        for ids in self._batches_out:
            if ids and all(request_id in self._pending for request_id in ids):
                for request_id in ids:
                    future, exempt = self._pending.pop(request_id)
                    self._release(future, exempt, None, error)
                self._refused_batches[ids[0]] = error
                return True
        return False
