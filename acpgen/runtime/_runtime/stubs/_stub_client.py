"""The stub client of a protocol version whose turns end with the prompt's response (ACP v1): it
serves files inside the session's cwd (through ``_sandbox``) and terminals (``_terminal``),
answers permission requests, authenticates when the agent requires it, and runs one prompt turn
from the command line. ``stub_client`` is its entry module (``python -m <package>.stub_client``),
whose docstring says what it does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from ... import models
from ...client import Client, ClientSideConnection, connect_agent, spawn_agent
from ...methods import PROTOCOL_VERSION
from ..connection._rpc import ConnectionClosed, RequestError
from ..wire._codec import decode, encode
from . import _client_cli
from ._sandbox import PATH_ERRORS, Refused, read_text, write_text
from ._terminal import Terminal

__all__ = [
    "TOLD",
    "ClientSideConnection",
    "NoAuthMethod",
    "StubClient",
    "add_options",
    "auth_method",
    "initialize_params",
    "main",
    "make_client",
    "turn",
]


class StubClient(Client):
    """Prints updates, serves files inside ``cwd``, grants (or refuses) permissions."""

    def __init__(
        self,
        cwd: str,
        *,
        reject: bool = False,
        allow_terminal: bool = False,
        auth: str | None = None,
        out: Any = None,
    ) -> None:
        self.cwd = os.path.realpath(cwd)
        self.reject = reject
        self.allow_terminal = allow_terminal
        self.auth = auth
        self.out = out if out is not None else sys.stdout
        self._terminals: dict[str, Terminal] = {}
        self._ids = itertools.count(1)
        self._root: int | None = None  # the cwd, opened once: every file is opened from it

    def emit(self, value: Any) -> None:
        self.out.write(json.dumps(value, separators=(",", ":")) + "\n")
        self.out.flush()

    async def session_update(self, params: models.SessionNotification) -> None:
        self.emit(encode(params))

    def _checked(self, path: Any) -> str:
        """``path``, if it is an absolute path of valid text; else the request is refused."""
        if not isinstance(path, str) or not path.startswith("/"):
            raise RequestError.invalid_params({"path": path, "message": "path must be absolute"})
        if "\0" in path:
            raise RequestError.invalid_params({"path": path, "message": "path holds a NUL byte"})
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            raise RequestError.invalid_params(
                {"path": path, "message": "path is not valid Unicode"}
            ) from None
        return path

    def _parts(self, path: Any) -> list[str]:
        """The components of ``path`` below the cwd, as written (``..`` and links are resolved
        while opening); a path that does not start with the cwd is refused."""
        checked = self._checked(path)
        prefix = self.cwd.rstrip("/") + "/"
        if not checked.startswith(prefix):
            raise RequestError.invalid_params(
                {"path": path, "message": "path is outside the session's cwd"}
            )
        return checked[len(prefix) :].split("/")

    def _root_fd(self) -> int:
        if self._root is None:
            self._root = os.open(self.cwd, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return self._root

    async def _files(self, path: str, action: Any, *args: Any) -> Any:
        """Run a file action in a thread; its failures become the request's error."""
        parts = self._parts(path)
        try:
            return await asyncio.to_thread(action, self._root_fd(), self.cwd, parts, *args)
        except Refused as exc:
            raise RequestError.invalid_params({"path": path, "message": str(exc)}) from None
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        except OSError as exc:
            if exc.errno not in PATH_ERRORS:
                raise RequestError.internal_error(
                    {"path": path, "message": exc.strerror or str(exc)}
                ) from None
            raise RequestError.invalid_params(
                {"path": path, "message": exc.strerror or str(exc)}
            ) from None
        except UnicodeDecodeError as exc:
            message = f"the file is not UTF-8 text: {exc}"
            raise RequestError.internal_error({"path": path, "message": message}) from None

    def inside(self, path: Any) -> str:
        """``path`` resolved, if it lies inside the session's cwd; else the request is refused."""
        resolved = os.path.realpath(self._checked(path))
        if os.path.commonpath([resolved, self.cwd]) != self.cwd:
            raise RequestError.invalid_params(
                {"path": path, "message": "path is outside the session's cwd"}
            )
        return resolved

    async def fs_read_text_file(
        self, params: models.ReadTextFileRequest
    ) -> models.ReadTextFileResponse:
        request = encode(params)
        text = await self._files(request["path"], read_text)
        line, limit = request.get("line"), request.get("limit")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : None if limit is None else start + limit])
        response: models.ReadTextFileResponse = decode(
            models.ReadTextFileResponse, {"content": text}
        )
        return response

    async def fs_write_text_file(
        self, params: models.WriteTextFileRequest
    ) -> models.WriteTextFileResponse:
        request = encode(params)
        try:
            data = request["content"].encode("utf-8")  # before the file is touched
        except UnicodeEncodeError:
            raise RequestError.invalid_params(
                {"path": "/content", "message": "content is not valid Unicode"}
            ) from None
        await self._files(request["path"], write_text, data)
        response: models.WriteTextFileResponse = decode(models.WriteTextFileResponse, {})
        return response

    async def session_request_permission(
        self, params: models.RequestPermissionRequest
    ) -> models.RequestPermissionResponse:
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
        response: models.RequestPermissionResponse = decode(
            models.RequestPermissionResponse, {"outcome": outcome}
        )
        return response

    def _terminal(self, params: Any) -> Terminal:
        if not self.allow_terminal:
            raise RequestError.method_not_found("terminal/*")
        terminal_id = encode(params)["terminalId"]
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.resource_not_found(terminal_id)
        return terminal

    async def terminal_create(
        self, params: models.CreateTerminalRequest
    ) -> models.CreateTerminalResponse:
        if not self.allow_terminal:
            raise RequestError.method_not_found("terminal/create")
        request = encode(params)
        cwd = self.inside(request["cwd"]) if request.get("cwd") else self.cwd
        env = {**os.environ, **{v["name"]: v["value"] for v in request.get("env") or []}}
        try:
            process = await asyncio.create_subprocess_exec(
                request["command"],
                *(request.get("args") or []),
                cwd=cwd,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
        except OSError as exc:
            raise RequestError.internal_error(
                {"command": request["command"], "message": str(exc)}
            ) from None
        terminal_id = f"term-{next(self._ids)}"
        self._terminals[terminal_id] = Terminal(process, request.get("outputByteLimit"))
        response: models.CreateTerminalResponse = decode(
            models.CreateTerminalResponse, {"terminalId": terminal_id}
        )
        return response

    async def terminal_output(
        self, params: models.TerminalOutputRequest
    ) -> models.TerminalOutputResponse:
        terminal = self._terminal(params)
        result = {
            "output": terminal.output.decode("utf-8", "replace"),
            "truncated": terminal.truncated,
        }
        status = terminal.exit_status()
        if status is not None:
            result["exitStatus"] = status
        response: models.TerminalOutputResponse = decode(models.TerminalOutputResponse, result)
        return response

    async def terminal_wait_for_exit(
        self, params: models.WaitForTerminalExitRequest
    ) -> models.WaitForTerminalExitResponse:
        terminal = self._terminal(params)
        await terminal.process.wait()
        await terminal.reader
        response: models.WaitForTerminalExitResponse = decode(
            models.WaitForTerminalExitResponse, terminal.exit_status()
        )
        return response

    async def terminal_kill(
        self, params: models.KillTerminalRequest
    ) -> models.KillTerminalResponse:
        terminal = self._terminal(params)
        with contextlib.suppress(ProcessLookupError):
            terminal.process.kill()
        response: models.KillTerminalResponse = decode(models.KillTerminalResponse, {})
        return response

    async def terminal_release(
        self, params: models.ReleaseTerminalRequest
    ) -> models.ReleaseTerminalResponse:
        terminal = self._terminal(params)
        del self._terminals[encode(params)["terminalId"]]
        if terminal.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                terminal.process.kill()
            await terminal.process.wait()
        response: models.ReleaseTerminalResponse = decode(models.ReleaseTerminalResponse, {})
        return response

    async def close(self) -> None:
        """Kill and forget every terminal still open; close the cwd."""
        for terminal in self._terminals.values():
            with contextlib.suppress(ProcessLookupError):
                terminal.process.kill()
            await terminal.process.wait()
        self._terminals.clear()
        if self._root is not None:
            os.close(self._root)
            self._root = None


class NoAuthMethod(Exception):
    """The agent requires authentication and no advertised method can be used."""


def auth_method(methods: Any, wanted: str | None, env: Any = None) -> str:
    """The id of the auth method to use: ``wanted`` if the agent advertises it, else the first
    ``env_var`` method whose variables (the ones not optional) are all set."""
    env = os.environ if env is None else env
    advertised = [m for m in methods or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]
    ids = ", ".join(m["id"] for m in advertised) or "none"
    if wanted is not None:
        if any(m["id"] == wanted for m in advertised):
            return wanted
        raise NoAuthMethod(f"--auth {wanted} is not one of the agent's auth methods ({ids})")
    for method in advertised:
        variables = method.get("vars") if method.get("type") == "env_var" else None
        if isinstance(variables, list) and all(
            isinstance(v, dict) and (v.get("optional") is True or v.get("name") in env)
            for v in variables
        ):
            result: str = method["id"]
            return result
    raise NoAuthMethod(
        f"the agent requires authentication: pick one of its methods with --auth ({ids})"
    )


def initialize_params(client: StubClient) -> dict[str, Any]:
    """The ``initialize`` params ``client`` sends, as JSON."""
    capabilities = {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": client.allow_terminal,
    }
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": capabilities,
        "clientInfo": {"name": "acp-bindings-stub-client", "version": str(PROTOCOL_VERSION)},
    }


async def turn(
    client: StubClient, connection: ClientSideConnection, initialized: Any, prompt: str
) -> str:
    """After ``initialize`` (the agent's answer, as JSON): ``session/new`` (logging in when the
    agent requires it) and one prompt turn; prints and returns the stop reason."""
    decode(models.InitializeResponse, initialized)  # ValueError for an invalid answer
    new_session = decode(models.NewSessionRequest, {"cwd": client.cwd, "mcpServers": []})
    try:
        session = await connection.agent.session_new(new_session)
    except RequestError as exc:
        if exc.code != -32000:  # not "authentication required"
            raise
        method_id = auth_method(initialized.get("authMethods"), client.auth)
        await connection.agent.authenticate(
            decode(models.AuthenticateRequest, {"methodId": method_id})
        )
        session = await connection.agent.session_new(new_session)
    session_id = encode(session)["sessionId"]
    response = await connection.agent.session_prompt(
        decode(
            models.PromptRequest,
            {"sessionId": session_id, "prompt": [{"type": "text", "text": prompt}]},
        )
    )
    stop_reason: str = encode(response)["stopReason"]
    client.emit({"stopReason": stop_reason})
    return stop_reason


async def run(
    client: StubClient,
    command: Sequence[str],
    prompt: str,
    *,
    url: str | None = None,
    token: str | None = None,
    http2: bool = False,
) -> str:
    """Drive one prompt turn against the agent ``command`` (or the one at ``url``); returns the
    stop reason."""
    try:
        connecting = (
            spawn_agent(client, command[0], *command[1:])
            if url is None
            else connect_agent(client, url, token=token, http2=http2)
        )
        async with connecting as connection:
            params = decode(models.InitializeRequest, initialize_params(client))
            try:
                initialized = await connection.agent.initialize(params)
            except ConnectionClosed:
                # Streamable HTTP is refused at initialize: said as a refused WebSocket is
                refused = getattr(getattr(connection, "transport", None), "failure", None)
                if isinstance(refused, ConnectionError):
                    raise refused from None
                raise
            return await turn(client, connection, encode(initialized), prompt)
    finally:
        await client.close()


#: The failures the command line tells in a line of their own.
TOLD: tuple[type[Exception], ...] = (NoAuthMethod,)


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of this version's stub client beyond every stub client's."""
    parser.add_argument("--allow-terminal", action="store_true", help="run terminal/* requests")
    parser.add_argument(
        "--auth",
        metavar="METHOD_ID",
        help="the auth method to use if the agent requires authentication (default: the first"
        " env_var method whose variables are all set)",
    )


def make_client(args: argparse.Namespace) -> StubClient:
    """The stub client the parsed command line asks for."""
    return StubClient(
        os.getcwd(),
        reject=args.reject,
        allow_terminal=getattr(args, "allow_terminal", False),
        auth=getattr(args, "auth", None),
    )


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); ``prog``: the command's name
    in its help."""
    parser = _client_cli.parser(prog)
    add_options(parser)
    _client_cli.add_remote(parser)
    args = parser.parse_args(argv)
    _client_cli.check_remote(parser, args)
    client = make_client(args)
    running = run(
        client, args.command, args.prompt, url=args.url, token=args.token, http2=args.http2
    )
    return _client_cli.exit_status(running, TOLD)
