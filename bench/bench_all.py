"""Every floor benchmark in one run, one table: the runtime over OS pipes, a client's receive
path per update line on the stdlib and the fast (msgspec, else orjson) path against a msgspec client
(bench_receive.py, whose floor column is that client), an agent's send path per update line
against a msgspec writer (bench_send.py), the prompt turn
(bench_prompt.py), the codec line pipeline and import cost, each candidate against the
hand-written floor and the official SDK;
then the same codec and import rows for the pydantic flavour (bench_pydantic.py, without its
generation row, the slow one: ``make bench-pydantic`` has it); then the remote rows
(bench_remote.py: server CPU per streamed update over WebSocket and Streamable HTTP, memory per
idle connection, our ASGI app against the SDK's under the same uvicorn).

Run: ``make bench`` (or ``.venv/bin/python bench/bench_all.py [--rounds N]``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_codec  # noqa: E402
import bench_prompt  # noqa: E402
import bench_pydantic  # noqa: E402
import bench_receive  # noqa: E402
import bench_send  # noqa: E402
import bench_remote  # noqa: E402
import bench_rpc  # noqa: E402
from _rounds import table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default %(default)s)")
    args = parser.parse_args()
    rows = bench_rpc.rows(args.rounds) + bench_receive.rows(args.rounds) + bench_send.rows(args.rounds) + bench_prompt.rows(args.rounds) + bench_codec.rows(args.rounds) + bench_pydantic.rows(args.rounds, with_generate=False)
    rows += bench_remote.rows(args.rounds)
    print(f"median of {args.rounds} interleaved rounds, ± spread (slowest - fastest) / median")
    print("vs floor: acpgen / hand-written floor (lower is better); sdk/ours: sdk / acpgen (higher is better)")
    print(table(rows))


if __name__ == "__main__":
    main()
