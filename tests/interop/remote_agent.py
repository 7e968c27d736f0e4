"""The remote interop scenario's agent, written with the generated package: ``app`` is its ASGI
application (``uvicorn remote_agent:app``), one agent per connection.

On ``session/prompt`` with the text ``cancel`` it streams ``tick N`` updates every 20 ms until
``session/cancel`` arrives (then ends with ``cancelled``; after 1500 ticks, 30 s, with ``end_turn``).
``session/load`` replays the prompts the session was sent (``replay: <text>``), on any
connection to the same server. ``flood N``: N updates of 2 KB each, then ``end_turn``. Any other prompt: an update ``start``, a permission request (options ``no``, ``yes``), an update
``permission: <optionId>``, ``fs/read_text_file`` of ``hello.txt`` in the session's cwd, an update
``read: <content>``, the prompt echoed word by word (``echo: <word>``), then ``end_turn``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
from typing import Any

from acp_bindings import models
from acp_bindings._runtime.wire._codec import decode, encode
from acp_bindings.agent import Agent, asgi_app
from acp_bindings.methods import PROTOCOL_VERSION

#: What each session was told, by session id: kept across connections (a reconnecting client
#: loads its session on a new connection, served by a new agent).
HISTORY: dict[str, list[str]] = {}


class ScenarioAgent(Agent):
    def __init__(self) -> None:
        self.sessions: dict[str, str] = {}
        self.cancelled: dict[str, asyncio.Event] = {}

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        if os.environ.get("ACP_AGENT_LOG"):  # the tests count who reached the agent
            with open(os.environ["ACP_AGENT_LOG"], "a", encoding="utf-8") as log:  # noqa: ASYNC230
                log.write("initialize\n")
        answer = {"protocolVersion": PROTOCOL_VERSION, "agentCapabilities": {"loadSession": True}, "authMethods": []}
        return decode(models.InitializeResponse, answer)

    async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        session_id = f"ours-{len(self.sessions) + 1}-{os.getpid()}"
        self.sessions[session_id] = params.cwd
        HISTORY[session_id] = []
        return decode(models.NewSessionResponse, {"sessionId": session_id})

    async def session_load(self, params: models.LoadSessionRequest) -> models.LoadSessionResponse:
        request = encode(params)
        session_id = request["sessionId"]
        self.sessions[session_id] = request["cwd"]
        for text in HISTORY.get(session_id, []):  # the conversation so far, replayed
            await self.say(session_id, f"replay: {text}")
        return decode(models.LoadSessionResponse, {})

    async def say(self, session_id: str, text: str) -> None:
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        await self.client.session_update(decode(models.SessionNotification, {"sessionId": session_id, "update": update}))

    async def session_cancel(self, params: models.CancelNotification) -> None:
        event = self.cancelled.get(encode(params)["sessionId"])
        if event is not None:
            event.set()

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        request: dict[str, Any] = encode(params)
        session_id = request["sessionId"]
        text = "".join(block.get("text", "") for block in request["prompt"] if block.get("type") == "text")
        HISTORY.setdefault(session_id, []).append(text)
        if text.startswith("flood "):  # N updates of 2 KB each, as fast as they are taken
            for index in range(int(text.split()[1])):
                await self.say(session_id, f"{index:05} " + "x" * 2000)
            return decode(models.PromptResponse, {"stopReason": "end_turn"})
        if text == "cancel":
            event = self.cancelled[session_id] = asyncio.Event()
            for tick in range(1500):
                await self.say(session_id, f"tick {tick}")
                try:
                    await asyncio.wait_for(event.wait(), 0.02)
                except asyncio.TimeoutError:
                    continue
                return decode(models.PromptResponse, {"stopReason": "cancelled"})
            return decode(models.PromptResponse, {"stopReason": "end_turn"})
        await self.say(session_id, "start")
        asked = {
            "sessionId": session_id,
            "toolCall": {"toolCallId": "call-1", "title": "Read hello.txt", "kind": "read", "status": "pending"},
            "options": [
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            ],
        }
        answer = encode(await self.client.session_request_permission(decode(models.RequestPermissionRequest, asked)))
        await self.say(session_id, f"permission: {answer['outcome'].get('optionId', answer['outcome']['outcome'])}")
        path = os.path.join(self.sessions[session_id], "hello.txt")
        read = await self.client.fs_read_text_file(decode(models.ReadTextFileRequest, {"sessionId": session_id, "path": path}))
        await self.say(session_id, f"read: {encode(read)['content']}")
        for word in re.findall(r"\S+\s*", text):
            await self.say(session_id, f"echo: {word}")
        return decode(models.PromptResponse, {"stopReason": "end_turn"})


app = asgi_app(ScenarioAgent, token=os.environ.get("ACP_TOKEN") or None)
#: The same, with a keepalive comment every 0.2 s (to see one without waiting 15 s), taking
#: messages of at most 4 KiB, buffering at most 64 KiB for the streams' readers, and ending a
#: connection after 1 s without a reader or a request.
quick = asgi_app(ScenarioAgent, token=os.environ.get("ACP_TOKEN") or None, max_message_size=4096)
quick.keepalive = 0.2
quick.max_buffered = 1 << 16
quick.idle_timeout = 1.0


def _sticky(inner: Any) -> Any:
    """``inner`` as a worker behind a cookie-sticky balancer sees it: ``initialize``'s answer sets
    the cookie ``worker=one``, and any later HTTP request without it is answered 404 (it would
    have gone to another worker, which does not know the connection)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if b"acp-connection-id" in headers and b"worker=one" not in headers.get(b"cookie", b""):
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"no such connection on this worker"})
            return

        async def with_cookie(event: dict[str, Any]) -> None:
            if event["type"] == "http.response.start":
                event = {**event, "headers": [*event.get("headers", []), (b"set-cookie", b"worker=one; Path=/")]}
            await send(event)

        await inner(scope, receive, with_cookie)

    return app


#: The scenario behind a simulated sticky balancer (see _sticky).
sticky = _sticky(app)


def _balanced(*workers: Any) -> Any:
    """``workers`` behind a cookie-sticky balancer: a request or a WebSocket handshake with the
    cookie ``worker=N`` goes to worker N; one without goes to the next worker in turn, and the
    answer sets that cookie. Every answer names the worker that served it (``x-worker``)."""
    turn = itertools.count()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await workers[0](scope, receive, send)
            return
        chosen = re.search(r"worker=(\d+)", dict(scope["headers"]).get(b"cookie", b"").decode())
        index = int(chosen.group(1)) if chosen else next(turn) % len(workers)
        extra = [(b"x-worker", str(index).encode())]
        if not chosen:
            extra.append((b"set-cookie", f"worker={index}; Path=/".encode()))

        async def answer(event: dict[str, Any]) -> None:
            if event["type"] in ("http.response.start", "websocket.accept"):
                event = {**event, "headers": [*event.get("headers", []), *extra]}
            await send(event)

        await workers[index](scope, receive, answer)

    return app


#: The scenario in two workers (each an app of its own) behind a cookie-sticky balancer.
balanced = _balanced(asgi_app(ScenarioAgent), asgi_app(ScenarioAgent))
