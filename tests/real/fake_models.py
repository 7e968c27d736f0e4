"""Local fakes of the model APIs the real agents speak, for `make conformance-real`.

One Starlette app served by uvicorn on 127.0.0.1 answers the four APIs the agents call:
Anthropic's Messages (`/v1/messages`), OpenAI's Responses (`/v1/responses`) and Chat Completions
(`/v1/chat/completions`), and Gemini's `generateContent` (`/v1beta/models/M:...`). Every turn is
answered with the same short text, streamed in a few chunks when the caller streams, so a run is
deterministic and bounded: no tool call, no reasoning, the same usage figures. A product is
given a base URL below `/m/MARK/`; each request is recorded, one JSON line (the mark, API, path,
model, whether it streamed) in `--log`, so a run shows which API each agent really called.

    python fake_models.py --port-file FILE [--log FILE]

binds a free port of 127.0.0.1, writes it into FILE once it listens, and serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

CHUNKS = ("Hello", " from the", " local fake", " model.")
TEXT = "".join(CHUNKS)
# A pause between chunks: long enough for a cancel sent with the prompt to be read mid-turn,
# short enough that a turn ends within a second.
PAUSE = 0.15
CREATED = 1_700_000_000
USAGE_IN, USAGE_OUT = 12, 6

LOG: Path | None = None


def record(api: str, request: Request, body: dict[str, Any]) -> None:
    if LOG is None:
        return
    line = {
        "mark": request.path_params.get("mark"),
        "api": api,
        "path": request.url.path,
        "model": body.get("model"),
        "stream": bool(body.get("stream")) or "stream" in request.url.path.lower(),
    }
    with LOG.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


async def read_json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def sse(events: list[tuple[str | None, Any]]) -> StreamingResponse:
    """Server-sent events, one JSON `data` each (a str is sent as it is), a pause between."""

    async def produce() -> AsyncIterator[bytes]:
        for index, (event, data) in enumerate(events):
            if index:
                await asyncio.sleep(PAUSE if event in (None, "content_block_delta",
                                                     "response.output_text.delta") else 0)
            text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
            head = f"event: {event}\n" if event else ""
            yield f"{head}data: {text}\n\n".encode()

    return StreamingResponse(
        produce(), media_type="text/event-stream", headers={"cache-control": "no-cache"}
    )


# --- Anthropic Messages ---------------------------------------------------------------------


async def anthropic_messages(request: Request) -> Response:
    body = await read_json(request)
    record("anthropic-messages", request, body)
    model = body.get("model") or "claude-fake"
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": USAGE_IN, "output_tokens": 0},
    }
    if not body.get("stream"):
        whole = dict(message, content=[{"type": "text", "text": TEXT}], stop_reason="end_turn")
        whole["usage"] = {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT}
        return JSONResponse(whole)
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
    ]
    events += [
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": chunk}})
        for chunk in CHUNKS
    ]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": USAGE_OUT}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse(events)


async def anthropic_count_tokens(request: Request) -> Response:
    record("anthropic-count-tokens", request, await read_json(request))
    return JSONResponse({"input_tokens": USAGE_IN})


# --- OpenAI Responses -----------------------------------------------------------------------


async def openai_responses(request: Request) -> Response:
    body = await read_json(request)
    record("openai-responses", request, body)
    model = body.get("model") or "gpt-fake"
    item = {"id": "msg_fake", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": TEXT, "annotations": []}]}
    usage = {"input_tokens": USAGE_IN, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": USAGE_OUT, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": USAGE_IN + USAGE_OUT}
    response = {"id": "resp_fake", "object": "response", "created_at": CREATED, "model": model,
                "status": "completed", "output": [item], "usage": usage}
    if not body.get("stream"):
        return JSONResponse(response)
    started = dict(response, status="in_progress", output=[], usage=None)
    pending = dict(item, status="in_progress", content=[])
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "response": started}),
        ("response.in_progress", {"type": "response.in_progress", "response": started}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "output_index": 0, "item": pending}),
        ("response.content_part.added", {"type": "response.content_part.added",
                                         "item_id": "msg_fake", "output_index": 0,
                                         "content_index": 0,
                                         "part": {"type": "output_text", "text": "",
                                                  "annotations": []}}),
    ]
    events += [
        ("response.output_text.delta", {"type": "response.output_text.delta",
                                        "item_id": "msg_fake", "output_index": 0,
                                        "content_index": 0, "delta": chunk})
        for chunk in CHUNKS
    ]
    events += [
        ("response.output_text.done", {"type": "response.output_text.done",
                                       "item_id": "msg_fake", "output_index": 0,
                                       "content_index": 0, "text": TEXT}),
        ("response.output_item.done", {"type": "response.output_item.done",
                                       "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ]
    return sse(events)


# --- OpenAI Chat Completions ----------------------------------------------------------------


async def openai_chat(request: Request) -> Response:
    body = await read_json(request)
    record("openai-chat", request, body)
    model = body.get("model") or "gpt-fake"
    usage = {"prompt_tokens": USAGE_IN, "completion_tokens": USAGE_OUT,
             "total_tokens": USAGE_IN + USAGE_OUT}
    if not body.get("stream"):
        return JSONResponse({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": CREATED,
            "model": model, "usage": usage,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": TEXT}}],
        })

    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": CREATED,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""},
                                                        None))]
    events += [(None, chunk({"content": text}, None)) for text in CHUNKS]
    last = chunk({}, "stop")
    last["usage"] = usage
    events += [(None, last), (None, "[DONE]")]
    return sse(events)


async def openai_models(request: Request) -> Response:
    record("openai-models", request, {})
    return JSONResponse({"object": "list", "data": [
        {"id": name, "object": "model", "created": CREATED, "owned_by": "fake"}
        for name in ("gpt-fake", "qwen-fake")
    ]})


# --- Gemini ---------------------------------------------------------------------------------


def gemini_chunk(text: str, finish: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]},
                                 "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate],
            "usageMetadata": {"promptTokenCount": USAGE_IN,
                              "candidatesTokenCount": USAGE_OUT,
                              "totalTokenCount": USAGE_IN + USAGE_OUT},
            "modelVersion": "gemini-fake"}


async def gemini(request: Request) -> Response:
    body = await read_json(request)
    model, _, action = request.path_params["rest"].partition(":")
    record("gemini-" + action, request, dict(body, model=model))
    if action == "countTokens":
        return JSONResponse({"totalTokens": USAGE_IN})
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json":
        # A side call that wants JSON (a router choosing the model, a check of the next
        # speaker): an empty object, which such a caller treats as "no opinion".
        whole = gemini_chunk("{}", True)
        return JSONResponse(whole) if action == "generateContent" else sse([(None, whole)])
    if action == "streamGenerateContent":
        return sse([(None, gemini_chunk(text, i == len(CHUNKS) - 1))
                    for i, text in enumerate(CHUNKS)])
    return JSONResponse(gemini_chunk(TEXT, True))


async def anything_else(request: Request) -> Response:
    record("unknown", request, {})
    return JSONResponse({"error": {"message": f"the fake serves no {request.url.path}"}},
                        status_code=404)


API = [
    Route("/v1/messages", anthropic_messages, methods=["POST"]),
    Route("/v1/messages/count_tokens", anthropic_count_tokens, methods=["POST"]),
    Route("/v1/responses", openai_responses, methods=["POST"]),
    Route("/v1/chat/completions", openai_chat, methods=["POST"]),
    Route("/chat/completions", openai_chat, methods=["POST"]),
    Route("/v1/models", openai_models, methods=["GET"]),
    Route("/v1beta/models/{rest:path}", gemini, methods=["POST"]),
    Route("/{rest:path}", anything_else, methods=["GET", "POST", "HEAD", "PUT", "DELETE"]),
]
# Each product is given the base URL `/m/MARK`, so that the log says which product called.
app = Starlette(routes=[Mount("/m/{mark}", routes=API), *API])


def main() -> None:
    global LOG
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    LOG = args.log
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                await task
                return
            await asyncio.sleep(0.02)
        tmp = args.port_file.with_suffix(".tmp")
        tmp.write_text(str(port), encoding="utf-8")
        tmp.replace(args.port_file)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
