"""The agent kit's client: raw JSON-RPC to an agent under test, over its stdio or the network.

:class:`Peer` speaks to the agent as a client does, but byte for byte: it sends what a check asks
(a line that is not JSON included), answers the agent's own requests (permission as the check
decides; anything else -32601, since the kit's client advertises no capability), and keeps every
message both ways with its time (the transcript the ``--html`` page shows) and every line the
agent wrote on its stdout (which the stdout check reads whole). It imports nothing of a version's
modules: a check holds the agent to the spec's text, not to a package's decoders.

A :class:`Link` is the wire: :class:`StdioLink` starts the agent's command on pipes, in a
process group of its own (closing it ends what the agent started too, in bounded time);
:class:`RemoteLink` is a connection of the remote client (``_remote.open_transport``) over
WebSocket or Streamable HTTP.

An answer is awaited while the agent is busy with it: the agent is called stuck once it has sent
nothing for the patience (``--timeout``), where for a request naming a session only the messages
of that session count (a turn streaming its updates for minutes is not stuck). The wait ends at
once when the connection ends (saying how the agent went away), and within a second of an answer
to an id no request carried (quoting it): a diagnosis of what is on the wire, not a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..transports._process import end_group, exited, signal_group
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
_KEPT_GARBAGE = 1000  # lines that are not JSON kept, of an agent that writes them endlessly
_STRAY_GRACE = 1.0  # seconds an answer may still come after one to an id no request carried
_KILL: int = getattr(signal, "SIGKILL", signal.SIGTERM)
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

    async def gone(self) -> str:
        """How the agent went away, once the connection ended: a phrase."""
        return "the agent closed the connection"


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
            start_new_session=hasattr(os, "killpg"),
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
        """Close its stdin; the exit status if it exits within ``grace`` seconds. Else its
        process group is terminated, then killed; and once it has exited, what it left behind
        in its group is killed, so that no wait here is unbounded."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(ConnectionError):
                stdin.close()
        status = self.process.returncode if await exited(self.process, grace) else None
        if status is None:
            for signum in (signal.SIGTERM, _KILL):
                signal_group(self.process, signum)
                if await exited(self.process, 1.0):
                    break
        await end_group(self.process, 1.0)  # a child of its own left holding the pipes
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._drain), 1.0)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), 1.0)
        return status

    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def gone(self) -> str:
        if not await exited(self.process, 0.5):
            how = "the agent closed its stdout, still running"
        elif self.process.returncode is not None and self.process.returncode < 0:
            how = f"the agent was killed by signal {-self.process.returncode}"
        else:
            how = f"the agent exited with status {self.process.returncode}"
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._drain), 0.2)
        last = [line for line in self.stderr().splitlines() if line.strip()][-1:]
        return f"{how} (its stderr ends: {quote(last[0], 200)})" if last else how

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


#: Called with the peer, a request's method and its answer asking for authentication (-32000):
#: True once the kit has logged in, and the request is sent again.
Authenticate = Callable[["Peer", str, dict[str, Any]], Awaitable[bool]]
#: Called with a request's method and an answer that is not a result, before :meth:`Peer.result`
#: raises :class:`Broken`: it may raise what fits better.
Refused = Callable[[str, dict[str, Any]], None]
AUTH_REQUIRED = -32000  # the schema's error code for "authentication required"


class Peer:
    """A client on one connection to the agent."""

    def __init__(
        self, link: Link, patience: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.link = link
        self.patience = patience  # how long the agent may be silent before it is called stuck
        self.clock = clock
        self.started = clock()
        self.hello: dict[str, Any] = {}  # the result of the connection's initialize
        self.lines: list[bytes] = []  # every line (message) the agent sent
        self.transcript: list[tuple[float, str, bytes]] = []  # (clock, direction, message)
        self.messages: list[dict[str, Any]] = []  # what the agent sent that parsed as an object
        self.sent_ids: list[Any] = []
        self.permission = "allow"  # or "cancel": cancel the turn when the agent asks
        self.ended = False
        self.closed = False  # the kit closed it (else the agent ended it)
        self.gone_said = False  # a check's verdict said how the agent went away
        self.answered = 0  # the responses the agent sent
        self.opened = 0  # the sessions session/new opened
        self.garbage = 0  # the lines that were not JSON objects
        self.authenticate: Authenticate | None = None
        self.refused: Refused | None = None
        self._ids = itertools.count(1)
        self._responses: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._asked: set[str] = set()  # the ids of the requests sent
        self._sessions: dict[str, Any] = {}  # request id -> the session its params name
        self._heard: dict[Any, float] = {}  # session id (None: any) -> when it last spoke
        self._strays: list[tuple[float, dict[str, Any]]] = []  # answers to ids never sent
        self._first_garbage: tuple[float, bytes] | None = None
        self._waiters: list[asyncio.Future[None]] = []
        self._end: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stray: asyncio.Future[None] = asyncio.get_running_loop().create_future()
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

    async def send_together(self, messages: Sequence[dict[str, Any]]) -> None:
        """Send ``messages`` back to back: on stdio in one write (so the agent reads them at
        once), elsewhere one after another with nothing awaited between them."""
        lines = [json.dumps(m, separators=(",", ":")).encode() for m in messages]
        if not self.link.stdio:
            for line in lines:
                await self.send_bytes(line)
            return
        now = self.clock()
        self.transcript += [(now, CLIENT_TO_AGENT, line) for line in lines]
        try:
            await self.link.send(b"\n".join(lines))
        except (ConnectionError, OSError) as exc:
            raise Broken(f"the connection ended: {exc}") from None

    async def notify(self, method: str, params: Any = _MISSING) -> None:
        await self.send(self.notification(method, params))

    @staticmethod
    def notification(method: str, params: Any = _MISSING) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not _MISSING:
            message["params"] = params
        return message

    def asking(
        self, method: Any, params: Any = _MISSING, *, request_id: Any = None
    ) -> dict[str, Any]:
        """A request to send (with :meth:`send_together`), its id recorded as sent: ``request_id``,
        else a fresh ``kit-N``."""
        if request_id is None:
            request_id = f"kit-{next(self._ids)}"
        key = _key(request_id)
        if key in self._responses and self._responses[key].done():
            del self._responses[key]  # an id used again: its new answer is awaited
        self._future(request_id)
        self.sent_ids.append(request_id)
        self._asked.add(key)
        if isinstance(params, dict) and isinstance(params.get("sessionId"), str):
            self._sessions[key] = params["sessionId"]
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not _MISSING:
            message["params"] = params
        return message

    async def start(self, method: str, params: Any = _MISSING, *, request_id: Any = None) -> Any:
        """Send a request; returns its id (``request_id``, else a fresh ``kit-N``)."""
        message = self.asking(method, params, request_id=request_id)
        await self.send(message)
        return message["id"]

    async def response(
        self, request_id: Any, what: str = "", *, unread_from: int | None = None
    ) -> dict[str, Any]:
        """The response to ``request_id`` (the whole message); :class:`Broken` if none comes: the
        agent sent nothing (of the request's session, if it names one) for the patience, the
        connection ended, or an answer came to an id no request carried and no other after it.

        ``unread_from``: for a request whose id the agent may not have been able to read, an
        error answer with the id null (JSON-RPC 2.0's answer to an invalid Request) sent from
        that index of :attr:`messages` on is its answer too."""
        future = self._future(request_id)
        session = self._sessions.get(_key(request_id))
        since = self.clock()
        strays = len(self._strays)
        while not future.done() and not self.ended:
            unread = self._null_error(unread_from)
            if unread is not None:
                return unread
            now = self.clock()
            left = max(since, self._heard.get(session, since)) + self.patience - now
            if len(self._strays) > strays:
                left = min(left, self._strays[strays][0] + min(_STRAY_GRACE, self.patience) - now)
            if left <= 0:
                break
            waits: list[asyncio.Future[Any]] = [future, self._end, self._stray]
            if unread_from is not None:  # woken by every message, to see an id-null error
                waits.append(asyncio.get_running_loop().create_future())
                self._waiters.append(waits[-1])
            try:
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                if waits[-1] in self._waiters:
                    self._waiters.remove(waits[-1])
        if future.done():
            return future.result()
        unread = self._null_error(unread_from)
        if unread is not None:
            return unread
        raise Broken(
            f"no answer to {what or 'request'} {request_id!r}: "
            + await self._silence(since, strays, session)
        )

    def _null_error(self, start: int | None) -> dict[str, Any] | None:
        """The first error answer with the id null from index ``start`` of :attr:`messages` on
        (None when ``start`` is)."""
        if start is None:
            return None
        for message in self.messages[start:]:
            if "method" not in message and "error" in message and message.get("id", 0) is None:
                return message
        return None

    async def _silence(self, since: float, strays: int, session: Any) -> str:
        """Why no answer came: what the wire shows."""
        if len(self._strays) > strays:
            return f"it answered an id no request carried: {quote(self._strays[strays][1])}"
        if self.ended and not self.closed:
            why = await self.link.gone()
            self.gone_said = True
        elif self.ended:
            why = "the kit closed the connection"
        else:
            silent = "of that session " if session is not None else ""
            why = f"nothing {silent}came for {self.patience:g} s (--timeout)"
        if self._first_garbage is not None:
            why += (
                f"; it wrote {self.garbage} line(s) on stdout that are not JSON-RPC, the first: "
                f"{quote(self._first_garbage[1], 120)}"
            )
        return why

    async def request(
        self, method: str, params: Any = _MISSING, *, request_id: Any = None
    ) -> dict[str, Any]:
        """Send a request and await its answer. An answer asking for authentication (-32000) is
        given to :attr:`authenticate`, and once that logs in the request is sent again."""
        answer = await self.response(
            await self.start(method, params, request_id=request_id), method
        )
        if (
            self.authenticate is not None
            and _error_code(answer) == AUTH_REQUIRED
            and await self.authenticate(self, method, answer)
        ):
            answer = await self.response(
                await self.start(method, params, request_id=request_id), method
            )
        if method == "session/new" and isinstance(answer.get("result"), dict):
            self.opened += 1
        return answer

    async def result(self, method: str, params: Any = _MISSING) -> Any:
        """The result of a request that must succeed; :class:`Broken` quoting the answer if not."""
        answer = await self.request(method, params)
        if not isinstance(answer.get("result", _MISSING), dict):
            if self.refused is not None:
                self.refused(method, answer)
            raise Broken(f"{method} answered {quote(answer)}")
        return answer["result"]

    # -- what came back ---------------------------------------------------------------------------

    async def wait_for(
        self,
        found: Callable[[dict[str, Any]], bool],
        start: int = 0,
        timeout: float | None = None,
        session: Any = None,
    ) -> dict[str, Any] | None:
        """The first message the agent sent (from index ``start`` of :attr:`messages`) for which
        ``found`` is true; None if the connection ends first, or if none comes in ``timeout``
        seconds, or (without one) while the agent is silent (on ``session``, when given) for the
        patience."""
        since = self.clock()
        deadline = None if timeout is None else since + timeout
        index = start
        while True:
            while index < len(self.messages):
                if found(self.messages[index]):
                    return self.messages[index]
                index += 1
            now = self.clock()
            if deadline is None:
                left = max(since, self._heard.get(session, since)) + self.patience - now
            else:
                left = deadline - now
            if left <= 0 or self.ended:
                return None
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await asyncio.wait(
                    [waiter, self._end], timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

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
        """Responses to no request of ours, or more of them than the request was sent (among the
        messages from index ``start`` on)."""
        asked: dict[str, int] = {}
        for request_id in self.sent_ids:
            asked[_key(request_id)] = asked.get(_key(request_id), 0) + 1
        seen: dict[str, int] = {}
        wrong = []
        for number, message in enumerate(self.messages):
            if "method" in message or ("result" not in message and "error" not in message):
                continue
            key = _key(message.get("id"))
            if message.get("id") is None and "error" in message:
                continue  # an error the agent could not tie to a request (a parse error)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > asked.get(key, 0) and number >= start:
                wrong.append(message)
        return wrong

    async def close(self, grace: float = 5.0) -> int | None:
        self.closed = not self.ended
        status = await self.link.close(grace)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._reader), 1.0)
        self._reader.cancel()
        self._ended()
        return status

    # -- the reader ------------------------------------------------------------------------------

    def _future(self, request_id: Any) -> asyncio.Future[dict[str, Any]]:
        key = _key(request_id)
        if key not in self._responses:
            self._responses[key] = asyncio.get_running_loop().create_future()
        return self._responses[key]

    def _ended(self) -> None:
        self.ended = True
        if not self._end.done():
            self._end.set_result(None)

    def _wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    async def _read(self) -> None:
        try:
            while True:
                line = await self.link.receive()
                if line is None:
                    return
                try:
                    message = json.loads(line)
                except ValueError:
                    message = None
                if not isinstance(message, dict):
                    self._garbage(line)
                    continue
                self.lines.append(line)
                self.transcript.append((self.clock(), AGENT_TO_CLIENT, line.rstrip(b"\r\n")))
                self.messages.append(message)
                self._heard_from(message)
                if "method" in message and "id" in message:
                    await self._answer(message)
                elif "method" not in message:
                    self._response(message)
                self._wake()
        except (ConnectionError, OSError):
            return
        finally:
            self._ended()
            self._wake()

    def _garbage(self, line: bytes) -> None:
        """A line that is not a JSON object: kept (the first thousand) for the stdout check and
        the transcript, never taken for a sign of life."""
        self.garbage += 1
        if self._first_garbage is None:
            self._first_garbage = (self.clock(), line)
        if self.garbage <= _KEPT_GARBAGE:
            self.lines.append(line)
            self.transcript.append((self.clock(), AGENT_TO_CLIENT, line.rstrip(b"\r\n")))

    def _heard_from(self, message: dict[str, Any]) -> None:
        now = self.clock()
        self._heard[None] = now
        params = message.get("params")
        if isinstance(params, dict) and isinstance(params.get("sessionId"), str):
            self._heard[params["sessionId"]] = now

    def _response(self, message: dict[str, Any]) -> None:
        self.answered += 1
        key = _key(message.get("id"))
        asked = key in self._asked or key in map(_key, self.sent_ids)  # sent_ids: by hand too
        if not asked and not (message.get("id") is None and "error" in message):
            self._strays.append((self.clock(), message))
            self._stray.set_result(None)  # wakes the waits for an answer: one may never come
            self._stray = asyncio.get_running_loop().create_future()
            return
        future = self._future(message.get("id"))
        if not future.done():
            future.set_result(message)

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


def _error_code(answer: dict[str, Any]) -> Any:
    error = answer.get("error")
    return error.get("code") if "result" not in answer and isinstance(error, dict) else None


def _key(request_id: Any) -> str:
    """A request id as a dictionary key that tells ``1`` from ``"1"``."""
    return json.dumps(request_id)


def default_cwd() -> str:
    """The folder the kit names as a session's ``cwd``: the current one, absolute."""
    return os.path.abspath(os.getcwd())
