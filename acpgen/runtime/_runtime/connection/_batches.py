"""JSON-RPC batches, where the protocol's draft defines them: sending one and waiting for each of
its answers, and reading one the peer sent, its answers gathered into one array (the array
itself is :class:`~._incoming.Batch`).

:class:`Batches` is the part of :class:`~._connection.Connection` that does it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from ..tracing._tracing import Tracing
from ..wire._errors import ConnectionClosed, RequestError
from ..wire._framing import encode_json, notification_text, request_text
from ._incoming import CANCEL_REQUEST, Batch, in_notification
from ._sender import FLUSH_AT, Sender

__all__ = ["Batches"]


class Batches:
    """Sending a batch (:meth:`batch`) and answering one the peer sent."""

    batches: bool
    _loop: asyncio.AbstractEventLoop
    _sender: Sender
    _tracing: Tracing | None
    _closed: asyncio.Future[None]
    _eof: str | None
    _next_id: int
    _pending: dict[int, tuple[asyncio.Future[Any], bool]]
    _cancelled_by_us: set[int]
    _batch: Batch | None
    #: the request ids of each batch sent, unanswered
    _batches_out: list[list[int]]
    #: a batch's first request id -> the error with id null that answered the whole batch
    _refused_batches: dict[int, RequestError]
    #: settles a call's future (:class:`~._incoming.Incoming`'s): declared, not defined, here
    _release: Callable[[asyncio.Future[Any], bool, Any, RequestError | None], None]

    def _write(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    def _reply(
        self,
        request_id: Any,
        result: Any = None,
        error: RequestError | None = None,
        batch: Batch | None = None,
    ) -> None:
        raise NotImplementedError

    def _on_value(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

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
