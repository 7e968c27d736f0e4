"""Time for the stub agent to answer everything and exit once its stdin closes, against the
number of requests written.

A peer writes N requests without reading until the agent stops reading (back pressure), then
reads while writing the rest, closes the agent's stdin and reads every answer. The time from
the first write to the agent's exit, for N and 2N requests (interleaved, three rounds), should
double, not quadruple: the ratio is printed.

    python bench/bench_shutdown.py [--requests 100000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUB_AGENT = (sys.executable, "-m", "acp_bindings.stub_agent", "--delay", "0")


def run_seconds(count: int) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    process = subprocess.Popen(STUB_AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert process.stdin is not None and process.stdout is not None
    data = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":1}}\n' % n
        for n in range(count)
    )
    written = [0]
    fd = process.stdin.fileno()

    def write() -> None:
        view = memoryview(data)
        while view:
            done = os.write(fd, view[: 1 << 16])
            written[0] += done
            view = view[done:]
        process.stdin.close()  # type: ignore[union-attr]

    started = time.perf_counter()
    writer = threading.Thread(target=write)
    writer.start()
    last = -1
    while writer.is_alive() and written[0] != last:  # read nothing until the agent stops reading
        last = written[0]
        writer.join(0.5)
    answers = sum(chunk.count(b"\n") for chunk in iter(lambda: process.stdout.read1(1 << 20), b""))  # type: ignore[union-attr]
    writer.join()
    process.wait()
    assert process.returncode == 0 and answers == count, (process.returncode, answers)
    return time.perf_counter() - started, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100_000)
    args = parser.parse_args()
    small, large = [], []
    for _ in range(3):
        small.append(run_seconds(args.requests))
        large.append(run_seconds(2 * args.requests))
    s, l = min(t for t, _ in small), min(t for t, _ in large)
    print(
        f"{args.requests} requests: {s:.2f} s; {2 * args.requests}: {l:.2f} s; ratio {l / s:.2f}"
        f" (2 is linear, 4 quadratic); bytes written before the agent stopped reading:"
        f" {max(b for _, b in small + large)}"
    )


if __name__ == "__main__":
    main()
