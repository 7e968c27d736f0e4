"""Benchmark: a client's receive path, CPU per streamed ``agent_message_chunk`` line.

A raw agent (a child process that writes prepared bytes, so that its own cost does not count)
answers each ``session/prompt`` with N ``session/update`` lines over an OS pipe, then the prompt's
response; the client decodes each line and counts it in its handler. The figure is this process's
CPU per line (the client's alone), median of interleaved rounds (the order rotates each round),
the three connections open for the whole run:

* ``json``: the generated client (``generated/``), reading with the standard library
  (``json_backend="json"``);
* ``fast``: the same client with ``json_backend="auto"``, the fast path: msgspec's untyped JSON
  parser where it is importable, else orjson (this benchmark needs msgspec);
* ``msgspec``: a hand-written asyncio client that reads the pipe line by line
  (``StreamReader.readline``), decodes each into msgspec Structs (the envelope, the
  notification's params, the tagged ``update`` and its content block, validated) and awaits its
  handler, which counts it.

The generated clients run with tracing off (``connection.tracing = False``): the figures are of
the JSON path, as a user has it who installs the fast extra without OpenTelemetry's API.
``--tracing`` leaves tracing as the environment makes it (on where the API is importable, with no
SDK configured: what tracing costs when nothing records).

Run: ``make bench-receive`` (or ``python bench/bench_receive.py [--rounds N] [--lines N]
[--tracing]``); needs orjson and msgspec. ``make bench`` prints these rows with the others.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, Union

import msgspec

HERE = Path(__file__).resolve().parent
GENERATED = HERE.parent / "generated"
sys.path.insert(0, str(GENERATED))
sys.path.insert(0, str(HERE))

from _rounds import Figure, Row, rotated  # noqa: E402

LINES = 20_000
ROUNDS = 7
STDLIB, FAST, MSGSPEC = "json", "fast", "msgspec"


# -- the msgspec client's types: what a hand-written client declares for the lines it reads ----------


class TextContent(msgspec.Struct, tag_field="type", tag="text"):
    text: str


class ImageContent(msgspec.Struct, tag_field="type", tag="image"):
    data: str
    mimeType: str  # the wire's names


class AgentMessageChunk(msgspec.Struct, tag_field="sessionUpdate", tag="agent_message_chunk"):
    content: Union[TextContent, ImageContent]


class AgentThoughtChunk(msgspec.Struct, tag_field="sessionUpdate", tag="agent_thought_chunk"):
    content: Union[TextContent, ImageContent]


class SessionNotification(msgspec.Struct):
    sessionId: str
    update: Union[AgentMessageChunk, AgentThoughtChunk]


class Message(msgspec.Struct):
    jsonrpc: Literal["2.0"]
    method: Union[str, None] = None
    params: Union[SessionNotification, None] = None
    id: Union[int, None] = None
    result: Union[dict[str, Any], None] = None


def _line(i: int) -> bytes:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"chunk {i} of the answer "}}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "bench", "update": update}}).encode() + b"\n"


# -- the raw agent (a child process) -------------------------------------------------------------


def serve(lines: int) -> None:
    """Answer each request line: ``session/prompt`` with ``lines`` prepared update lines, then its
    response; anything else with an empty result."""
    updates = b"".join(_line(i) for i in range(lines))
    out = sys.stdout.buffer
    for line in iter(sys.stdin.buffer.readline, b""):
        message = json.loads(line)
        if message.get("method") == "session/prompt":
            out.write(updates)
            result: Any = {"stopReason": "end_turn"}
        elif message.get("method") == "initialize":
            result = {"protocolVersion": 1}
        else:
            result = {"sessionId": "bench"}
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
        out.flush()


def _command(lines: int) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--serve", str(lines)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), os.environ.get("PYTHONPATH", "")])}


# -- clients (this process) ----------------------------------------------------------------------


class Client:
    """A connected client: ``prompt()`` returns once every update line has been handled."""

    received: int
    prompt: Callable[[], Awaitable[Any]]


async def run_generated(
    backend: str, lines: int, hold: Callable[[Client], Awaitable[None]], tracing: bool = False
) -> None:
    import acp_bindings as acp
    from acp_bindings import builders, models

    client = Client()
    client.received = 0

    class Counter(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            client.received += 1

    async with acp.spawn_agent(Counter(), *_command(lines), env=_env(), json_backend=backend) as conn:
        if not tracing:
            conn.rpc.tracing = False
        await conn.agent.initialize(models.InitializeRequest(protocol_version=1))
        request = models.PromptRequest(session_id="bench", prompt=[builders.content_block.text("go")])

        async def prompt() -> None:
            await conn.agent.session_prompt(request)

        client.prompt = prompt
        await hold(client)


async def run_msgspec(lines: int, hold: Callable[[Client], Awaitable[None]]) -> None:
    decode = msgspec.json.Decoder(Message).decode
    encode = msgspec.json.Encoder().encode
    loop = asyncio.get_running_loop()
    client = Client()
    client.received = 0
    pending: dict[int, asyncio.Future[Any]] = {}

    async def session_update(params: SessionNotification) -> None:  # the handler
        client.received += 1

    process = await asyncio.create_subprocess_exec(
        *_command(lines), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=_env(), limit=1 << 24
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def read() -> None:
        while line := await stdout.readline():
            message = decode(line)
            if message.params is not None:
                await session_update(message.params)
            elif message.id is not None:
                pending.pop(message.id).set_result(message.result)

    reader = asyncio.ensure_future(read())
    ids = iter(range(1 << 62))

    async def call(method: str, params: Any) -> Any:
        request_id = next(ids)
        future = pending[request_id] = loop.create_future()
        stdin.write(encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + b"\n")
        return await future

    await call("initialize", {"protocolVersion": 1})

    async def prompt() -> None:
        await call("session/prompt", {"sessionId": "bench", "prompt": [{"type": "text", "text": "go"}]})

    client.prompt = prompt
    try:
        await hold(client)
    finally:
        stdin.close()
        await process.wait()
        await reader


async def _cpu_per_line(client: Client, lines: int) -> float:
    client.received = 0
    start = time.process_time()
    await client.prompt()
    assert client.received == lines, (client.received, lines)
    return (time.process_time() - start) * 1e6 / lines


async def measure(rounds: int, lines: int, tracing: bool = False) -> dict[str, Figure]:
    clients: dict[str, Client] = {}
    done = asyncio.Event()
    ready: list[asyncio.Future[None]] = []
    loop = asyncio.get_running_loop()

    def holder(name: str) -> Callable[[Client], Awaitable[None]]:
        future: asyncio.Future[None] = loop.create_future()
        ready.append(future)

        async def hold(client: Client) -> None:
            clients[name] = client
            await _cpu_per_line(client, lines)  # warm up
            future.set_result(None)
            await done.wait()

        return hold

    runs = [
        asyncio.ensure_future(run_generated("json", lines, holder(STDLIB), tracing)),
        asyncio.ensure_future(run_generated("auto", lines, holder(FAST), tracing)),
        asyncio.ensure_future(run_msgspec(lines, holder(MSGSPEC))),
    ]
    try:
        waiting = set(ready)
        while waiting:  # every client ready, or the first that fails to start says why
            finished, _ = await asyncio.wait([*waiting, *runs], return_when=asyncio.FIRST_COMPLETED)
            for run in runs:
                if run.done():
                    run.result()
                    raise RuntimeError("a client stopped before the rounds")
            waiting -= finished
        samples: dict[str, list[float]] = {name: [] for name in (STDLIB, FAST, MSGSPEC)}
        for r in range(rounds):
            for name in rotated(list(samples), r):
                samples[name].append(await _cpu_per_line(clients[name], lines))
        return {name: Figure.of(values) for name, values in samples.items()}
    finally:
        done.set()
        await asyncio.gather(*runs, return_exceptions=True)


def rows(rounds: int = ROUNDS, lines: int = LINES) -> list[Row]:
    """Two rows in ``make bench``'s table: the stdlib path and the fast path, each against the
    msgspec client as its floor."""
    figures = asyncio.run(measure(rounds, lines))
    label = "client receive, per agent_message_chunk line"
    return [
        Row(f"{label} (json)", "us CPU/line", {"floor": figures[MSGSPEC], "acpgen": figures[STDLIB]}),
        Row(f"{label} (fast)", "us CPU/line", {"floor": figures[MSGSPEC], "acpgen": figures[FAST]}),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (default %(default)s)")
    parser.add_argument("--lines", type=int, default=LINES, help="update lines per prompt (default %(default)s)")
    parser.add_argument("--tracing", action="store_true", help="leave tracing on where OpenTelemetry's API is importable")
    args = parser.parse_args()
    if args.serve is not None:
        return serve(args.serve)
    figures = asyncio.run(measure(args.rounds, args.lines, args.tracing))
    print(f"{sys.version.split()[0]}: client receive path, CPU per agent_message_chunk line, {args.lines} lines,")
    print(f"tracing {'as the environment makes it' if args.tracing else 'off'}, median of {args.rounds} interleaved rounds (± spread: slowest - fastest)")
    for name, figure in figures.items():
        print(f"  {name:<8} {figure.median:7.3f} us ±{figure.spread * 100:3.0f}%")
    msgspec, stdlib, fast = figures[MSGSPEC].median, figures[STDLIB].median, figures[FAST].median
    print(f"  fast / msgspec: {fast / msgspec:.2f}x (goal <= 2x); json / fast: {stdlib / fast:.2f}x (goal >= 1.4x)")


if __name__ == "__main__":
    main()
