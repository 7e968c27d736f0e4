"""The stub agent of a protocol version whose turns end with the prompt's response (ACP v1): it
negotiates, creates sessions, echoes prompts slowly enough to cancel (reading ``file://`` links
through the client), and serves every optional feature its schema defines (``_stub_data``):
loading (replaying the conversation), resuming, listing (a page at a time), forking, closing and
deleting sessions, additional directories, modes and config options with their updates, and
logging in and out; each advertised in ``initialize``, each one it does not serve (absent from the
schema, or disabled) answered -32601 and not advertised. It serves stdio or the network
(``_listen``); its sessions live in ``_stub_sessions``. ``stub_agent`` is its entry module
(``python -m <package>.stub_agent``, and its ``app``), whose docstring says what it does.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
from collections.abc import Collection, Sequence
from typing import Any

from ... import _stub_data, models
from ...agent import AGENT_ROUTES, Agent, asgi_app, run_agent
from ...methods import CAPABILITIES, METHODS, PROTOCOL_VERSION
from ..connection._rpc import RequestError
from ..kits import _checking, _client_kit
from ..remote import _listen
from ..wire._codec import decode, encode
from . import _everything, _stub_sessions
from ._echo import text_chunks
from ._stub_sessions import DEFAULT_PAGE_SIZE, Session, SessionStore

__all__ = ["FEATURES", "SUPPORTED_VERSIONS", "StubAgent", "app", "main"]

#: The protocol versions this stub speaks.
SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)
#: Seconds between two updates of a turn (and before the first): time for a ``session/cancel``.
DEFAULT_DELAY = 0.1
#: The auth method it advertises, which ``authenticate`` takes.
AUTH_METHOD = {"id": "stub-login", "name": "Stub login", "description": "Any client may log in."}
MODES = [
    {"id": "ask", "name": "Ask", "description": "Echo the prompt."},
    {"id": "code", "name": "Code", "description": "Echo the prompt, as in ask mode."},
]
#: Its one config option: ``upper`` echoes the prompt in upper case.
STYLE = {"id": "style", "name": "Reply style", "type": "select"}
STYLES = [{"value": "echo", "name": "Echo"}, {"value": "upper", "name": "Upper case"}]

#: What each optional feature does, by the name ``--disable`` takes; the schema has those of
#: ``_stub_data.FEATURES``.
FEATURES = {
    "load": "session/load replays the session's conversation as session/update notifications",
    "resume": "session/resume takes a session back without replaying it",
    "list": "session/list lists the sessions, a page at a time (its cursor: --page-size)",
    "close": "session/close ends a session's turn and forgets the session",
    "delete": "session/delete forgets a session",
    "fork": "session/fork makes a new session with a copy of a session's conversation",
    "additional-directories": "additionalDirectories (absolute paths) are kept per session",
    "modes": "sessions have modes (ask, code): session/set_mode, current_mode_update",
    "config-options": "sessions have a config option (style: echo, upper): "
    "session/set_config_option, config_option_update",
    "logout": "logout undoes authenticate",
}
#: The handler of each feature that is a request, by the name ``--disable`` takes.
_HANDLERS = {
    "load": "session_load",
    "resume": "session_resume",
    "list": "session_list",
    "close": "session_close",
    "delete": "session_delete",
    "fork": "session_fork",
    "modes": "session_set_mode",
    "config-options": "session_set_config_option",
    "logout": "logout",
}
#: The result type of each request the agent answers, by its wire name.
_RESULTS = {m.method: m.result for m in METHODS if m.side == "agent" and m.result}


class StubAgent(Agent, _checking.Checked):
    """The stub's behaviour: negotiate, keep sessions, echo prompts, honour cancellation, and
    serve the optional features of :data:`FEATURES` the schema has, but those ``disabled``."""

    def __init__(
        self,
        delay: float = DEFAULT_DELAY,
        disabled: Collection[str] = (),
        require_auth: bool = False,
        page_size: int = DEFAULT_PAGE_SIZE,
        store: SessionStore | None = None,
        all_updates: bool = False,
        check: _client_kit.ClientCheck | None = None,
    ) -> None:
        self.check = check  # checking mode: the client is held to the spec (_client_kit)
        self.client_methods = [m.method for m in METHODS if m.side == "client"]
        self.capability_pointers = CAPABILITIES
        directories = getattr(_stub_data, "ADVERTISED", {}).get("additional-directories")
        if directories:
            self.field_pointers = {
                "additionalDirectories": "/".join(("/result/agentCapabilities", *directories))
            }
        self.delay = delay
        self.all_updates = all_updates  # every turn sends every update (else: asked by its prompt)
        self.features = frozenset(_stub_data.FEATURES) - frozenset(disabled)
        # what it does not serve (a feature the schema lacks a part of, or disabled, or a method
        # of the schema it never overrides) is answered -32601 before its params are read
        refused = {h for f, h in _HANDLERS.items() if f not in self.features}
        self.handled_requests = _stub_sessions.served_requests(
            type(self), Agent, AGENT_ROUTES, refused
        )
        self.require_auth = require_auth and _stub_data.AUTH
        self.page_size = page_size
        self.sessions = store if store is not None else SessionStore()
        self.can_read_files = False
        self.initialized = False
        self.logged_in = False

    # -- connecting and logging in ------------------------------------------------------------

    def session_known(self, session_id: str) -> bool:
        return True  # its store (a server's agents may share one) answers an unknown session

    @staticmethod
    def uninitialized(method: str) -> RequestError:
        """What answers any request but ``initialize`` before one succeeded (its dispatcher asks;
        initialization: the client initializes first), whatever the method."""
        return RequestError.invalid_request({"details": "call initialize first", "method": method})

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        request = encode(params)
        requested = request.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else max(SUPPORTED_VERSIONS)
        fs = (request.get("clientCapabilities") or {}).get("fs") or {}
        self.can_read_files = fs.get("readTextFile") is True
        capabilities: dict[str, Any] = {
            "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
        }
        for feature, path in _stub_data.ADVERTISED.items():
            *groups, leaf = path
            holder = capabilities
            for group in groups:
                holder = holder.setdefault(group, {})
            if feature in _stub_data.FLAGS:
                holder[leaf] = feature in self.features
            elif feature in self.features:
                holder[leaf] = {}
        answer = {
            "protocolVersion": version,
            "agentCapabilities": capabilities,
            "authMethods": [AUTH_METHOD] if _stub_data.AUTH else [],
            "agentInfo": {"name": "acp-bindings-stub-agent", "version": str(PROTOCOL_VERSION)},
        }
        response: models.InitializeResponse = decode(models.InitializeResponse, answer)
        self.initialized = True
        return response

    def on_connect(self, connection: Any) -> None:
        super().on_connect(connection)
        self.watch(connection)

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        method_id = encode(params).get("methodId")
        if not _stub_data.AUTH or method_id != AUTH_METHOD["id"]:
            message = f"{method_id} is not an auth method this agent advertises"
            raise RequestError.invalid_params({"methodId": method_id, "message": message})
        self.logged_in = True
        response: models.AuthenticateResponse = self._result("authenticate", {})
        return response

    async def logout(self, params: Any) -> Any:
        self._serves("logout")
        self.logged_in = False
        return self._result("logout", {})

    # -- sessions -------------------------------------------------------------------------------

    async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        request = self._session_request(params)
        settings: dict[str, Any] = {}
        if "modes" in self.features:
            settings["mode"] = MODES[0]["id"]
        if "config-options" in self.features:
            settings["config"] = {STYLE["id"]: STYLES[0]["value"]}
        session = self.sessions.create(request["cwd"], self._directories(request), **settings)
        response: models.NewSessionResponse = self._result(
            "session/new", {"sessionId": session.session_id, **self._offers(session)}
        )
        return response

    async def session_load(self, params: Any) -> Any:
        self._serves("load")
        session = self._restored(params)
        for update in list(session.history):
            await self._send(session, update, keep=False)
        return self._result("session/load", self._offers(session))

    async def session_resume(self, params: Any) -> Any:
        self._serves("resume")
        return self._result("session/resume", self._offers(self._restored(params)))

    async def session_fork(self, params: Any) -> Any:
        self._serves("fork")
        request = self._session_request(params)
        source = self.sessions.require(request["sessionId"])
        session = self.sessions.create(
            request["cwd"],
            self._directories(request),
            history=list(source.history),
            mode=source.mode,
            config=dict(source.config),
        )
        answer = {"sessionId": session.session_id, **self._offers(session)}
        return self._result("session/fork", answer)

    async def session_list(self, params: Any) -> Any:
        self._serves("list")
        request = encode(params)
        listed, cursor = self.sessions.page(
            request.get("cursor"), self.page_size, request.get("cwd")
        )
        answer: dict[str, Any] = {"sessions": [self._info(s) for s in listed]}
        if cursor is not None:
            answer["nextCursor"] = cursor
        return self._result("session/list", answer)

    async def session_close(self, params: Any) -> Any:
        self._serves("close")
        self.sessions.forget(self.sessions.require(encode(params)["sessionId"]).session_id)
        return self._result("session/close", {})

    async def session_delete(self, params: Any) -> Any:
        self._serves("delete")
        # session-delete.mdx, "Semantics": deleting a session already deleted, or never
        # created, SHOULD succeed silently
        self.sessions.forget(encode(params)["sessionId"])
        return self._result("session/delete", {})

    async def session_set_mode(self, params: Any) -> Any:
        self._serves("modes")
        request = encode(params)
        session = self.sessions.require(request["sessionId"])
        if request.get("modeId") not in [mode["id"] for mode in MODES]:
            raise RequestError.invalid_params(
                {"modeId": request.get("modeId"), "message": "no such mode"}
            )
        session.mode = request["modeId"]
        if _stub_data.MODE_UPDATE:
            update = {"sessionUpdate": "current_mode_update", "currentModeId": session.mode}
            await self._send(session, update)
        return self._result("session/set_mode", {})

    async def session_set_config_option(self, params: Any) -> Any:
        self._serves("config-options")
        request = encode(params)
        session = self.sessions.require(request["sessionId"])
        if request.get("configId") != STYLE["id"]:
            message = "no such config option"
            raise RequestError.invalid_params(
                {"configId": request.get("configId"), "message": message}
            )
        if request.get("value") not in [style["value"] for style in STYLES]:
            raise RequestError.invalid_params(
                {"value": request.get("value"), "message": "no such value"}
            )
        session.config[STYLE["id"]] = request["value"]
        options = self._config_options(session)
        if _stub_data.CONFIG_UPDATE:
            await self._send(
                session, {"sessionUpdate": "config_option_update", "configOptions": options}
            )
        return self._result("session/set_config_option", {"configOptions": options})

    # -- prompt turns ---------------------------------------------------------------------------

    async def session_cancel(self, params: models.CancelNotification) -> None:
        session = self.sessions.get(encode(params)["sessionId"])
        if session is not None:
            session.cancelled.set()

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        request = encode(params)
        session = self.sessions.require(request["sessionId"])
        if self.check is not None:  # checking mode's probes (no coroutine a turn otherwise)
            await self.probe(session.session_id)
        cancelled = session.cancelled = asyncio.Event()
        for block in request["prompt"]:
            session.history.append({"sessionUpdate": "user_message_chunk", "content": block})
            if session.title is None and block.get("type") == "text":
                session.title = " ".join(block["text"].split())[:60] or None
        session.touch()
        everything = self.all_updates or _everything.asked(request["prompt"])
        if everything and not await self._everything(session, cancelled):
            return _stop("cancelled")
        for block in request["prompt"]:
            for content in await self._echo(session, block):
                if await self._paused(cancelled):
                    return _stop("cancelled")
                update = {"sessionUpdate": "agent_message_chunk", "content": content}
                await self._send(session, update)
        return _stop("cancelled" if await self._paused(cancelled) else "end_turn")

    async def _everything(self, session: Session, cancelled: asyncio.Event) -> bool:
        """Send every kind of update the schema defines, then ask permission for the tool call
        they report (``_everything``); False if the turn is cancelled meanwhile."""
        own: dict[str, dict[str, Any]] = {}
        if "modes" in self.features:
            own["current_mode_update"] = {
                "sessionUpdate": "current_mode_update",
                "currentModeId": session.mode,
            }
        if "config-options" in self.features:
            options = self._config_options(session)
            own["config_option_update"] = {
                "sessionUpdate": "config_option_update",
                "configOptions": options,
            }
        for update in _everything.updates(_stub_data.EVERY_UPDATE, own):
            if await self._paused(cancelled):
                return False
            await self._send(session, update)
        if hasattr(models, "RequestPermissionRequest"):
            tool_call = {
                "toolCallId": _everything.tool_call_id(_stub_data.EVERY_UPDATE),
                "title": "Echo the prompt back",
            }
            request = {
                "sessionId": session.session_id,
                "toolCall": tool_call,
                "options": _everything.OPTIONS,
            }
            asking = decode(models.RequestPermissionRequest, request)
            try:
                await self.client.session_request_permission(asking)
            except RequestError:  # refused: the turn goes on
                logging.getLogger(__name__).warning("the client refused session/request_permission")
        return not await self._paused(cancelled)

    async def _paused(self, cancelled: asyncio.Event) -> bool:
        """Wait ``delay`` seconds, or less if the turn is cancelled meanwhile; True if it is."""
        if self.delay and not cancelled.is_set():
            waiter = asyncio.ensure_future(cancelled.wait())
            await asyncio.wait({waiter}, timeout=self.delay)
            waiter.cancel()
        return cancelled.is_set()

    async def _echo(self, session: Session, block: dict[str, Any]) -> list[dict[str, Any]]:
        """The content blocks that echo ``block`` (in upper case, when the session's style says)."""
        upper = session.config.get(STYLE["id"]) == "upper"
        if block.get("type") == "text":
            text = block["text"].upper() if upper else block["text"]
            return [{"type": "text", "text": chunk} for chunk in text_chunks(text)]
        uri = str(block.get("uri"))
        if block.get("type") != "resource_link" or not self.can_read_files:
            return [block]
        if not uri.startswith("file://"):
            return [block]
        request = {"sessionId": session.session_id, "path": uri[len("file://") :]}
        read = await self.client.fs_read_text_file(decode(models.ReadTextFileRequest, request))
        return [{"type": "text", "text": chunk} for chunk in text_chunks(encode(read)["content"])]

    # -- helpers --------------------------------------------------------------------------------

    def _serves(self, feature: str) -> None:
        """-32601 (method not found) unless the agent serves ``feature``."""
        if feature not in self.features:
            raise RequestError.method_not_found(_stub_data.FEATURES.get(feature) or feature)

    def _session_request(self, params: Any) -> dict[str, Any]:
        """The params of a request that makes or restores a session, checked: after
        ``initialize``, logged in when required, with an absolute ``cwd``."""
        if self.require_auth and not self.logged_in:
            raise RequestError.auth_required({"authMethods": [AUTH_METHOD["id"]]})
        request: dict[str, Any] = encode(params)
        if not os.path.isabs(request["cwd"]):
            raise RequestError.invalid_params(
                {"path": "/cwd", "message": "cwd must be an absolute path"}
            )
        return request

    def _directories(self, request: dict[str, Any]) -> list[str]:
        """The request's additional directories (absolute paths), where the agent takes them."""
        if "additional-directories" not in self.features:
            return []
        directories: list[str] = request.get("additionalDirectories") or []
        for index, path in enumerate(directories):
            if not os.path.isabs(path):
                message = "an additional directory must be an absolute path"
                raise RequestError.invalid_params(
                    {"path": f"/additionalDirectories/{index}", "message": message}
                )
        return list(directories)

    def _restored(self, params: Any) -> Session:
        """The session a ``session/load`` or ``session/resume`` names, in its new directories."""
        request = self._session_request(params)
        session = self.sessions.require(request["sessionId"])
        session.cwd = request["cwd"]
        session.directories = self._directories(request)
        session.touch()
        return session

    def _offers(self, session: Session) -> dict[str, Any]:
        """The modes and config options a session answer carries."""
        offers: dict[str, Any] = {}
        if "modes" in self.features:
            offers["modes"] = {"availableModes": MODES, "currentModeId": session.mode}
        if "config-options" in self.features:
            offers["configOptions"] = self._config_options(session)
        return offers

    @staticmethod
    def _config_options(session: Session) -> list[dict[str, Any]]:
        current = session.config.get(STYLE["id"], STYLES[0]["value"])
        return [{**STYLE, "currentValue": current, "options": STYLES}]

    def _info(self, session: Session) -> dict[str, Any]:
        """A session as ``session/list`` lists it: the fields its schema has."""
        info: dict[str, Any] = {
            "sessionId": session.session_id,
            "cwd": session.cwd,
            "title": session.title,
            "updatedAt": session.updated_at,
        }
        if session.directories:
            info["additionalDirectories"] = session.directories
        return {k: v for k, v in info.items() if k in _stub_data.SESSION_INFO and v is not None}

    async def _send(self, session: Session, update: dict[str, Any], keep: bool = True) -> None:
        """Send a ``session/update`` (and keep it in the session's history, unless told not to)."""
        if keep:
            session.history.append(update)
        notification = {"sessionId": session.session_id, "update": update}
        await self.client.session_update(decode(models.SessionNotification, notification))

    @staticmethod
    def _result(method: str, value: dict[str, Any]) -> Any:
        return decode(getattr(models, str(_RESULTS[method])), value)


def _stop(reason: str) -> models.PromptResponse:
    response: models.PromptResponse = decode(models.PromptResponse, {"stopReason": reason})
    return response


#: The stub agent as an ASGI application: ``uvicorn <package>.stub_agent:app``.
app = _listen.stalling(
    asgi_app(
        functools.partial(StubAgent, delay=_listen.env_seconds("ACP_STUB_DELAY", DEFAULT_DELAY)),
        token=_listen.env_token(),
    )
)


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> None:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); ``prog``: the command's name
    in its help."""
    served = [f"  {name}: {FEATURES[name]}" for name in _stub_data.FEATURES if name in FEATURES]
    parser = argparse.ArgumentParser(
        prog=prog,
        description="A stub ACP agent on stdio, or over the network with --listen.",
        epilog="features (each advertised in initialize or offered in session/new's answer, unless"
        " disabled):\n" + "\n".join(served),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=DEFAULT_DELAY,
        metavar="SECONDS",
        help=f"seconds to wait before each update of a turn, and after the last: time to cancel"
        f" it (default: {DEFAULT_DELAY})",
    )
    _stub_sessions.add_arguments(parser, _stub_data.FEATURES, "the features are listed below")
    if _stub_data.AUTH:
        parser.add_argument(
            "--require-auth",
            action="store_true",
            help=f"answer session requests -32000 (authentication required) until authenticate"
            f" with {AUTH_METHOD['id']} succeeds",
        )
    _everything.add_argument(parser)
    _checking.add_arguments(parser)
    _listen.add_arguments(parser)
    args = parser.parse_args(argv)
    _checking.check_usage(parser, args)
    size = _stub_sessions.page_size(parser, args)
    logging.basicConfig(level=logging.WARNING, format="stub_agent: %(levelname)s %(message)s")
    stub = functools.partial(
        StubAgent,
        delay=args.delay,
        disabled=getattr(args, "disable", []),
        require_auth=getattr(args, "require_auth", False),
        page_size=size,
        all_updates=args.all_updates or args.check,
    )
    app = functools.partial(asgi_app, token=args.token)
    _checking.serve(parser, args, stub, run_agent, app, PROTOCOL_VERSION)
