"""The agent kit: the spec's requirements of an agent, each checked over a real connection.

:func:`run` holds an agent to every requirement that applies to a package's schema and protocol
version (its :class:`Target`, which the package's ``conformance`` module builds from its method
table and stub data), one after another on one connection (a fresh one where a check left the
last one closed), and returns a :class:`~._kit_report.Verdict` per requirement. A check passes,
raises :class:`~._kit_peer.Broken` (failed: its message quotes what the agent sent) or
:class:`NotApplicable` (why the agent gave no chance to test it: it advertises no such
capability, or the turn ended before a cancel could reach it). The requirements of session
features are in :mod:`._kit_features`; each requirement cites the page and heading of the spec's
docs of the version (``protocol/v1/...``: the docs of ACP v1.7.0; ``protocol/v2/...``: the
draft's).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._kit_peer import Broken, Peer, quote
from ._kit_report import (
    FAILED,
    MUST,
    NOT_APPLICABLE,
    PASSED,
    SHOULD,
    Requirement,
    Verdict,
)

__all__ = ["CHECKS", "Check", "Kit", "NotApplicable", "Target", "requirements", "run"]

STOP_REASONS = frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"})
UNKNOWN_SESSION_ERRORS = frozenset(
    {-32602, -32002}
)  # the schema's codes that fit a session nobody made
CLIENT_INFO = {"name": "acpgen-conformance", "version": "1"}
#: The version a client from the future asks for.
FUTURE_VERSION = 999
JSONRPC = "https://www.jsonrpc.org/specification"


class NotApplicable(Exception):
    """The agent gave the kit no chance to test the requirement: the message says why."""


@dataclass(frozen=True)
class Target:
    """What the kit needs of a package's schema: plain data its ``conformance`` module builds."""

    version: int  # the protocol version held to
    #: The agent's requests the schema defines (wire names).
    methods: frozenset[str]
    #: Wire name -> JSON pointer into ``initialize`` of the capability it needs (``methods.CAPABILITIES``).
    capabilities: Mapping[str, str] = field(default_factory=dict)
    #: The session features the schema defines: name -> (its method, or "" when it is a field of
    #: ``session/new``; the path of its capability in ``initialize``'s result, () when none).
    features: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    state_turns: bool = False  # turns end with a ``state_update`` to ``idle`` (the v2 drafts)
    info: str = "agentInfo"  # the result's implementation field
    request_info: str = "clientInfo"
    request_capabilities: str = "clientCapabilities"
    mcp_servers: bool = True  # session/new, load, resume and fork take ``mcpServers``
    login: str | None = "authenticate"  # the login method, and the field naming its method
    login_id: str = "methodId"

    def section(self, page: str) -> str:
        """The spec's page (``initialization#version-negotiation``) in this version's docs."""
        return page if page.startswith("http") else f"protocol/v{min(self.version, 2)}/{page}"


@dataclass(frozen=True)
class Check:
    """A requirement and how the kit checks it."""

    id: str
    level: str
    sections: tuple[str, str]  # the page and heading in v1's docs and in v2's
    text: str
    run: Callable[[Kit], Awaitable[None]]
    applies: Callable[[Target], bool] = lambda target: True
    closing: bool = False  # reads the connection's end: runs on it as it is, last

    def requirement(self, target: Target) -> Requirement:
        page = self.sections[0 if target.version < 2 else 1]
        return Requirement(self.id, self.level, target.section(page), self.text)


Connect = Callable[[], Awaitable[Peer]]


class Kit:
    """The connection the checks share, and what they need to say to the agent."""

    def __init__(self, target: Target, connect: Connect, cwd: str, scratch: str) -> None:
        self.target = target
        self._connect = connect
        self.cwd = cwd  # a session's working directory
        self.scratch = scratch  # an empty folder, absolute: a cwd no session has yet
        self.peers: list[Peer] = []  # every connection made, in order
        self.peer: Peer | None = None
        self.failure: str | None = None  # why the last connection could not be initialized

    async def connection(self, version: int | None = None) -> Peer:
        """A new connection, initialized asking for ``version`` (the target's by default); its
        ``hello`` is the result, or :class:`Broken` quoting the answer."""
        peer = await self._connect()
        self.peers.append(peer)
        asked = self.target.version if version is None else version
        params = {
            "protocolVersion": asked,
            self.target.request_capabilities: {},
            self.target.request_info: CLIENT_INFO,
        }
        answer = await peer.request("initialize", params)
        if not isinstance(answer.get("result"), dict):
            raise Broken(f"initialize asking for version {asked} answered {quote(answer)}")
        peer.hello = answer["result"]
        return peer

    async def live(self) -> Peer:
        """The shared connection: a new one when there is none or the last one ended."""
        if self.peer is None or self.peer.ended:
            self.peer = None
            try:
                self.peer = await self.connection()
            except Broken as exc:
                raise NotApplicable(f"no connection to test it on: {exc}") from None
        return self.peer

    # -- what the checks say ----------------------------------------------------------------------

    def session_params(self, cwd: str | None = None, **extra: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"cwd": cwd or self.cwd}
        if self.target.mcp_servers:
            params["mcpServers"] = []
        return {**params, **extra}

    async def new_session(self, cwd: str | None = None, **extra: Any) -> str:
        result = await (await self.live()).result("session/new", self.session_params(cwd, **extra))
        session_id = result.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            raise Broken(f"session/new answered the session id {quote(session_id)}")
        return session_id

    @staticmethod
    def prompt(session_id: str, text: str) -> dict[str, Any]:
        return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}

    async def turn(
        self, session_id: str, text: str = "hello conformance", prompt: Any = None
    ) -> dict[str, Any]:
        """Run a prompt turn to its end: v1's ``session/prompt`` result (with its ``stopReason``),
        or v2's ``state_update`` to ``idle`` (the update, with its ``stopReason``)."""
        peer = await self.live()
        params = prompt or self.prompt(session_id, text)
        start = len(peer.messages)
        result = await peer.result("session/prompt", params)
        if not self.target.state_turns:
            return dict(result)
        return await self.idle(peer, session_id, start)

    async def idle(self, peer: Peer, session_id: str, start: int) -> dict[str, Any]:
        """v2: the ``state_update`` to ``idle`` that ends the turn of ``session_id``."""
        message = await peer.wait_for(lambda m: _state(m, session_id) == "idle", start)
        if message is None:
            raise Broken(f"the turn of {session_id!r} never ended with a state_update to idle")
        return dict(message["params"]["update"])

    def advertised(self, path: tuple[str, ...], hello: Mapping[str, Any] | None = None) -> bool:
        """The agent's ``initialize`` result has a value at ``path`` other than null or false."""
        value: Any = self.peer.hello if hello is None and self.peer is not None else hello or {}
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return value not in (None, False, [])


def _state(message: Mapping[str, Any], session_id: str) -> str | None:
    """The state a ``state_update`` for ``session_id`` reports; None for another message."""
    params = message.get("params")
    if message.get("method") != "session/update" or "id" in message or not isinstance(params, dict):
        return None
    update = params.get("update")
    if params.get("sessionId") != session_id or not isinstance(update, dict):
        return None
    return update.get("state") if update.get("sessionUpdate") == "state_update" else None


def error_code(answer: Mapping[str, Any]) -> int | None:
    error = answer.get("error")
    return error.get("code") if "result" not in answer and isinstance(error, dict) else None


async def still_serves(kit: Kit, after: str) -> None:
    peer = await kit.live()
    answer = await peer.request("session/new", kit.session_params())
    if not isinstance(answer.get("result"), dict):
        raise Broken(
            f"after {after} the agent no longer serves: session/new answered {quote(answer)}"
        )


def no_stray_answers(peer: Peer, start: int = 0) -> None:
    strays = peer.unexpected_responses(start)
    if strays:
        raise Broken(f"answered no request of ours: {quote(strays[0])}")


# -- initialization ---------------------------------------------------------------------------------


async def version_negotiation(kit: Kit) -> None:
    peer = await kit.live()
    version = kit.target.version
    answered = peer.hello.get("protocolVersion")
    if answered != version:
        raise Broken(
            f"asked for version {version}, which it speaks, it answered {quote(peer.hello)}"
        )
    probe = await kit.connection(FUTURE_VERSION)
    latest = probe.hello.get("protocolVersion")
    await probe.close()
    if (
        not isinstance(latest, int)
        or isinstance(latest, bool)
        or not version <= latest < FUTURE_VERSION
    ):
        raise Broken(
            f"asked for version {FUTURE_VERSION}, which no release defines, it answered "
            f"{quote(probe.hello)}, not the latest version it supports"
        )


async def implementation_info(kit: Kit) -> None:
    hello = (await kit.live()).hello
    info = hello.get(kit.target.info)
    if not isinstance(info, dict) or not all(
        isinstance(info.get(k), str) and info[k] for k in ("name", "version")
    ):
        raise Broken(
            f"initialize names no agent (a name and a version in {kit.target.info}): {quote(hello)}"
        )


# -- sessions and turns -----------------------------------------------------------------------------


async def unique_session_ids(kit: Kit) -> None:
    first, second = await kit.new_session(), await kit.new_session()
    if first == second:
        raise Broken(f"two session/new answered the same session id {first!r}")


async def unknown_session(kit: Kit) -> None:
    peer = await kit.live()
    start = len(peer.messages)
    answer = await peer.request("session/prompt", kit.prompt("kit-no-such-session", "hello nobody"))
    if error_code(answer) not in UNKNOWN_SESSION_ERRORS:
        raise Broken(f"a prompt for a session never created answered {quote(answer)}")
    if peer.updates("kit-no-such-session", start):
        raise Broken(
            f"it sent updates for a session it never created: {quote(peer.updates('kit-no-such-session')[0])}"
        )


async def stop_reason(kit: Kit) -> None:
    session_id = await kit.new_session()
    peer = await kit.live()
    start = len(peer.messages)
    end = await kit.turn(session_id)
    if end.get("stopReason") != "end_turn":
        raise Broken(f"an uncancelled turn ended with {quote(end)}, not the stop reason end_turn")
    strays = [
        m
        for m in peer.messages[start:]
        if m.get("method") == "session/update"
        and (m.get("params") or {}).get("sessionId") != session_id
    ]
    if strays:
        raise Broken(
            f"during the turn of {session_id!r} it sent an update of another session: {quote(strays[0])}"
        )


async def cancellation(kit: Kit) -> None:
    session_id = await kit.new_session()
    peer = await kit.live()
    start = len(peer.messages)
    peer.permission = "cancel"  # a permission request is answered cancelled, after session/cancel
    try:
        turn = await peer.start(
            "session/prompt", kit.prompt(session_id, " ".join(["conformance"] * 40))
        )
        ended = (
            None if kit.target.state_turns else turn
        )  # v2: the answer only says the prompt is taken
        busy = await peer.wait_for(lambda m: _busy(m, session_id, ended), start)
        if busy is None or "method" not in busy or _state(busy, session_id) == "idle":
            raise NotApplicable(
                "the turn ended before it sent an update or asked for permission: "
                "no chance to cancel it"
            )
        if busy.get("method") != "session/request_permission":
            sent = len(peer.messages)
            await peer.notify("session/cancel", {"sessionId": session_id})
            if any(_ends(m, session_id, ended) for m in peer.messages[start:sent]):
                raise NotApplicable(
                    "the turn ended before the cancel could reach it: no chance to cancel it"
                )
        answer = await peer.response(turn, "session/prompt")
        if not isinstance(answer.get("result"), dict):
            raise Broken(f"a cancelled turn answered {quote(answer)}")
        end = (
            await kit.idle(peer, session_id, start) if kit.target.state_turns else answer["result"]
        )
    finally:
        peer.permission = "allow"
    if end.get("stopReason") != "cancelled":
        raise Broken(f"a turn cancelled by session/cancel ended with {quote(end)}")


def _ends(message: Mapping[str, Any], session_id: str, turn: Any) -> bool:
    """The message ends the turn: v1's response to ``turn``, v2's state ``idle``."""
    return _state(message, session_id) == "idle" or (
        "method" not in message and message.get("id") == turn
    )


def _busy(message: Mapping[str, Any], session_id: str, turn: Any) -> bool:
    """The turn is under way (an update of its session other than a state change, or a
    permission request) or over (v1: its response, ``turn``; v2: the state ``idle``)."""
    if "method" not in message:
        return turn is not None and bool(message.get("id") == turn)
    if _state(message, session_id) == "idle":
        return True
    params: Mapping[str, Any] = message["params"] if isinstance(message.get("params"), dict) else {}
    if message["method"] == "session/request_permission":
        return True
    return (
        message["method"] == "session/update"
        and params.get("sessionId") == session_id
        and (_state(message, session_id) is None)
    )


# -- the JSON-RPC envelope ----------------------------------------------------------------------------


async def parse_error(kit: Kit) -> None:
    peer = await kit.live()
    if not peer.link.raw:
        raise NotApplicable(
            "this transport carries only JSON (Streamable HTTP answers a bad body itself)"
        )
    start = len(peer.messages)
    await peer.send_bytes(b'{"jsonrpc": "2.0", "id": ')
    answer = await peer.wait_for(lambda m: "method" not in m and m.get("id") is None, start)
    if answer is None or error_code(answer) != -32700:
        raise Broken(
            f"a line that is not JSON was answered {quote(answer) if answer else 'nothing'}, not -32700"
        )
    await still_serves(kit, "a line that is not JSON")


async def invalid_request(kit: Kit) -> None:
    peer = await kit.live()
    await peer.send({"jsonrpc": "2.0", "id": "kit-bad-request", "method": 42})
    peer.sent_ids.append("kit-bad-request")
    answer = await peer.response("kit-bad-request", "a request whose method is a number")
    if error_code(answer) != -32600:
        raise Broken(f"a request whose method is a number was answered {quote(answer)}, not -32600")
    await still_serves(kit, "an invalid request")


async def method_not_found(kit: Kit) -> None:
    answer = await (await kit.live()).request("kit/no_such_method", {})
    if error_code(answer) != -32601:
        raise Broken(
            f"a method the protocol does not have was answered {quote(answer)}, not -32601"
        )


async def invalid_params(kit: Kit) -> None:
    answer = await (await kit.live()).request("session/new", {"cwd": 42, "mcpServers": "none"})
    if error_code(answer) != -32602:
        raise Broken(f"session/new with a number for cwd was answered {quote(answer)}, not -32602")


async def ids_echoed(kit: Kit) -> None:
    peer = await kit.live()
    start = len(peer.messages)
    for request_id in (7, "echo-7", 2**40):
        answer = await peer.request("session/new", kit.session_params(), request_id=request_id)
        if "id" not in answer or json.dumps(answer["id"]) != json.dumps(request_id):
            raise Broken(f"the request of id {json.dumps(request_id)} was answered {quote(answer)}")
    no_stray_answers(peer, start)


async def notification_no_reply(kit: Kit) -> None:
    peer = await kit.live()
    start = len(peer.messages)
    await peer.notify("kit/no_such_notification", {})
    await still_serves(kit, "an unknown notification")
    no_stray_answers(peer, start)


# -- extensibility ---------------------------------------------------------------------------------------


async def extension_request(kit: Kit) -> None:
    answer = await (await kit.live()).request("_conformance/ping", {"asked": True})
    if error_code(answer) != -32601:
        raise Broken(
            f"an extension request it does not know was answered {quote(answer)}, not -32601"
        )


async def extension_notification(kit: Kit) -> None:
    peer = await kit.live()
    start = len(peer.messages)
    await peer.notify("_conformance/note", {"noted": True})
    await still_serves(kit, "an unknown extension notification")
    no_stray_answers(peer, start)


async def meta_accepted(kit: Kit) -> None:
    meta = {
        "traceparent": "00-80e1afed08e019fc1110464cfa66635c-7a085853722dc6d2-01",
        "example.com/flag": True,
    }
    session_id = await kit.new_session(_meta=meta)
    params = kit.prompt(session_id, "hello meta")
    params["_meta"] = meta
    params["prompt"][0]["_meta"] = {"example.com/block": 1}
    end = await kit.turn(session_id, prompt=params)
    if end.get("stopReason") not in STOP_REASONS:
        raise Broken(f"a prompt with _meta ended with {quote(end)}")


# -- the transport -------------------------------------------------------------------------------------


async def stdout_hygiene(kit: Kit) -> None:
    if not any(peer.link.stdio for peer in kit.peers):
        raise NotApplicable("the agent is remote: there is no stdout to read")
    for peer in kit.peers:
        if not peer.ended:
            await peer.close()
        for number, line in enumerate(peer.lines, 1):
            try:
                message = json.loads(line)
            except ValueError:
                raise Broken(f"stdout line {number} is not JSON: {quote(line)}") from None
            if (
                not isinstance(message, dict)
                or message.get("jsonrpc") != "2.0"
                or not ("method" in message or ("result" in message) != ("error" in message))
            ):
                raise Broken(f"stdout line {number} is not a JSON-RPC 2.0 message: {quote(line)}")
        no_stray_answers(peer)


async def shutdown(kit: Kit) -> None:
    peer = await kit.live()
    if not peer.link.stdio:
        raise NotApplicable("the agent is remote: there is no stdin to close")
    status = await peer.close()
    if status is None:
        raise Broken("the agent did not exit within 5 s of its stdin's end")


def _v1(target: Target) -> bool:
    return target.version < 2


#: The requirements in the order they run (the closing ones last), with their sections in v1's
#: docs and v2's.
CHECKS = (
    Check(
        "initialization.version-negotiation",
        MUST,
        ("initialization#version-negotiation",) * 2,
        "initialize answers the version asked for when the agent speaks it, else the latest it speaks",
        version_negotiation,
    ),
    Check(
        "initialization.implementation-info",
        SHOULD,
        ("initialization#implementation-information",) * 2,
        "initialize names the agent: a name and a version",
        implementation_info,
        _v1,
    ),
    Check(
        "initialization.implementation-info",
        MUST,
        ("initialization#implementation-information",) * 2,
        "initialize names the agent: a name and a version",
        implementation_info,
        lambda t: not _v1(t),
    ),
    Check(
        "session.unique-ids",
        MUST,
        ("session-setup#creating-a-session",) * 2,
        "session/new answers a unique session id",
        unique_session_ids,
    ),
    Check(
        "session.unknown-session",
        MUST,
        ("session-setup#session-id",) * 2,
        "a prompt for a session never created is an error (-32602 or -32002), with no update",
        unknown_session,
    ),
    Check(
        "prompt.stop-reason",
        MUST,
        ("prompt-turn#4-check-for-completion", "prompt-lifecycle#4-report-completion"),
        "a turn ends with a stop reason (end_turn when nothing cut it short), its updates naming its session",
        stop_reason,
    ),
    Check(
        "prompt.cancellation",
        MUST,
        ("prompt-turn#cancellation", "prompt-lifecycle#cancellation"),
        "session/cancel during a turn ends it with the stop reason cancelled",
        cancellation,
    ),
)
ENVELOPE = (
    Check(
        "jsonrpc.ids-echoed",
        MUST,
        (f"{JSONRPC}#response_object",) * 2,
        "a response carries its request's id, of the same type, once",
        ids_echoed,
    ),
    Check(
        "jsonrpc.method-not-found",
        MUST,
        ("overview#error-handling",) * 2,
        "an unknown method is answered the error -32601, not a result",
        method_not_found,
    ),
    Check(
        "jsonrpc.invalid-params",
        MUST,
        ("overview#error-handling",) * 2,
        "params of the wrong type are answered -32602",
        invalid_params,
    ),
    Check(
        "jsonrpc.invalid-request",
        MUST,
        ("overview#error-handling",) * 2,
        "a request that is not a valid Request object is answered -32600",
        invalid_request,
    ),
    Check(
        "jsonrpc.notification-no-reply",
        MUST,
        ("overview#error-handling",) * 2,
        "a notification, even an unknown one, gets no reply",
        notification_no_reply,
    ),
    Check(
        "jsonrpc.parse-error",
        MUST,
        ("overview#error-handling",) * 2,
        "a line that is not JSON is answered -32700 (id null), and the agent serves on",
        parse_error,
    ),
    Check(
        "extensibility.meta",
        MUST,
        ("extensibility#the-meta-field",) * 2,
        "_meta in a request's params and in a content block is accepted",
        meta_accepted,
    ),
    Check(
        "extensibility.unknown-request",
        SHOULD,
        ("extensibility#custom-requests",) * 2,
        "an extension request it does not know is answered -32601",
        extension_request,
    ),
    Check(
        "extensibility.unknown-notification",
        SHOULD,
        ("extensibility#custom-notifications",) * 2,
        "an extension notification it does not know is ignored",
        extension_notification,
    ),
)
CLOSING = (
    Check(
        "transports.shutdown",
        SHOULD,
        ("transports#stdio",) * 2,
        "the agent exits once its stdin ends",
        shutdown,
        closing=True,
    ),
    Check(
        "transports.stdout-hygiene",
        MUST,
        ("transports#stdio",) * 2,
        "the agent writes nothing on stdout but JSON-RPC messages, one a line, each response "
        "answering one request",
        stdout_hygiene,
        closing=True,
    ),
)


def requirements(target: Target, features: tuple[Check, ...] = ()) -> list[Check]:
    """The checks that apply to ``target``, in the order they run."""
    return [c for c in (*CHECKS, *features, *ENVELOPE, *CLOSING) if c.applies(target)]


async def run(
    target: Target, connect: Connect, cwd: str, scratch: str, features: tuple[Check, ...] = ()
) -> tuple[list[Verdict], Kit]:
    """Every requirement that applies to ``target``, checked against the agent ``connect``
    reaches: a verdict each, and the kit (its connections, for their transcript)."""
    kit = Kit(target, connect, cwd, scratch)
    verdicts = []
    for check in requirements(target, features):
        requirement = check.requirement(target)
        try:
            await check.run(kit)
        except Broken as exc:
            verdicts.append(Verdict(requirement, FAILED, str(exc)))
        except NotApplicable as exc:
            verdicts.append(Verdict(requirement, NOT_APPLICABLE, str(exc)))
        except (OSError, asyncio.TimeoutError) as exc:
            verdicts.append(Verdict(requirement, FAILED, f"the connection failed: {exc}"))
        else:
            verdicts.append(Verdict(requirement, PASSED))
    for peer in kit.peers:
        if not peer.ended:
            await peer.close()
    return verdicts, kit
