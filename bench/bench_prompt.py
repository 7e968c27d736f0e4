"""Benchmark: the prompt turn, a client and an agent process as users run them.

Sequential ``session/prompt`` round trips (one in flight at a time), each with one streamed
``session/update`` (the agent echoes a one-word prompt as one ``agent_message_chunk``), over OS
pipes:

* ``acpgen``: the generated package's client (``spawn_agent``) and its stub agent
  (``python -m acp_bindings.stub_agent``);
* ``sdk``: ``agent-client-protocol``'s client (``spawn_agent_process``) and an echo agent written
  with it as the SDK's own example is (``examples/echo_agent.py``: each text block back as an
  ``agent_message_chunk``);
* ``floor``: bench_rpc.py's hand-written asyncio NDJSON client and agent, doing the same.

The three connections stay open for the whole run; every round runs each once, in an order that
rotates. The cost is CPU time per prompt turn, this process plus the agent's; each turn's update
must have been handled by the client before the next prompt counts.

Run: ``make bench-prompt`` (or ``python bench/bench_prompt.py [--rounds N]``); ``make bench`` has
its row too.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_rpc  # noqa: E402
from _rounds import FLOOR, OURS, SDK, Figure, Row, process_cpu, rotated, table  # noqa: E402

TURNS = 500
ROUNDS = 7
PROMPT = "hello"


def serve_sdk_echo() -> None:
    """The SDK's echo agent (as in its examples): each text block back as one message chunk."""
    import uuid

    import acp

    class EchoAgent:
        def on_connect(self, conn: Any) -> None:
            self.conn = conn

        async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
            return acp.InitializeResponse(protocol_version=protocol_version)

        async def new_session(self, cwd: str, **kwargs: Any) -> Any:
            return acp.NewSessionResponse(session_id=uuid.uuid4().hex)

        async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> Any:
            for block in prompt:
                text = getattr(block, "text", "")
                await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(text))
            return acp.PromptResponse(stop_reason="end_turn")

    asyncio.run(acp.run_agent(EchoAgent()))


class Turns:
    """One candidate's open connection: ``turn()`` runs one prompt turn."""

    name: str
    pid: int
    turn: Callable[[], Awaitable[Any]]
    received: int = 0


async def run_generated(
    hold: Callable[[Turns], Awaitable[None]],
    package: str = "acp_bindings",
    name: str = OURS,
    env: dict[str, str] | None = None,
    command: Sequence[str] = (),
) -> None:
    """``package``'s client and stub agent (importable from ``env``'s PYTHONPATH), as ``name``;
    ``command`` runs the agent in place of ``python -m <package>.stub_agent``."""
    acp = importlib.import_module(package)
    models = importlib.import_module(f"{package}.models")

    work = Turns()
    work.name = name

    class Counting(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            work.received += 1

    command = command or (sys.executable, "-m", f"{package}.stub_agent", "--delay", "0")
    async with acp.spawn_agent(Counting(), *command, env=env or bench_rpc._env()) as conn:
        assert conn.process is not None
        work.pid = conn.process.pid
        await conn.agent.initialize(models.InitializeRequest(protocol_version=1))
        session = await conn.agent.session_new(models.NewSessionRequest(cwd="/", mcp_servers=[]))
        prompt = [models.Text(text=PROMPT)]

        async def turn() -> Any:
            return await conn.agent.session_prompt(session_id=session.session_id, prompt=prompt)

        work.turn = turn
        await hold(work)


async def run_sdk(hold: Callable[[Turns], Awaitable[None]], command: Sequence[str] = ()) -> None:
    import acp

    work = Turns()
    work.name = SDK

    class Counting:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            work.received += 1

        async def request_permission(self, **kwargs: Any) -> Any:
            raise acp.RequestError.method_not_found("session/request_permission")

    command = command or (sys.executable, str(Path(__file__).resolve()), "--serve")
    async with acp.spawn_agent_process(Counting(), *command, env=bench_rpc._env()) as (conn, process):
        work.pid = process.pid
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd="/", mcp_servers=[])
        prompt = [acp.text_block(PROMPT)]

        async def turn() -> Any:
            return await conn.prompt(session_id=session.session_id, prompt=prompt)

        work.turn = turn
        await hold(work)


async def run_floor(hold: Callable[[Turns], Awaitable[None]]) -> None:
    async def measure(rpc: bench_rpc.Workload) -> None:
        work = Turns()
        work.name = FLOOR
        work.pid = rpc.pid

        async def turn() -> Any:
            before = rpc.received
            result = await rpc.prompt(1)  # the floor's agent sends one update per count
            work.received += rpc.received - before
            return result

        work.turn = turn
        await hold(work)

    await bench_rpc.run_floor(measure)


async def _cpu_per_turn(work: Turns, turns: int) -> float:
    """Microseconds of CPU (this process and the agent's) per prompt turn."""
    work.received = 0
    own, agent = time.process_time(), process_cpu(work.pid)
    for _ in range(turns):
        await work.turn()
    while work.received < turns:  # every turn's update handled (the floor's arrive before)
        await asyncio.sleep(0)
    return ((time.process_time() - own) + (process_cpu(work.pid) - agent)) * 1e6 / turns


async def measure(rounds: int, turns: int = TURNS) -> Row:
    figures = await measure_runs((run_floor, run_generated, run_sdk), (FLOOR, OURS, SDK), rounds, turns)
    return Row("prompt turns (1 update each, sequential)", "us CPU/turn", figures)


async def measure_runs(
    runners: Sequence[Callable[[Callable[[Turns], Awaitable[None]]], Awaitable[None]]],
    names: Sequence[str],
    rounds: int,
    turns: int = TURNS,
) -> dict[str, Figure]:
    """Open every runner's connection, warm each up, then time ``turns`` prompt turns of each
    once per round, in an order that rotates: the figure of each name."""
    works: dict[str, Turns] = {}
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    ready: list[asyncio.Future[None]] = []

    def holder(future: asyncio.Future[None]) -> Callable[[Turns], Awaitable[None]]:
        async def hold(work: Turns) -> None:
            works[work.name] = work
            for _ in range(100):  # warm up
                await work.turn()
            future.set_result(None)
            await done.wait()

        return hold

    runs = []
    for run in runners:
        future: asyncio.Future[None] = loop.create_future()
        ready.append(future)
        runs.append(asyncio.ensure_future(run(holder(future))))
    try:
        await asyncio.gather(*ready)
        samples: dict[str, list[float]] = {name: [] for name in names}
        for r in range(rounds):
            for name in rotated(list(samples), r):
                samples[name].append(await _cpu_per_turn(works[name], turns))
        return {n: Figure.of(v) for n, v in samples.items()}
    finally:
        done.set()
        await asyncio.gather(*runs, return_exceptions=True)


def rows(rounds: int = ROUNDS) -> list[Row]:
    return [asyncio.run(measure(rounds))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (default %(default)s)")
    parser.add_argument("--turns", type=int, default=TURNS, help="prompt turns per round (default %(default)s)")
    args = parser.parse_args()
    if args.serve:
        return serve_sdk_echo()
    print(f"Prompt turns over OS pipes: CPU per turn, median of {args.rounds} interleaved rounds (spread: slowest - fastest)")
    print(table([asyncio.run(measure(args.rounds, args.turns))]))


if __name__ == "__main__":
    main()
