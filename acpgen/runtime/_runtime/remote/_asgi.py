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

from ..transports._transports import MessageTransport
from ._asgi_messages import (
    Receive,
    Scope,
    Send,
    auth_header,
    read_body,
    respond,
    respond_json,
    start,
    until,
)
from ._event_stream import stream_events
from ._guard import Guard, headers_of, is_loopback
from ._http_connection import (
    IDLE_TIMEOUT,
    MAX_BUFFERED,
    HttpConnection,
    KnownSessions,
    admit,
    refusal,
)

__all__ = ["AcpApp", "Guard", "is_loopback", "serve"]

logger = logging.getLogger(__name__)

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
                begun = start(status, b"text/plain; charset=utf-8", auth_header(status))
                await send({**begun, "type": "websocket.http.response.start"})
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
            await respond(send, refusal[0], refusal[1], auth_header(refusal[0]))
            return
        if scope.get("path") != self.path:
            await respond(send, 404, "Not Found")
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
                await respond(send, 202, "")
        else:
            await respond(send, 405, "Method Not Allowed", [(b"allow", b"GET, POST, DELETE")])

    async def _connection(self, headers: dict[bytes, bytes], send: Send) -> HttpConnection | None:
        """The connection a request names, or None once it has been answered 400 or 404."""
        connection_id = headers.get(CONNECTION_HEADER)
        if connection_id is None:
            await respond(send, 400, "Missing Acp-Connection-Id")
            return None
        connection = self.connections.get(connection_id.decode("latin-1"))
        if connection is None or connection.closed:
            await respond(send, 404, "Unknown Acp-Connection-Id")
            return None
        connection.seen = asyncio.get_running_loop().time()
        return connection

    async def _post(self, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        media = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if media != b"application/json":
            await respond(send, 415, "Content-Type must be application/json")
            return
        body = await read_body(receive, self.max_message_size)
        if body is None:
            return  # the client went away
        if len(body) > self.max_message_size:
            await respond(send, 413, f"message exceeds {self.max_message_size} bytes")
            return
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as exc:
            error = {"code": -32700, "message": "Parse error", "data": {"details": str(exc)[:200]}}
            await respond_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
            return
        if isinstance(message, list) and not self.batches:
            await respond(send, 501, "JSON-RPC batches are not supported")
            return
        if message == []:
            error = {"code": -32600, "message": "Invalid request", "data": "empty batch"}
            await respond_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
            return
        if not isinstance(message, (dict, list)):
            await respond(send, 400, "not a JSON-RPC object")
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
            refused = refusal(connection, entry, session)
            if refused is not None:
                await respond(send, *refused)
                return
        requests = [admit(connection, entry, session) for entry in entries]
        waiting = any(requests) and not connection.room.is_set()
        if waiting and not await until(connection.room.wait(), receive):
            return  # the client went away while the agent's output waited for readers
        try:
            await connection.deliver(body)
        except ConnectionError:
            await respond(send, 404, "Unknown Acp-Connection-Id")
            return
        await respond(send, 202, "")

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
                until(asyncio.shield(future), receive), INITIALIZE_TIMEOUT
            )
        except (asyncio.TimeoutError, ConnectionError) as exc:
            connection.end()
            reason = "timed out" if isinstance(exc, asyncio.TimeoutError) else str(exc)
            await respond(send, 500, f"initialize failed: {reason}")
            return
        if not answered:
            connection.end()
            return
        await send(start(200, b"application/json", [(CONNECTION_HEADER, connection.id.encode())]))
        await send({"type": "http.response.body", "body": future.result()})

    def _ended(self, connection: HttpConnection) -> None:
        connection.end()
        self.connections.pop(connection.id, None)

    async def _get(self, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        if b"text/event-stream" not in headers.get(b"accept", b"").lower():
            await respond(send, 406, "Accept must include text/event-stream")
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
                await respond(send, 404, "Unknown Acp-Session-Id")
                return
            stream = connection.session(session)
        if stream.reader:
            await respond(send, 409, "this stream already has a reader")
            return
        stream.reader = True
        connection.readers += 1
        try:
            await stream_events(
                connection,
                stream,
                receive,
                send,
                keepalive=self.keepalive,
                stall_timeout=self.stall_timeout,
            )
        finally:
            stream.reader = False
            connection.readers -= 1
            connection.seen = asyncio.get_running_loop().time()
            connection.watch_idle(self.idle_timeout)


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
