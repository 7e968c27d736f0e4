"""The stub agent of a protocol version whose turns end through state updates (ACP v2): it
negotiates, creates sessions, takes a prompt and reports its turn (``running``, the echo,
``idle``; every kind of update of its draft too, when asked: ``_everything``), asks permission
when told to, advertises a login (required when given auth methods), its prompt capabilities and a
config option (``style``: echo, upper) where its draft has them, serves the
session methods its draft defines beyond the baseline (listing, resuming, closing, deleting,
loading; each advertised as the draft says, in the ``session`` capability), and serves stdio or
the network (``_listen``); its sessions live in ``_stub_sessions``. What its draft names
differently (types, fields, the login and logout requests, which updates, fields and session
methods it has) it reads from ``_stub_data``. ``stub_agent`` is its entry module
(``python -m <package>.stub_agent``, and its ``app``), whose docstring says what it does.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import logging
import os
from collections.abc import Sequence
from typing import Any

from ... import _stub_data, models
from ..._stub_data import (
    CancelParams,
    InitializeParams,
    InitializeResult,
    NewSessionParams,
    NewSessionResult,
    PromptParams,
    PromptResult,
    UpdateParams,
)
from ...agent import AGENT_ROUTES, Agent, asgi_app, run_agent
from ...methods import CAPABILITIES, METHODS, PROTOCOL_VERSION
from ..connection._rpc import ConnectionClosed, RequestError
from ..kits import _checking, _client_kit
from ..remote import _listen
from ..wire._codec import decode, encode
from . import _everything, _stub_sessions, _turns_offers
from ._echo import echoes
from ._stub_sessions import DEFAULT_PAGE_SIZE, Session, SessionStore

__all__ = ["SUPPORTED_VERSIONS", "UNSUPPORTED_PROTOCOL_VERSION", "StubAgent", "app", "main"]

logger = logging.getLogger(__name__)

#: The protocol versions this stub speaks.
SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)
#: The error code of an ``initialize`` asking for a version the agent does not speak.
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: What each session feature does, by the name ``--disable`` takes; the draft has those of
#: ``_stub_data.SESSION_FEATURES``.
SESSION_FEATURES = {
    "load": "session/load replays the session's conversation as session/update notifications",
    "list": "session/list lists the sessions, a page at a time (its cursor: --page-size)",
    "resume": "session/resume takes a session back (replaying it, from replayFrom's start)",
    "close": "session/close ends a session's turn and forgets the session",
    "delete": "session/delete forgets a session",
    "additional-directories": "additionalDirectories (absolute paths) are kept per session",
}
#: The result type of each request the agent answers, by its wire name.
_RESULTS = {m.method: m.result for m in METHODS if m.side == "agent" and m.result}


class StubAgent(Agent, _checking.Checked):
    """The stub's behaviour: negotiate, create sessions, echo prompts, honour cancellation."""

    def __init__(
        self,
        delay: float = 0.0,
        ask_permission: bool = False,
        auth_methods: Sequence[str] = (),
        disabled: Sequence[str] = (),
        page_size: int = DEFAULT_PAGE_SIZE,
        store: SessionStore | None = None,
        all_updates: bool = False,
        check: _client_kit.ClientCheck | None = None,
    ) -> None:
        self.check = check  # checking mode: the client is held to the spec (_client_kit)
        self.client_methods = [m.method for m in METHODS if m.side == "client"]
        self.capability_pointers = CAPABILITIES
        where = getattr(_stub_data, "RESPONSE_CAPABILITIES", "capabilities")
        directories = getattr(_stub_data, "SESSION_FEATURES", {}).get("additional-directories")
        if directories:
            self.field_pointers = {
                "additionalDirectories": "/".join(("/result", where, *directories))
            }
        self.delay = delay
        self.all_updates = all_updates  # every turn sends every update (else: asked by its prompt)
        self.ask_permission = ask_permission
        # the ids of the auth methods it requires a login with (none: it requires none, and
        # advertises STUB_LOGIN, which a client may log in with)
        self.auth_methods = tuple(auth_methods)
        self.advertised = self.auth_methods or (
            (_turns_offers.STUB_LOGIN,) if _stub_data.LOGIN else ()
        )
        self.logged_in = False
        self.initialized = False
        self._ids = itertools.count(1)
        self.sessions = store if store is not None else SessionStore()
        self.page_size = page_size
        self.features = _turns_offers.served(
            frozenset(_stub_data.SESSION_FEATURES) - frozenset(disabled)
        )
        # what it does not serve (a session feature not served, or a method of the draft it
        # never overrides) is answered -32601 before its params are read
        refused = {f"session_{f}" for f in SESSION_FEATURES if f not in self.features}
        self.handled_requests = _stub_sessions.served_requests(
            type(self), Agent, AGENT_ROUTES, refused
        )
        self._turns: set[asyncio.Task[None]] = set()

    def session_known(self, session_id: str) -> bool:
        return True  # its store (a server's agents may share one) answers an unknown session

    @staticmethod
    def uninitialized(method: str) -> RequestError:
        """What answers any request but ``initialize`` before one succeeded (its dispatcher asks;
        initialization: the client initializes first), whatever the method."""
        return RequestError.invalid_request({"details": "call initialize first", "method": method})

    def on_connect(self, connection: Any) -> None:
        super().on_connect(connection)
        self.watch(connection)

    async def initialize(self, params: InitializeParams) -> InitializeResult:
        requested = encode(params)["protocolVersion"]
        spoken = [version for version in SUPPORTED_VERSIONS if version <= requested]
        if not spoken:
            raise RequestError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"requested": requested, "supported": list(SUPPORTED_VERSIONS)},
            )
        info = {"name": "acp-bindings-stub-agent", "version": str(PROTOCOL_VERSION)}
        answer = {
            "protocolVersion": max(spoken),
            _stub_data.RESPONSE_INFO: info,
            _stub_data.RESPONSE_CAPABILITIES: self._capabilities(),
            "authMethods": [_turns_offers.advertised(method_id) for method_id in self.advertised],
        }
        response: InitializeResult = decode(InitializeResult, answer)
        self.initialized = True
        return response

    async def _login(self, params: Any) -> Any:
        """The draft's login request (``_stub_data.LOGIN``): it names an advertised auth method."""
        method_id = encode(params)["methodId"]
        if method_id not in self.advertised:
            advertised = ", ".join(self.advertised)
            message = f"{method_id} is not an auth method this agent advertises ({advertised})"
            raise RequestError.invalid_params({"methodId": method_id, "message": message})
        self.logged_in = True
        return decode(getattr(models, _stub_data.LOGIN_RESULT), {})

    async def _logout(self, params: Any) -> Any:
        """The draft's logout request (``_stub_data.LOGOUT``): a login is needed again."""
        self.logged_in = False
        return decode(getattr(models, _stub_data.LOGOUT_RESULT), {})

    async def session_new(self, params: NewSessionParams) -> NewSessionResult:
        if self.auth_methods and not self.logged_in:
            raise RequestError.auth_required()
        if not os.path.isabs(params.cwd):
            raise RequestError.invalid_params(
                {"path": "/cwd", "message": "cwd must be an absolute path"}
            )
        config = (
            {_turns_offers.STYLE["id"]: _turns_offers.STYLES[0]["value"]}
            if _turns_offers.config_option()
            else {}
        )
        session = self.sessions.create(params.cwd, self._directories(encode(params)), config=config)
        answer: dict[str, Any] = {"sessionId": session.session_id}
        if config:
            answer["configOptions"] = _turns_offers.config_options(session)
        response: NewSessionResult = decode(NewSessionResult, answer)
        return response

    async def session_set_config_option(self, params: Any) -> Any:
        request = encode(params)
        session = self.sessions.require(request["sessionId"])
        if not session.config or request.get("configId") != _turns_offers.STYLE["id"]:
            message = "no such config option"
            raise RequestError.invalid_params(
                {"configId": request.get("configId"), "message": message}
            )
        if request.get("value") not in [style["value"] for style in _turns_offers.STYLES]:
            raise RequestError.invalid_params(
                {"value": request.get("value"), "message": "no such value"}
            )
        session.config[_turns_offers.STYLE["id"]] = request["value"]
        update = {
            "sessionUpdate": "config_option_update",
            "configOptions": _turns_offers.config_options(session),
        }
        await self._update(session.session_id, update)
        return _result("session/set_config_option", {"configOptions": update["configOptions"]})

    async def session_cancel(self, params: CancelParams) -> None:
        session = self.sessions.get(encode(params)["sessionId"])
        if session is not None:
            session.cancelled.set()

    async def session_prompt(self, params: PromptParams) -> PromptResult:
        request = encode(params)
        session = self.sessions.require(request["sessionId"])
        await self.probe(session.session_id)
        message_id = f"user-message-{next(self._ids)}"
        cancelled = session.cancelled = asyncio.Event()
        session.touch()
        turn = asyncio.ensure_future(self._turn(session, message_id, request["prompt"], cancelled))
        self._turns.add(turn)
        turn.add_done_callback(self._turns.discard)
        answer = {"messageId": message_id} if _stub_data.PROMPT_MESSAGE_ID else {}
        response: PromptResult = decode(PromptResult, answer)
        return response

    # -- the session features beyond the baseline -----------------------------------------------

    async def session_load(self, params: Any) -> Any:
        self._serves("load")
        session = self._restored(params)
        for update in list(session.history):
            await self._update(session.session_id, update)
        return _result("session/load", {})

    async def session_resume(self, params: Any) -> Any:
        self._serves("resume")
        replay = encode(params).get("replayFrom")
        if replay is not None and replay != {"type": "start"}:
            message = "this agent replays from the start only"
            raise RequestError.invalid_params({"replayFrom": replay, "message": message})
        session = self._restored(params)
        for update in list(session.history) if replay else ():
            await self._update(session.session_id, update)
        return _result("session/resume", {})

    async def session_list(self, params: Any) -> Any:
        self._serves("list")
        request = encode(params)
        listed, cursor = self.sessions.page(
            request.get("cursor"), self.page_size, request.get("cwd")
        )
        answer: dict[str, Any] = {"sessions": [_turns_offers.info(s) for s in listed]}
        if cursor is not None:
            answer["nextCursor"] = cursor
        return _result("session/list", answer)

    async def session_close(self, params: Any) -> Any:
        self._serves("close")
        self.sessions.forget(self.sessions.require(encode(params)["sessionId"]).session_id)
        return _result("session/close", {})

    async def session_delete(self, params: Any) -> Any:
        self._serves("delete")
        # session-delete.mdx, "Semantics": deleting a session already deleted, or never
        # created, SHOULD succeed silently
        self.sessions.forget(encode(params)["sessionId"])
        return _result("session/delete", {})

    def _serves(self, feature: str) -> None:
        """-32601 (method not found) unless the agent serves ``feature``."""
        if feature not in self.features:
            raise RequestError.method_not_found(f"session/{feature}")

    def _capabilities(self) -> dict[str, Any]:
        """What ``initialize`` advertises: the ``session`` capability and those below it, where
        the agent serves their features."""
        if not self.features:
            return {}
        session: dict[str, Any] = {}
        if _stub_data.PROMPT_CAPABILITIES:
            session["prompt"] = _turns_offers.PROMPT_CAPABILITIES
        for feature in sorted(self.features):
            path = _stub_data.SESSION_FEATURES[feature]
            if len(path) > 1:
                session[path[1]] = {}
        return {"session": session}

    def _directories(self, request: dict[str, Any]) -> list[str]:
        """The request's additional directories (absolute paths), where the agent takes them."""
        if "additional-directories" not in self.features:
            return []
        directories: list[str] = request.get("additionalDirectories") or []
        if not all(os.path.isabs(path) for path in directories):
            message = "an additional directory must be an absolute path"
            raise RequestError.invalid_params(
                {"path": "/additionalDirectories", "message": message}
            )
        return list(directories)

    def _restored(self, params: Any) -> Session:
        """The session a ``session/load`` or ``session/resume`` names, in its new directories."""
        if self.auth_methods and not self.logged_in:
            raise RequestError.auth_required()
        request = encode(params)
        session = self.sessions.require(request["sessionId"])
        if not os.path.isabs(request["cwd"]):
            raise RequestError.invalid_params(
                {"path": "/cwd", "message": "cwd must be an absolute path"}
            )
        session.cwd = request["cwd"]
        session.directories = self._directories(request)
        session.touch()
        return session

    async def _update(
        self, session_id: str, update: dict[str, Any], keep: Session | None = None
    ) -> None:
        """Send a ``session/update`` (and keep it in the history of the session ``keep``)."""
        if keep is not None:
            keep.history.append(update)
        notification = {"sessionId": session_id, "update": update}
        await self.client.session_update(decode(UpdateParams, notification))

    async def _turn(
        self,
        session: Session,
        message_id: str,
        prompt: list[dict[str, Any]],
        cancelled: asyncio.Event,
    ) -> None:
        """Report one turn: running, the prompt, its echo, idle."""
        session_id = session.session_id
        try:
            await self._update(session_id, {"sessionUpdate": "state_update", "state": "running"})
            if _stub_data.ECHOES_USER_MESSAGE:
                await self._update(
                    session_id,
                    {"sessionUpdate": "user_message", "messageId": message_id, "content": prompt},
                    keep=session,
                )
            everything = self.all_updates or _everything.asked(prompt)
            if everything:  # every update of the draft (_everything), then a permission request
                own = {
                    "config_option_update": {
                        "sessionUpdate": "config_option_update",
                        "configOptions": _turns_offers.config_options(session),
                    }
                }
                for update in _everything.updates(
                    _stub_data.EVERY_UPDATE, own if session.config else {}
                ):
                    if cancelled.is_set():
                        break
                    await self._update(session_id, update, keep=session)
            asks = (self.ask_permission or everything) and not cancelled.is_set()
            allowed = not asks or await self._permission(session_id)
            reply = f"agent-message-{next(self._ids)}"
            upper = session.config.get(_turns_offers.STYLE["id"]) == "upper"
            for content in echoes(prompt) if allowed else ():
                if cancelled.is_set():
                    break
                if upper and content.get("type") == "text":
                    content = {**content, "text": content["text"].upper()}
                update = {"sessionUpdate": "agent_message_chunk", "content": content}
                if _stub_data.CHUNK_MESSAGE_ID:
                    update["messageId"] = reply
                await self._update(session_id, update, keep=session)
                if self.delay:
                    waiter = asyncio.ensure_future(cancelled.wait())
                    await asyncio.wait({waiter}, timeout=self.delay)
                    waiter.cancel()
            reason = "cancelled" if cancelled.is_set() else "end_turn"
            await self._update(
                session_id, {"sessionUpdate": "state_update", "state": "idle", "stopReason": reason}
            )
        except ConnectionClosed:
            logger.debug("the client went away during a turn of %s", session_id)

    async def _permission(self, session_id: str) -> bool:
        """Ask the client whether to echo the prompt; True when it allows it."""
        if not _stub_data.PERMISSION:
            return False
        if _stub_data.REQUIRES_ACTION:
            await self._update(
                session_id, {"sessionUpdate": "state_update", "state": "requires_action"}
            )
        title = "Echo the prompt back"
        subject = (
            {"title": title}
            if _stub_data.PERMISSION_TITLE
            else {"toolCall": {"toolCallId": "echo", "title": title}}
        )
        request: dict[str, Any] = {
            "sessionId": session_id,
            **subject,
            "options": [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        }
        asking = decode(getattr(models, _stub_data.PERMISSION_PARAMS), request)
        try:
            answer = await self.client.session_request_permission(asking)
        except RequestError:  # refused: as if rejected
            logger.warning("the client refused session/request_permission")
            answer = None
        if _stub_data.REQUIRES_ACTION:
            await self._update(session_id, {"sessionUpdate": "state_update", "state": "running"})
        if answer is None:
            return False
        outcome = encode(answer)["outcome"]
        return bool(outcome.get("outcome") == "selected" and outcome.get("optionId") == "allow")


def _result(method: str, value: dict[str, Any]) -> Any:
    return decode(getattr(models, str(_RESULTS[method])), value)


# the login and logout requests' handlers are named after the draft's wire names
if _stub_data.LOGIN is not None:
    setattr(StubAgent, _stub_data.LOGIN_HANDLER, StubAgent._login)
if _stub_data.LOGOUT is not None:
    setattr(StubAgent, _stub_data.LOGOUT_HANDLER, StubAgent._logout)

#: The stub agent as an ASGI application: ``uvicorn <package>.stub_agent:app``.
app = _listen.stalling(
    asgi_app(functools.partial(StubAgent, delay=_listen.env_delay()), token=_listen.env_token())
)


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> None:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); ``prog``: the command's name
    in its help."""
    served = [f"  {name}: {SESSION_FEATURES[name]}" for name in _stub_data.SESSION_FEATURES]
    parser = argparse.ArgumentParser(
        prog=prog,
        description="A stub ACP agent on stdio, or over the network with --listen.",
        epilog="session features (each advertised in initialize, unless disabled):\n"
        + "\n".join(served),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait between updates")
    _everything.add_argument(parser)
    parser.add_argument(
        "--ask-permission",
        action="store_true",
        help="ask session/request_permission before echoing the prompt",
    )
    if _stub_data.LOGIN is not None:
        parser.add_argument(
            "--auth-method",
            action="append",
            default=[],
            metavar="ID",
            help=f"advertise an auth method of type {_stub_data.LOGIN_TYPE} and require a login with it"
            " (repeatable)",
        )
    _stub_sessions.add_arguments(
        parser,
        _stub_data.SESSION_FEATURES,
        "those the bare session capability commits to go together",
    )
    _checking.add_arguments(parser)
    _listen.add_arguments(parser)
    args = parser.parse_args(argv)
    _checking.check_usage(parser, args)
    size = _stub_sessions.page_size(parser, args)
    methods: list[str] = getattr(args, "auth_method", [])
    twice = [i for n, i in enumerate(methods) if i in methods[:n]]
    if twice:
        parser.error(f"argument --auth-method: {twice[0]} is given twice")
    logging.basicConfig(level=logging.WARNING, format="stub_agent: %(levelname)s %(message)s")
    stub = functools.partial(
        StubAgent,
        delay=args.delay,
        ask_permission=args.ask_permission,
        auth_methods=methods,
        disabled=getattr(args, "disable", []),
        page_size=size,
        all_updates=args.all_updates or args.check,
    )
    app = functools.partial(asgi_app, token=args.token)
    _checking.serve(parser, args, stub, run_agent, app, PROTOCOL_VERSION)
