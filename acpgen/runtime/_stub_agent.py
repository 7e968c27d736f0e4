"""The stub agent of a protocol version whose turns end with the prompt's response (ACP v1): it
negotiates, creates sessions, echoes prompts (reading ``file://`` links through the client) and
honours cancellation, on stdio or over the network (``_listen``). ``stub_agent`` is its entry
module (``python -m <package>.stub_agent``, and its ``app``), whose docstring says what it does.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import os
from collections.abc import Sequence
from typing import Any

from . import _listen, models
from ._codec import decode, encode
from ._echo import text_chunks
from ._rpc import RequestError
from .agent import Agent, asgi_app, run_agent
from .methods import PROTOCOL_VERSION

__all__ = ["SUPPORTED_VERSIONS", "StubAgent", "app", "main"]

#: The protocol versions this stub speaks.
SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)


class StubAgent(Agent):
    """The stub's behaviour: negotiate, create sessions, echo prompts, honour cancellation."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.can_read_files = False
        self.initialized = False
        self._ids = itertools.count(1)
        # session id -> the cancel event of its running prompt
        self._sessions: dict[str, asyncio.Event] = {}

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        request = encode(params)
        requested = request.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else max(SUPPORTED_VERSIONS)
        fs = (request.get("clientCapabilities") or {}).get("fs") or {}
        self.can_read_files = fs.get("readTextFile") is True
        response: models.InitializeResponse = decode(
            models.InitializeResponse,
            {
                "protocolVersion": version,
                "agentCapabilities": {
                    "loadSession": False,
                    "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
                },
                "authMethods": [],
                "agentInfo": {"name": "acp-bindings-stub-agent", "version": str(PROTOCOL_VERSION)},
            },
        )
        self.initialized = True
        return response

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        raise RequestError.invalid_params(
            {"methodId": params.method_id, "message": "this agent advertises no auth method"}
        )

    async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        if not self.initialized:
            raise RequestError.invalid_request({"details": "call initialize first"})
        if not os.path.isabs(params.cwd):
            raise RequestError.invalid_params(
                {"path": "/cwd", "message": "cwd must be an absolute path"}
            )
        session_id = f"stub-session-{next(self._ids)}"
        self._sessions[session_id] = asyncio.Event()
        response: models.NewSessionResponse = decode(
            models.NewSessionResponse, {"sessionId": session_id}
        )
        return response

    async def session_cancel(self, params: models.CancelNotification) -> None:
        event = self._sessions.get(encode(params)["sessionId"])
        if event is not None:
            event.set()

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        if not self.initialized:
            raise RequestError.invalid_request({"details": "call initialize first"})
        request = encode(params)
        session_id = request["sessionId"]
        if session_id not in self._sessions:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "message": "unknown session"}
            )
        cancelled = self._sessions[session_id] = asyncio.Event()
        for block in request["prompt"]:
            for content in await self._echo(session_id, block):
                if cancelled.is_set():
                    return _stop("cancelled")
                await self.client.session_update(
                    decode(
                        models.SessionNotification,
                        {
                            "sessionId": session_id,
                            "update": {"sessionUpdate": "agent_message_chunk", "content": content},
                        },
                    )
                )
                if self.delay:
                    waiter = asyncio.ensure_future(cancelled.wait())
                    await asyncio.wait({waiter}, timeout=self.delay)
                    waiter.cancel()
        return _stop("cancelled" if cancelled.is_set() else "end_turn")

    async def _echo(self, session_id: str, block: dict[str, Any]) -> list[dict[str, Any]]:
        """The content blocks that echo ``block``."""
        if block.get("type") == "text":
            return [{"type": "text", "text": chunk} for chunk in text_chunks(block["text"])]
        uri = str(block.get("uri"))
        if block.get("type") != "resource_link" or not self.can_read_files:
            return [block]
        if not uri.startswith("file://"):
            return [block]
        request = {"sessionId": session_id, "path": uri[len("file://") :]}
        read = await self.client.fs_read_text_file(decode(models.ReadTextFileRequest, request))
        return [{"type": "text", "text": chunk} for chunk in text_chunks(encode(read)["content"])]


def _stop(reason: str) -> models.PromptResponse:
    response: models.PromptResponse = decode(models.PromptResponse, {"stopReason": reason})
    return response


#: The stub agent as an ASGI application: ``uvicorn <package>.stub_agent:app``.
app = _listen.stalling(
    asgi_app(lambda: StubAgent(delay=_listen.env_delay()), token=_listen.env_token())
)


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> None:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); ``prog``: the command's name
    in its help."""
    parser = argparse.ArgumentParser(
        prog=prog, description="A stub ACP agent on stdio, or over the network with --listen."
    )
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait between updates")
    _listen.add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="stub_agent: %(levelname)s %(message)s")
    _listen.serve(
        parser,
        args,
        lambda: asyncio.run(run_agent(StubAgent(delay=args.delay))),
        lambda: asgi_app(lambda: StubAgent(delay=args.delay), token=args.token),
    )
