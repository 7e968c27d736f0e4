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

The kit asks only what a client would: it logs in only when an answer asks for it (-32000,
authentication required) or a check needs it. An agent that went away is reported once, by the
check it left unanswered: it is started again only if it had served something on the connection
it left. A ``session/new`` refused from the first is reported by the check that asked first, and
the checks that need a session are not applicable, saying so. The run has a bound of its own
(``run_timeout``): the check it cuts short fails, the rest are not run.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._kit_peer import Broken, Peer, quote
from ._kit_report import FAILED, NOT_APPLICABLE, PASSED, Requirement, Verdict, level_for

__all__ = [
    "RUN_TIMEOUT",
    "Check",
    "Cite",
    "Kit",
    "NotApplicable",
    "Target",
    "Unreachable",
    "cites",
    "run",
]

STOP_REASONS = frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"})
CLIENT_INFO = {"name": "acpgen-conformance", "version": "1"}
#: The version a client from the future asks for.
FUTURE_VERSION = 999
JSONRPC = "https://www.jsonrpc.org/specification"
#: Updates that say what a session is rather than what its turn does (no entry of its
#: conversation): they may follow a turn's end, and a ``session/load``'s answer. Every other
#: ``sessionUpdate`` kind (message, thought and plan updates, tool calls and their updates, each
#: version's) is part of the conversation.
SESSION_UPDATES = frozenset(
    {
        "state_update",
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
    }
)


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
class Cite:
    """The sentence of the spec's docs a requirement rests on: its page and heading (``PAGE`` alone
    where it opens the page; a URL for JSON-RPC 2.0's text), the peer it binds (``agent``,
    ``client``, ``either``), its keyword of RFC 2119 (``""``: none) and what it asks, in the
    kit's own words. The requirement's level is read from it (:func:`~._kit_report.level_for`)."""

    section: str
    binds: str
    keyword: str
    says: str


def cites(
    section: str, binds: str, keyword: str, says: str, v2: str | None = None
) -> tuple[Cite, Cite]:
    """The same sentence in v1's docs and in v2's (at ``v2``, where its heading differs)."""
    return Cite(section, binds, keyword, says), Cite(v2 or section, binds, keyword, says)


@dataclass(frozen=True)
class Check:
    """A requirement, the sentences it rests on in v1's docs and in v2's, and how the kit checks it."""

    id: str
    cites: tuple[Cite, Cite]
    text: str
    run: Callable[[Kit], Awaitable[None]]
    applies: Callable[[Target], bool] = lambda target: True
    closing: bool = False  # reads the connection's end: runs on it as it is, last

    def cite(self, version: int) -> Cite:
        return self.cites[0 if version < 2 else 1]

    def level(self, version: int) -> str:
        """MUST or SHOULD where the cited sentence binds the agent with that keyword, else ADVICE."""
        cite = self.cite(version)
        return level_for(cite.binds, cite.keyword, "agent")

    def requirement(self, target: Target) -> Requirement:
        cite = self.cite(target.version)
        return Requirement(
            self.id,
            self.level(target.version),
            target.section(cite.section),
            self.text,
            cite.binds,
            cite.keyword,
            cite.says,
        )


Connect = Callable[[], Awaitable[Peer]]


def _say(note: str) -> None:
    print(f"conformance: {note}", file=sys.stderr)


class Kit:
    """The connection the checks share, and what they need to say to the agent."""

    def __init__(
        self,
        target: Target,
        connect: Connect,
        cwd: str,
        scratch: str,
        say: Callable[[str], None] = _say,
    ) -> None:
        self.target = target
        self._connect = connect
        self.cwd = cwd  # a session's working directory
        self.scratch = scratch  # an empty folder, absolute: a cwd no session has yet
        self.say = say  # tells the user what the kit did that no check asked (a login)
        self.peers: list[Peer] = []  # every connection made, in order
        self.peer: Peer | None = None
        self.failure: str | None = None  # why the last connection could not be initialized
        self.current = ""  # the id of the check running
        self.refusal: tuple[str, str] | None = None  # (check, answer): session/new refused first
        self.auth_failure: str | None = None  # why the login an answer asked for failed
        self.out_of_time = False  # the run's bound passed
        #: The turn prompt.cancellation cancelled: (its connection, session, index of its end).
        self.cancelled_turn: tuple[Peer, str, int] | None = None

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
        peer.authenticate = self._asked_to_log_in
        peer.refused = self.refused
        return peer

    def login_method(self, hello: Mapping[str, Any]) -> str | None:
        """The first auth method the agent handles itself (type ``agent``, or none given)."""
        methods = hello.get("authMethods")
        for method in methods if isinstance(methods, list) else []:
            if isinstance(method, dict) and method.get("type", "agent") == "agent":
                name = method.get(self.target.login_id, method.get("id"))
                if isinstance(name, str):
                    return name
        return None

    async def login(self, peer: Peer) -> dict[str, Any] | None:
        """Log in with :meth:`login_method`: its answer (None when there is no such method, or
        the package's protocol has no login); :class:`Broken` when none comes."""
        name = self.login_method(peer.hello)
        if name is None or self.target.login is None:
            return None
        return await peer.request(self.target.login, {self.target.login_id: name})

    async def _asked_to_log_in(self, peer: Peer, method: str, answer: dict[str, Any]) -> bool:
        """``method`` was answered -32000 (authentication required): log in as a client would,
        once, and say so; True when that succeeded. A login that hangs or fails is reported as
        what it is, by the check that asked, and not tried again."""
        login = self.target.login
        if method == login or login is None or self.auth_failure is not None:
            return False
        name = self.login_method(peer.hello)
        asked = f"{method} answered {quote(answer, 200)}, asking for authentication"
        if name is None:
            self.auth_failure = f"{asked}, and initialize offers no auth method the kit can run"
            raise Broken(self.auth_failure)
        self.say(f"{asked}: calling {login} with {self.target.login_id} {name!r}")
        try:
            done = await peer.request(login, {self.target.login_id: name})
        except Broken as exc:
            self.auth_failure = f"{asked}; {login} with {name!r} got {exc}"
            raise Broken(self.auth_failure) from None
        if not isinstance(done.get("result"), dict):
            self.auth_failure = f"{asked}; {login} with {name!r} answered {quote(done, 200)}"
            raise Broken(self.auth_failure)
        return True

    def refused(self, method: str, answer: dict[str, Any]) -> None:
        """A ``session/new`` refused while none was ever opened: the check that asked first
        reports it; the others have no session to test on."""
        if method != "session/new" or any(peer.opened for peer in self.peers):
            return
        if self.auth_failure is not None:
            raise NotApplicable(f"no session to test it on: {self.auth_failure}")
        if self.refusal is None:
            self.refusal = (self.current, quote(answer, 200))
            return
        check, first = self.refusal
        raise NotApplicable(
            f"no session to test it on: session/new has been refused from the first "
            f"(answered {first}, reported by {check})"
        )

    async def hello(self) -> dict[str, Any]:
        """The result of ``initialize`` on the shared connection, even if the agent has gone
        away since (a check that reads only that does not need it alive)."""
        if self.peer is not None and self.peer.hello:
            return self.peer.hello
        return (await self.live()).hello

    async def live(self) -> Peer:
        """The shared connection: a new one when there is none or the last one ended. An agent
        that ended a connection on which it served nothing after ``initialize`` is not started
        again: it went away on its own, and the check it left is where that is reported."""
        if self.failure is not None:  # once initialize failed, the agent is not started again
            raise NotApplicable(f"no connection to test it on: {self.failure}")
        gone = self.peer is not None and self.peer.ended and not self.peer.closed
        if gone and self.peer is not None and self.peer.answered <= 1:  # initialize's alone
            self.failure = (
                f"{await self.peer.link.gone()} after it answered initialize; not started again"
            )
            if not self.peer.gone_said:  # reported once: here, where nothing else said it
                self.peer.gone_said = True
                raise Broken(self.failure)
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

    def sessions_made(self) -> set[Any]:
        """The session ids the agent made (answered in a ``sessionId`` of a result), on any of
        the run's connections."""
        return {
            m["result"]["sessionId"]
            for peer in self.peers
            for m in peer.messages
            if "method" not in m
            and isinstance(m.get("result"), dict)
            and isinstance(m["result"].get("sessionId"), str)
        }

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
        message = await peer.wait_for(
            lambda m: turn_state(m, session_id) == "idle", start, session=session_id
        )
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
    """The answer refuses a session the agent does not know (or no longer has): an error, whatever
    its code, since the text names none (over Streamable HTTP, the transport's 404 for an unknown
    ``Acp-Session-Id``, which the remote client answers -32603 with the status in its data)."""
    return "result" not in answer and isinstance(answer.get("error"), dict)


def error_code(answer: Mapping[str, Any]) -> int | None:
    error = answer.get("error")
    return error.get("code") if "result" not in answer and isinstance(error, dict) else None


async def still_serves(kit: Kit, after: str) -> None:
    peer = await kit.live()
    answer = await peer.request("session/new", kit.session_params())
    if not isinstance(answer.get("result"), dict):
        kit.refused("session/new", answer)  # refused from the first: it never served one
        raise Broken(
            f"after {after} the agent no longer serves: session/new answered {quote(answer)}"
        )


def no_stray_answer_so_far(kit: Kit) -> None:
    """:class:`Broken` quoting the first answer, on any connection of the run, to an id no
    request carried (or to one already answered)."""
    for peer in kit.peers:
        no_stray_answers(peer)


def no_stray_answers(peer: Peer, start: int = 0) -> None:
    strays = peer.unexpected_responses(start)
    if strays:
        raise Broken(f"answered no request of ours: {quote(strays[0])}")


#: The bound of a whole run, in seconds, unless the caller gives one.
RUN_TIMEOUT = 1200.0


async def run(
    target: Target,
    checks: Sequence[Check],
    connect: Connect,
    cwd: str,
    scratch: str,
    *,
    run_timeout: float = RUN_TIMEOUT,
    say: Callable[[str], None] = _say,
) -> tuple[list[Verdict], Kit]:
    """``checks`` (those that apply to ``target``, in order) against the agent ``connect``
    reaches: a verdict each, and the kit (its connections, for their transcript). Once
    ``run_timeout`` seconds have passed, the check running fails saying so and the rest are not
    applicable (:attr:`Kit.out_of_time` is set)."""
    kit = Kit(target, connect, cwd, scratch, say)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + run_timeout
    verdicts = []
    for check in checks:
        requirement = check.requirement(target)
        kit.current = check.id
        left = deadline - loop.time()
        if left <= 0:
            verdicts.append(
                Verdict(
                    requirement,
                    NOT_APPLICABLE,
                    f"not run: the run's bound of {run_timeout:g} s (--run-timeout) had passed",
                )
            )
            continue
        try:
            await asyncio.wait_for(check.run(kit), left)
        except Broken as exc:
            verdicts.append(Verdict(requirement, FAILED, str(exc)))
        except NotApplicable as exc:
            verdicts.append(Verdict(requirement, NOT_APPLICABLE, str(exc)))
        except asyncio.TimeoutError:
            if loop.time() < deadline:  # raised by the check itself
                verdicts.append(Verdict(requirement, FAILED, "the connection failed: timed out"))
                continue
            kit.out_of_time = True
            verdicts.append(
                Verdict(
                    requirement,
                    FAILED,
                    f"the run's bound of {run_timeout:g} s (--run-timeout) passed during it",
                )
            )
        except OSError as exc:
            verdicts.append(Verdict(requirement, FAILED, f"the connection failed: {exc}"))
        else:
            verdicts.append(Verdict(requirement, PASSED))
    for peer in kit.peers:
        if not peer.ended:
            await peer.close()
    return verdicts, kit
