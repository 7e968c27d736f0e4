"""Benchmark: peak memory while the runtime takes in one big message, as a multiple of its size.

A connection with a raised ``max_message_size`` is fed a request of ``--megabytes`` MB (one
string parameter, the shape of a large file's text) in 64 KiB chunks, as a pipe delivers it; the
handler answers with the length it got. ``tracemalloc`` gives the peak of what was allocated from
the first chunk until the request is handled (the message itself, made before, is not counted),
in each round; the figure is the median (goal: at most 3x the message).

Run: ``make bench-memory`` (or ``python bench/bench_memory.py [--megabytes N] [--rounds N]``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

from acp_bindings._runtime.connection import _rpc  # noqa: E402

CHUNK = 1 << 16


class _Sink:
    """A writer that keeps only the size of what it is given."""

    def __init__(self) -> None:
        self.written = 0

    def write(self, data: bytes) -> None:
        self.written += len(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None

    def is_closing(self) -> bool:
        return False


class _Handler:
    def __init__(self) -> None:
        self.got = asyncio.get_running_loop().create_future()

    async def handle_request(self, method: str, params: Any) -> Any:
        self.got.set_result(len(params["text"]))
        return {"length": len(params["text"])}

    async def handle_notification(self, method: str, params: Any) -> None:
        return None


async def peak_ratio(message: bytes) -> float:
    handler = _Handler()
    wire = _rpc.StreamWire(asyncio.StreamReader(), _Sink())  # fed below, as a pipe would be
    connection = _rpc.Connection(wire, None, handler, max_message_size=len(message) + 1)
    connection.start()
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    for start in range(0, len(message), CHUNK):
        wire.feed_data(message[start : start + CHUNK])
    got = await handler.got
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert got > len(message) - 100
    await connection.close()
    return peak / len(message)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    text = "x" * (args.megabytes * 1_000_000)
    message = b'{"jsonrpc":"2.0","id":1,"method":"_bench/big","params":{"text":"' + text.encode() + b'"}}\n'
    del text
    ratios = [asyncio.run(peak_ratio(message)) for _ in range(args.rounds)]
    print(f"peak memory taking in one {len(message) / 1e6:.0f} MB message, median of {args.rounds} rounds:")
    print(f"{statistics.median(ratios):.2f}x the message (spread {min(ratios):.2f}x-{max(ratios):.2f}x; goal <= 3x)")


if __name__ == "__main__":
    main()
