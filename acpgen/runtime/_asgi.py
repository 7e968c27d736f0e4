"""ACP over the network, server side: one ASGI application serving the endpoint ``/acp`` with both
profiles of the Streamable HTTP & WebSocket transport (standard library only; an ASGI server such
as uvicorn, hypercorn or granian does the wire).

Streamable HTTP: ``POST`` carries one client message. ``initialize`` (with no
``Acp-Connection-Id``) opens a connection and is answered 200 with the agent's response and the
``Acp-Connection-Id`` header; every other message is answered 202, its answer comes on a stream.
``GET`` (``Accept: text/event-stream``) opens the connection's stream, or with ``Acp-Session-Id``
a session's stream: messages that name a session (and answers to requests that did) go on that
session's stream, the rest on the connection's; a stream has one reader at a time (a second gets
409), is kept alive by a comment every 15 s, and keeps what it could not deliver for the next
reader; a reader that takes nothing for ``stall_timeout`` seconds (60) while messages wait is cut
off. A session's stream may be opened once the session is known: to this connection, or to the
app from an earlier connection (so a reconnecting client opens it, then loads the session). A
connection with no reader and no request for 60 s (a client gone without ``DELETE``) ends.
``DELETE`` ends the connection. Errors, as the transport RFD's decision tree gives them: 400 (bad
JSON, a missing ``Acp-Connection-Id``, a request naming a session without ``Acp-Session-Id``, a
mismatched header, ``initialize`` on a connection), 404 (unknown connection or session, other
paths), 405, 406, 413, 415, 501 (a batch, where the protocol's draft defines none).

Where the draft defines JSON-RPC batches (``batches``), a ``POST`` may carry one: each entry is
checked as a message alone would be, against the request's headers (so the entries that name a
session name the one of ``Acp-Session-Id``), the batch goes to the agent as one message (202), and
the array that answers it comes on the session's stream when every answer in it belongs to that
session, else on the connection's. An empty array is answered 400 with one ``-32600``.

WebSocket, on the same endpoint: one JSON-RPC message per text frame; binary frames are ignored.

Before anything reaches the agent, every request is checked (:class:`Guard`): a browser ``Origin``
not allowed and a ``Host`` that is not an address this server answers to get 403; with a token,
a request without ``Authorization: Bearer <token>`` gets 401. A refused WebSocket handshake is
answered with the same status and reason where the ASGI server offers denial responses (the
``websocket.http.response`` extension: uvicorn, hypercorn, granian); elsewhere it is closed before
it is accepted, which the server answers 403.

Buffers are bounded and wait rather than drop: what the agent sends waits while more than
``max_buffered`` bytes are queued for readers, and a client's requests wait with it.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import sys
import uuid
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from ._guard import Guard, headers_of, is_loopback
from ._http_connection import (
    IDLE_TIMEOUT,
    MAX_BUFFERED,
    HttpConnection,
    KnownSessions,
    Stream,
    request_key,
    session_of,
)
from ._transports import MessageTransport

__all__ = ["AcpApp", "Guard", "is_loopback", "serve"]

logger = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
#: Serves one ACP connection over a transport until it ends (e.g. an agent's connection).
Serve = Callable[[MessageTransport], Awaitable[None]]

CONNECTION_HEADER = b"acp-connection-id"
SESSION_HEADER = b"acp-session-id"
#: Seconds a quiet stream waits before it sends a keepalive comment.
KEEPALIVE = 15.0
#: Seconds an event stream's reader may take nothing while messages wait for it; then it is cut off.
STALL_TIMEOUT = 60.0
#: Seconds ``initialize`` waits for the agent's answer.
INITIALIZE_TIMEOUT = 30.0
#: Methods that attach a session to the connection: once accepted, its stream may be opened.
_ATTACHING = frozenset({"session/load", "session/resume"})
#: Methods whose session need not be on the connection (they attach, copy or manage a stored
#: session): ``Acp-Session-Id`` is optional, an unknown session is the agent's to answer, and
#: their answers come on the connection's stream.
_ANY_SESSION = _ATTACHING | frozenset(
    {"session/fork", "session/delete", "session/archive", "session/unarchive", "session/status"}
)


class _WebSocketTransport:
    """The agent's transport over one accepted WebSocket (text frames; binary ones ignored)."""

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive = receive
        self._send = send
        self.closed = False

    async def receive(self) -> bytes | None:
        while not self.closed:
            event = await self._receive()
            if event["type"] == "websocket.disconnect":
                self.closed = True
                return None
            text = event.get("text")
            if event["type"] == "websocket.receive" and text is not None:
                return text.encode() if isinstance(text, str) else bytes(text)
        return None

    async def send(self, message: bytes) -> None:
        if self.closed:
            raise ConnectionError("the WebSocket is closed")
        try:
            await self._send({"type": "websocket.send", "text": message.decode()})
        except Exception as exc:  # the ASGI servers raise their own errors once the peer is gone
            self.closed = True
            raise ConnectionError(f"the WebSocket is closed: {exc}") from exc

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                await self._send({"type": "websocket.close", "code": 1000})
            except Exception:
                logger.debug("closing a WebSocket failed", exc_info=True)


class AcpApp:
    """The ASGI application: ``serve(transport)`` runs once per ACP connection (see
    ``asgi_app`` in the agent module). Every other keyword is :class:`Guard`'s."""

    def __init__(
        self,
        serve: Serve,
        *,
        path: str = "/acp",
        token: str | None = None,
        allowed_origins: Collection[str] = (),
        allowed_hosts: Collection[str] = (),
        max_message_size: int = 32 * 1024 * 1024,
        max_buffered: int = MAX_BUFFERED,
        keepalive: float = KEEPALIVE,
        idle_timeout: float = IDLE_TIMEOUT,
        stall_timeout: float = STALL_TIMEOUT,
        batches: bool = False,
    ) -> None:
        self.serve = serve
        #: The protocol's draft defines JSON-RPC batches: a POST may carry one (else 501).
        self.batches = batches
        self.idle_timeout = idle_timeout
        self.stall_timeout = stall_timeout
        self.path = path
        self.guard = Guard(token, allowed_origins, allowed_hosts)
        self.max_message_size = max_message_size
        self.max_buffered = max_buffered
        self.keepalive = keepalive
        self.connections: dict[str, HttpConnection] = {}
        self.known_sessions = KnownSessions()
        self._tasks: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def end_all(self) -> None:
        """End every Streamable HTTP connection: their streams finish, so a server waiting for its
        responses to complete before it exits (uvicorn, on SIGTERM) can exit."""
        for connection in list(self.connections.values()):
            connection.end()

    async def aclose(self) -> None:
        """End every connection and wait for their agents."""
        self.end_all()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _run(self, transport: MessageTransport, done: Callable[[], None]) -> asyncio.Task[None]:
        async def run() -> None:
            try:
                await self.serve(transport)
            except Exception:
                logger.exception("an ACP connection failed")
            finally:
                done()

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- WebSocket ---------------------------------------------------------------------------

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self.guard.refusal(scope)
        if refusal is None and scope.get("path") != self.path:
            refusal = (404, "Not Found")
        event = await receive()
        if event["type"] != "websocket.connect":
            return
        if refusal is not None:
            logger.info("refused a WebSocket: %s %s", *refusal)
            if "websocket.http.response" in (scope.get("extensions") or {}):
                status, reason = refusal  # a denial response: the client sees why (401 or 403)
                start = _start(status, b"text/plain; charset=utf-8", _auth_header(status))
                await send({**start, "type": "websocket.http.response.start"})
                await send({"type": "websocket.http.response.body", "body": reason.encode()})
            else:  # closing before accepting refuses the handshake (403) under every ASGI server
                await send({"type": "websocket.close", "code": 1008})
            return
        connection_id = uuid.uuid4().hex
        await send(
            {"type": "websocket.accept", "headers": [(CONNECTION_HEADER, connection_id.encode())]}
        )
        transport = _WebSocketTransport(receive, send)
        finished = asyncio.Event()
        await self._run(transport, finished.set)
        await transport.close()

    # -- Streamable HTTP ---------------------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self.guard.refusal(scope)
        if refusal is not None:
            await _respond(send, refusal[0], refusal[1], _auth_header(refusal[0]))
            return
        if scope.get("path") != self.path:
            await _respond(send, 404, "Not Found")
            return
        method = scope.get("method")
        headers = headers_of(scope)
        if method == "POST":
            await self._post(headers, receive, send)
        elif method == "GET":
            await self._get(headers, receive, send)
        elif method == "DELETE":
            connection = await self._connection(headers, send)
            if connection is not None:
                connection.end()
                await _respond(send, 202, "")
        else:
            await _respond(send, 405, "Method Not Allowed", [(b"allow", b"GET, POST, DELETE")])

    async def _connection(self, headers: dict[bytes, bytes], send: Send) -> HttpConnection | None:
        """The connection a request names, or None once it has been answered 400 or 404."""
        connection_id = headers.get(CONNECTION_HEADER)
        if connection_id is None:
            await _respond(send, 400, "Missing Acp-Connection-Id")
            return None
        connection = self.connections.get(connection_id.decode("latin-1"))
        if connection is None or connection.closed:
            await _respond(send, 404, "Unknown Acp-Connection-Id")
            return None
        connection.seen = asyncio.get_running_loop().time()
        return connection

    async def _post(self, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        media = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if media != b"application/json":
            await _respond(send, 415, "Content-Type must be application/json")
            return
        body = await _read_body(receive, self.max_message_size)
        if body is None:
            return  # the client went away
        if len(body) > self.max_message_size:
            await _respond(send, 413, f"message exceeds {self.max_message_size} bytes")
            return
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as exc:
            error = {"code": -32700, "message": "Parse error", "data": {"details": str(exc)[:200]}}
            await _respond_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
            return
        if isinstance(message, list) and not self.batches:
            await _respond(send, 501, "JSON-RPC batches are not supported")
            return
        if message == []:
            error = {"code": -32600, "message": "Invalid request", "data": "empty batch"}
            await _respond_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
            return
        if not isinstance(message, (dict, list)):
            await _respond(send, 400, "not a JSON-RPC object")
            return
        if isinstance(message, list):
            entries = [entry for entry in message if isinstance(entry, dict)]
        else:
            entries = [message]
            opening = message.get("method") == "initialize" and "id" in message
            if opening and CONNECTION_HEADER not in headers:
                await self._initialize(message["id"], body, receive, send)
                return
        connection = await self._connection(headers, send)
        if connection is None:
            return
        header = headers.get(SESSION_HEADER)
        session = None if header is None else header.decode("latin-1")
        for entry in entries:  # a batch is refused as its first entry refused alone would be
            refusal = _refusal(connection, entry, session)
            if refusal is not None:
                await _respond(send, *refusal)
                return
        requests = [_admit(connection, entry, session) for entry in entries]
        waiting = any(requests) and not connection.room.is_set()
        if waiting and not await _until(connection.room.wait(), receive):
            return  # the client went away while the agent's output waited for readers
        try:
            await connection.deliver(body)
        except ConnectionError:
            await _respond(send, 404, "Unknown Acp-Connection-Id")
            return
        await _respond(send, 202, "")

    async def _initialize(self, request_id: Any, body: bytes, receive: Receive, send: Send) -> None:
        connection = HttpConnection(
            uuid.uuid4().hex, self.max_buffered, self.max_message_size, self.known_sessions
        )
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        connection.initialize = (request_id, future)
        self.connections[connection.id] = connection
        connection.task = self._run(connection, lambda: self._ended(connection))
        connection.watch_idle(self.idle_timeout)
        await connection.deliver(body)
        try:
            answered = await asyncio.wait_for(
                _until(asyncio.shield(future), receive), INITIALIZE_TIMEOUT
            )
        except (asyncio.TimeoutError, ConnectionError) as exc:
            connection.end()
            reason = "timed out" if isinstance(exc, asyncio.TimeoutError) else str(exc)
            await _respond(send, 500, f"initialize failed: {reason}")
            return
        if not answered:
            connection.end()
            return
        await send(_start(200, b"application/json", [(CONNECTION_HEADER, connection.id.encode())]))
        await send({"type": "http.response.body", "body": future.result()})

    def _ended(self, connection: HttpConnection) -> None:
        connection.end()
        self.connections.pop(connection.id, None)

    async def _get(self, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        if b"text/event-stream" not in headers.get(b"accept", b"").lower():
            await _respond(send, 406, "Accept must include text/event-stream")
            return
        connection = await self._connection(headers, send)
        if connection is None:
            return
        header = headers.get(SESSION_HEADER)
        if header is None:
            stream = connection.stream
        else:
            session = header.decode("latin-1")
            if session not in connection.sessions and session not in self.known_sessions:
                await _respond(send, 404, "Unknown Acp-Session-Id")
                return
            stream = connection.session(session)
        if stream.reader:
            await _respond(send, 409, "this stream already has a reader")
            return
        stream.reader = True
        connection.readers += 1
        try:
            await self._stream(connection, stream, receive, send)
        finally:
            stream.reader = False
            connection.readers -= 1
            connection.seen = asyncio.get_running_loop().time()
            connection.watch_idle(self.idle_timeout)

    async def _stream(
        self, connection: HttpConnection, stream: Stream, receive: Receive, send: Send
    ) -> None:
        headers = [(b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]
        await send(_start(200, b"text/event-stream", headers))
        loop = asyncio.get_running_loop()
        gone = asyncio.ensure_future(_disconnected(receive))
        gone.add_done_callback(lambda _: stream.wake("gone"))
        stall = _Stall(self.stall_timeout)
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
                timer = loop.call_later(self.keepalive, stream.wake, "keepalive")
                try:
                    why = await waiter
                finally:
                    timer.cancel()
                    stream.waiter = None
                if why == "keepalive" and not await stall.send(send, b": keepalive\n\n"):
                    break
            if stall.stalled:  # the app returns, the server drops the response
                logger.warning(
                    "cut off an event stream's reader: it took nothing for %s s", self.stall_timeout
                )
            elif not gone.done():
                await send({"type": "http.response.body", "body": b""})
        finally:
            stall.close()
            gone.cancel()


class _Stall:
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


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request's body (reading stops a byte past ``limit``), or None if the client left."""
    parts: list[bytes] = []
    size = 0
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            return None
        chunk = event.get("body", b"")
        if size <= limit:
            parts.append(chunk)
        size += len(chunk)
        if not event.get("more_body", False):
            return b"".join(parts) if size <= limit else b"\0" * (limit + 1)


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _until(waited: Awaitable[Any], receive: Receive) -> bool:
    """Wait for ``waited``; False if the client disconnects first."""
    task = asyncio.ensure_future(waited)
    gone = asyncio.ensure_future(_disconnected(receive))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if task.done():
        task.result()
        return True
    task.cancel()
    return False


def _auth_header(status: int) -> list[tuple[bytes, bytes]]:
    return [(b"www-authenticate", b"Bearer")] if status == 401 else []


def _start(status: int, media: bytes, headers: list[tuple[bytes, bytes]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", media), *headers],
    }


async def _respond(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    await send(_start(status, b"text/plain; charset=utf-8", list(headers)))
    await send({"type": "http.response.body", "body": text.encode()})


async def _respond_json(send: Send, status: int, value: Any) -> None:
    await send(_start(status, b"application/json"))
    await send({"type": "http.response.body", "body": json.dumps(value).encode()})


def serve(
    app: AcpApp, host: str, port: int, *, log_level: str = "warning", name: str = "acp"
) -> None:
    """Serve ``app`` with uvicorn (installed separately) until SIGINT or SIGTERM, which end its
    connections (open streams included) so that the server exits. Once it listens, one line on
    stderr, after ``name``, says where (:func:`listening_line`; port 0 is the port bound)."""
    try:
        uvicorn: Any = importlib.import_module("uvicorn")
    except ImportError:
        raise SystemExit("serving over the network needs uvicorn: pip install uvicorn") from None
    server = uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on")
    )
    exit_handler, startup = server.handle_exit, server.startup

    def handle_exit(sig: int, frame: Any) -> None:
        exit_handler(sig, frame)
        asyncio.get_event_loop().call_soon_threadsafe(app.end_all)

    async def started(*args: Any, **kwargs: Any) -> None:
        await startup(*args, **kwargs)
        if server.started:
            bound = [s.getsockname() for listener in server.servers for s in listener.sockets]
            print(f"{name}: {listening_line(bound)}", file=sys.stderr, flush=True)

    server.handle_exit, server.startup = handle_exit, started
    server.run()


def listening_line(addresses: Collection[Any]) -> str:
    """Where a server listens, from its sockets' addresses: the endpoint's WebSocket and
    Streamable HTTP URLs."""
    hosts = dict.fromkeys(
        f"[{a[0]}]:{a[1]}" if ":" in a[0] else f"{a[0]}:{a[1]}" for a in addresses
    )
    ws = ", ".join(f"ws://{host}/acp" for host in hosts)
    http = ", ".join(f"http://{host}/acp" for host in hosts)
    return f"listening on {ws} (WebSocket) and {http} (Streamable HTTP)"


def _refusal(
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
    if named is not None and session is None and method not in _ANY_SESSION:
        return 400, "Missing Acp-Session-Id"
    session = session or named
    if (
        session is not None
        and method not in _ATTACHING
        and session not in connection.sessions
        and method not in _ANY_SESSION
    ):
        return 404, "Unknown Acp-Session-Id"
    return None


def _admit(connection: HttpConnection, message: dict[str, Any], session: str | None) -> bool:
    """Note what a message that is not refused means for the connection's routing; True for a
    request (it waits while the agent's output waits for readers)."""
    method = message.get("method")
    if method is None:
        connection.asked.pop(request_key(message.get("id")), None)
        return False
    session = session or session_of(message.get("params"))
    if session is not None and method in _ATTACHING:
        connection.session(session)  # its stream may be opened before the agent answers
    if "id" not in message:
        return False
    if session is not None and method not in _ANY_SESSION:
        connection.routes[request_key(message["id"])] = session
    return True
