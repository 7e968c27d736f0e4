"""What a connection does with what the peer sends it: each request in a task of its own
(cancellable by ``$/cancel_request``), notifications handled in order per session, and answers
held until the notifications that arrived before them are handled. The requests of a batch run
the same way, at once, and their answers are gathered into one array (:class:`Batch`).

:class:`Incoming` is the part of :class:`~._connection.Connection` that does it; the connection
supplies the dispatcher, the replies and the shutdown.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import functools
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from ..tracing._tracing import Tracing
from ..wire._errors import ConnectionClosed, RequestError
from ..wire._framing import WIRE_LOG, result_text, valid_id
from ._sender import FLUSH_AT, Sender

__all__ = ["CANCEL_REQUEST", "Batch", "Dispatcher", "Incoming"]

logger = logging.getLogger(WIRE_LOG)

#: The protocol-level notification that cancels an in-flight request.
CANCEL_REQUEST = "$/cancel_request"
#: True inside a notification's handler: its calls to the peer are answered without waiting for
#: the notifications before them (they are being handled).
in_notification: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "acp_in_notification", default=False
)
_current_task = asyncio.current_task
#: How many methods' notification handlers a connection keeps looked up.
_HANDLERS_KEPT = 64


class Dispatcher(Protocol):
    """What a :class:`Connection` calls for incoming messages (the typed layer implements it)."""

    async def handle_request(self, method: str, params: Any) -> Any:
        """Return the JSON result, or raise :class:`RequestError`."""
        ...

    async def handle_notification(self, method: str, params: Any) -> None: ...

    # A dispatcher may also have ``notification_handler(method)``: ``handle_notification(method,
    # params)`` as a function of the params alone, which the connection looks up once per method.


Start = Callable[[Coroutine[Any, Any, None], Any], "asyncio.Task[None]"]

#: How a request read by a transport starts at once: 3.12's public ``eager_start``. Before 3.12
#: there is none, and the request's task starts on the loop's next iteration like any other.
eager_task: Start | None = None
if sys.version_info >= (3, 12):

    def _task_started_at_once(
        coroutine: Coroutine[Any, Any, None], loop: Any
    ) -> asyncio.Task[None]:
        """An ordinary task that runs at once, until its coroutine first waits."""
        return asyncio.Task(coroutine, loop=loop, eager_start=True)

    eager_task = _task_started_at_once


class Batch:
    """The answers to one batch the peer sent, gathered into the one array that answers it: it is
    written once every request of the batch is answered (a batch of notifications alone is never
    answered). Entries are handled as they would be alone, each request in a task of its own."""

    __slots__ = ("_answers", "_waiting", "_write")

    def __init__(self, write: Callable[[str], None]) -> None:
        self._answers: list[str] = []
        self._waiting = 1  # the requests not answered yet, and the batch while it is read
        self._write = write

    def expect(self) -> None:
        """A request of the batch started: the array waits for its answer."""
        self._waiting += 1

    def answer(self, text: str) -> None:
        """The JSON text of an answer that goes in the array (a request's, an invalid entry's)."""
        self._answers.append(text)

    def answered(self, text: str | None = None) -> None:
        """One request of the batch is answered (``text``; None: no answer can be sent), or,
        called once with nothing, the batch is read: the array is written when nothing waits."""
        if text is not None:
            self._answers.append(text)
        self._waiting -= 1
        if not self._waiting and self._answers:
            self._write("[" + ",".join(self._answers) + "]")


class Incoming:
    """Request tasks, cancellation and per-session order (see the module's docstring)."""

    _loop: asyncio.AbstractEventLoop
    _dispatcher: Dispatcher
    _sender: Sender
    _tracing: Tracing | None
    _closed: asyncio.Future[None]
    _eof: str | None
    _name: str

    def _reply(
        self,
        request_id: Any,
        result: Any = None,
        error: RequestError | None = None,
        batch: Batch | None = None,
    ) -> None:
        raise NotImplementedError

    def _shutdown(self, reason: str) -> None:
        raise NotImplementedError

    def _init_incoming(self) -> None:
        self._incoming: dict[Any, asyncio.Task[Any]] = {}
        self._unstarted = 0  # request tasks made but not yet run
        self._cancelled_by_peer: set[Any] = set()
        #: The notifications not yet handled, by session (key None: no session), each queue in
        #: the order they arrived, the one being handled first (seq: the order of arrival).
        self._queues: dict[Any, collections.deque[tuple[int, str, Any]]] = {}
        self._workers: set[asyncio.Task[None]] = set()
        self._seq = 0  # notifications received so far
        #: method -> what handles its notifications (see Dispatcher), looked up once
        self._notification_handlers: dict[str, Callable[[Any], Awaitable[None]]] = {}
        self._held: collections.deque[tuple[int, asyncio.Future[Any], Any, RequestError | None]] = (
            collections.deque()
        )
        self._eager = eager_task if self._loop.get_task_factory() is None else None
        self._batch: Batch | None = None  # the batch being read, while it is read
        self._batch_of: dict[Any, Batch] = {}  # a request of a batch, not yet answered -> it

    def _background(self, coroutine: Coroutine[Any, Any, None]) -> None:
        """Run ``coroutine`` in a task the connection cancels when it closes."""
        task = self._loop.create_task(coroutine)
        self._workers.add(task)
        task.add_done_callback(self._workers.discard)

    # -- requests ------------------------------------------------------------------------------

    def _on_cancel(self, params: Any) -> None:
        target = params.get("requestId") if isinstance(params, dict) else None
        task = self._incoming.get(target) if valid_id(target) else None
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
        batch = self._batch_of.pop(request_id, None) if self._batch_of else None
        if not self._closed.done():
            self._reply(request_id, error=RequestError.request_cancelled(), batch=batch)
        if self._eof is not None and not self._incoming:
            self._shutdown(self._eof)

    def _start_request(self, request_id: Any, method: str, params: Any) -> None:
        """Run a request's handler in a task of its own. On 3.12+, when the request was read by
        a transport (not inside a task) and nothing read before it still waits to start (a
        notification not yet handled, a request's task not yet run), the task starts at once: a
        handler that finishes without waiting answers within the read that brought its request,
        and no message overtakes one that arrived before it. Otherwise (before 3.12 always) the
        task starts on the loop's next turn, and what its first step writes is gathered into one
        write, as it would have been."""
        if self._batch is not None:  # its answer goes in the batch's array
            self._batch.expect()
            self._batch_of[request_id] = self._batch
        eager = self._eager
        read_by_transport = _current_task(self._loop) is None  # not by a task
        if eager is not None and not self._queues and not self._unstarted and read_by_transport:
            eager(self._run_request(request_id, method, params, False), self._loop)
            return
        self._unstarted += 1
        coroutine = self._run_request(request_id, method, params, True)
        self._incoming[request_id] = self._loop.create_task(coroutine)
        if read_by_transport:  # what its first step writes is gathered into one write
            self._sender.gather_soon()

    async def _run_request(self, request_id: Any, method: str, params: Any, queued: bool) -> None:
        if queued:
            self._unstarted -= 1
        else:  # started at once: its task is known only now
            task = _current_task(self._loop)
            if task is not None:
                self._incoming[request_id] = task
        batch = self._batch_of.pop(request_id, None) if self._batch_of else None
        try:
            tracing = self._tracing
            if tracing is None or not tracing.serves(params):
                result = await self._dispatcher.handle_request(method, params)
            else:
                handle = self._dispatcher.handle_request
                result = await tracing.serve(handle, request_id, method, params)
            if self._closed.done():
                raise ConnectionClosed(self._sender.reason)
            if batch is None:
                self._sender.write_text(result_text(request_id, result))
            else:
                batch.answered(result_text(request_id, result))
        except RequestError as exc:
            self._reply(request_id, error=exc, batch=batch)
        except asyncio.CancelledError:
            if request_id in self._cancelled_by_peer and not self._closed.done():
                self._reply(request_id, error=RequestError.request_cancelled(), batch=batch)
            else:
                raise
        except ConnectionClosed as exc:
            if self._closed.done():
                logger.debug("%s: no response to %r: connection closed", self._name, request_id)
            else:  # the handler's own call to the peer failed: the peer stopped writing
                error = RequestError.internal_error({"details": str(exc)})
                self._reply(request_id, error=error, batch=batch)
        except Exception as exc:
            logger.exception("%s: handler for %s failed", self._name, method)
            self._reply(request_id, error=RequestError.from_exception(exc), batch=batch)
        finally:
            self._incoming.pop(request_id, None)
            self._cancelled_by_peer.discard(request_id)
            if self._eof is not None and not self._incoming:
                self._shutdown(self._eof)  # every request read before the end is answered
        if self._sender.buffered() >= FLUSH_AT:
            try:
                await self._sender.wait_drained()  # back pressure
            except ConnectionClosed:
                pass

    # -- notifications, in order per session ---------------------------------------------------

    def _enqueue(self, method: str, params: Any) -> None:
        key = params.get("sessionId") if params.__class__ is dict else None
        if key.__class__ is not str:
            key = None
        seq = self._seq
        self._seq = seq + 1
        queue = self._queues.get(key)
        if queue is not None:
            queue.append((seq, method, params))
            return
        self._queues[key] = collections.deque([(seq, method, params)])
        self._background(self._work(key))

    async def _work(self, key: Any) -> None:
        in_notification.set(True)
        queue = self._queues[key]
        handle = self._dispatcher.handle_notification
        handlers = self._notification_handlers
        held = self._held
        try:
            while queue:
                _, method, params = queue[0]
                try:
                    tracing = self._tracing
                    if (
                        tracing is not None
                        and params.__class__ is dict
                        and "_meta" in params  # a call to read the context only where it may be
                        and (carried := tracing.extracted(params)) is not None
                    ):
                        await tracing.notified(handle, method, params, carried)
                    else:
                        handler = handlers.get(method)
                        if handler is None:
                            handler = self._notification_handler(method)
                        await handler(params)
                except Exception:
                    logger.exception("%s: notification handler for %s failed", self._name, method)
                finally:
                    queue.popleft()
                    if held:
                        self._release_held()
        finally:
            del self._queues[key]

    def _notification_handler(self, method: str) -> Callable[[Any], Awaitable[None]]:
        """The dispatcher's handling of notifications of ``method``, kept for the next ones."""
        of_method = getattr(self._dispatcher, "notification_handler", None)
        handler: Callable[[Any], Awaitable[None]] = (
            functools.partial(self._dispatcher.handle_notification, method)
            if of_method is None
            else of_method(method)
        )
        if len(self._notification_handlers) < _HANDLERS_KEPT:  # a peer may send any method names
            self._notification_handlers[method] = handler
        return handler

    def _release_held(self) -> None:
        """Settle the held answers that no notification still unhandled arrived before."""
        first = min((queue[0][0] for queue in self._queues.values() if queue), default=self._seq)
        while self._held and self._held[0][0] <= first:
            _, future, result, error = self._held.popleft()
            settle(future, result, error)

    def _release(
        self, future: asyncio.Future[Any], exempt: bool, result: Any, error: RequestError | None
    ) -> None:
        """Settle a call's future, or hold it until every notification that arrived before its
        answer has been handled (``exempt``: a call made inside a notification's handler)."""
        if exempt or not self._queues:
            settle(future, result, error)
        else:
            self._held.append((self._seq, future, result, error))


def settle(future: asyncio.Future[Any], result: Any, error: RequestError | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
