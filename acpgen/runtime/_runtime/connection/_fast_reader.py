"""Reading a connection's messages on the fast path: with msgspec or orjson where the connection
was given one (``json_backend``), whole lines at once, a notification queued with no call per
line; the standard library's reader takes every message the fast one refuses or could read
differently, so both read the same messages.

:class:`FastReading` is the part of :class:`~._connection.Connection` that does it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from ..wire._framing import WIRE_LOG, FastReader, msgspec_reader, orjson_reader
from ._incoming import CANCEL_REQUEST, Incoming
from ._observing import Observer

__all__ = ["FastReading"]

logger = logging.getLogger(WIRE_LOG)


def _never(line: bytes) -> bool:
    return False


class FastReading(Incoming):
    """What the wire calls with the lines it read (:meth:`message_received`, :meth:`lines_received`)."""

    accepting: bool
    _name: str
    _observer: Observer | None
    _seen_message: bool

    def _on_message(self, line: bytes | str) -> None:
        raise NotImplementedError

    def _on_value(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    def _init_fast_reader(self, json_backend: str) -> None:
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
