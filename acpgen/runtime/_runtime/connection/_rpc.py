"""JSON-RPC 2.0 for ACP: the connection core, independent of the schema, and the names the
generated modules and user code import from it.

The runtime is in layers, each a module of its own, imported one way (lower first):
``_errors`` (:class:`RequestError`, :class:`ConnectionClosed`), ``_framing`` (strict JSON,
messages' text, newline framing), ``_tracing`` (trace context and spans, with OpenTelemetry
where it is installed), ``_transports`` (the :class:`MessageTransport` seam, byte
streams and pipes), ``_memory`` (in-memory transports), ``_sender`` (batching, back pressure),
``_incoming`` (request tasks, cancellation, per-session order), ``_connection``
(:class:`Connection`: lifecycle, calls and answers, checks), ``_typed`` (codec, routes, proxies),
``_process`` (stdio, child processes).

A :class:`Connection` runs over a byte stream of newline-delimited JSON (a pipe, stdio,
:func:`memory_pipe`) or over any :class:`MessageTransport`, one message per ``receive``/``send``
(a WebSocket frame, an HTTP body), with the same wire rules:

* every incoming request runs as its own (ordinary) :class:`asyncio.Task`, so many can be in
  flight at once;
* notifications that name the same ``sessionId`` are handled one after another, in arrival order;
* a response is released to its caller only after every notification that arrived before it has
  been handled, so a prompt's result never overtakes the updates sent before it;
* a message that is not JSON (bad syntax, invalid UTF-8, ``NaN``/``Infinity``) answers -32700 with
  id null, except UTF-8 text that does not begin with ``{``, ``[`` or ``"`` (a stray ``print``),
  which is logged and not answered; JSON this side cannot hold (nested beyond the parser's depth,
  a number beyond the float range) answers -32700 with the message's id when it can be found; a
  message that is not a JSON-RPC 2.0 object (or a batch) -32600, with its id if valid; a message
  above ``max_message_size`` bytes a -32600 refusal with its id; the connection keeps serving;
* output is strict JSON: a value with ``NaN`` or an infinity is never sent;
* a handler's unexpected exception answers -32603 with its type and message
  (``{"details": "KeyError: 's'"}``), never its traceback (which is logged);
* ``$/cancel_request`` cancels the named request's task, which is answered with -32800;
* when the peer stops writing (end of input) the calls still waiting for it fail at once with
  :class:`ConnectionClosed`, and every request already read is still answered before closing;
* when the peer stops reading, this side stops reading too once more than 1 MiB of output waits
  (back pressure), and goes on when it drains.

Nothing here writes to stdout except through the writer it is given; logs go to ``logging``
(the logger ``<package>._rpc``).
"""

from __future__ import annotations

from ..transports._memory import memory_pipe, memory_transports
from ..transports._process import (
    ProcessReader,
    describe_exit,
    spawn,
    stdio_streams,
    stop_process,
)
from ..transports._transports import (
    MessageTransport,
    MessageWire,
    MessageWriter,
    PipeReader,
    StreamWire,
)
from ..wire._errors import ConnectionClosed, RequestError, UnsupportedVersion
from ..wire._framing import DEFAULT_MAX_MESSAGE_SIZE, JsonText
from ._connection import CANCEL_REQUEST, Connection, Observer
from ._incoming import Dispatcher
from ._typed import (
    Codec,
    PeerConnection,
    Proxy,
    Route,
    SessionUse,
    TypedDispatcher,
    log_unhandled,
    negotiated_version,
    params_of,
    register_initialize,
)

__all__ = [
    "CANCEL_REQUEST",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "Codec",
    "Connection",
    "ConnectionClosed",
    "Dispatcher",
    "JsonText",
    "MessageTransport",
    "MessageWire",
    "MessageWriter",
    "Observer",
    "PeerConnection",
    "PipeReader",
    "ProcessReader",
    "Proxy",
    "RequestError",
    "Route",
    "SessionUse",
    "StreamWire",
    "TypedDispatcher",
    "UnsupportedVersion",
    "describe_exit",
    "log_unhandled",
    "memory_pipe",
    "memory_transports",
    "negotiated_version",
    "params_of",
    "register_initialize",
    "spawn",
    "stdio_streams",
    "stop_process",
]
