"""Watching a connection's messages: the observer a connection calls for every message it sends
and reads, with the ACP session each belongs to.

:class:`Observing` is the part of :class:`~._connection.Connection` that does it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..wire._framing import WIRE_LOG, decode_json, valid_id
from ._sender import Sender

__all__ = ["Observer", "Observing"]

logger = logging.getLogger(WIRE_LOG)

#: What :meth:`Connection.observe` calls for each message: ``observer(direction, message,
#: session_id)``, with ``direction`` ``"sent"`` or ``"received"``, ``message`` the JSON-RPC
#: message as parsed JSON (a dict; not to be modified) and ``session_id`` the ACP session it
#: belongs to (its params' ``sessionId``; for a response, its request's, or its result's), or None.
Observer = Callable[[str, dict[str, Any], "str | None"], None]


class Observing:
    """The observer of a connection's messages (see :meth:`observe`)."""

    _sender: Sender
    _name: str

    def _init_observing(self) -> None:
        self._observer: Observer | None = None
        self._observed_sessions: dict[tuple[bool, Any], str] = {}  # (sent by us, id) -> session

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
