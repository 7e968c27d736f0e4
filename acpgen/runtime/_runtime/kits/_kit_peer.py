"""The agent kit's client: raw JSON-RPC to an agent under test, over its stdio or the network.

:class:`Peer` speaks to the agent as a client does, but byte for byte: it sends what a check asks
(a line that is not JSON included), answers the agent's own requests (permission as the check
decides; anything else -32601, since the kit's client advertises no capability), and keeps every
message both ways with its time (the transcript the ``--html`` page shows) and every line the
agent wrote on its stdout (which the stdout check reads whole). It imports nothing of a version's
modules: a check holds the agent to the spec's text, not to a package's decoders.

A :class:`Link` is the wire: :class:`StdioLink` starts the agent's command on pipes;
:class:`RemoteLink` is a connection of the remote client (``_remote.open_transport``) over
WebSocket or Streamable HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..transports._transports import MessageTransport

__all__ = [
    "AGENT_TO_CLIENT",
    "CLIENT_TO_AGENT",
    "Broken",
    "Link",
    "Peer",
    "RemoteLink",
    "StdioLink",
    "quote",
]

CLIENT_TO_AGENT, AGENT_TO_CLIENT = "client-to-agent", "agent-to-client"
_LINE_LIMIT = 64 * 1024 * 1024  # the longest line read from an agent's stdout
_MISSING: Any = object()


class Broken(Exception):
    """A requirement the agent broke: the message says how, quoting what the agent sent."""


def quote(message: Any, limit: int = 400) -> str:
    """A message as compact JSON, cut at ``limit`` characters."""
    text = message.decode("utf-8", "backslashreplace") if isinstance(message, bytes) else None
    if text is None:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    text = text.rstrip("\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Link:
    """What the peer needs of a wire."""

    stdio = False  # an agent's stdio: it has a stdout to read whole and a stdin to close
    raw = False  # can carry bytes that are not JSON
    http = False  # Streamable HTTP

    async def send(self, data: bytes) -> None:
        raise NotImplementedError

    async def receive(self) -> bytes | None:
        """The next message or line; None at the end."""
        raise NotImplementedError

    async def close(self, grace: float) -> int | None:
        """End the connection: the agent's exit status where it has one and exited in ``grace``
        seconds, else None."""
        raise NotImplementedError

    def stderr(self) -> str:
        return ""


class StdioLink(Link):
    """An agent process on pipes: a line per message."""

    stdio = raw = True

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._stderr = bytearray()
        self._drain = asyncio.ensure_future(self._read_stderr())

    @classmethod
    async def start(cls, command: Sequence[str], cwd: str | None = None) -> StdioLink:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            limit=_LINE_LIMIT,
        )
        return cls(process)

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        await self.process.stdin.drain()

    async def receive(self) -> bytes | None:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        return line or None

    async def close(self, grace: float) -> int | None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(ConnectionError):
                stdin.close()
        try:
            status: int | None = await asyncio.wait_for(self.process.wait(), grace)
        except asyncio.TimeoutError:
            status = None
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._drain, 1.0)
        return status

    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while True:
            chunk = await self.process.stderr.read(65536)
            if not chunk:
                return
            self._stderr += chunk
            del self._stderr[: max(0, len(self._stderr) - 65536)]  # the tail is enough


class RemoteLink(Link):
    """A connection to a remote agent (WebSocket or Streamable HTTP)."""

    def __init__(self, transport: MessageTransport, url: str) -> None:
        self.transport = transport
        scheme = url.partition("://")[0].lower()
        self.raw = scheme in ("ws", "wss")  # a frame of text; HTTP needs JSON
        self.http = scheme in ("http", "https")  # it refuses an unknown session itself

    @classmethod
    async def open(cls, url: str, token: str | None, timeout: float) -> RemoteLink:
        from ..remote._remote import open_transport

        return cls(await open_transport(url, token=token, connect_timeout=timeout), url)

    async def send(self, data: bytes) -> None:
        await self.transport.send(data)

    async def receive(self) -> bytes | None:
        return await self.transport.receive()

    async def close(self, grace: float) -> int | None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.transport.close(), grace)
        return None


class Peer:
    """A client on one connection to the agent."""

    def __init__(
        self, link: Link, patience: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.link = link
        self.patience = patience  # how long an answer may take before the agent is called stuck
        self.clock = clock
        self.started = clock()
        self.hello: dict[str, Any] = {}  # the result of the connection's initialize
        self.lines: list[bytes] = []  # every line (message) the agent sent
        self.transcript: list[tuple[float, str, bytes]] = []  # (clock, direction, message)
        self.messages: list[dict[str, Any]] = []  # what the agent sent that parsed as an object
        self.sent_ids: list[Any] = []
        self.permission = "allow"  # or "cancel": cancel the turn when the agent asks
        self.ended = False
        self._ids = itertools.count(1)
        self._responses: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._changed = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    # -- sending ------------------------------------------------------------------------------

    async def send_bytes(self, data: bytes) -> None:
        self.transcript.append((self.clock(), CLIENT_TO_AGENT, data))
        try:
            await self.link.send(data)
        except (ConnectionError, OSError) as exc:
            raise Broken(f"the connection ended: {exc}") from None

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_bytes(json.dumps(message, separators=(",", ":")).encode())

    async def notify(self, method: str, params: Any = _MISSING) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not _MISSING:
            message["params"] = params
        await self.send(message)

    async def start(self, method: str, params: Any = _MISSING, *, request_id: Any = None) -> Any:
        """Send a request; returns its id (``request_id``, else a fresh ``kit-N``)."""
        if request_id is None:
            request_id = f"kit-{next(self._ids)}"
        self._future(request_id)
        self.sent_ids.append(request_id)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not _MISSING:
            message["params"] = params
        await self.send(message)
        return request_id

    async def response(self, request_id: Any, what: str = "") -> dict[str, Any]:
        """The response to ``request_id`` (the whole message); :class:`Broken` if none comes."""
        future = self._future(request_id)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.patience)
        except asyncio.TimeoutError:
            gone = (
                "the agent closed the connection" if self.ended else f"{self.patience:g} s passed"
            )
            raise Broken(f"no answer to {what or 'request'} {request_id!r}: {gone}") from None

    async def request(
        self, method: str, params: Any = _MISSING, *, request_id: Any = None
    ) -> dict[str, Any]:
        return await self.response(await self.start(method, params, request_id=request_id), method)

    async def result(self, method: str, params: Any = _MISSING) -> Any:
        """The result of a request that must succeed; :class:`Broken` quoting the answer if not."""
        answer = await self.request(method, params)
        if not isinstance(answer.get("result", _MISSING), dict):
            raise Broken(f"{method} answered {quote(answer)}")
        return answer["result"]

    # -- what came back ---------------------------------------------------------------------------

    async def wait_for(
        self, found: Callable[[dict[str, Any]], bool], start: int = 0, timeout: float | None = None
    ) -> dict[str, Any] | None:
        """The first message the agent sent (from index ``start`` of :attr:`messages`) for which
        ``found`` is true; None if none comes in ``timeout`` seconds (default: the patience) or the
        connection ends first."""
        deadline = self.clock() + (self.patience if timeout is None else timeout)
        index = start
        while True:
            while index < len(self.messages):
                if found(self.messages[index]):
                    return self.messages[index]
                index += 1
            left = deadline - self.clock()
            if left <= 0 or self.ended:
                return None
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    def updates(self, session_id: str, start: int = 0) -> list[dict[str, Any]]:
        """The ``session/update`` params for ``session_id`` sent from index ``start`` on."""
        return [
            m["params"]
            for m in self.messages[start:]
            if m.get("method") == "session/update"
            and "id" not in m
            and isinstance(m.get("params"), dict)
            and m["params"].get("sessionId") == session_id
        ]

    def unexpected_responses(self, start: int = 0) -> list[dict[str, Any]]:
        """Responses to no request of ours, or to one already answered (among the messages from
        index ``start`` on)."""
        sent = {_key(i) for i in self.sent_ids}
        seen: set[str] = set()
        wrong = []
        for number, message in enumerate(self.messages):
            if "method" in message or ("result" not in message and "error" not in message):
                continue
            key = _key(message.get("id"))
            if message.get("id") is None and "error" in message:
                continue  # an error the agent could not tie to a request (a parse error)
            if (key not in sent or key in seen) and number >= start:
                wrong.append(message)
            seen.add(key)
        return wrong

    async def close(self, grace: float = 5.0) -> int | None:
        status = await self.link.close(grace)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._reader), 1.0)
        self._reader.cancel()
        self.ended = True
        return status

    # -- the reader ------------------------------------------------------------------------------

    def _future(self, request_id: Any) -> asyncio.Future[dict[str, Any]]:
        key = _key(request_id)
        if key not in self._responses:
            self._responses[key] = asyncio.get_running_loop().create_future()
        return self._responses[key]

    async def _read(self) -> None:
        try:
            while True:
                line = await self.link.receive()
                if line is None:
                    return
                self.lines.append(line)
                self.transcript.append((self.clock(), AGENT_TO_CLIENT, line.rstrip(b"\r\n")))
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                self.messages.append(message)
                if "method" in message and "id" in message:
                    await self._answer(message)
                elif "method" not in message:
                    future = self._future(message.get("id"))
                    if not future.done():
                        future.set_result(message)
                self._changed.set()
        except (ConnectionError, OSError):
            return
        finally:
            self.ended = True
            self._changed.set()

    async def _answer(self, request: dict[str, Any]) -> None:
        """A client's answer: permission as :attr:`permission` says (to cancel, ``session/cancel``
        first, then the pending request answered ``cancelled``); anything else -32601."""
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        params: dict[str, Any] = (
            request["params"] if isinstance(request.get("params"), dict) else {}
        )
        options = params.get("options") if isinstance(params.get("options"), list) else []
        if request["method"] != "session/request_permission":
            reply["error"] = {"code": -32601, "message": "Method not found"}
        elif self.permission == "cancel" or not options:
            with contextlib.suppress(Broken):
                await self.notify("session/cancel", {"sessionId": params.get("sessionId")})
            reply["result"] = {"outcome": {"outcome": "cancelled"}}
        else:
            kinds = [
                o
                for o in options
                if isinstance(o, dict) and str(o.get("kind", "")).startswith("allow")
            ]
            chosen = (kinds or options)[0]
            option = chosen.get("optionId") if isinstance(chosen, dict) else None
            reply["result"] = {"outcome": {"outcome": "selected", "optionId": option}}
        with contextlib.suppress(Broken):
            await self.send(reply)


def _key(request_id: Any) -> str:
    """A request id as a dictionary key that tells ``1`` from ``"1"``."""
    return json.dumps(request_id)


def default_cwd() -> str:
    """The folder the kit names as a session's ``cwd``: the current one, absolute."""
    return os.path.abspath(os.getcwd())
