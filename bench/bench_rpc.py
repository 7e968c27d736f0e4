"""Benchmark: the generated runtime against the official Python SDK, over OS pipes, in one run.

For each implementation a client in this process talks to an agent in a child process:

* round trips: sequential ``session/new`` requests (one in flight at a time), and the same with
  64 in flight at once;
* streaming: one ``session/prompt`` during which the agent sends N ``session/update``
  ``agent_message_chunk`` notifications; the client decodes and counts each one.

The baseline is ``agent-client-protocol`` 0.12.1 (client and agent both written with it).
Each figure is the best of several repeats; ratios are generated / baseline (higher is better).

Run: ``make bench-rpc`` (or ``python bench/bench_rpc.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
sys.path.insert(0, str(GENERATED))

ROUND_TRIPS = 2000
CONCURRENT = 64
UPDATES = 20000
REPEATS = 3


# -- agents (run in the child process) -----------------------------------------------------------


def serve_generated() -> None:
    import acp_bindings as acp
    from acp_bindings import models
    from acp_bindings._codec import decode

    class BenchAgent(acp.Agent):
        async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
            return models.InitializeResponse(protocol_version=params.protocol_version)

        async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
            return models.NewSessionResponse(session_id="bench")

        async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
            count = int(params.prompt[0].to_json()["text"])
            for i in range(count):
                await self.client.session_update(
                    decode(
                        models.SessionNotification,
                        {
                            "sessionId": params.session_id,
                            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"chunk {i}"}},
                        },
                    )
                )
            return decode(models.PromptResponse, {"stopReason": "end_turn"})

    asyncio.run(acp.run_agent(BenchAgent()))


def serve_sdk() -> None:
    import acp

    class BenchAgent:
        def on_connect(self, conn: Any) -> None:
            self.conn = conn

        async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
            return acp.InitializeResponse(protocol_version=protocol_version)

        async def new_session(self, cwd: str, **kwargs: Any) -> Any:
            return acp.NewSessionResponse(session_id="bench")

        async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
            for i in range(int(prompt[0].text)):
                await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(f"chunk {i}"))
            return acp.PromptResponse(stop_reason="end_turn")

    asyncio.run(acp.run_agent(BenchAgent()))


# -- clients (this process) -----------------------------------------------------------------------


class Workload:
    """What each implementation provides: a connection and three operations on it."""

    name: str
    new_session: Callable[[], Awaitable[Any]]
    prompt: Callable[[int], Awaitable[Any]]
    received: int


def _agent_command(kind: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--serve", kind]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), os.environ.get("PYTHONPATH", "")])}


async def run_generated(measure: Callable[[Workload], Awaitable[dict[str, float]]]) -> dict[str, float]:
    import acp_bindings as acp
    from acp_bindings import models
    from acp_bindings._codec import decode

    work = Workload()
    work.name = "generated"
    work.received = 0

    class BenchClient(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            work.received += 1

    command = _agent_command("generated")
    async with acp.spawn_agent(BenchClient(), command[0], *command[1:], env=_env()) as conn:
        await conn.agent.initialize(models.InitializeRequest(protocol_version=1))
        new = models.NewSessionRequest(cwd="/", mcp_servers=[])

        async def new_session() -> Any:
            return await conn.agent.session_new(new)

        async def prompt(count: int) -> Any:
            request = decode(models.PromptRequest, {"sessionId": "bench", "prompt": [{"type": "text", "text": str(count)}]})
            return await conn.agent.session_prompt(request)

        work.new_session, work.prompt = new_session, prompt
        return await measure(work)


async def run_sdk(measure: Callable[[Workload], Awaitable[dict[str, float]]]) -> dict[str, float]:
    import acp

    work = Workload()
    work.name = "sdk"
    work.received = 0

    class BenchClient:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            work.received += 1

        async def request_permission(self, **kwargs: Any) -> Any:
            raise acp.RequestError.method_not_found("session/request_permission")

    command = _agent_command("sdk")
    async with acp.spawn_agent_process(BenchClient(), command[0], *command[1:], env=_env()) as (conn, _):
        await conn.initialize(protocol_version=1)

        async def new_session() -> Any:
            return await conn.new_session(cwd="/", mcp_servers=[])

        async def prompt(count: int) -> Any:
            return await conn.prompt(session_id="bench", prompt=[acp.text_block(str(count))])

        work.new_session, work.prompt = new_session, prompt
        return await measure(work)


async def measure(work: Workload) -> dict[str, float]:
    for _ in range(200):  # warm up
        await work.new_session()
    best: dict[str, float] = {}
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(ROUND_TRIPS):
            await work.new_session()
        sequential = ROUND_TRIPS / (time.perf_counter() - start)

        start = time.perf_counter()
        for _ in range(ROUND_TRIPS // CONCURRENT):
            await asyncio.gather(*(work.new_session() for _ in range(CONCURRENT)))
        concurrent = (ROUND_TRIPS // CONCURRENT) * CONCURRENT / (time.perf_counter() - start)

        work.received = 0
        start = time.perf_counter()
        await work.prompt(UPDATES)
        while work.received < UPDATES:  # count only updates the client has handled
            await asyncio.sleep(0)
        streamed = UPDATES / (time.perf_counter() - start)

        for key, value in (("round trips/s", sequential), (f"round trips/s, {CONCURRENT} in flight", concurrent),
                           ("session/update notifications/s", streamed)):
            best[key] = max(best.get(key, 0.0), value)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", choices=["generated", "sdk"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "generated":
        return serve_generated()
    if args.serve == "sdk":
        return serve_sdk()

    sdk = asyncio.run(run_sdk(measure))
    generated = asyncio.run(run_generated(measure))
    print(f"RPC over OS pipes, best of {REPEATS}; baseline: agent-client-protocol 0.12.1 (official Python SDK)")
    print(f"{'workload':<40} {'generated':>12} {'baseline':>12} {'ratio':>8}")
    for key in sdk:
        print(f"{key:<40} {generated[key]:>12,.0f} {sdk[key]:>12,.0f} {generated[key] / sdk[key]:>7.2f}x")


if __name__ == "__main__":
    main()
