"""ACP over the network, client side: a :class:`~._transports.MessageTransport` to a remote agent
over WebSocket (``ws://``, ``wss://``; needs ``websockets`` >= 13) or Streamable HTTP
(``http://``, ``https://``; needs ``httpx``, and ``h2`` for HTTP/2). Each library is imported only
when its scheme is used; a missing one is named in a one-line :class:`ImportError`.

Streamable HTTP, as this client speaks it: ``initialize`` is POSTed first and answered 200 with an
``Acp-Connection-Id``; then the connection's stream is opened (``GET``), and a session's stream as
soon as a message names the session (before a message for it is POSTed). Every message that names
a session, and every answer to a request that came on a session's stream, carries
``Acp-Session-Id``. A session the server does not know yet (``session/load`` of a session an
earlier server process served) has its stream opened once the server has accepted the load. A
request the server refuses (4xx, 5xx) is answered locally with a JSON-RPC error (-32603, the
status in its data), so its caller does not wait; a refused connection, or the end of its stream,
ends the transport. ``close`` DELETEs the connection.

A refusal reads the same on both profiles: a 401 is ``<url>: the server refused the token (HTTP
401)`` when a token was sent (``... requires a token (HTTP 401)`` when none was), any other
status ``<url>: the server refused the connection (HTTP 403: <what it said>)``.

Cookies, on both profiles: what a server sets (in the WebSocket handshake's answer, in any HTTP
answer) is kept in a cookie jar and sent back on every later request and handshake, so behind a
cookie-sticky load balancer a reconnecting client lands on the worker that served it. The jar is
:func:`cookie_jar`, one for the process (as a browser keeps its cookies), unless ``cookies`` names
another.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING, Any

from ..transports._transports import MessageTransport

if TYPE_CHECKING:  # imported on first use; CookieJar is re-exported for connect_agent's annotation
    import email.message
    from http.cookiejar import CookieJar as CookieJar  # noqa: PLC0414

__all__ = ["RemoteError", "cookie_jar", "open_transport"]

logger = logging.getLogger(__name__)

_INBOX = 256  # messages received but not yet read, above which the streams stop being read
#: Methods that attach a session to a connection: the server may know the session only once it
#: has accepted one of them.
_ATTACHING = frozenset({"session/load", "session/resume"})

_COOKIES: list[Any] = []  # the process's cookie jar, made on first use


def cookie_jar() -> CookieJar:
    """The cookies servers set, kept for this process and sent back to them on every connection
    that is given no jar of its own."""
    if not _COOKIES:
        import http.cookiejar  # imported on first use, as the client libraries are

        _COOKIES.append(http.cookiejar.CookieJar())
    jar: CookieJar = _COOKIES[0]
    return jar


class RemoteError(ConnectionError):
    """The remote agent could not be reached, or refused the connection."""


def _need(module: str, package: str, scheme: str) -> Any:
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        raise ImportError(f"{scheme} URLs need {package}: pip install '{package}'") from None


async def open_transport(
    url: str,
    *,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    http2: bool = False,
    max_message_size: int = 32 * 1024 * 1024,
    connect_timeout: float = 10.0,
    cookies: CookieJar | None = None,
) -> MessageTransport:
    """Connect to the agent at ``url``; ``token`` is sent as ``Authorization: Bearer``.

    ``http2`` speaks HTTP/2 on ``https://`` (negotiated) and on ``http://`` (h2c, prior
    knowledge); WebSocket URLs ignore it. ``cookies``: the jar that keeps the cookies servers set
    (:func:`cookie_jar`, the process's, by default)."""
    jar = cookie_jar() if cookies is None else cookies
    extra = dict(headers or {})
    if token is not None:
        extra["Authorization"] = f"Bearer {token}"
    credentials = any(name.lower() == "authorization" for name in extra)  # a token, or headers'
    scheme = url.partition("://")[0].lower()
    if scheme in ("ws", "wss"):
        client = _need("websockets.asyncio.client", "websockets>=13", scheme)
        exceptions = _need("websockets.exceptions", "websockets>=13", scheme)
        cookie = _cookie_header(jar, url)
        if cookie is not None:
            extra["Cookie"] = f"{extra['Cookie']}; {cookie}" if "Cookie" in extra else cookie
        try:
            socket = await client.connect(
                url,
                additional_headers=extra or None,
                max_size=max_message_size,
                open_timeout=connect_timeout,
            )
        except exceptions.InvalidStatus as exc:
            answer = exc.response
            _keep_cookies(jar, url, answer.headers.raw_items())
            body = bytes(answer.body or b"").decode("utf-8", "replace")
            raise RemoteError(_refusal(url, answer.status_code, body, credentials)) from None
        except (OSError, asyncio.TimeoutError, exceptions.WebSocketException) as exc:
            raise RemoteError(f"{url}: {exc}") from None
        _keep_cookies(jar, url, socket.response.headers.raw_items())
        return _WebSocket(socket, exceptions.ConnectionClosed)
    if scheme in ("http", "https"):
        httpx = _need("httpx", "httpx[http2]" if http2 else "httpx", scheme)
        if http2:
            _need("h2", "httpx[http2]", scheme)
        timeout = httpx.Timeout(connect_timeout, read=None, pool=None)
        client = httpx.AsyncClient(
            verify=_tls_context(httpx),
            http1=not (http2 and scheme == "http"),
            http2=http2,
            timeout=timeout,
            cookies=jar,
        )
        return _StreamableHttp(url, client, httpx, extra, max_message_size, credentials)
    raise ValueError(f"unsupported URL scheme {scheme!r} in {url!r}: use ws, wss, http or https")


def _refusal(url: str, status: int, body: str, credentials: bool) -> str:
    """What a server's refusal (``status``, its answer's ``body``) of a connection to ``url``
    means, in one line, the same for both profiles; ``credentials``: whether the client sent an
    ``Authorization`` header."""
    if status == 401:
        said = "refused the token" if credentials else "requires a token"
        return f"{url}: the server {said} (HTTP 401)"
    text = " ".join(body.split())[:200]
    return f"{url}: the server refused the connection (HTTP {status}{': ' + text if text else ''})"


class _WebSocket:
    def __init__(self, socket: Any, closed_error: type[Exception]) -> None:
        self._socket = socket
        self._closed_error = closed_error
        #: The headers of the server's answer to the handshake (lower-case names).
        self.headers = {k.lower(): v for k, v in socket.response.headers.raw_items()}

    async def receive(self) -> bytes | None:
        while True:
            try:
                frame = await self._socket.recv()
            except self._closed_error:
                return None
            if isinstance(frame, str):  # binary frames are ignored
                return frame.encode()

    async def send(self, message: bytes) -> None:
        try:
            await self._socket.send(message.decode())
        except self._closed_error as exc:
            raise ConnectionError(f"the WebSocket closed: {exc}") from None

    async def close(self) -> None:
        await self._socket.close()


class _StreamableHttp:
    def __init__(
        self,
        url: str,
        client: Any,
        httpx: Any,
        headers: dict[str, str],
        limit: int,
        credentials: bool = False,
    ) -> None:
        self._url = url
        self._credentials = credentials  # whether an Authorization header is sent
        self._client = client
        self._httpx = httpx
        self._headers = headers
        self._limit = limit
        self._id: str | None = None
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=_INBOX)
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        self._ready: dict[str | None, asyncio.Future[None]] = {}
        self._asked: dict[Any, str] = {}  # agent request id -> the session stream it came on
        self._closed = False
        #: Why the connection ended (a :class:`RemoteError`), told at the end of input; None
        #: while it lasts, or when it ended by the client's close or the end of its stream.
        self.failure: Exception | None = None
        self.http_version: str | None = None  # of the answer to initialize ("HTTP/2")
        #: The headers of the answer to initialize (lower-case names).
        self.headers: dict[str, str] = {}

    async def receive(self) -> bytes | None:
        message = None if self._closed and self._inbox.empty() else await self._inbox.get()
        if message is None and self.failure is not None:
            raise self.failure
        return message

    def _end(self, failure: Exception | None = None) -> None:
        if not self._closed:
            self.failure = failure
            self._closed = True
            with contextlib.suppress(asyncio.QueueFull):
                self._inbox.put_nowait(None)

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionError("the connection is closed")
        value = json.loads(message)
        if self._id is None:
            await self._initialize(value, message)
            return
        headers = {
            "Content-Type": "application/json",
            "Acp-Connection-Id": self._id,
            **self._headers,
        }
        # a batch (where the draft defines them) goes as one POST, under the session its entries
        # name when they name one
        entries = [e for e in value if isinstance(e, dict)] if isinstance(value, list) else [value]
        named = {self._session_of(entry) for entry in entries} - {None}
        session = named.pop() if len(named) == 1 else None
        attaching = any(entry.get("method") in _ATTACHING for entry in entries)
        opened = True
        if session is not None:
            headers["Acp-Session-Id"] = session
            opened = await self._open(session)
        response = await self._post(message, headers)
        if response.status_code in (200, 202):
            if not opened and attaching:  # the server knows the session now
                await self._open(session)
            return
        text = response.text[:200]
        status = response.status_code
        if status in (401, 403) or (status == 404 and session is None):  # the connection is gone
            self._end(RemoteError(_refusal(self._url, status, text, self._credentials)))
            return
        requests = [e["id"] for e in entries if e.get("method") is not None and "id" in e]
        for request_id in requests:  # answer the requests here: nobody else will
            error = {
                "code": -32603,
                "message": f"HTTP {status}",
                "data": {"status": status, "body": text},
            }
            await self._inbox.put(
                json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
            )
        if not requests:
            logger.warning("%s: a message was refused: %s %s", self._url, status, text)

    def _session_of(self, value: dict[str, Any]) -> str | None:
        """The session a message is about: an answer's, that of the request it answers."""
        if value.get("method") is None:
            return self._asked.pop(_key(value.get("id")), None)
        params = value.get("params")
        session = params.get("sessionId") if isinstance(params, dict) else None
        return session if isinstance(session, str) else None

    async def _post(self, message: bytes, headers: dict[str, str]) -> Any:
        """POST ``message``; a failure to reach the server ends the connection and is raised."""
        try:
            return await self._client.post(self._url, content=message, headers=headers)
        except self._httpx.HTTPError as exc:
            failure = RemoteError(f"{self._url}: {exc or type(exc).__name__}")
            self._end(failure)
            raise failure from None

    async def _initialize(self, value: Any, message: bytes) -> None:
        if not isinstance(value, dict) or value.get("method") != "initialize":
            raise ConnectionError("the first message over Streamable HTTP must be initialize")
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            **self._headers,
        }
        response = await self._post(message, headers)
        connection_id = response.headers.get("acp-connection-id")
        if response.status_code != 200 or not connection_id:
            status, text = response.status_code, response.text[:200]
            failure = RemoteError(
                _refusal(self._url, status, text, self._credentials)
                if status != 200
                else f"{self._url}: initialize was answered without an Acp-Connection-Id"
            )
            self._end(failure)
            raise failure
        self._id = connection_id
        self.http_version = response.http_version
        self.headers = {k.lower(): v for k, v in response.headers.items()}
        await self._open(None)
        await self._inbox.put(response.content)

    async def _open(self, session: str | None) -> bool:
        """Open the connection's or a session's stream (once), and wait until it is read; False
        if the server refused it."""
        if session not in self._streams:
            self._ready[session] = asyncio.get_running_loop().create_future()
            self._streams[session] = asyncio.ensure_future(self._read(session))
        ready = self._ready[session]
        await asyncio.wait({ready, self._streams[session]}, return_when=asyncio.FIRST_COMPLETED)
        return ready.done()

    async def _read(self, session: str | None) -> None:
        headers = {
            "Accept": "text/event-stream",
            "Acp-Connection-Id": str(self._id),
            **self._headers,
        }
        if session is not None:
            headers["Acp-Session-Id"] = session
        try:
            async with self._client.stream("GET", self._url, headers=headers) as response:
                if response.status_code != 200:
                    logger.warning("%s: a stream was refused: %s", self._url, response.status_code)
                    return
                self._ready[session].set_result(None)
                data: list[bytes] = []
                async for line in _lines(response.aiter_bytes(), self._limit):
                    if line.startswith(b"data:"):
                        data.append(line[6:] if line.startswith(b"data: ") else line[5:])
                    elif not line and data:
                        await self._received(b"\n".join(data), session)
                        data = []
        except self._httpx.HTTPError as exc:
            if not self._closed:
                logger.warning("%s: a stream failed: %s", self._url, exc)
        finally:
            self._streams.pop(session, None)
            self._ready.pop(session, None)
            if session is None:  # the connection's stream ended: so did the connection
                self._end()

    async def _received(self, message: bytes, session: str | None) -> None:
        try:
            value = json.loads(message)
        except ValueError:
            value = None  # the connection answers it as not JSON
        for entry in value if isinstance(value, list) else [value]:  # a batch: each entry
            if not isinstance(entry, dict):
                continue
            result = entry.get("result")
            opened = result.get("sessionId") if isinstance(result, dict) else None
            if isinstance(opened, str) and opened not in self._streams:
                asyncio.ensure_future(self._open(opened))
            if session is not None and "method" in entry and "id" in entry:
                self._asked[_key(entry["id"])] = session
        await self._inbox.put(message)

    async def close(self) -> None:
        closed, self._closed = self._closed, True
        for task in list(self._streams.values()):
            task.cancel()
        await asyncio.gather(*self._streams.values(), return_exceptions=True)
        if self._id is not None and not closed:
            with contextlib.suppress(self._httpx.HTTPError):
                headers = {"Acp-Connection-Id": self._id, **self._headers}
                await self._client.request("DELETE", self._url, headers=headers, timeout=5.0)
        await self._client.aclose()
        with contextlib.suppress(asyncio.QueueFull):
            self._inbox.put_nowait(None)


_TLS: list[Any] = []  # the TLS context, made once: making one costs milliseconds of CPU


def _tls_context(httpx: Any) -> Any:
    if not _TLS:
        _TLS.append(httpx.create_ssl_context())
    return _TLS[0]


def _cookie_url(url: str) -> str:
    """The HTTP URL whose cookies go with ``url`` (``ws`` as ``http``, ``wss`` as ``https``)."""
    scheme, sep, rest = url.partition("://")
    return {"ws": "http", "wss": "https"}.get(scheme.lower(), scheme) + sep + rest


def _cookie_header(jar: CookieJar, url: str) -> str | None:
    import urllib.request

    request = urllib.request.Request(_cookie_url(url))
    jar.add_cookie_header(request)
    return request.get_header("Cookie")


class _Answer:
    """An answer's headers, as :meth:`CookieJar.extract_cookies` reads them."""

    def __init__(self, headers: Any) -> None:
        import email.message

        self._headers = email.message.Message()
        for name, value in headers:
            self._headers[name] = value  # appends: every Set-Cookie is kept

    def info(self) -> email.message.Message:
        return self._headers


def _keep_cookies(jar: CookieJar, url: str, headers: Any) -> None:
    """Keep the cookies that the answer's ``headers`` (name, value pairs) set for ``url``."""
    import urllib.request

    jar.extract_cookies(_Answer(headers), urllib.request.Request(_cookie_url(url)))  # type: ignore[arg-type]


def _key(request_id: Any) -> Any:
    return (
        (type(request_id).__name__, request_id)
        if not isinstance(request_id, (list, dict))
        else None
    )


async def _lines(chunks: Any, limit: int) -> Any:
    """The lines of an event stream (``\\n``, ``\\r\\n`` or ``\\r`` ended), without their ends."""
    rest = b""
    async for chunk in chunks:
        rest += chunk
        if b"\r" in rest:
            rest = (
                rest.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
                if not rest.endswith(b"\r")
                else rest
            )
        *lines, rest = rest.split(b"\n")
        if len(rest) > limit + 16:
            raise ConnectionError(f"an event of more than {limit} bytes")
        for line in lines:
            yield line
