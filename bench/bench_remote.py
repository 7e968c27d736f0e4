"""Benchmark: the generated ASGI app against the official Python SDK's (``acp.http.asgi``), each
serving the same agent under the same uvicorn on 127.0.0.1.

Rows: the server's CPU per streamed ``session/update`` (a prompt answered with UPDATES updates,
driven by the generated client; the server process's CPU only) over WebSocket and over
Streamable HTTP, interleaved round by round; and the server's memory (RSS) per idle connection
(IDLE connections opened, each initialized, the HTTP ones with their stream open; Python's
allocations as tracemalloc counts them), measured on a fresh server of each.

Run: ``.venv/bin/python bench/bench_remote.py [--rounds N]`` (also part of ``make bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

from _rounds import OURS, SDK, Figure, Row, interleave, process_cpu, table

UPDATES = 2000
IDLE = 200
ROUNDS = 5
APPS = {OURS: "remote_bench_agents:ours", SDK: "remote_bench_agents:sdk"}


def start(app: str, **extra: str) -> tuple[subprocess.Popen[bytes], int]:
    from support.remote import free_port, wait_listening

    port = free_port()
    path = os.pathsep.join([str(ROOT / "generated"), str(HERE)])
    env = {**os.environ, "PYTHONPATH": path, **extra}
    command = [sys.executable, "-m", "uvicorn", app, "--port", str(port), "--log-level", "error", "--no-access-log"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, process)
    except RuntimeError:  # a server that never listened is not left behind
        stop(process)
        raise
    return process, port


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def turn(url: str, updates: int) -> int:
    """One connection, one session, one prompt answered with ``updates`` updates: how many came."""
    from acp_bindings import models
    from acp_bindings._runtime.wire._codec import decode, encode
    from acp_bindings.client import Client, connect_agent
    from acp_bindings.methods import PROTOCOL_VERSION

    class Count(Client):
        seen = 0

        async def session_update(self, params: models.SessionNotification) -> None:
            self.seen += 1

    client = Count()
    async with connect_agent(client, url) as conn:
        await conn.agent.initialize(decode(models.InitializeRequest, {"protocolVersion": PROTOCOL_VERSION}))
        session = encode(await conn.agent.session_new(decode(models.NewSessionRequest, {"cwd": "/", "mcpServers": []})))
        prompt = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": str(updates)}]}
        await conn.agent.session_prompt(decode(models.PromptRequest, prompt))
    return client.seen


def cpu_rows(rounds: int) -> list[Row]:
    servers = {name: start(app) for name, app in APPS.items()}
    try:
        rows = []
        for scheme, label in (("ws", "WebSocket"), ("http", "HTTP")):

            def measure(name: str, scheme: str = scheme) -> Any:
                process, port = servers[name]

                def once(_: int) -> float:
                    before = process_cpu(process.pid)
                    seen = asyncio.run(turn(f"{scheme}://127.0.0.1:{port}/acp", UPDATES))
                    assert seen == UPDATES, (name, scheme, seen)
                    return (process_cpu(process.pid) - before) / UPDATES * 1e6

                return once

            for name in servers:  # warm up: imports, first connection
                measure(name)(0)
            figures = interleave({name: measure(name) for name in servers}, rounds)
            rows.append(Row(f"remote: server CPU per update, {label}", "µs", figures))
        return rows
    finally:
        for process, _ in servers.values():
            stop(process)


def allocated(port: int) -> int:
    """Bytes the server's Python has allocated (its ``/memory`` probe)."""
    import httpx

    return int(httpx.get(f"http://127.0.0.1:{port}/memory", timeout=10).text)


async def idle(url: str, count: int, port: int) -> float:
    """Server KiB per idle connection: ``count`` connections initialized (HTTP: stream open)."""
    from acp_bindings import models
    from acp_bindings._runtime.wire._codec import decode
    from acp_bindings.client import Client, connect_agent
    from acp_bindings.methods import PROTOCOL_VERSION

    stack = []
    before = await asyncio.to_thread(allocated, port)
    try:
        for _ in range(count):
            context = connect_agent(Client(), url)
            conn = await context.__aenter__()
            stack.append(context)
            init = {"protocolVersion": PROTOCOL_VERSION}
            await conn.agent.initialize(decode(models.InitializeRequest, init))
        await asyncio.sleep(0.5)
        return (await asyncio.to_thread(allocated, port) - before) / count / 1024
    finally:
        for context in reversed(stack):
            await context.__aexit__(None, None, None)


def memory_rows() -> list[Row]:
    rows = []
    for scheme, label in (("ws", "WebSocket"), ("http", "HTTP")):
        figures = {}
        for name, app in APPS.items():
            process, port = start(f"{app}_probed", PYTHONTRACEMALLOC="1")
            try:
                url = f"{scheme}://127.0.0.1:{port}/acp"
                asyncio.run(idle(url, 10, port))  # warm up
                figures[name] = Figure(asyncio.run(idle(url, IDLE, port)), 0.0)
            finally:
                stop(process)
        rows.append(Row(f"remote: server KiB per idle conn, {label}", "KiB", figures))
    return rows


def rows(rounds: int = ROUNDS) -> list[Row]:
    return cpu_rows(rounds) + memory_rows()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (default %(default)s)")
    args = parser.parse_args()
    print(f"remote ACP under uvicorn: {UPDATES} updates a round, median of {args.rounds} interleaved rounds; {IDLE} idle connections")
    print(table(rows(args.rounds)))


if __name__ == "__main__":
    main()
