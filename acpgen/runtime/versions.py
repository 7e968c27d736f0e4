"""Several protocol versions over one connection, for one's own agents and clients.

An agent of several versions gives each version's connection a connector, a function that makes
it over the wire: ``lambda reader, writer: v1.agent.AgentSideConnection(MyV1Agent(), reader,
writer)`` (over the network: a transport, and None for the writer). Then:

* :func:`serve_versions` serves one client on stdin and stdout, in the version its first
  ``initialize`` asks for (:class:`AgentRouter` does it over any reader and writer);
* :func:`asgi_app` serves every version over the network (WebSocket and Streamable HTTP at
  ``/acp``), each connection routed on its own (:func:`route_transport` routes one);
* ``unsupported_version_error`` and ``batches`` are the rules of the package's newest draft, its
  ``methods.UNSUPPORTED_VERSION_ERROR`` and ``methods.BATCHES``: give them (the defaults are the
  TypeScript SDK's draft's, -32022 and no batches).

The router picks the version by the draft's rule (:func:`negotiated_version`), or, for a client
asking for a version not served whose ``initialize`` that version's agent cannot read (a v1
client asking for 999), the latest version below it whose agent reads it, and hands the
connection over; nothing is converted between versions, but the ``protocolVersion`` of that first
``initialize``, set to the version picked.

A client of several versions gives each version's client connection a connector the same way
(``lambda reader, writer: v2.client.ClientSideConnection(MyV2Client(), reader, writer)``) and a
function of a version giving the ``initialize`` params in that version's shape. It asks for the
newest version (or ``ask=N``) and binds the one the agent answers: :func:`spawn_versions` starts
the agent, :func:`connect_remote_versions` connects to it at a URL, :func:`connect_versions`
works over a reader and a writer (or a transport). Each gives a :class:`Bound`, whose
``connection`` is the bound version's client connection; a refusal is a :class:`RequestError`,
an answer in a version none of them speaks :class:`UnsupportedVersion`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._runtime.connection._rpc import (
    DEFAULT_MAX_MESSAGE_SIZE,
    ConnectionClosed,
    MessageTransport,
    MessageWriter,
    PipeReader,
    RequestError,
    UnsupportedVersion,
    negotiated_version,
    spawn,
    stop_process,
)
from ._runtime.remote import _asgi, _remote
from ._runtime.versions._versions import (
    AgentRouter,
    Connector,
    _Fed,
    route_transport,
    select_version,
    serve_versions,
)
from ._runtime.wire._errors import UNSUPPORTED_PROTOCOL_VERSION

__all__ = [
    "INITIALIZE_ID",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "AgentRouter",
    "Bound",
    "Connector",
    "RequestError",
    "UnsupportedVersion",
    "asgi_app",
    "connect_remote_versions",
    "connect_versions",
    "negotiated_version",
    "route_transport",
    "select_version",
    "serve_versions",
    "spawn_versions",
]

logger = logging.getLogger(__name__)

#: Gives the ``initialize`` params in a version's shape (``protocolVersion`` is set for it).
Initialize = Callable[[int], dict[str, Any]]


def asgi_app(
    versions: Mapping[int, Connector],
    *,
    token: str | None = None,
    unsupported_version_error: int | None = UNSUPPORTED_PROTOCOL_VERSION,
    batches: bool = False,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    **options: Any,
) -> _asgi.AcpApp:
    """Every version as one ASGI application at ``/acp`` (``uvicorn module:app``): each
    connection, a WebSocket or a Streamable HTTP connection, is routed by its first
    ``initialize``; each connector is given the connection's transport and None. ``token``: the
    bearer token a client must send; ``options``: the app's others (``allowed_origins``, ...)."""
    serve = functools.partial(
        route_transport,
        dict(versions),
        max_message_size=max_message_size,
        unsupported_version_error=unsupported_version_error,
        batches=batches,
    )
    return _asgi.AcpApp(
        serve, token=token, batches=batches, max_message_size=max_message_size, **options
    )


@dataclass(frozen=True)
class Bound:
    """A client connection bound to the protocol version the agent answered."""

    version: int  # the version the agent answered: the one the connection speaks
    requested: int  # the version asked for
    connection: Any  # that version's client connection (``ClientSideConnection``)
    initialized: dict[str, Any]  # the agent's ``initialize`` result, as JSON

    @property
    def lower(self) -> bool:
        """The agent answered a lower version than the one asked for."""
        return self.version < self.requested

    @property
    def note(self) -> str:
        """One line saying what was bound, and that it is lower than asked when it is."""
        if self.lower:
            return (
                f"the agent answered protocol version {self.version}, lower than the {self.requested}"
                f" asked for: this connection speaks {self.version}"
            )
        return f"the agent answered protocol version {self.version}"


#: The id of the ``initialize`` request :func:`connect_versions` sends before any connection has
#: taken the wire (a string: the connection's own ids are integers from 0).
INITIALIZE_ID = "initialize"


async def connect_versions(
    versions: Mapping[int, Connector],
    reader: asyncio.StreamReader | PipeReader | MessageTransport,
    writer: MessageWriter | None,
    initialize: Initialize,
    *,
    ask: int | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> Bound:
    """Ask the agent for ``ask`` (default: the highest of ``versions``) and bind the version it
    answers: that version's client connection, made by its connector, reads what follows.
    ``reader`` and ``writer``: a byte stream's, or a :class:`MessageTransport` and None.
    ``initialize(version)``: the ``initialize`` params in that version's shape
    (``protocolVersion`` is set here); the highest configured version at or below ``ask`` (the
    lowest when none is) gives the shape.

    Raises :class:`RequestError` when the agent refuses (``-32022``: it speaks none of them),
    :class:`UnsupportedVersion` when it answers a version no connector speaks, and
    :class:`ConnectionClosed` when it goes away first. Nothing is converted between versions.
    """
    supported = tuple(sorted(versions))
    asked = supported[-1] if ask is None else ask
    shape = select_version(asked, supported) or supported[0]
    params = {**initialize(shape), "protocolVersion": asked}
    request = {"jsonrpc": "2.0", "id": INITIALIZE_ID, "method": "initialize", "params": params}
    text = json.dumps(request, separators=(",", ":")).encode()
    wire: Any
    if writer is None:  # a message transport
        assert not isinstance(reader, (asyncio.StreamReader, PipeReader))
        await reader.send(text)
        answer, wire = await _transport_answer(reader), reader
    else:
        assert not isinstance(reader, MessageTransport)
        writer.write(text + b"\n")
        handshake = _Handshake(reader, max_message_size)
        answer, wire = await handshake.answer(), handshake
    if "error" in answer:
        raise RequestError.from_json(answer["error"])
    result = answer.get("result")
    answered = result.get("protocolVersion") if isinstance(result, dict) else None
    if not isinstance(answered, int) or answered not in versions:
        raise UnsupportedVersion(
            f"the agent answered protocol version {answered}; this client speaks"
            f" {', '.join(map(str, supported))} (it asked for {asked})"
        )
    assert isinstance(result, dict)
    if writer is None:
        connection = versions[answered](wire, None)
    else:
        connection = versions[answered](wire.hand_over(), writer)
    return Bound(answered, asked, connection, result)


@contextlib.asynccontextmanager
async def spawn_versions(
    versions: Mapping[int, Connector],
    command: str,
    *args: str,
    initialize: Initialize,
    ask: int | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    stderr: int | None = None,
    grace: float = 2.0,
) -> AsyncIterator[Bound]:
    """Start an agent process and bind the version it answers (:func:`connect_versions`):
    ``async with spawn_versions({1: ..., 2: ...}, "my-agent", initialize=params) as bound:``.
    On exit the connection closes and the agent is stopped (terminated after ``grace``
    seconds, then killed); if it goes away first, :class:`ConnectionClosed` says how."""
    process, reader, writer = await spawn(command, *args, cwd=cwd, env=env, stderr=stderr)
    bound: Bound | None = None
    try:
        bound = await connect_versions(versions, reader, writer, initialize, ask=ask)
        yield bound
    finally:
        if bound is not None:
            await bound.connection.close()
        else:
            writer.close()
        await stop_process(process, grace)
        await reader.finished()


@contextlib.asynccontextmanager
async def connect_remote_versions(
    versions: Mapping[int, Connector],
    url: str,
    *,
    initialize: Initialize,
    ask: int | None = None,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    http2: bool = False,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[Bound]:
    """Connect to a remote agent (``ws://``, ``wss://``, ``http://``, ``https://``, as the client
    module's ``connect_agent`` does) and bind the version it answers (:func:`connect_versions`);
    each connector is given the transport and None."""
    transport = await _remote.open_transport(
        url, token=token, headers=headers, http2=http2, max_message_size=max_message_size
    )
    bound: Bound | None = None
    try:
        bound = await connect_versions(versions, transport, None, initialize, ask=ask)
        yield bound
    finally:
        if bound is not None:
            await bound.connection.close()
        await transport.close()


async def _transport_answer(transport: MessageTransport) -> dict[str, Any]:
    """The agent's answer to the first ``initialize``, read from a message transport."""
    while True:
        message = await transport.receive()
        if message is None:
            raise ConnectionClosed("the agent went away before answering initialize")
        value = _answer_of(message)
        if value is not None:
            return value


def _answer_of(line: bytes) -> dict[str, Any] | None:
    """``line``, if it answers the first ``initialize``; what else comes first is logged."""
    try:
        message = json.loads(line) if line.strip() else None
    except (ValueError, RecursionError):
        message = None
    if isinstance(message, dict) and message.get("id") == INITIALIZE_ID and "method" not in message:
        return message
    if line.strip():
        logger.warning("before its answer to initialize, the agent sent %.200r", line)
    return None


class _Handshake(_Fed):
    """Reads the agent's answer to the first ``initialize``, then passes the wire on."""

    def __init__(self, reader: asyncio.StreamReader | PipeReader, max_message_size: int) -> None:
        self._max = max_message_size
        self._buffer = b""
        self._inner: asyncio.StreamReader | None = None
        self._answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._source = reader if isinstance(reader, PipeReader) else None
        if isinstance(reader, PipeReader):
            reader.attach(self)  # type: ignore[arg-type]  # it feeds us bytes as it would a Connection
        else:
            self._task = asyncio.ensure_future(self._pump(reader))

    async def answer(self) -> dict[str, Any]:
        return await self._answer

    def hand_over(self) -> asyncio.StreamReader:
        """What the bound connection reads: the bytes after the answer, then the rest."""
        self._inner = asyncio.StreamReader(limit=self._max + 1)
        self._inner.set_transport(self)  # type: ignore[arg-type]  # it only pauses and resumes us
        if self._buffer:
            self._inner.feed_data(self._buffer)
        self._buffer = b""
        if self._ended:
            self._inner.feed_eof()
        return self._inner

    _ended = False

    def feed_data(self, chunk: bytes) -> None:
        if self._inner is not None:
            self._inner.feed_data(chunk)
            return
        self._buffer += chunk
        while not self._answer.done() and b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            answer = _answer_of(line)
            if answer is not None:
                self._answer.set_result(answer)

    def feed_eof(self, reason: str = "the peer closed the connection") -> None:
        self._ended = True
        if self._inner is not None:
            self._inner.feed_eof()
        elif not self._answer.done():
            self._answer.set_exception(ConnectionClosed(reason))
