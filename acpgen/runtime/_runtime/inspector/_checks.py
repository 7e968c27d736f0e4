"""Checks ACP traffic message by message: what ``inspect`` and ``acpgen validate`` report.

A :class:`Checker` sees every message of one connection in the order it travelled, each with its
direction, and keeps what it needs to judge the next ones: the requests still waiting for their
response, the sessions that exist, what each side advertised in ``initialize``. Everything it
knows about the protocol comes from the package's method table (``methods.METHODS``,
``methods.CAPABILITIES``, ``methods.PROTOCOL_VERSION``) and its models; nothing here names a
method except ``initialize``, and no property except ``protocolVersion`` and ``sessionId``.

Each problem is a :class:`Problem`: a severity, a kind (the summary groups by it), the
direction, the method, the message's id and the JSON pointer of the offending value inside the
message (``/params/update/sessionUpdate``). The kinds, all errors but the last two:

* ``invalid-json``: the line is not JSON;
* ``invalid-message``: not a JSON-RPC 2.0 request, notification or response;
* ``unknown-method``: no such method in the schema (extension methods, ``_...``, are free);
* ``wrong-direction``: the method exists, but the other side handles it;
* ``wrong-kind``: a notification sent with an id, or a request without one;
* ``invalid-params`` / ``invalid-result``: the params (the result) do not decode with the
  method's params (result) type;
* ``invalid-error``: an error object without an integer ``code`` and a string ``message``;
* ``unknown-response``: a response to an id no outstanding request has;
* ``duplicate-response``: a second response to a request already answered;
* ``response-to-notification``: a response to a notification (sent, wrongly, with an id);
* ``reused-id``: a request id still in use by an outstanding request;
* ``unknown-session``: the agent names a session that was never created or named;
* ``capability``: a request the other side did not advertise the capability for;
* ``protocol-version``: the agreed protocol version is not the one the schema describes;
* ``repaired`` (a warning): a bad value the schema's ``x-deserialize-*`` annotations let a
  lenient peer repair (replace by its default, drop from its array, read ``null`` as empty);
* ``unanswered`` (a warning, from :meth:`Checker.finish`): a request still without a response
  when the connection ended.

A checker made with ``strict=True`` reports warnings as errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AGENT_TO_CLIENT",
    "CLIENT_TO_AGENT",
    "DIRECTIONS",
    "ERROR",
    "WARNING",
    "Checked",
    "Checker",
    "Problem",
]

CLIENT_TO_AGENT = "client-to-agent"
AGENT_TO_CLIENT = "agent-to-client"
DIRECTIONS = (CLIENT_TO_AGENT, AGENT_TO_CLIENT)
ERROR = "error"
WARNING = "warning"

#: The side that receives (and so handles) what travels in each direction.
_RECEIVER = {CLIENT_TO_AGENT: "agent", AGENT_TO_CLIENT: "client"}
_REVERSE = {CLIENT_TO_AGENT: AGENT_TO_CLIENT, AGENT_TO_CLIENT: CLIENT_TO_AGENT}
_INITIALIZE = "initialize"
_ANSWERED_KEPT = 4096  # ids of answered requests remembered, to name a second response


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


_parse = json.JSONDecoder(parse_constant=_not_json).decode


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one message."""

    severity: str  # ERROR or WARNING
    kind: str  # see the module's table
    direction: str  # CLIENT_TO_AGENT or AGENT_TO_CLIENT
    method: str | None  # the method, or the method of the request a response answers
    id: Any  # the message's id; None when it has none (see ``has_id``)
    has_id: bool
    pointer: str  # JSON pointer into the message; "" is the whole message
    message: str

    def format(self) -> str:
        """One line: ``error: agent-to-client session/update id=- #/params/update: ...``."""
        ident = json.dumps(self.id) if self.has_id else "-"
        text = " ".join(self.message.split())
        return f"{self.severity}: {self.direction} {self.method or '?'} id={ident} #{self.pointer}: {text}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "severity": self.severity,
            "kind": self.kind,
            "direction": self.direction,
            "method": self.method,
        }
        if self.has_id:
            out["id"] = self.id
        out["pointer"] = self.pointer
        out["message"] = self.message
        return out


@dataclass
class Checked:
    """What one message was, and what is wrong with it."""

    direction: str
    kind: str  # "request", "notification", "response" or "invalid"
    method: str | None = None
    id: Any = None
    has_id: bool = False
    parsed: bool = True  # the line was JSON
    problems: list[Problem] = field(default_factory=list)
    #: (pointer, type name, value): the parts decoded with the models, for other validators
    typed: list[tuple[str, str, Any]] = field(default_factory=list)


@dataclass
class _Request:
    method: str
    info: Any  # the method's MethodInfo; None for an extension or unknown method


class Checker:
    """Checks the messages of one connection, in order.

    ``methods``: the package's ``METHODS``; ``models``: its models module (types are looked up
    by name); ``decode`` / ``decode_error``: its codec; ``capabilities``: its ``CAPABILITIES``.
    ``strict``: report warnings as errors. ``one_way``: the messages are a capture of one
    direction, so a response whose request is not among them (or a request whose response is
    not) is not a problem.
    """

    def __init__(
        self,
        methods: Iterable[Any],
        models: Any,
        decode_salvaging: Callable[[Any, Any], tuple[Any, Sequence[Any]]],
        decode_error: type[Exception],
        capabilities: Mapping[str, str],
        protocol_version: int,
        *,
        strict: bool = False,
        one_way: bool = False,
    ) -> None:
        # (receiving side, wire name) -> kind -> MethodInfo: a method may be both a request and
        # a notification (``mcp/message``)
        self._routes: dict[tuple[str, str], dict[str, Any]] = {}
        for info in methods:
            for side in ("agent", "client") if info.side == "protocol" else (info.side,):
                self._routes.setdefault((side, info.method), {})[info.kind] = info
        self._models = models
        self._decode = decode_salvaging
        self._decode_error = decode_error
        self._capabilities = dict(capabilities)
        self._protocol_version = protocol_version
        self._strict = strict
        self._one_way = one_way
        # direction a request travelled -> id -> the requests with that id, oldest first
        self._outstanding: dict[str, dict[Any, list[_Request]]] = {d: {} for d in DIRECTIONS}
        self._answered: dict[str, dict[Any, str]] = {d: {} for d in DIRECTIONS}
        self._notified: dict[str, dict[Any, str]] = {d: {} for d in DIRECTIONS}
        self._initialize: dict[str, Any] = {}  # "params" and "result" of initialize, once seen
        self._sessions: set[str] = set()

    # -- entry points ------------------------------------------------------------------------

    def check_line(self, direction: str, line: bytes | str) -> Checked:
        """Check one line of the wire (one NDJSON message, without its newline)."""
        try:
            message = _parse(line.decode("utf-8") if isinstance(line, bytes) else line)
        except ValueError as exc:
            checked = Checked(direction, "invalid", parsed=False)
            self._add(checked, ERROR, "invalid-json", "", f"not JSON: {exc}")
            return checked
        return self.check(direction, message)

    def check(self, direction: str, message: Any) -> Checked:
        """Check one decoded JSON message travelling in ``direction``."""
        if direction not in _RECEIVER:
            raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
        if not isinstance(message, dict):
            checked = Checked(direction, "invalid")
            what = (
                "a batch (ACP does not use batches)"
                if isinstance(message, list)
                else "not an object"
            )
            self._add(checked, ERROR, "invalid-message", "", f"not a JSON-RPC message: {what}")
            return checked
        has_id = "id" in message
        checked = Checked(direction, "invalid", id=message.get("id"), has_id=has_id)
        if isinstance(message.get("method"), str):
            checked.method = message["method"]
        if message.get("jsonrpc") != "2.0":
            self._add(checked, ERROR, "invalid-message", "/jsonrpc", 'jsonrpc must be "2.0"')
        if has_id and not _valid_id(message["id"]):
            self._add(checked, ERROR, "invalid-message", "/id", "id must be a string or an integer")
            return checked
        if "method" in message:
            self._check_call(checked, message)
        elif has_id and ("result" in message or "error" in message):
            self._check_response(checked, message)
        else:
            self._add(checked, ERROR, "invalid-message", "", "neither a request nor a response")
        return checked

    # -- requests and notifications ----------------------------------------------------------

    def _check_call(self, checked: Checked, message: dict[str, Any]) -> None:
        method = message["method"]
        if not isinstance(method, str):
            self._add(checked, ERROR, "invalid-message", "/method", "method must be a string")
            return
        direction = checked.direction
        checked.method = method
        checked.kind = "request" if checked.has_id else "notification"
        receiver = _RECEIVER[direction]
        kinds = {} if method.startswith("_") else self._routes.get((receiver, method), {})
        info = kinds.get(checked.kind) or next(iter(kinds.values()), None)
        if info is None and not method.startswith("_"):
            sender = _RECEIVER[_REVERSE[direction]]
            if (sender, method) in self._routes:
                text = f"{method} is handled by the {sender}: the {receiver} does not take it"
                self._add(checked, ERROR, "wrong-direction", "/method", text)
            else:
                self._add(checked, ERROR, "unknown-method", "/method", f"no method {method}")
        if checked.has_id:
            request_id = checked.id
            if info is not None and info.kind == "notification":
                text = f"{method} is a notification: it takes no id"
                self._add(checked, ERROR, "wrong-kind", "/id", text)
                self._notified[direction][request_id] = method
            else:
                waiting = self._outstanding[direction].setdefault(request_id, [])
                if waiting:
                    text = f"id {json.dumps(request_id)} is still in use by a {waiting[0].method} request"
                    self._add(checked, ERROR, "reused-id", "/id", text)
                waiting.append(_Request(method, info))
        elif info is not None and info.kind == "request":
            self._add(checked, ERROR, "wrong-kind", "", f"{method} is a request: it needs an id")
        if info is None:
            return
        params = message.get("params")
        self._decode_part(checked, "/params", info.params, params, "invalid-params")
        if method == _INITIALIZE and direction == CLIENT_TO_AGENT:
            self._initialize = {"params": params}
        self._check_capability(checked, method, info.side)
        session = params.get("sessionId") if isinstance(params, dict) else None
        if not isinstance(session, str):
            return
        if direction == CLIENT_TO_AGENT:
            if checked.has_id:
                self._sessions.add(session)  # the client names a session it expects to exist
        elif self._initialize and session not in self._sessions:
            text = f"session {json.dumps(session)} was never created"
            self._add(checked, ERROR, "unknown-session", "/params/sessionId", text)

    def _check_capability(self, checked: Checked, method: str, side: str) -> None:
        pointer = self._capabilities.get(method)
        if pointer is None:
            return
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
        if tokens[0] not in self._initialize:
            return  # that half of initialize was not seen: nothing to check against
        value: Any = self._initialize
        for token in tokens:
            value = value.get(token) if isinstance(value, dict) else None
        if value is True or isinstance(value, dict):
            return
        path = ".".join(tokens[1:])
        text = f"{method} needs the {side}'s capability {path}, which initialize did not advertise"
        self._add(checked, ERROR, "capability", "/method", text)

    # -- responses ---------------------------------------------------------------------------

    def _check_response(self, checked: Checked, message: dict[str, Any]) -> None:
        checked.kind = "response"
        direction, request_id = checked.direction, checked.id
        asked = _REVERSE[direction]  # the direction the request travelled
        is_error = "error" in message
        waiting = self._outstanding[asked].get(request_id)
        if not waiting:
            self._unmatched(checked, asked)
            request = None
        else:
            request = waiting.pop(-1 if is_error else 0)  # a refused duplicate is the newest
            if not waiting:
                del self._outstanding[asked][request_id]
            checked.method = request.method
            answered = self._answered[asked]
            answered[request_id] = request.method
            if len(answered) > _ANSWERED_KEPT:
                del answered[next(iter(answered))]
        if "result" in message and is_error:
            self._add(checked, ERROR, "invalid-message", "", "both result and error")
            return
        if is_error:
            error = message["error"]
            code = error.get("code") if isinstance(error, dict) else None
            if not isinstance(error, dict):
                self._add(checked, ERROR, "invalid-error", "/error", "the error must be an object")
            elif not isinstance(code, int) or isinstance(code, bool):
                self._add(checked, ERROR, "invalid-error", "/error/code", "code must be an integer")
            elif not isinstance(error.get("message"), str):
                text = "message must be a string"
                self._add(checked, ERROR, "invalid-error", "/error/message", text)
            return
        result = message["result"]
        info = request.info if request is not None else None
        if info is not None and info.result is not None:
            self._decode_part(checked, "/result", info.result, result, "invalid-result")
        if isinstance(result, dict):
            session = result.get("sessionId")
            if isinstance(session, str):
                self._sessions.add(session)
        if info is not None and info.method == _INITIALIZE and direction == AGENT_TO_CLIENT:
            self._initialize["result"] = result
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if isinstance(version, int) and version != self._protocol_version:
                text = (
                    f"the agent chose protocol version {version}; the schema describes version"
                    f" {self._protocol_version}, so these checks may not apply"
                )
                self._add(checked, ERROR, "protocol-version", "/result/protocolVersion", text)

    def finish(self) -> list[Problem]:
        """The connection ended: a problem for each request that never got its response."""
        problems: list[Problem] = []
        if self._one_way:
            return problems  # the responses went the other way, unseen
        for direction, waiting in self._outstanding.items():
            for request_id, requests in waiting.items():
                for request in requests:
                    checked = Checked(direction, "request", request.method, request_id, True)
                    text = "no response before the connection ended"
                    self._add(checked, WARNING, "unanswered", "", text)
                    problems += checked.problems
        return problems

    def _unmatched(self, checked: Checked, asked: str) -> None:
        if self._one_way:
            return  # a capture of one direction: the request went the other way, unseen
        request_id = json.dumps(checked.id)
        notified = self._notified[asked].pop(checked.id, None)
        answered = self._answered[asked].get(checked.id)
        if notified is not None:
            checked.method = notified
            text = f"a response to the notification {notified} (sent with id {request_id})"
            self._add(checked, ERROR, "response-to-notification", "/id", text)
        elif answered is not None:
            checked.method = answered
            text = f"a second response to id {request_id}, already answered"
            self._add(checked, ERROR, "duplicate-response", "/id", text)
        else:
            text = f"a response to id {request_id}, which no outstanding request has"
            self._add(checked, ERROR, "unknown-response", "/id", text)

    # -- helpers -----------------------------------------------------------------------------

    def _decode_part(
        self, checked: Checked, at: str, type_name: str, value: Any, kind: str
    ) -> None:
        tp = getattr(self._models, type_name, None)
        if tp is None:
            return
        checked.typed.append((at, type_name, value))
        try:
            _, salvages = self._decode(tp, value)
        except self._decode_error as exc:
            path = str(getattr(exc, "path", ""))
            text = str(getattr(exc, "message", exc))
            self._add(checked, ERROR, kind, at + path, f"{type_name}: {text}")
            return
        for (
            salvage
        ) in salvages:  # bad values the schema's x-deserialize-* rules let a decoder repair
            text = f"{type_name}: {salvage.reason}; a lenient peer has it {salvage.action}"
            self._add(checked, WARNING, "repaired", at + salvage.path, text)

    def _add(self, checked: Checked, severity: str, kind: str, pointer: str, text: str) -> None:
        if severity == WARNING and self._strict:
            severity = ERROR
        problem = Problem(
            severity=severity,
            kind=kind,
            direction=checked.direction,
            method=checked.method,
            id=checked.id if checked.has_id else None,
            has_id=checked.has_id,
            pointer=pointer,
            message=text,
        )
        checked.problems.append(problem)


def _valid_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)
