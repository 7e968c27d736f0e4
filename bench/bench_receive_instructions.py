"""Benchmark: a client's receive path in instructions per streamed line (callgrind), the same three
clients as ``bench_receive.py``, one process each.

CPU time on a shared or virtual machine moves by tens of percent from one round to the next; the
instructions a process executes do not. Each client is run under ``valgrind --tool=callgrind`` twice,
taking two prompts of N and of 3N update lines; the difference of the two totals divided by the
lines between them is the instructions per line, with start-up and imports cancelled out. The raw
agent is not counted (valgrind does not follow child processes).

Run: ``python bench/bench_receive_instructions.py [--lines N] [--tracing]``; needs valgrind, msgspec
and orjson, and takes a few minutes (valgrind runs a process about 50 times slower).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_receive  # noqa: E402

CLIENTS = {"json": "json", "fast": "auto", "msgspec": None}  # name -> json_backend (None: msgspec's)


def run_client(name: str, lines: int, tracing: bool) -> None:
    """Connect one client and take two prompts of ``lines`` update lines each."""

    async def hold(client: bench_receive.Client) -> None:
        await client.prompt()
        await client.prompt()

    backend = CLIENTS[name]
    if backend is None:
        asyncio.run(bench_receive.run_msgspec(lines, hold))
    else:
        asyncio.run(bench_receive.run_generated(backend, lines, hold, tracing))


def instructions(name: str, lines: int, tracing: bool) -> int:
    """The instructions callgrind counts in a process running :func:`run_client`."""
    with tempfile.TemporaryDirectory() as folder:
        command = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={os.path.join(folder, 'out')}",
            sys.executable, __file__, "--client", name, "--lines", str(lines),
        ] + (["--tracing"] if tracing else [])
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind said no total:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--client", choices=sorted(CLIENTS), help=argparse.SUPPRESS)
    parser.add_argument("--lines", type=int, default=5000, help="N, the smaller prompt's lines (default %(default)s)")
    parser.add_argument("--tracing", action="store_true", help="leave tracing on where OpenTelemetry's API is importable")
    args = parser.parse_args()
    if args.client:
        return run_client(args.client, args.lines, args.tracing)
    if shutil.which("valgrind") is None:
        sys.exit("bench_receive_instructions: needs valgrind on the PATH (a Debian package: valgrind)")
    per_line = {}
    for name in CLIENTS:
        small, large = (instructions(name, n, args.tracing) for n in (args.lines, 3 * args.lines))
        per_line[name] = (large - small) / (2 * 2 * args.lines)  # two prompts of 2N more lines
    print(f"{sys.version.split()[0]}: client receive path, instructions per agent_message_chunk line (callgrind),")
    print(f"tracing {'as the environment makes it' if args.tracing else 'off'}")
    for name, figure in per_line.items():
        print(f"  {name:<8} {figure:9.0f}")
    fast, stdlib, floor = per_line["fast"], per_line["json"], per_line["msgspec"]
    print(f"  fast / msgspec: {fast / floor:.2f}x (goal <= 2x); json / fast: {stdlib / fast:.2f}x (goal >= 1.4x)")


if __name__ == "__main__":
    main()
