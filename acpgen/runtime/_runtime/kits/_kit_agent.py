"""The agent kit's frame: what a check is, the connection the checks share, and the run.

:func:`run` holds an agent to the checks that apply to a package's schema and protocol version
(its :class:`Target`, which the package's ``conformance`` module builds from its method table and
stub data), one after another on one connection (a fresh one where a check left the last one
closed), and returns a :class:`~._kit_report.Verdict` per requirement. A check passes, raises
:class:`~._kit_peer.Broken` (failed: its message quotes what the agent sent) or
:class:`NotApplicable` (why the agent gave no chance to test it: it advertises no such
capability, or the turn ended before a cancel could reach it). The checks are in
:mod:`._kit_checks` (initialization, sessions, turns; :func:`~._kit_checks.requirements` lists
them all), :mod:`._kit_features` (capability gating) and :mod:`._kit_wire` (the JSON-RPC
envelope, extensibility, the transport); each cites the page and heading of the spec's docs of
the version (``protocol/v1/...``: the docs of ACP v1.7.0; ``protocol/v2/...``: the draft's).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._kit_peer import Broken, Peer, quote
from ._kit_report import FAILED, NOT_APPLICABLE, PASSED, Requirement, Verdict

__all__ = ["Check", "Kit", "NotApplicable", "Target", "Unreachable", "run"]

STOP_REASONS = frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"})
UNKNOWN_SESSION_ERRORS = frozenset(
    {-32602, -32002}
)  # the schema's codes that fit a session nobody made
CLIENT_INFO = {"name": "acpgen-conformance", "version": "1"}
#: The version a client from the future asks for.
FUTURE_VERSION = 999
JSONRPC = "https://www.jsonrpc.org/specification"


class Unreachable(Exception):
    """The agent could not be started or reached: the run stops."""


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
    #: Where ``initialize``'s result advertises the content a prompt may carry beyond text.
    prompt_capabilities: tuple[str, ...] = ("agentCapabilities", "promptCapabilities")

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
        try:
            peer = await self._connect()
        except (OSError, ImportError) as exc:
            raise Unreachable(str(exc)) from None
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
        if version is None:
            await self.login(peer)
        return peer

    async def login(self, peer: Peer) -> None:
        """Log in with the first auth method the agent handles itself (type ``agent``, or none
        given), as a client does before it opens sessions with an agent that may require it."""
        methods = peer.hello.get("authMethods")
        login = self.target.login
        if not isinstance(methods, list) or login is None:
            return
        for method in methods:
            if isinstance(method, dict) and method.get("type", "agent") == "agent":
                name = method.get(self.target.login_id, method.get("id"))
                if isinstance(name, str):
                    await peer.request(login, {self.target.login_id: name})
                    return

    async def live(self) -> Peer:
        """The shared connection: a new one when there is none or the last one ended."""
        if self.failure is not None:  # once initialize failed, the agent is not started again
            raise NotApplicable(f"no connection to test it on: {self.failure}")
        if self.peer is None or self.peer.ended:
            self.peer = None
            try:
                self.peer = await self.connection()
            except Broken as exc:
                self.failure = str(exc)
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
        message = await peer.wait_for(lambda m: turn_state(m, session_id) == "idle", start)
        if message is None:
            raise Broken(f"the turn of {session_id!r} never ended with a state_update to idle")
        update: dict[str, Any] = message["params"]["update"]
        return update  # the very object: the kit finds where it came

    def advertised(self, path: tuple[str, ...], hello: Mapping[str, Any] | None = None) -> bool:
        """The agent's ``initialize`` result has a value at ``path`` other than null or false."""
        value: Any = self.peer.hello if hello is None and self.peer is not None else hello or {}
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return value not in (None, False, [])


def turn_state(message: Mapping[str, Any], session_id: str) -> str | None:
    """The state a ``state_update`` for ``session_id`` reports; None for another message."""
    params = message.get("params")
    if message.get("method") != "session/update" or "id" in message or not isinstance(params, dict):
        return None
    update = params.get("update")
    if params.get("sessionId") != session_id or not isinstance(update, dict):
        return None
    return update.get("state") if update.get("sessionUpdate") == "state_update" else None


def unknown_session_error(answer: Mapping[str, Any], peer: Peer) -> bool:
    """The answer refuses a session the agent does not know: -32602 or -32002, or over Streamable
    HTTP the transport's 404 for an unknown ``Acp-Session-Id`` (which the remote client answers
    -32603 with the status in its data)."""
    if error_code(answer) in UNKNOWN_SESSION_ERRORS:
        return True
    data = (answer.get("error") or {}).get("data") if "result" not in answer else None
    return peer.link.http and isinstance(data, dict) and data.get("status") == 404


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


async def run(
    target: Target, checks: Sequence[Check], connect: Connect, cwd: str, scratch: str
) -> tuple[list[Verdict], Kit]:
    """``checks`` (those that apply to ``target``, in order) against the agent ``connect``
    reaches: a verdict each, and the kit (its connections, for their transcript)."""
    kit = Kit(target, connect, cwd, scratch)
    verdicts = []
    for check in checks:
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
