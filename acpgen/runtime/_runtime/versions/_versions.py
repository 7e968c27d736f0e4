"""Several protocol versions on one connection: the agent side's router, the client's connect.

A connection speaks exactly one protocol version from its ``initialize`` on. The router reads
until the first valid ``initialize`` request, picks the version to serve, and hands the
connection to that version's agent connection, which answers the ``initialize`` and everything
after. Traffic is never converted between versions: the one change the router makes is the
``protocolVersion`` of that first ``initialize``, set to the version it picked (what the picked
agent speaks). The version is the package's draft's to pick (:func:`negotiated_version`, given
the draft's ``UNSUPPORTED_VERSION_ERROR``; a router of version 1 alone serves every request with
it, as v1 agents always have):

* a draft with an error of its own for it (the TypeScript SDK's v2 draft; the default, the
  TypeScript SDK's ``agentProtocolRouter``): the highest configured version at or below the one
  requested, and none: ``-32022`` "Unsupported protocol version", data ``{"requested": N,
  "supported": [...]}``;
* a draft without one (the spec's releases): the version requested when it is configured, else
  the latest configured;
* before ``initialize``: a notification or a response is ignored; another request gets
  ``-32600`` (data ``"first ACP request must be initialize"``); an ``initialize`` without a
  valid ``protocolVersion`` gets ``-32602``; a v2 ``initialize`` whose id is not a string or an
  integer gets ``-32600`` with id null. A batch (a JSON array) gets one ``-32600`` with id null
  ("JSON-RPC batches are not supported"), unless the draft defines batches (``batches``): then
  each entry is answered as it would be alone, in one array (none: nothing), but an
  ``initialize``, which picks the version the rest is served in, must come alone (``-32600``);
  an empty array gets one ``-32600``. None of these closes the connection: the client may send
  ``initialize`` again.
* a client asking for a version the router does not serve (the draft picked another for it)
  whose ``initialize`` the picked version cannot read is served in the latest version below it
  that reads it (:func:`readable_version`): a v1 client asking for 999 gets version 1, in v1's shape,
  from a router of versions 1 and 2. Each version's ``agent`` module says what it reads
  (``_typed.register_initialize``); where none reads it (or none says), the picked version's
  connection answers it with an error naming the version asked for and the versions served
  (``_typed.routed_from``): the draft's own error where it defines one, else ``-32602``.

:class:`AgentRouter` routes a byte stream (stdio, a pipe); :func:`route_transport` routes a
:class:`MessageTransport` (a WebSocket or a Streamable HTTP connection of the ASGI app), with
the same policy and the same answers, and hands that transport, replaying the ``initialize``
first, to the picked version's connection.

The public module ``versions`` re-exports these, with the client's side (``connect_versions``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from ..connection._rpc import (
    DEFAULT_MAX_MESSAGE_SIZE,
    MessageTransport,
    MessageWriter,
    PipeReader,
    RequestError,
    negotiated_version,
    stdio_streams,
)
from ..connection._typed import reads_initialize, routed_from
from ..wire._errors import UNSUPPORTED_PROTOCOL_VERSION

__all__ = [
    "UNSUPPORTED_PROTOCOL_VERSION",
    "AgentRouter",
    "Connector",
    "readable_version",
    "route_transport",
    "select_version",
    "serve_versions",
]

#: The range of ``ProtocolVersion`` (``uint16``).
_HIGHEST = 0xFFFF


class _Connection(Protocol):
    """What the router needs of a typed connection (``AgentSideConnection``)."""

    async def wait_closed(self) -> None: ...

    async def close(self) -> None: ...


#: Makes one version's agent connection over the router's reader and writer (a transport and
#: None, from :func:`route_transport`):
#: ``lambda reader, writer: AgentSideConnection(MyAgent(), reader, writer)``.
Connector = Callable[[Any, MessageWriter | None], _Connection]


def select_version(requested: int, supported: tuple[int, ...]) -> int | None:
    """The version to serve a client asking for ``requested``: the highest of ``supported`` at
    or below it; a router of version 1 alone serves every request. None: no version fits."""
    if supported == (1,):
        return 1
    fitting = [version for version in supported if version <= requested]
    return max(fitting) if fitting else None


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _is_id(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, (int, float)) and not isinstance(value, bool))
    )


#: What the router makes of a message before ``initialize``: the answer to send back (an object,
#: an array of them, or None), and what to hand over (None: the connection is not routed yet): the
#: version picked, the ``initialize`` it is given and the version it asked for.
_Started = tuple[Any, tuple[int, dict[str, Any], int] | None]
_NOT_INITIALIZE = "first ACP message must be an initialize request"
_ALONE = "initialize must come alone, not in a batch: it picks the protocol version"


def _start(
    line: bytes,
    supported: tuple[int, ...],
    unsupported_version_error: int | None = UNSUPPORTED_PROTOCOL_VERSION,
    batches: bool = False,
) -> _Started:
    """The router's policy for one message (a line, or a transport's message) before
    ``initialize``; every router, whatever it reads, decides through it. ``batches``: the draft
    defines JSON-RPC batches."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, -32700, "Parse error"), None
    if not isinstance(message, list):
        return _one(message, supported, unsupported_version_error)
    if not batches:
        return _error(None, -32600, "Invalid request: JSON-RPC batches are not supported"), None
    if not message:
        return _error(None, -32600, "Invalid request", "a batch must not be empty"), None
    answers = [_in_batch(entry, supported) for entry in message]
    return [answer for answer in answers if answer is not None] or None, None


def _in_batch(entry: Any, supported: tuple[int, ...]) -> dict[str, Any] | None:
    """The answer to one entry of a batch before ``initialize``: what it would get alone, but an
    ``initialize`` is not taken from a batch."""
    if isinstance(entry, dict) and entry.get("method") == "initialize" and "id" in entry:
        request_id = entry["id"]
        return _error(request_id if _is_id(request_id) else None, -32600, "Invalid request", _ALONE)
    answer: dict[str, Any] | None = _one(entry, supported)[0]
    return answer


def _one(
    message: Any,
    supported: tuple[int, ...],
    unsupported_version_error: int | None = UNSUPPORTED_PROTOCOL_VERSION,
) -> _Started:
    """:func:`_start` for a message that is not a batch."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _error(None, -32600, "Invalid request", _NOT_INITIALIZE), None
    method = message.get("method")
    notification = isinstance(method, str) and "id" not in message
    response = "method" not in message and ("result" in message or "error" in message)
    if notification or response:
        return None, None  # nothing awaits it yet
    if not isinstance(method, str) or "id" not in message or not _is_id(message["id"]):
        return _error(None, -32600, "Invalid request", _NOT_INITIALIZE), None
    request_id = message["id"]
    if method != "initialize":
        detail = "first ACP request must be initialize"
        return _error(request_id, -32600, "Invalid request", detail), None
    params = message.get("params")
    requested = params.get("protocolVersion") if isinstance(params, dict) else None
    if type(requested) is not int or not 0 <= requested <= _HIGHEST:
        detail = "initialize.protocolVersion must be a valid ACP protocol version"
        return _error(request_id, -32602, "Invalid params", detail), None
    try:
        version = negotiated_version(requested, supported, unsupported_version_error)
    except RequestError as refused:
        return _error(request_id, refused.code, refused.message, refused.data), None
    if version != requested:
        version = readable_version(version, params, supported)
    integral = isinstance(request_id, float) and request_id.is_integer()
    if version >= 2 and not (isinstance(request_id, (str, int)) or integral):
        message_text = "Invalid request: ACP v2 request IDs must be strings or integers"
        return _error(None, -32600, message_text), None
    assert isinstance(params, dict)
    initialize = {**message, "params": {**params, "protocolVersion": version}}
    return None, (version, initialize, requested)


def readable_version(picked: int, params: Any, supported: tuple[int, ...]) -> int:
    """The version to serve a client that asked for a version not served: ``picked``, the
    draft's, unless its agent cannot read the client's ``initialize`` (its params are in an older
    version's shape: a v1 client asking for 999); then the latest version below it whose agent
    reads them, since it is the latest version the agent can answer that client in (a v2 answer
    names its auth methods by ``methodId``, where a v1 client reads ``id``). None reads them:
    ``picked``, whose connection answers the error (``_typed.routed_from``)."""
    if reads_initialize(picked, params) is not False:
        return picked
    lower = sorted((version for version in supported if version < picked), reverse=True)
    return next((v for v in lower if reads_initialize(v, params)), picked)


@contextmanager
def _routing(requested: int, version: int, supported: tuple[int, ...]) -> Iterator[None]:
    """While the picked version's connection is made (and so in its tasks): the version a client
    that asked for another asked for, and the versions served (``_typed.routed_from``)."""
    token = routed_from.set(None if requested == version else (requested, supported))
    try:
        yield
    finally:
        routed_from.reset(token)


def _dump(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


class _Fed:
    """What a routed or handed-over connection reads from: fed the wire's bytes (``feed_data``,
    ``feed_eof``), by :meth:`_pump` from a stream reader, or straight from a :class:`PipeReader`
    (``_source``), whose reading its back pressure pauses and resumes."""

    _source: PipeReader | None

    def feed_data(self, chunk: bytes) -> None:
        raise NotImplementedError

    def feed_eof(self, reason: str = "the peer closed the connection") -> None:
        raise NotImplementedError

    async def _pump(self, reader: asyncio.StreamReader) -> None:
        while chunk := await reader.read(1 << 16):
            self.feed_data(chunk)
        self.feed_eof()

    def pause_reading(self) -> None:
        if self._source is not None:
            self._source.pause_reading()

    def resume_reading(self) -> None:
        if self._source is not None:
            self._source.resume_reading()


class AgentRouter(_Fed):
    """Serves one connection with the protocol version its first ``initialize`` asks for.

    ``versions``: version -> :data:`Connector`. ``AgentRouter({1: v1, 2: v2}, reader, writer)``
    starts reading at once (inside a running event loop); :meth:`wait_closed` waits for the
    connection to end, :attr:`version` and :attr:`connection` say what it was routed to.
    ``unsupported_version_error``: the package's draft's error for a version none of its agents
    speaks (its newest version's ``methods.UNSUPPORTED_VERSION_ERROR``; the default is the
    TypeScript SDK's ``-32022``); None: the draft defines none, and the latest version is served.
    ``batches``: the draft defines JSON-RPC batches (its newest version's ``methods.BATCHES``).
    """

    def __init__(
        self,
        versions: Mapping[int, Connector],
        reader: asyncio.StreamReader | PipeReader,
        writer: MessageWriter,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        unsupported_version_error: int | None = UNSUPPORTED_PROTOCOL_VERSION,
        batches: bool = False,
    ) -> None:
        if not versions:
            raise ValueError("an AgentRouter needs at least one version")
        self._unsupported = unsupported_version_error
        self._batches = batches
        self.versions = tuple(sorted(versions))
        self._connectors = dict(versions)
        self._writer = writer
        self._max = max_message_size
        self.version: int | None = None
        """The version the connection was routed to; None until then."""
        self.connection: _Connection | None = None
        """The routed version's agent connection; None until then."""
        self._buffer = b""
        self._skipping = False  # reading the rest of a line too long, before initialize
        self._inner: asyncio.StreamReader | None = None  # what the routed connection reads
        self._ended = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        if isinstance(reader, PipeReader):
            self._source = reader
            reader.attach(self)  # type: ignore[arg-type]  # it feeds us bytes as it would a Connection
        else:
            self._source = None
            self._task = asyncio.ensure_future(self._pump(reader))

    # -- the reader's side: bytes in, scanned until the connection is routed, then passed on ----

    def feed_data(self, chunk: bytes) -> None:
        """Bytes read (a :class:`PipeReader` hands them here)."""
        if self._inner is not None:
            self._inner.feed_data(chunk)
            return
        self._buffer += chunk
        while self._inner is None and b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            if self._skipping:  # the end of a line too long, already refused
                self._skipping = False
            elif len(line) > self._max:
                self._send(_error(None, -32600, "Invalid request", "message too large"))
            else:
                self._line(line)
        if self._inner is None and len(self._buffer) > self._max:
            self._buffer = b""
            if not self._skipping:
                self._send(_error(None, -32600, "Invalid request", "message too large"))
            self._skipping = True

    def feed_eof(self, reason: str = "the peer closed the connection") -> None:
        if self._inner is not None:
            self._inner.feed_eof()
        elif not self._ended.done():
            self._ended.set_result(None)

    # -- routing --------------------------------------------------------------------------

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        answer, routed = _start(line, self.versions, self._unsupported, self._batches)
        if answer is not None:
            self._send(answer)
        if routed is None:
            return
        version, initialize, requested = routed
        self.version = version
        # The routed connection reads a stream reader of its own (any runtime's connection reads
        # one), fed what follows; its back pressure pauses this router's reader.
        self._inner = asyncio.StreamReader(limit=self._max + 1)
        self._inner.set_transport(self)  # type: ignore[arg-type]  # it only pauses and resumes us
        rest, self._buffer = self._buffer, b""
        self._inner.feed_data(_dump(initialize) + b"\n" + rest)
        with _routing(requested, version, self.versions):
            self.connection = self._connectors[version](self._inner, self._writer)
        if not self._ended.done():
            self._ended.set_result(None)

    def _send(self, message: Any) -> None:
        if not self._writer.is_closing():
            self._writer.write(_dump(message) + b"\n")

    # -- lifetime -------------------------------------------------------------------------

    async def wait_closed(self) -> None:
        """Wait until the client goes away (before ``initialize``, or from the routed connection)."""
        await asyncio.shield(self._ended)
        if self.connection is not None:
            await self.connection.wait_closed()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self.connection is not None:
            await self.connection.close()
        elif not self._ended.done():
            self._ended.set_result(None)
        self._writer.close()


async def serve_versions(
    versions: Mapping[int, Connector],
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    unsupported_version_error: int | None = UNSUPPORTED_PROTOCOL_VERSION,
    batches: bool = False,
) -> None:
    """Serve one client on this process's stdin and stdout, in the version its ``initialize``
    asks for, until it goes away: ``asyncio.run(serve_versions({1: ..., 2: ...}))``;
    ``unsupported_version_error`` and ``batches``: the draft's (see :class:`AgentRouter`)."""
    reader, writer = await stdio_streams()
    router = AgentRouter(
        versions,
        reader,
        writer,
        max_message_size=max_message_size,
        unsupported_version_error=unsupported_version_error,
        batches=batches,
    )
    try:
        await router.wait_closed()
    finally:
        await router.close()


class _Replayed:
    """The transport a routed connection reads: the ``initialize`` the router read (as it hands
    it over), then what ``transport`` receives; sends and closes go to ``transport``."""

    def __init__(self, first: bytes, transport: MessageTransport) -> None:
        self._first: bytes | None = first
        self._transport = transport

    async def receive(self) -> bytes | None:
        first, self._first = self._first, None
        return first if first is not None else await self._transport.receive()

    async def send(self, message: bytes) -> None:
        await self._transport.send(message)

    async def close(self) -> None:
        await self._transport.close()


async def route_transport(
    versions: Mapping[int, Connector],
    transport: MessageTransport,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    unsupported_version_error: int | None = UNSUPPORTED_PROTOCOL_VERSION,
    batches: bool = False,
) -> None:
    """Serve one connection over ``transport`` (a WebSocket, a Streamable HTTP connection) in
    the version its first ``initialize`` asks for, until it ends, with :class:`AgentRouter`'s
    policy and answers: what an ASGI app runs per connection,
    ``_asgi.AcpApp(functools.partial(route_transport, {1: ..., 2: ...}))``. The picked
    version's connector is given the transport, and no writer."""
    supported = tuple(sorted(versions))
    while True:
        message = await transport.receive()
        if message is None:
            return  # the client went away before initialize
        if not message.strip():
            continue
        if len(message) > max_message_size:
            started: _Started = (_error(None, -32600, "Invalid request", "message too large"), None)
        else:
            started = _start(message, supported, unsupported_version_error, batches)
        answer, routed = started
        if answer is not None:
            try:
                await transport.send(_dump(answer))
            except ConnectionError:
                return
        if routed is not None:
            break
    version, initialize, requested = routed
    with _routing(requested, version, supported):
        connection = versions[version](_Replayed(_dump(initialize), transport), None)
    try:
        await connection.wait_closed()
    finally:
        await connection.close()
