"""Trace context over the wire, and OpenTelemetry spans around calls and handlers.

When OpenTelemetry's API (``opentelemetry-api``) is importable, a connection traces, unless it is
made with ``tracing=False`` (or set so: ``connection.tracing = False``) or the environment
variable ``ACP_TRACING`` is ``0``, ``false``, ``off`` or ``no`` when it is made:

* every request and notification it sends carries the sender's context in its params' ``_meta``,
  under the keys the spec reserves for W3C trace context: ``traceparent``, and ``tracestate`` and
  ``baggage`` when set. A key already there is kept as it is; params without ``_meta`` get one
  only when there is a context to carry; params that are not an object are sent as they are;
* every request it sends is wrapped in a client span, and every request it handles in a server
  span whose parent is the context the request carries (a new trace when it carries none); the
  handler runs inside it. A notification that carries a context is handled inside it, in a span
  of its own (kind consumer); one that carries none is handled as it would be without tracing.

Spans follow OpenTelemetry's conventions for RPC: named by the method, with ``rpc.system``
``jsonrpc``, ``rpc.method``, ``rpc.jsonrpc.version``, ``rpc.jsonrpc.request_id`` and, when the
params name a session, ``acp.session.id``; an error answer sets ``rpc.jsonrpc.error_code``,
``rpc.jsonrpc.error_message`` and the span's error status; a cancelled call has the error status
``cancelled`` (and the code -32800 on the side that answers it); an exception is recorded.
With the API but no tracer provider set (no SDK configured) no span is made, and a context that
came in still goes out; a provider set while a connection runs is seen within a second. Without the API nothing of OpenTelemetry is imported and messages are sent as they are.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Coroutine
from typing import Any

from ..wire._errors import (
    INTERNAL_ERROR,
    REQUEST_CANCELLED,
    ConnectionClosed,
    RequestError,
)
from ..wire._framing import WIRE_LOG, JsonText, decode_json, encode_json

__all__ = ["ENVIRONMENT", "TRACE_KEYS", "Tracing", "tracing_for"]

logger = logging.getLogger(WIRE_LOG)

#: The environment variable that turns tracing off: ``0``, ``false``, ``off`` or ``no``.
ENVIRONMENT = "ACP_TRACING"
_OFF = frozenset({"0", "false", "off", "no"})
#: The root ``_meta`` keys the spec reserves for W3C trace context.
TRACE_KEYS = ("traceparent", "tracestate", "baggage")
#: Seconds between looks for a tracer provider, until one is set.
LOOK_EVERY = 1.0
#: The instrumentation scope of the spans: the package's name.
SCOPE = (
    __name__.partition("._runtime.")[0]
    if "._runtime." in __name__
    else __name__.rpartition(".")[0] or "acp"
)

_api: Any = None  # OpenTelemetry's modules once imported (a dict), or False: not importable


def _load() -> Any:
    global _api
    if _api is None:
        try:
            from opentelemetry import (  # type: ignore[import-not-found, unused-ignore]
                context,
                propagate,
                trace,
            )
            from opentelemetry.trace import (  # type: ignore[import-not-found, unused-ignore]
                ProxyTracerProvider,
                SpanKind,
                Status,
                StatusCode,
            )
        except ImportError:
            _api = False
        else:
            _api = {
                "context": context,
                "propagate": propagate,
                "trace": trace,
                "kind": SpanKind,
                "Status": Status,
                "ERROR": StatusCode.ERROR,
                "unset": ProxyTracerProvider,
            }
    return _api


def tracing_for(enabled: bool | None) -> Tracing | None:
    """What traces a connection: None when tracing is off, or OpenTelemetry's API is not
    importable (``enabled=True`` then raises ``ImportError``); ``enabled=None`` asks the
    environment (see the module's docstring)."""
    if enabled is False:
        return None
    if enabled is None and os.environ.get(ENVIRONMENT, "").strip().lower() in _OFF:
        return None
    api = _load()
    if not api:
        if enabled:
            raise ImportError(
                "tracing=True needs OpenTelemetry's API: pip install opentelemetry-api"
            )
        return None
    return Tracing(api)


class Tracing:
    """Carries a connection's trace context and makes its spans (see the module's docstring)."""

    def __init__(self, api: dict[str, Any]) -> None:
        self._context = api["context"]
        self._propagate = api["propagate"]
        self._trace = api["trace"]
        self._kind = api["kind"]
        self._status = api["Status"]
        self._error = api["ERROR"]
        self._unset = api["unset"]
        self._tracer = self._trace.get_tracer(SCOPE)
        self._provider_set = False
        self._next_look = 0.0

    def recording(self) -> bool:
        """Whether a tracer provider is set: with none, no span is recorded, and none is made.
        It is set once for good; until it is, this looks at most once a second (looking costs
        more than the rest of a call)."""
        if self._provider_set:
            return True
        now = time.monotonic()
        if now < self._next_look:
            return False
        self._next_look = now + LOOK_EVERY
        self._provider_set = not isinstance(self._trace.get_tracer_provider(), self._unset)
        return self._provider_set

    # -- sending -----------------------------------------------------------------------------

    def carry(self, params: Any, context: Any = None) -> Any:
        """``params`` with ``context`` (the current one by default) in their ``_meta``."""
        if context is None:
            context = self._context.get_current()
            if not context:  # nothing at all: the common case of an untraced program
                return params
        carrier: dict[str, str] = {}
        self._propagate.inject(carrier, context=context)
        return with_meta(params, carrier) if carrier else params

    def serves(self, params: Any) -> bool:
        """Whether a request with ``params`` is handled through :meth:`serve`: when spans are
        recorded, or it carries a context to run inside."""
        return self.recording() or self.extracted(params) is not None

    async def call(
        self,
        exchange: Callable[[Any, str, Any], Coroutine[Any, Any, Any]],
        request_id: Any,
        method: str,
        params: Any,
    ) -> Any:
        """``exchange(request_id, method, params)`` (a call to the peer) in a client span, its
        context carried in the params (when spans are recorded: else :meth:`carry` alone)."""
        span = self._tracer.start_span(method, kind=self._kind.CLIENT)
        if span.is_recording():
            span.set_attributes(_attributes(method, request_id, session_of(params)))
        params = self.carry(params, self._trace.set_span_in_context(span))
        try:
            return await exchange(request_id, method, params)
        except RequestError as exc:
            self._failed(span, exc.code, exc.message)
            raise
        except asyncio.CancelledError:
            span.set_status(self._status(self._error, "cancelled"))
            raise
        except Exception as exc:  # the connection closed, or params that cannot be sent
            span.record_exception(exc)
            span.set_status(self._status(self._error, f"{type(exc).__name__}: {exc}"))
            raise
        finally:
            span.end()

    # -- receiving ---------------------------------------------------------------------------

    def extracted(self, params: Any) -> Any:
        """The context ``params`` carry in their ``_meta``, or None."""
        meta = params.get("_meta") if params.__class__ is dict else None
        if meta.__class__ is not dict:
            return None
        carrier = {key: value for key in TRACE_KEYS if isinstance(value := meta.get(key), str)}
        if not carrier:
            return None
        try:
            return self._propagate.extract(carrier, context=self._context.Context())
        except Exception:  # a propagator that trips over what a peer sent: no context
            logger.debug("could not read the trace context in %r", carrier, exc_info=True)
            return None

    async def serve(
        self,
        handle: Callable[[str, Any], Coroutine[Any, Any, Any]],
        request_id: Any,
        method: str,
        params: Any,
    ) -> Any:
        """``handle(method, params)`` (a request's handler) in a server span, inside the context
        the request carries."""
        parent = self.extracted(params)
        if parent is None:
            parent = self._context.Context()  # the peer carried none: a trace of its own
        span = self._tracer.start_span(method, context=parent, kind=self._kind.SERVER)
        if span.is_recording():
            span.set_attributes(_attributes(method, request_id, session_of(params)))
        token = self._context.attach(self._trace.set_span_in_context(span, parent))
        try:
            return await handle(method, params)
        except RequestError as exc:
            self._failed(span, exc.code, exc.message)
            raise
        except asyncio.CancelledError:
            self._failed(span, REQUEST_CANCELLED, "cancelled")
            raise
        except ConnectionClosed as exc:
            self._failed(span, INTERNAL_ERROR, str(exc))
            raise
        except Exception as exc:
            span.record_exception(exc)
            self._failed(span, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            self._context.detach(token)
            span.end()

    async def notified(
        self,
        handle: Callable[[str, Any], Coroutine[Any, Any, None]],
        method: str,
        params: Any,
        parent: Any,
    ) -> None:
        """``handle(method, params)`` (a notification's handler) inside ``parent``, the context
        the notification carries (see :meth:`extracted`), in a consumer span."""
        span = self._tracer.start_span(method, context=parent, kind=self._kind.CONSUMER)
        if span.is_recording():
            span.set_attributes(_attributes(method, None, session_of(params)))
        token = self._context.attach(self._trace.set_span_in_context(span, parent))
        try:
            await handle(method, params)
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(self._status(self._error, f"{type(exc).__name__}: {exc}"))
            raise
        finally:
            self._context.detach(token)
            span.end()

    def _failed(self, span: Any, code: int, message: str) -> None:
        if span.is_recording():
            span.set_attributes(
                {"rpc.jsonrpc.error_code": code, "rpc.jsonrpc.error_message": message}
            )
            span.set_status(self._status(self._error, message))


def _attributes(method: str, request_id: Any, session: str | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "rpc.system": "jsonrpc",
        "rpc.method": method,
        "rpc.jsonrpc.version": "2.0",
    }
    if request_id is not None:
        attributes["rpc.jsonrpc.request_id"] = (
            request_id if isinstance(request_id, str) else encode_json(request_id)
        )
    if session is not None:
        attributes["acp.session.id"] = session
    return attributes


def session_of(params: Any) -> str | None:
    """The session ``params`` name (their ``sessionId``), or None."""
    if params.__class__ is JsonText:
        if '"sessionId"' not in params.text:
            return None
        params = decode_json(params.text)
    session = params.get("sessionId") if isinstance(params, dict) else None
    return session if isinstance(session, str) else None


def with_meta(params: Any, carrier: dict[str, str]) -> Any:
    """``params`` with the keys of ``carrier`` their ``_meta`` does not have yet; params that
    are not an object as they are."""
    if params.__class__ is JsonText:
        text = params.text
        if not text.startswith("{"):
            return params
        if '"_meta"' not in text:  # the common case: no _meta anywhere, so none at the root
            head = '{"_meta":' + encode_json(carrier)
            rest = text[1:].lstrip()
            return JsonText(head + "}" if rest.startswith("}") else head + "," + rest)
        params = decode_json(text)
    if not isinstance(params, dict):
        return params
    if "_meta" not in params:
        return {**params, "_meta": carrier}
    meta = params["_meta"]
    if not isinstance(meta, dict):
        return params  # an explicit null, or not an object: not ours to replace
    added = {key: value for key, value in carrier.items() if key not in meta}
    return {**params, "_meta": {**meta, **added}} if added else params
