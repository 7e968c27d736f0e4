"""The stub client of a protocol version whose turns end through state updates (ACP v2): it
follows each session's turn to its ``idle`` state, answers permission requests, logs in when the
agent requires it, and runs one prompt turn from the command line. What its draft names
differently (types, fields, the login request) it reads from ``_stub_data``. ``stub_client`` is
its entry module (``python -m <package>.stub_client``), whose docstring says what it does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from ... import _stub_data, models
from ..._stub_data import PermissionParams, PermissionResult, UpdateParams
from ...client import Client, ClientSideConnection, connect_agent, spawn_agent
from ...methods import PROTOCOL_VERSION
from ..connection._rpc import ConnectionClosed, RequestError
from ..wire._codec import decode, encode
from . import _client_cli

__all__ = [
    "TOLD",
    "ClientSideConnection",
    "NoAuthMethod",
    "StubClient",
    "Turn",
    "UnsupportedVersion",
    "add_options",
    "auth_method",
    "initialize_params",
    "main",
    "make_client",
    "turn",
]


class UnsupportedVersion(Exception):
    """The agent answered ``initialize`` with a protocol version this package does not speak."""


class Turn:
    """One prompt turn of a session, as its state updates report it.

    The turn ends at the first ``idle`` state once the agent has taken the prompt: after its
    response came, or after a ``running`` state that followed the prompt (updates may come before
    the response).
    """

    def __init__(self) -> None:
        self.answered = False
        self.running = False
        self.ended: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    def state(self, state: Any, stop_reason: Any) -> None:
        if state == "running":
            self.running = True
        elif state == "idle" and (self.answered or self.running) and not self.ended.done():
            self.ended.set_result(stop_reason if isinstance(stop_reason, str) else None)


class StubClient(Client):
    """Prints updates, follows each session's turn, grants (or refuses) permissions."""

    def __init__(
        self, cwd: str, *, reject: bool = False, auth: str | None = None, out: Any = None
    ) -> None:
        self.cwd = os.path.realpath(cwd)
        self.reject = reject
        # the auth method to log in with if the agent requires it (None: the first)
        self.auth = auth
        self.out = out if out is not None else sys.stdout
        self.turns: dict[str, Turn] = {}  # session id -> its current turn

    def emit(self, value: Any) -> None:
        self.out.write(json.dumps(value, separators=(",", ":")) + "\n")
        self.out.flush()

    async def session_update(self, params: UpdateParams) -> None:
        notification = encode(params)
        self.emit(notification)
        update = notification["update"]
        turn = self.turns.get(notification["sessionId"])
        if turn is not None and update.get("sessionUpdate") == "state_update":
            turn.state(update.get("state"), update.get("stopReason"))

    async def session_request_permission(self, params: PermissionParams) -> PermissionResult:
        wanted = "reject" if self.reject else "allow"
        option = next(
            (o for o in encode(params)["options"] if str(o.get("kind", "")).startswith(wanted)),
            None,
        )
        outcome = (
            {"outcome": "cancelled"}
            if option is None
            else {"outcome": "selected", "optionId": option["optionId"]}
        )
        response: PermissionResult = decode(PermissionResult, {"outcome": outcome})
        return response


class NoAuthMethod(Exception):
    """The agent requires authentication and advertises no method this client can log in with."""


def auth_method(methods: Any, wanted: str | None) -> str:
    """The id of the auth method to log in with: ``wanted`` if the agent advertises it (and it is
    of the type the agent handles itself, ``_stub_data.LOGIN_TYPE``), else the first one it advertises
    of that type."""
    key, kind, usable_kind = _stub_data.LOGIN_ID, _stub_data.LOGIN_TAG, _stub_data.LOGIN_TYPE
    advertised = [m for m in methods or [] if isinstance(m, dict) and isinstance(m.get(key), str)]
    ids = ", ".join(f"{m[key]} ({m.get(kind)})" for m in advertised) or "none"
    usable = [m[key] for m in advertised if m.get(kind) == usable_kind]
    if wanted is not None:
        if not any(m[key] == wanted for m in advertised):
            raise NoAuthMethod(f"--auth {wanted} is not one of the agent's auth methods ({ids})")
        if wanted not in usable:
            raise NoAuthMethod(
                f"--auth {wanted} is not of type {usable_kind}, the one type this client logs in"
                f" with ({ids})"
            )
        return wanted
    if not usable:
        raise NoAuthMethod(
            f"the agent requires authentication but advertises no method of type {usable_kind}"
            f" to log in with ({ids})"
        )
    result: str = usable[0]
    return result


def initialize_params(client: StubClient, version: int = PROTOCOL_VERSION) -> dict[str, Any]:
    """The ``initialize`` params ``client`` sends asking for ``version``, as JSON."""
    info = {"name": "acp-bindings-stub-client", "version": str(PROTOCOL_VERSION)}
    request = {
        "protocolVersion": version,
        _stub_data.REQUEST_INFO: info,
        _stub_data.REQUEST_CAPABILITIES: {},
    }
    params: dict[str, Any] = encode(decode(_stub_data.InitializeParams, request))
    return params


async def turn(
    client: StubClient, connection: ClientSideConnection, initialized: Any, prompt: str
) -> str | None:
    """After ``initialize`` (the agent's answer in this version, as JSON): ``session/new``
    (logging in when the agent requires it) and one prompt turn, to its ``idle`` state; prints
    and returns the stop reason."""
    decode(_stub_data.InitializeResult, initialized)  # ValueError for an invalid answer
    servers: dict[str, Any] = {"mcpServers": []} if _stub_data.MCP_SERVERS_REQUIRED else {}
    new_session = decode(_stub_data.NewSessionParams, {"cwd": client.cwd, **servers})
    try:
        session = await connection.agent.session_new(new_session)
    except RequestError as exc:
        if exc.code != -32000 or _stub_data.LOGIN is None:  # not "authentication required"
            raise
        method_id = auth_method(initialized.get("authMethods"), client.auth)
        login = decode(getattr(models, _stub_data.LOGIN_PARAMS), {"methodId": method_id})
        await getattr(connection.agent, _stub_data.LOGIN_HANDLER)(login)
        session = await connection.agent.session_new(new_session)
    session_id = encode(session)["sessionId"]
    current = client.turns[session_id] = Turn()
    blocks = [{"type": "text", "text": prompt}]
    request = {"sessionId": session_id, "prompt": blocks}
    await connection.agent.session_prompt(decode(_stub_data.PromptParams, request))
    current.answered = True
    closed = asyncio.ensure_future(connection.wait_closed())
    waiting: set[asyncio.Future[Any]] = {current.ended, closed}
    await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    closed.cancel()
    if not current.ended.done():
        raise ConnectionClosed("the agent went away before the turn ended")
    stop_reason = current.ended.result()
    client.emit({"stopReason": stop_reason})
    return stop_reason


async def run(
    client: StubClient,
    command: Sequence[str],
    prompt: str,
    version: int = PROTOCOL_VERSION,
    *,
    url: str | None = None,
    token: str | None = None,
    http2: bool = False,
) -> str | None:
    """Drive one prompt turn against the agent ``command`` (or the one at ``url``); returns the
    stop reason."""
    connecting = (
        spawn_agent(client, command[0], *command[1:])
        if url is None
        else connect_agent(client, url, token=token, http2=http2)
    )
    async with connecting as connection:
        # the version first: an answer of another version is not one of this package's models
        params = initialize_params(client, version)
        answer = await connection.rpc.request("initialize", params)
        answered = answer.get("protocolVersion") if isinstance(answer, dict) else None
        if answered != PROTOCOL_VERSION:
            raise UnsupportedVersion(
                f"the agent answered protocol version {answered}; this client speaks"
                f" {PROTOCOL_VERSION} (it asked for {version})"
            )
        return await turn(client, connection, answer, prompt)


#: The failures the command line tells in a line of their own.
TOLD: tuple[type[Exception], ...] = (UnsupportedVersion, NoAuthMethod)


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of this version's stub client beyond every stub client's (and the version to
    ask for, which a package of several versions asks itself)."""
    if _stub_data.LOGIN is not None:
        parser.add_argument(
            "--auth",
            metavar="METHOD_ID",
            help="the auth method to log in with if the agent requires authentication (default:"
            f" the first {_stub_data.LOGIN_TYPE} method it advertises)",
        )


def make_client(args: argparse.Namespace) -> StubClient:
    """The stub client the parsed command line asks for."""
    return StubClient(os.getcwd(), reject=args.reject, auth=getattr(args, "auth", None))


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); ``prog``: the command's name
    in its help."""
    parser = _client_cli.parser(prog)
    parser.add_argument(
        "--protocol-version",
        type=int,
        default=PROTOCOL_VERSION,
        metavar="N",
        help=f"the protocol version to ask for (default: {PROTOCOL_VERSION})",
    )
    add_options(parser)
    _client_cli.add_remote(parser)
    args = parser.parse_args(argv)
    _client_cli.check_remote(parser, args)
    client = make_client(args)
    running = run(
        client,
        args.command,
        args.prompt,
        args.protocol_version,
        url=args.url,
        token=args.token,
        http2=args.http2,
    )
    return _client_cli.exit_status(running, TOLD)
