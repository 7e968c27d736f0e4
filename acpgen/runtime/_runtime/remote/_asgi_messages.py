"""The ASGI side of a request, as the app serving ACP uses it: reading a body, noticing the client
leave, and starting and sending a response (standard library only)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = [
    "Receive",
    "Scope",
    "Send",
    "auth_header",
    "disconnected",
    "read_body",
    "respond",
    "respond_json",
    "start",
    "until",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The request's body (reading stops a byte past ``limit``), or None if the client left."""
    parts: list[bytes] = []
    size = 0
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            return None
        chunk = event.get("body", b"")
        if size <= limit:
            parts.append(chunk)
        size += len(chunk)
        if not event.get("more_body", False):
            return b"".join(parts) if size <= limit else b"\0" * (limit + 1)


async def disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def until(waited: Awaitable[Any], receive: Receive) -> bool:
    """Wait for ``waited``; False if the client disconnects first."""
    task = asyncio.ensure_future(waited)
    gone = asyncio.ensure_future(disconnected(receive))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if task.done():
        task.result()
        return True
    task.cancel()
    return False


def auth_header(status: int) -> list[tuple[bytes, bytes]]:
    return [(b"www-authenticate", b"Bearer")] if status == 401 else []


def start(status: int, media: bytes, headers: list[tuple[bytes, bytes]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", media), *headers],
    }


async def respond(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    await send(start(status, b"text/plain; charset=utf-8", list(headers)))
    await send({"type": "http.response.body", "body": text.encode()})


async def respond_json(send: Send, status: int, value: Any) -> None:
    await send(start(status, b"application/json"))
    await send({"type": "http.response.body", "body": json.dumps(value).encode()})
