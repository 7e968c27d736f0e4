"""The typed layer's plumbing: a codec, the routes a side handles, the dispatcher that decodes
params and calls handlers, the proxy that calls the peer's methods, and what typed connections
share. The generated ``agent.py`` and ``client.py`` are written against these."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Callable, Collection, Coroutine, Sequence
from enum import Enum
from typing import Any, NamedTuple

from ..wire._errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    RequestError,
    UnsupportedVersion,
)
from ..wire._framing import WIRE_LOG, JsonText, encode_json
from ._connection import Connection, Observer

__all__ = [
    "Codec",
    "PeerConnection",
    "Proxy",
    "Route",
    "SessionUse",
    "TypedDispatcher",
    "log_unhandled",
    "negotiated_version",
    "params_of",
    "reads_initialize",
    "register_initialize",
    "routed_from",
]

logger = logging.getLogger(WIRE_LOG)

#: Set by a router of several protocol versions while it makes the connection of the version it
#: picked for a client that asked for another (``_versions``): the version asked for and the
#: versions the router serves, so that an ``initialize`` the picked version cannot read (its
#: params in the shape of the version asked for) is answered naming them all. The connection's
#: tasks, made then, keep it.
routed_from: contextvars.ContextVar[tuple[int, tuple[int, ...]] | None] = contextvars.ContextVar(
    "routed_from", default=None
)


class Codec(NamedTuple):
    """How JSON becomes typed values and back (the generated models' ``decode`` / ``encode``)."""

    decode: Callable[[Any, Any], Any]
    encode: Callable[[Any], Any]
    error: type[Exception]  # raised by ``decode``; has ``.path``, a JSON pointer
    #: A value's wire JSON text, the same as ``encode``'s JSON but written faster; None: through
    #: ``encode``.
    encode_text: Callable[[Any], str] | None = None

    def writer(self) -> Callable[[Any], JsonText]:
        """What writes a typed value for a connection to send as it is."""
        encode_text = self.encode_text
        if encode_text is None:
            encode = self.encode
            return lambda value: JsonText(encode_json(encode(value)))
        return lambda value: JsonText(encode_text(value))


class SessionUse(str, Enum):
    """How a request bears on the sessions open on a connection, which an agent keeps (its
    ``open_sessions``, and ``session_known``, which a request naming one is checked with)."""

    NAMES = "names"  # names an open session (``session/prompt``): refused when it is not one
    CREATES = "creates"  # its result's ``sessionId`` is open from then on (``session/new``)
    OPENS = "opens"  # its params' ``sessionId`` is open from then on (``session/load``)
    CLOSES = "closes"  # names an open session, which is closed once answered (``session/close``)
    FORGETS = "forgets"  # its params' session is not open once answered (``session/delete``)


class Route(NamedTuple):
    """One method a side handles: its wire name, the handler's attribute name and its params type,
    and how the request bears on the open sessions (``None``: not at all).

    A side may handle one wire name both as a request and as a notification (two routes)."""

    method: str
    handler: str
    params_type: Any
    is_request: bool
    session: SessionUse | None = None


#: Whether the agent connections of each protocol version of this runtime read an
#: ``initialize``'s params: one entry per version whose ``agent`` module is imported (each
#: registers itself, :func:`register_initialize`). The router of several versions (``_versions``)
#: asks it before it hands a client that asked for a version it does not serve to the version its
#: draft picks.
_INITIALIZE_READERS: dict[int, Callable[[Any], bool]] = {}


def register_initialize(version: int, routes: Collection[Route], codec: Codec) -> None:
    """Say that the agent connections of ``version`` read ``initialize`` as ``routes`` decode it
    with ``codec`` (what the generated ``agent`` module calls as it is imported)."""
    for route in routes:
        if route.method == "initialize" and route.is_request:
            _INITIALIZE_READERS[version] = functools.partial(_reads, codec, route.params_type)


def reads_initialize(version: int, params: Any) -> bool | None:
    """Whether the agent connections of ``version`` read an ``initialize`` of these params (its
    ``protocolVersion`` set to ``version``, as the router hands it over); None: no agent module
    of that version registered with this runtime (it may be another package's)."""
    reads = _INITIALIZE_READERS.get(version)
    if reads is None:
        return None
    return reads({**params, "protocolVersion": version} if isinstance(params, dict) else params)


def _reads(codec: Codec, params_type: Any, params: Any) -> bool:
    try:
        codec.decode(params_type, params)
    except codec.error:
        return False
    return True


class TypedDispatcher:
    """Decodes params, calls the handler object's method, encodes its result.

    A handler object with a ``handled_requests`` attribute (a collection of wire names; the stub
    agents have one) handles those requests of ``routes`` alone: any other is answered -32601
    (method not found) before its params are read, whatever they are.

    A handler object with an ``uninitialized`` method (the stub agents) is asked before every
    request but ``initialize`` while its ``initialized`` attribute is false: the error it gives
    answers the request, whatever the method (an unknown one is still -32601)."""

    def __init__(
        self,
        target: Any,
        routes: Collection[Route],
        codec: Codec,
        name: str = "acp",
        protocol_version: int | None = None,
        unsupported_version_error: int | None = UNSUPPORTED_PROTOCOL_VERSION,
    ) -> None:
        handled: Collection[str] | None = getattr(target, "handled_requests", None)
        self._requests = {
            r.method: (_keeping_sessions(target, r), r.params_type)
            for r in routes
            if r.is_request and (handled is None or r.method in handled)
        }
        self._notifications: dict[str, tuple[Callable[[Any], Coroutine[Any, Any, None]], Any]] = {
            r.method: (getattr(target, r.handler), r.params_type)
            for r in routes
            if not r.is_request
        }
        self._ext_method = target.ext_method
        self._target = target
        #: what answers a request before a successful initialize (None: the handler serves it)
        self._uninitialized: Callable[[str], RequestError] | None = getattr(
            target, "uninitialized", None
        )
        self._ext_notification: Callable[[str, Any], Coroutine[Any, Any, None]] = (
            target.ext_notification
        )
        self._codec = codec
        self._decode_value = codec.decode
        self._as_text = codec.writer()
        self._name = name
        self._protocol_version = protocol_version  # the one the side speaks; None: not said
        #: The draft's own error for a version no agent of it speaks (``methods.UNSUPPORTED_
        #: VERSION_ERROR``); None: the draft has none, and the latest version spoken is answered.
        self._unsupported = unsupported_version_error

    def _decode(self, method: str, params_type: Any, params: Any) -> Any:
        try:
            return self._decode_value(params_type, params)
        except self._codec.error as exc:
            absent = self._absent(params_type, params)
            if absent is not _NOT_EMPTY:
                return absent
            raise self._invalid(method, params, exc) from exc

    def _absent(self, params_type: Any, params: Any) -> Any:
        """Params the peer left out (JSON-RPC 2.0 lets a request omit them), decoded as ``{}``
        where its params type has no required field; else :data:`_NOT_EMPTY` (the absence is
        answered as params that do not decode)."""
        if params is not None:
            return _NOT_EMPTY
        try:
            return self._decode_value(params_type, {})
        except self._codec.error:
            return _NOT_EMPTY

    def _invalid(self, method: str, params: Any, exc: Exception) -> RequestError:
        """The error that answers params that do not decode (``-32602``; an ``initialize`` of
        another protocol version is answered by :meth:`_initialize_params`)."""
        path = getattr(exc, "path", "")
        return RequestError.invalid_params({"method": method, "path": path, "message": str(exc)})

    async def handle_request(self, method: str, params: Any) -> Any:
        entry = self._requests.get(method)
        if (
            self._uninitialized is not None
            and not self._target.initialized
            and method != "initialize"
            and (entry is not None or method.startswith("_"))
        ):
            raise self._uninitialized(method)
        if entry is None:
            if method.startswith("_"):
                return await self._ext_method(method, {} if params is None else params)
            raise RequestError.method_not_found(method)
        handler, params_type = entry
        if method == "initialize" and self._protocol_version is not None:
            value = self._initialize_params(params_type, params)
        else:
            value = self._decode(method, params_type, params)
        result = await handler(value)
        return {} if result is None else self._as_text(result)

    def _initialize_params(self, params_type: Any, params: Any) -> Any:
        try:
            negotiated = self._negotiate(params)
        except RequestError:  # the draft's own error; in another version's shape, it says so
            try:
                self._decode_value(params_type, params)
            except self._codec.error:
                _refuse_another_version(params, self._protocol_version, self._unsupported)
            raise
        try:
            return self._decode("initialize", params_type, negotiated)
        except RequestError as exc:
            asked = routed_from.get() or self._asked(params, negotiated)
            if asked is None:  # it asks for the version spoken: its params are invalid
                raise
            requested, supported = asked
            if self._unsupported is not None:  # its params are of the version it asks for
                raise _another_version(requested, supported, self._unsupported) from None
            if isinstance(exc.data, dict):  # say what is spoken
                exc.data = {**exc.data, "requested": requested, "supported": list(supported)}
            raise

    def _asked(self, params: Any, negotiated: Any) -> tuple[int, tuple[int, ...]] | None:
        """The version an ``initialize`` asks for and the one this side speaks, when they differ."""
        if negotiated is params or self._protocol_version is None:
            return None
        return params["protocolVersion"], (self._protocol_version,)

    def _negotiate(self, params: Any) -> Any:
        """An ``initialize`` asking for another version than the one this side speaks, by the
        draft's rule (:func:`negotiated_version`): refused, or handed to the handler asking for
        the version this side speaks, which it answers (as a router of one version would)."""
        requested = params.get("protocolVersion") if isinstance(params, dict) else None
        spoken = self._protocol_version
        if spoken is None or not isinstance(requested, int) or isinstance(requested, bool):
            return params
        if requested == spoken or not 0 <= requested <= _HIGHEST_VERSION:
            return params  # not a protocol version: its params do not decode
        version = negotiated_version(requested, (spoken,), self._unsupported)
        return {**params, "protocolVersion": version}

    def handle_notification(self, method: str, params: Any) -> Coroutine[Any, Any, None]:
        """The handler's coroutine, called with the decoded params, for the connection to await
        (returned, not awaited here: one coroutine less per notification)."""
        entry = self._notifications.get(method)
        if entry is None:
            if method.startswith("_"):
                return self._ext_notification(method, {} if params is None else params)
            logger.debug("%s: ignored notification %s: no handler", self._name, method)
            return _nothing()
        return self._notified(method, entry, params)

    def notification_handler(self, method: str) -> Callable[[Any], Coroutine[Any, Any, None]]:
        """:meth:`handle_notification` of ``method`` as a function of the params alone: what
        the connection calls for each notification of a method it has looked up once."""
        entry = self._notifications.get(method)
        if entry is None:
            return functools.partial(self.handle_notification, method)
        return functools.partial(self._notified, method, entry)

    def _notified(
        self,
        method: str,
        entry: tuple[Callable[[Any], Coroutine[Any, Any, None]], Any],
        params: Any,
    ) -> Coroutine[Any, Any, None]:
        """The coroutine of ``entry``'s handler with the decoded params (decoded here rather than
        by _decode: a call less on every notification); nothing but a warning if they do not."""
        handler, params_type = entry
        try:
            value = self._decode_value(params_type, params)
        except self._codec.error as exc:
            value = self._absent(params_type, params)
            if value is not _NOT_EMPTY:
                return handler(value)
            details = self._invalid(method, params, exc).data
            logger.warning("%s: dropped notification %s: %s", self._name, method, details)
            return _nothing()
        return handler(value)


def _keeping_sessions(target: Any, route: Route) -> Callable[[Any], Coroutine[Any, Any, Any]]:
    """The route's handler, keeping ``target.open_sessions`` (a set of ids) as the request bears
    on them: a request naming a session ``target.session_known`` does not know is answered
    :meth:`RequestError.session_not_found` before its handler runs."""
    handler: Callable[[Any], Coroutine[Any, Any, Any]] = getattr(target, route.handler)
    use = route.session
    if use is None:
        return handler
    if use is SessionUse.NAMES:  # the most frequent (every prompt): no coroutine of its own

        def named(params: Any) -> Coroutine[Any, Any, Any]:
            if not target.session_known(params.session_id):
                raise RequestError.session_not_found(params.session_id)
            return handler(params)

        return named
    closes = use is SessionUse.CLOSES

    async def kept(params: Any) -> Any:
        if closes and not target.session_known(params.session_id):
            raise RequestError.session_not_found(params.session_id)
        result = await handler(params)
        if use is SessionUse.CREATES:
            target.open_sessions.add(result.session_id)
        elif use is SessionUse.OPENS:
            target.open_sessions.add(params.session_id)
        else:  # closes or forgets
            target.open_sessions.discard(params.session_id)
        return result

    return kept


#: What :meth:`TypedDispatcher._absent` returns for params that ``{}`` does not stand for.
_NOT_EMPTY: Any = object()
#: The highest ``ProtocolVersion`` (``uint16``).
_HIGHEST_VERSION = 0xFFFF


def negotiated_version(
    requested: int,
    supported: Collection[int],
    unsupported_version_error: int | None = UNSUPPORTED_PROTOCOL_VERSION,
) -> int:
    """The protocol version an agent speaking ``supported`` answers a client that asks for
    ``requested``, by its draft's rule.

    A draft that defines an error of its own for it (``unsupported_version_error``: the
    TypeScript SDK's v2 draft's ``-32022``, "no protocol version supported by the Agent is at or
    below the requested version") serves the highest version at or below the one requested, and
    raises that error, data ``{"requested": N, "supported": [...]}``, when there is none. A draft
    that defines none (the spec's releases, whose text is the rule:
    ``protocol/v1/initialization#version-negotiation``) answers ``requested`` when it is
    supported, else the latest supported. An agent
    of version 1 alone serves every request with it, as v1 agents always have."""
    spoken = sorted(supported)
    if requested in spoken or spoken == [1]:
        return requested if requested in spoken else 1
    if unsupported_version_error is None:
        return spoken[-1]
    fitting = [version for version in spoken if version <= requested]
    if fitting:
        return fitting[-1]
    raise RequestError(
        unsupported_version_error,
        "Unsupported protocol version",
        {"requested": requested, "supported": spoken},
    )


def _refuse_another_version(params: Any, spoken: int | None, code: int | None) -> None:
    """Raise the draft's unsupported-version error for an ``initialize`` that does not decode
    because the client asks for another protocol version (so its params are of that version's
    shape), naming both versions."""
    requested = params.get("protocolVersion") if isinstance(params, dict) else None
    if spoken is None or code is None or not _is_version(requested) or requested == spoken:
        return
    assert isinstance(requested, int)
    raise _another_version(requested, (spoken,), code)


def _another_version(requested: int, supported: Sequence[int], code: int) -> RequestError:
    """The draft's unsupported-version error ``code`` for a client asking for ``requested``."""
    spoken = ", ".join(map(str, supported))
    return RequestError(
        code,
        "Unsupported protocol version",
        {
            "requested": requested,
            "supported": list(supported),
            "message": f"the client speaks protocol version {requested}; this agent speaks {spoken}",
        },
    )


def _is_version(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


async def _nothing() -> None:
    """What awaiting a notification nobody handles does."""


def log_unhandled(method: str) -> None:
    """What a handler base does with a notification nobody overrode."""
    logger.debug("ignored notification %s: no handler", method)


class Proxy:
    """Calls the peer's methods over a connection; subclasses add one typed method per method."""

    def __init__(
        self, connection: Connection, codec: Codec, protocol_version: int | None = None
    ) -> None:
        self._connection = connection
        self._codec = codec
        self._as_text = codec.writer()
        self._protocol_version = protocol_version  # the one the side speaks; None: not said

    def _request(self, method: str, params: Any) -> Coroutine[Any, Any, Any]:
        if method == "initialize" and self._protocol_version is not None:
            return self._initialize(params)
        # the connection's coroutine itself, awaited by the caller: one coroutine less per call
        return self._connection.request(method, self._as_text(params))

    async def _initialize(self, params: Any) -> Any:
        """``initialize``'s answer, once it is of the protocol version this side speaks or of the
        one it asked for: an answer of another version is not one of its models
        (:class:`UnsupportedVersion` says so)."""
        answer = await self._connection.request("initialize", self._as_text(params))
        answered = answer.get("protocolVersion") if isinstance(answer, dict) else None
        asked = self._codec.encode(params).get("protocolVersion")
        if _is_version(answered) and answered not in (self._protocol_version, asked):
            raise UnsupportedVersion(
                f"the agent answered protocol version {answered}; this client speaks"
                f" {self._protocol_version}"
            )
        return answer

    async def batch(
        self,
        requests: Sequence[tuple[str, Any]],
        *,
        notifications: Sequence[tuple[str, Any]] = (),
    ) -> list[Any]:
        """Send one JSON-RPC batch, where the protocol's draft defines them (``methods.BATCHES``):
        ``requests`` and then ``notifications`` as ``(wire name, params)`` pairs, params a typed
        params object or JSON. Returns each request's answer in order: its JSON result, or the
        :class:`RequestError` it was answered with (see :meth:`Connection.batch`)."""
        as_json = self._as_json
        return await self._connection.batch(
            [(method, as_json(params)) for method, params in requests],
            notifications=[(method, as_json(params)) for method, params in notifications],
        )

    def _as_json(self, params: Any) -> Any:
        if params is None or isinstance(params, (dict, list)):
            return params
        return self._as_text(params)

    def _notify(self, method: str, params: Any) -> Coroutine[Any, Any, None]:
        return self._connection.notify(method, self._as_text(params))

    async def ext_method(self, method: str, params: dict[str, Any] | list[Any]) -> Any:
        """Call an extension method (its wire name starts with ``_``); returns the JSON result."""
        _check_extension(method)
        return await self._connection.request(method, params)

    async def ext_notification(self, method: str, params: dict[str, Any] | list[Any]) -> None:
        """Send an extension notification (its wire name starts with ``_``)."""
        _check_extension(method)
        await self._connection.notify(method, params)


def params_of(
    params_type: Callable[..., Any], args: tuple[Any, ...], fields: dict[str, Any]
) -> Any:
    """A typed proxy call's params object: the one given (``args``), else one built from its keywords."""
    if not args:
        return params_type(**fields)
    if len(args) > 1 or fields:
        name = getattr(params_type, "__name__", "params object")
        raise TypeError(f"pass one {name}, or its fields as keywords, not both")
    return args[0]


def _check_extension(method: str) -> None:
    if not method.startswith("_"):
        raise ValueError(f"extension method names start with '_', got {method!r}")


class PeerConnection:
    """What the typed connections share: lifetime and the JSON-RPC connection underneath."""

    process: asyncio.subprocess.Process | None = (
        None  # the peer's process, when this side started it
    )
    transport: Any = None  # the message transport to a remote peer, when connected over one

    def __init__(self, rpc: Connection) -> None:
        self.rpc = rpc

    @property
    def is_closed(self) -> bool:
        return self.rpc.is_closed

    async def close(self) -> None:
        await self.rpc.close()

    def observe(self, observer: Observer | None) -> None:
        """Call ``observer(direction, message, session_id)`` for every message sent and received
        (see :meth:`Connection.observe`); ``None`` stops."""
        self.rpc.observe(observer)

    async def wait_closed(self) -> None:
        await self.rpc.wait_closed()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
