"""One Streamable HTTP connection on the server: the agent's :class:`~._transports.MessageTransport`,
fed by the client's POSTs, its sends routed to the connection's stream or a session's, each
buffered (bounded: the agent's sends wait) until its reader takes it."""

from __future__ import annotations

import asyncio
import collections
import json
import logging
from typing import Any

__all__ = [
    "ANY_SESSION",
    "ATTACHING",
    "IDLE_TIMEOUT",
    "KNOWN_SESSIONS",
    "MAX_BUFFERED",
    "HttpConnection",
    "KnownSessions",
    "Stream",
    "admit",
    "refusal",
    "request_key",
    "session_of",
]

logger = logging.getLogger(__name__)

#: Bytes queued for a connection's readers above which the agent's sends wait.
MAX_BUFFERED = 4 * 1024 * 1024
#: Seconds a Streamable HTTP connection lives with no reader and no request.
IDLE_TIMEOUT = 60.0
#: Methods that attach a session to the connection: once accepted, its stream may be opened.
ATTACHING = frozenset({"session/load", "session/resume"})
#: Methods whose session need not be on the connection (they attach, copy or manage a stored
#: session): ``Acp-Session-Id`` is optional, an unknown session is the agent's to answer, and
#: their answers come on the connection's stream.
ANY_SESSION = ATTACHING | frozenset(
    {"session/fork", "session/delete", "session/archive", "session/unarchive", "session/status"}
)
#: Session ids an app remembers (the most recently seen), so that a client reconnecting may open
#: a session's stream before it loads the session on its new connection.
KNOWN_SESSIONS = 100_000


class KnownSessions:
    """The session ids an app's connections have seen, the most recent ``limit`` of them: a
    session outlives its connection, and a new connection may open its stream (then load it)."""

    def __init__(self, limit: int = KNOWN_SESSIONS) -> None:
        self.limit = limit
        self._ids: collections.OrderedDict[str, None] = collections.OrderedDict()

    def add(self, session_id: str) -> None:
        self._ids[session_id] = None
        self._ids.move_to_end(session_id)
        if len(self._ids) > self.limit:
            self._ids.popitem(last=False)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._ids


class Stream:
    """One outbound stream (a connection's or a session's): what waits for its reader, in order."""

    def __init__(self) -> None:
        self.queue: collections.deque[bytes] = collections.deque()
        self.reader = False  # a GET holds it
        self.finished = False
        self.waiter: asyncio.Future[str] | None = None  # its reader's, while it waits

    def push(self, message: bytes) -> None:
        self.queue.append(message)
        self.wake("message")

    def wake(self, why: str) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(why)


class HttpConnection:
    """One Streamable HTTP connection: the agent's transport (:class:`MessageTransport`), fed by
    POSTs, its sends routed to the connection's and the sessions' streams."""

    def __init__(
        self,
        connection_id: str,
        max_buffered: int,
        max_message_size: int,
        known: KnownSessions | None = None,
    ) -> None:
        self.id = connection_id
        self.known = KnownSessions() if known is None else known
        self.max_buffered = max_buffered
        self.inbound: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=64)
        self.stream = Stream()
        self.sessions: dict[str, Stream] = {}
        self.routes: dict[Any, str] = {}  # client request id -> its session (answer routing)
        self.asked: dict[Any, str] = {}  # agent request id -> the session it went to
        self.initialize: tuple[Any, asyncio.Future[bytes]] | None = None
        self.buffered = 0
        self.room = asyncio.Event()
        self.room.set()
        self.closed = False
        self.task: asyncio.Task[None] | None = None
        self.readers = 0  # GETs holding one of its streams
        self.seen = asyncio.get_running_loop().time()  # the last request, or reader leaving

    def watch_idle(self, timeout: float) -> None:
        """End the connection once it has had no reader and no request for ``timeout`` seconds
        (its client vanished without a DELETE)."""
        loop = asyncio.get_running_loop()
        left = self.seen + timeout - loop.time()
        if self.closed or self.readers:
            return
        if left <= 0:
            logger.info("ended the idle connection %s", self.id)
            self.end()
        else:
            loop.call_later(left, self.watch_idle, timeout)

    # -- MessageTransport, the agent's side -------------------------------------------------

    async def receive(self) -> bytes | None:
        if self.closed and self.inbound.empty():
            return None
        return await self.inbound.get()

    async def send(self, message: bytes) -> None:
        if self.closed:
            raise ConnectionError("the connection is closed")
        value = json.loads(message)
        session: str | None = None
        if isinstance(value, dict):
            initialize = self.initialize
            if (
                "method" not in value
                and initialize is not None
                and initialize[0] == value.get("id")
            ):
                self.initialize = None
                if not initialize[1].done():
                    initialize[1].set_result(message)
                return
            session = self._route(value)
        elif isinstance(value, list):  # a batch's answers: on their session's stream, if one
            sessions = {self._route(entry) if isinstance(entry, dict) else None for entry in value}
            session = sessions.pop() if len(sessions) == 1 else None
        target = self.stream if session is None else self.session(session)
        target.push(message)
        self.buffered += len(message)
        while self.buffered > self.max_buffered and not self.closed:
            self.room.clear()
            await self.room.wait()

    def _route(self, value: dict[str, Any]) -> str | None:
        """The session whose stream a message of the agent's goes on (None: the connection's)."""
        if "method" not in value:  # an answer
            session = self.routes.pop(request_key(value.get("id")), None)
            opened = session_of(value.get("result"))
            if opened is not None:  # session/new, session/load, ...: the session is known now
                self.session(opened)
            return session
        session = session_of(value.get("params"))
        if session is not None and "id" in value:
            self.asked[request_key(value["id"])] = session
        return session

    async def close(self) -> None:
        self.end()

    # -- the HTTP side -----------------------------------------------------------------------

    def session(self, session_id: str) -> Stream:
        """The session's stream on this connection, made (and the session known) on first use."""
        stream = self.sessions.get(session_id)
        if stream is None:
            stream = self.sessions[session_id] = Stream()
            self.known.add(session_id)
        return stream

    def taken(self, size: int) -> None:
        """A reader took ``size`` bytes: the agent may send more."""
        self.buffered -= size
        if self.buffered <= self.max_buffered:
            self.room.set()

    async def deliver(self, message: bytes) -> None:
        if self.closed:
            raise ConnectionError("the connection is closed")
        await self.inbound.put(message)

    def end(self) -> None:
        """No more messages either way: readers finish, the agent reads end of input."""
        if self.closed:
            return
        self.closed = True
        self.room.set()
        for stream in (self.stream, *self.sessions.values()):
            stream.finished = True
            stream.wake("finished")
        if self.inbound.empty():
            self.inbound.put_nowait(None)
        else:  # the agent still reads what came before
            asyncio.ensure_future(self.inbound.put(None))
        if self.initialize is not None and not self.initialize[1].done():
            self.initialize[1].set_exception(ConnectionError("the agent closed the connection"))


def request_key(request_id: Any) -> Any:
    return (type(request_id).__name__, request_id) if not isinstance(request_id, list) else None


def session_of(params: Any) -> str | None:
    session = params.get("sessionId") if isinstance(params, dict) else None
    return session if isinstance(session, str) else None


def refusal(
    connection: HttpConnection, message: dict[str, Any], session: str | None
) -> tuple[int, str] | None:
    """Why a POSTed message (or a batch's entry) is refused, with its status; None: it is not.
    ``session``: the request's ``Acp-Session-Id``."""
    method = message.get("method")
    if method == "initialize":
        return 400, "initialize is not allowed on an existing connection"
    named = session_of(message.get("params")) if method is not None else None
    if session is not None and named is not None and session != named:
        return 400, "Acp-Session-Id does not match params.sessionId"
    if method is None:  # an answer to the agent: it goes where the request came from
        asked = connection.asked.get(request_key(message.get("id")))
        if session is not None and asked is not None and session != asked:
            return 400, "Acp-Session-Id does not match the request's session"
        return None
    if named is not None and session is None and method not in ANY_SESSION:
        return 400, "Missing Acp-Session-Id"
    session = session or named
    if (
        session is not None
        and method not in ATTACHING
        and session not in connection.sessions
        and method not in ANY_SESSION
    ):
        return 404, "Unknown Acp-Session-Id"
    return None


def admit(connection: HttpConnection, message: dict[str, Any], session: str | None) -> bool:
    """Note what a message that is not refused means for the connection's routing; True for a
    request (it waits while the agent's output waits for readers)."""
    method = message.get("method")
    if method is None:
        connection.asked.pop(request_key(message.get("id")), None)
        return False
    session = session or session_of(message.get("params"))
    if session is not None and method in ATTACHING:
        connection.session(session)  # its stream may be opened before the agent answers
    if "id" not in message:
        return False
    if session is not None and method not in ANY_SESSION:
        connection.routes[request_key(message["id"])] = session
    return True
