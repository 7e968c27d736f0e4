"""Benchmark: what the inspector costs a connection, direct against inspected, in one run.

A client in this process (the generated runtime) holds two connections to the same agent (also
the generated runtime, in a child process): one direct, one through
``python -m acp_bindings.inspect --transcript FILE -- AGENT``. Round by round, interleaved, it
measures on each:

* round trips: sequential ``session/new`` requests, one in flight at a time;
* streaming: one ``session/prompt`` during which the agent sends N ``session/update``
  notifications, each checked (decoded) by the inspector on the way.

Each figure is the median of the rounds; the ratio is inspected / direct (the goal for round
trips: at least 0.5).

Run: ``make bench-inspect`` (or ``python bench/bench_inspect.py [--rounds N]``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GENERATED = ROOT / "generated"
sys.path.insert(0, str(GENERATED))
sys.path.insert(0, str(HERE))

ROUND_TRIPS = 1000
UPDATES = 5000
ROUNDS = 9


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), os.environ.get("PYTHONPATH", "")])}


async def main_async(rounds: int) -> None:
    import acp_bindings as acp
    from acp_bindings import models
    from acp_bindings._runtime.wire._codec import decode

    received = {"count": 0}

    class BenchClient(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            received["count"] += 1

    agent = [sys.executable, str(Path(__file__).resolve()), "--serve"]
    with tempfile.TemporaryDirectory() as folder:
        transcript = str(Path(folder) / "transcript.ndjson")
        inspected = [sys.executable, "-m", "acp_bindings.inspect", "--transcript", transcript, "--", *agent]
        async with acp.spawn_agent(BenchClient(), agent[0], *agent[1:], env=_env()) as direct_conn, acp.spawn_agent(
            BenchClient(), inspected[0], *inspected[1:], env=_env()
        ) as inspected_conn:
            connections = {"direct": direct_conn, "inspected": inspected_conn}
            new = models.NewSessionRequest(cwd="/", mcp_servers=[])
            prompt = decode(models.PromptRequest, {"sessionId": "bench", "prompt": [{"type": "text", "text": str(UPDATES)}]})
            figures: dict[str, dict[str, list[float]]] = {name: {"rt": [], "up": []} for name in connections}
            for conn in connections.values():
                await conn.agent.initialize(models.InitializeRequest(protocol_version=1))
                for _ in range(200):  # warm up
                    await conn.agent.session_new(new)
            for number in range(rounds):
                order = list(connections.items())
                for name, conn in order if number % 2 else reversed(order):
                    start = time.perf_counter()
                    for _ in range(ROUND_TRIPS):
                        await conn.agent.session_new(new)
                    figures[name]["rt"].append(ROUND_TRIPS / (time.perf_counter() - start))
                    received["count"] = 0
                    start = time.perf_counter()
                    await conn.agent.session_prompt(prompt)
                    while received["count"] < UPDATES:
                        await asyncio.sleep(0)
                    figures[name]["up"].append(UPDATES / (time.perf_counter() - start))
    print(f"inspector overhead, median of {rounds} interleaved rounds (inspected / direct):")
    for key, label in (("rt", "round trips/s"), ("up", "session/update notifications/s")):
        direct = statistics.median(figures["direct"][key])
        through = statistics.median(figures["inspected"][key])
        print(f"  {label:32} direct {direct:10.0f}  inspected {through:10.0f}  ratio {through / direct:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (default %(default)s)")
    args = parser.parse_args()
    if args.serve:
        from bench_rpc import serve_generated

        serve_generated()
        return
    asyncio.run(main_async(args.rounds))


if __name__ == "__main__":
    main()
