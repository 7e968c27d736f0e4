"""Benchmark: an agent's send path, CPU per streamed ``agent_message_chunk`` line written.

An agent writes N ``session/update`` notifications to a child process over an OS pipe (the child
reads and drops them, so that its cost does not count). The figure is this process's CPU per line,
median of interleaved rounds:

* ``json``: the generated agent (``generated/``), ``conn.client.session_update(notification)``
  with a typed ``SessionNotification`` made from its JSON by the codec's ``decode`` (so the figure
  includes building the typed value, as the msgspec writer's includes building its Structs);
* ``fast``: the same agent with ``json_backend="auto"``. The standard library writes on every
  backend: each typed value writes its own JSON text, which no C writer beats, as it would first
  need the value's ``to_json()`` dict (``msgspec.json.encode(value.to_json())`` costs more than
  ``encode_text(value)``); the row shows the fast path costs the send path nothing;
* ``msgspec``: a hand-written asyncio writer that encodes msgspec Structs and writes each line.

The generated agents run with tracing off (``connection.tracing = False``): the figures are of the
JSON path; ``--tracing`` leaves tracing as the environment makes it (see ``bench_receive``).

Run: ``python bench/bench_send.py [--rounds N] [--lines N] [--tracing]``; needs msgspec.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "generated"))
sys.path.insert(0, str(HERE))

from _rounds import Figure, Row, rotated  # noqa: E402
from bench_receive import AgentMessageChunk, SessionNotification, TextContent  # noqa: E402

LINES = 20_000
ROUNDS = 7
DRAIN = [sys.executable, "-c", "import sys\nwhile sys.stdin.buffer.read(1 << 16): pass"]


class Notification(msgspec.Struct):
    jsonrpc: str
    method: str
    params: SessionNotification


async def _sink() -> Any:
    return await asyncio.create_subprocess_exec(*DRAIN, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)


async def measure(rounds: int, lines: int, tracing: bool = False) -> dict[str, Figure]:
    import acp_bindings as acp
    from acp_bindings import models
    from acp_bindings._runtime.wire._codec import decode

    generated_sink, fast_sink, msgspec_sink = await _sink(), await _sink(), await _sink()
    conn = acp.AgentSideConnection(acp.Agent(), generated_sink.stdout, generated_sink.stdin)
    fast_conn = acp.AgentSideConnection(acp.Agent(), fast_sink.stdout, fast_sink.stdin, json_backend="auto")
    if not tracing:
        conn.rpc.tracing = fast_conn.rpc.tracing = False
    encode = msgspec.json.Encoder().encode
    stdin = msgspec_sink.stdin

    def generated(connection: Any) -> Callable[[int], Awaitable[None]]:
        async def send(i: int) -> None:
            update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"chunk {i} of the answer "}}
            await connection.client.session_update(decode(models.SessionNotification, {"sessionId": "bench", "update": update}))

        return send

    async def hand_written(i: int) -> None:
        chunk = AgentMessageChunk(content=TextContent(text=f"chunk {i} of the answer "))
        stdin.write(encode(Notification("2.0", "session/update", SessionNotification("bench", chunk))) + b"\n")
        if stdin.transport.get_write_buffer_size() > 1 << 16:
            await stdin.drain()

    senders = {"json": generated(conn), "fast": generated(fast_conn), "msgspec": hand_written}
    samples: dict[str, list[float]] = {name: [] for name in senders}
    try:
        for r in range(rounds + 1):  # the first round warms up
            for name in rotated(list(senders), r):
                send = senders[name]
                start = time.process_time()
                for i in range(lines):
                    await send(i)
                if r:
                    samples[name].append((time.process_time() - start) * 1e6 / lines)
        return {name: Figure.of(values) for name, values in samples.items()}
    finally:
        await conn.close()
        await fast_conn.close()
        for sink in (generated_sink, fast_sink, msgspec_sink):
            sink.stdin.close()
            await sink.wait()


def rows(rounds: int = ROUNDS, lines: int = LINES) -> list[Row]:
    """Two rows in ``make bench``'s table: the generated agent's send path on the stdlib and the
    fast path, the msgspec writer as their floor."""
    figures = asyncio.run(measure(rounds, lines))
    label = "agent send, per agent_message_chunk line"
    return [
        Row(f"{label} ({name})", "us CPU/line", {"floor": figures["msgspec"], "acpgen": figures[name]})
        for name in ("json", "fast")
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (default %(default)s)")
    parser.add_argument("--lines", type=int, default=LINES, help="update lines per round (default %(default)s)")
    parser.add_argument("--tracing", action="store_true", help="leave tracing on where OpenTelemetry's API is importable")
    args = parser.parse_args()
    figures = asyncio.run(measure(args.rounds, args.lines, args.tracing))
    print(f"{sys.version.split()[0]}: agent send path, CPU per agent_message_chunk line, {args.lines} lines,")
    print(f"tracing {'as the environment makes it' if args.tracing else 'off'}, median of {args.rounds} interleaved rounds (± spread: slowest - fastest)")
    for name, figure in figures.items():
        print(f"  {name:<8} {figure.median:7.3f} us ±{figure.spread * 100:3.0f}%")
    msgspec = figures["msgspec"].median
    print(f"  json / msgspec: {figures['json'].median / msgspec:.2f}x; fast / msgspec: {figures['fast'].median / msgspec:.2f}x")


if __name__ == "__main__":
    main()
