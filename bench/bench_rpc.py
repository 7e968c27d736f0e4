"""Benchmark: the generated runtime against the hand-written floor and the official Python SDK.

For each implementation a client in this process talks to an agent in a child process, over OS
pipes; the three connections stay open for the whole run, and the workloads run round by round,
interleaved (the candidates' order rotates each round):

* round trips: sequential ``session/new`` requests (one in flight at a time), and the same with
  64 in flight at once;
* streaming: one ``session/prompt`` during which the agent sends N ``session/update``
  ``agent_message_chunk`` notifications; the client counts each one it has handled.

Candidates: ``floor``, a minimal hand-written asyncio NDJSON peer (``json.loads`` /
``json.dumps`` of each line, futures by id, nothing else); ``acpgen``, the generated package
(``generated/``); ``sdk``, ``agent-client-protocol`` (client and agent both written with it).
The cost is CPU time per message, this process plus the agent's (so other work on the machine
does not count), median of the rounds with its spread.

Run: ``make bench-rpc`` (or ``python bench/bench_rpc.py [--rounds N]``); ``make bench`` prints
it with the codec figures in one table.
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
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GENERATED = ROOT / "generated"
sys.path.insert(0, str(GENERATED))
sys.path.insert(0, str(HERE))

from _rounds import FLOOR, OURS, SDK, Figure, Row, process_cpu, rotated, table  # noqa: E402

ROUND_TRIPS = 1000
CONCURRENT = 64
UPDATES = 10000
ROUNDS = 7


# -- agents (run in the child process) -----------------------------------------------------------


def serve_generated() -> None:
    import acp_bindings as acp
    from acp_bindings import models
    from acp_bindings._runtime.wire._codec import decode

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


def serve_floor() -> None:
    """The floor's agent: read a line, ``json.loads`` it, answer with ``json.dumps``."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        while line := await reader.readline():
            message = json.loads(line)
            method, params = message["method"], message.get("params")
            if method == "session/prompt":
                for i in range(int(params["prompt"][0]["text"])):
                    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"chunk {i}"}}
                    notification = {"jsonrpc": "2.0", "method": "session/update",
                                    "params": {"sessionId": params["sessionId"], "update": update}}
                    writer.write(json.dumps(notification).encode() + b"\n")
                    await writer.drain()
                result: Any = {"stopReason": "end_turn"}
            elif method == "session/new":
                result = {"sessionId": "bench"}
            else:
                result = {"protocolVersion": params["protocolVersion"]}
            writer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
            await writer.drain()

    asyncio.run(main())


# -- clients (this process) -----------------------------------------------------------------------


class Workload:
    """What each implementation provides: a connection and three operations on it."""

    name: str
    pid: int
    new_session: Callable[[], Awaitable[Any]]
    prompt: Callable[[int], Awaitable[Any]]
    received: int


def _agent_command(kind: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--serve", kind]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), os.environ.get("PYTHONPATH", "")])}


class _FloorClient(asyncio.Protocol):
    """The floor's client: split chunks into lines, ``json.loads`` each, settle futures by id."""

    def __init__(self, work: Workload) -> None:
        self.work = work
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        *lines, self.buffer = (self.buffer + data).split(b"\n")
        for line in lines:
            message = json.loads(line)
            if "id" in message:
                self.pending.pop(message["id"]).set_result(message["result"])
            else:
                self.work.received += 1


async def run_floor(measure: Callable[[Workload], Awaitable[Any]]) -> Any:
    loop = asyncio.get_running_loop()
    work = Workload()
    work.name = FLOOR
    work.received = 0
    child_stdin, to_child = os.pipe()
    from_child, child_stdout = os.pipe()
    process = await asyncio.create_subprocess_exec(*_agent_command(FLOOR), stdin=child_stdin, stdout=child_stdout, env=_env())
    os.close(child_stdin)
    os.close(child_stdout)
    work.pid = process.pid
    client = _FloorClient(work)
    await loop.connect_read_pipe(lambda: client, os.fdopen(from_child, "rb", buffering=0))
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(to_child, "wb", buffering=0))
    ids = iter(range(1 << 62))

    async def call(method: str, params: Any) -> Any:
        request_id = next(ids)
        future = client.pending[request_id] = loop.create_future()
        transport.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n")
        return await future

    await call("initialize", {"protocolVersion": 1})

    async def new_session() -> Any:
        return await call("session/new", {"cwd": "/", "mcpServers": []})

    async def prompt(count: int) -> Any:
        return await call("session/prompt", {"sessionId": "bench", "prompt": [{"type": "text", "text": str(count)}]})

    work.new_session, work.prompt = new_session, prompt
    try:
        return await measure(work)
    finally:
        transport.close()
        await process.wait()


async def run_generated(measure: Callable[[Workload], Awaitable[Any]]) -> Any:
    import acp_bindings as acp
    from acp_bindings import models
    from acp_bindings._runtime.wire._codec import decode

    work = Workload()
    work.name = OURS
    work.received = 0

    class BenchClient(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            work.received += 1

    command = _agent_command(OURS)
    async with acp.spawn_agent(BenchClient(), command[0], *command[1:], env=_env()) as conn:
        assert conn.process is not None
        work.pid = conn.process.pid
        await conn.agent.initialize(models.InitializeRequest(protocol_version=1))
        new = models.NewSessionRequest(cwd="/", mcp_servers=[])

        async def new_session() -> Any:
            return await conn.agent.session_new(new)

        async def prompt(count: int) -> Any:
            request = decode(models.PromptRequest, {"sessionId": "bench", "prompt": [{"type": "text", "text": str(count)}]})
            return await conn.agent.session_prompt(request)

        work.new_session, work.prompt = new_session, prompt
        return await measure(work)


async def run_sdk(measure: Callable[[Workload], Awaitable[Any]]) -> Any:
    import acp

    work = Workload()
    work.name = SDK
    work.received = 0

    class BenchClient:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            work.received += 1

        async def request_permission(self, **kwargs: Any) -> Any:
            raise acp.RequestError.method_not_found("session/request_permission")

    command = _agent_command(SDK)
    async with acp.spawn_agent_process(BenchClient(), command[0], *command[1:], env=_env()) as (conn, process):
        work.pid = process.pid
        await conn.initialize(protocol_version=1)

        async def new_session() -> Any:
            return await conn.new_session(cwd="/", mcp_servers=[])

        async def prompt(count: int) -> Any:
            return await conn.prompt(session_id="bench", prompt=[acp.text_block(str(count))])

        work.new_session, work.prompt = new_session, prompt
        return await measure(work)


async def _sequential(work: Workload) -> int:
    for _ in range(ROUND_TRIPS):
        await work.new_session()
    return ROUND_TRIPS


async def _concurrent(work: Workload) -> int:
    for _ in range(ROUND_TRIPS // CONCURRENT):
        await asyncio.gather(*(work.new_session() for _ in range(CONCURRENT)))
    return ROUND_TRIPS // CONCURRENT * CONCURRENT


async def _streamed(work: Workload) -> int:
    work.received = 0
    await work.prompt(UPDATES)
    while work.received < UPDATES:  # count only updates the client has handled
        await asyncio.sleep(0)
    return UPDATES


WORKLOADS: list[tuple[str, Callable[[Workload], Awaitable[int]]]] = [
    ("round trips (session/new, sequential)", _sequential),
    (f"round trips, {CONCURRENT} in flight", _concurrent),
    ("streamed session/update notifications", _streamed),
]


async def _cpu_per_message(work: Workload, workload: Callable[[Workload], Awaitable[int]]) -> float:
    """Microseconds of CPU (this process and the agent's) per message of one run of ``workload``."""
    own, agent = time.process_time(), process_cpu(work.pid)
    count = await workload(work)
    return ((time.process_time() - own) + (process_cpu(work.pid) - agent)) * 1e6 / count


async def measure_all(rounds: int) -> list[Row]:
    """Open the three connections, warm them up, then run every workload round by round."""
    works: dict[str, Workload] = {}
    done = asyncio.Event()
    ready: list[asyncio.Future[None]] = []

    def holder(future: asyncio.Future[None]) -> Callable[[Workload], Awaitable[None]]:
        async def hold(work: Workload) -> None:
            works[work.name] = work
            for _ in range(200):  # warm up
                await work.new_session()
            future.set_result(None)
            await done.wait()

        return hold

    loop = asyncio.get_running_loop()
    runs = []
    for run in (run_floor, run_generated, run_sdk):
        future: asyncio.Future[None] = loop.create_future()
        ready.append(future)
        runs.append(asyncio.ensure_future(run(holder(future))))
    try:
        await asyncio.gather(*ready)
        rows = []
        for label, workload in WORKLOADS:
            samples: dict[str, list[float]] = {name: [] for name in (FLOOR, OURS, SDK)}
            for r in range(rounds):
                for name in rotated(list(samples), r):
                    samples[name].append(await _cpu_per_message(works[name], workload))
            rows.append(Row(label, "us CPU/msg", {n: Figure.of(v) for n, v in samples.items()}))
        return rows
    finally:
        done.set()
        await asyncio.gather(*runs, return_exceptions=True)


def rows(rounds: int = ROUNDS) -> list[Row]:
    return asyncio.run(measure_all(rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", choices=[FLOOR, OURS, SDK], help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (default %(default)s)")
    args = parser.parse_args()
    if args.serve == FLOOR:
        return serve_floor()
    if args.serve == OURS:
        return serve_generated()
    if args.serve == SDK:
        return serve_sdk()
    print(f"RPC over OS pipes: CPU per message, median of {args.rounds} interleaved rounds (spread: slowest - fastest)")
    print(table(rows(args.rounds)))


if __name__ == "__main__":
    main()
