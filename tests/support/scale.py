"""``make scale``: the stub agent's ASGI app in 4 worker processes (uvicorn) behind HAProxy, with
cookie stickiness and HTTP health checks, on 127.0.0.1.

1. 200 concurrent sessions (100 over WebSocket, 100 over Streamable HTTP, each its own connection
   through the balancer) each prompt their own text; every one must get its text back exactly.
2. 40 sessions with slow turns; one worker is killed (SIGKILL) mid-turn: its clients must fail at
   once (no hang), every other session must complete; then 40 new sessions must all complete, on
   the live workers only (HAProxy's health check has taken the dead one out).

Prints a table of figures; exits 1 if any expectation fails. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# isort: off
from support import BINDINGS  # puts the freshly generated package on sys.path
from support.remote import free_port, wait_listening

from acp_bindings import models
from acp_bindings._runtime.wire._codec import decode, encode
from acp_bindings.client import Client, connect_agent
from acp_bindings.methods import PROTOCOL_VERSION

# isort: on

WORKERS = 4
SESSIONS = 200
DELAY = 0.05  # seconds between the updates of a slow turn (the kill test)

HAPROXY = """\
global
    maxconn 4096
    stats socket {stats} mode 600 level admin
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h
    option http-server-close
frontend acp
    bind 127.0.0.1:{port}
    default_backend workers
backend workers
    balance roundrobin
    cookie ACPWORKER insert indirect nocache httponly
    option redispatch
    retries 2
    option httpchk
    http-check send meth GET uri /acp hdr Host 127.0.0.1
    http-check expect status 406
    default-server check inter 200ms fall 2 rise 2
    http-response set-header X-Acp-Worker %s
{servers}
"""


class Collect(Client):
    def __init__(self) -> None:
        self.text: list[str] = []

    async def session_update(self, params: models.SessionNotification) -> None:
        content = encode(params)["update"]["content"]
        self.text.append(content.get("text", ""))


async def one_session(url: str, prompt: str, timeout: float) -> tuple[str, str, float]:
    """One connection, one session, one prompt: (outcome, worker, seconds). The outcome is "ok",
    "wrong" (the text came back different) or the error's class name; the seconds are those until
    the prompt failed, for a failure (closing the connection is not counted)."""
    client = Collect()
    seen: dict[str, Any] = {"worker": "?"}
    started = time.monotonic()

    async def run() -> dict[str, Any]:
        # A jar of its own: each session is another client (connections of one process share
        # their cookies by default, and a cookie-sticky balancer would pin them all to one worker).
        async with connect_agent(client, url, cookies=http.cookiejar.CookieJar()) as conn:
            await conn.agent.initialize(decode(models.InitializeRequest, {"protocolVersion": PROTOCOL_VERSION}))
            seen["worker"] = conn.transport.headers.get("x-acp-worker", "?")  # set by HAProxy
            session = await conn.agent.session_new(decode(models.NewSessionRequest, {"cwd": "/", "mcpServers": []}))
            request = {"sessionId": encode(session)["sessionId"], "prompt": [{"type": "text", "text": prompt}]}
            try:
                return encode(await conn.agent.session_prompt(decode(models.PromptRequest, request)))
            except Exception:
                seen["failed"] = time.monotonic() - started
                raise

    try:
        done = await asyncio.wait_for(run(), timeout)
    except Exception as exc:  # noqa: BLE001 - every failure is counted
        return type(exc).__name__, seen["worker"], seen.get("failed", time.monotonic() - started)
    ok = done["stopReason"] == "end_turn" and "".join(client.text) == prompt
    return ("ok" if ok else "wrong"), seen["worker"], time.monotonic() - started


def prompt_of(index: int, words: int) -> str:
    return " ".join(f"s{index}w{k}" for k in range(words))


async def wave(base: str, count: int, words: int, timeout: float, offset: int = 0) -> list[tuple[str, str, float, str]]:
    urls = [f"{'ws' if i % 2 == 0 else 'http'}://{base}/acp" for i in range(count)]
    runs = [one_session(url, prompt_of(offset + i, words), timeout) for i, url in enumerate(urls)]
    results = await asyncio.gather(*runs)
    return [(*result, url.split(":", 1)[0]) for result, url in zip(results, urls)]


def haproxy_stat(path: str) -> dict[str, int]:
    """Sessions served so far by each worker (HAProxy's ``stot``)."""
    with socket.socket(socket.AF_UNIX) as stats:
        stats.settimeout(5)
        stats.connect(path)
        stats.sendall(b"show stat\n")
        data = b""
        while chunk := stats.recv(65536):
            data += chunk
    lines = data.decode().splitlines()
    header = lines[0].lstrip("# ").split(",")
    totals = {}
    for line in lines[1:]:
        row = dict(zip(header, line.split(",")))
        if row.get("pxname") == "workers" and row.get("svname", "").startswith("w"):
            totals[row["svname"]] = int(row["stot"] or 0)
    return totals


def by_worker(results: list[tuple[str, str, float, str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, worker, _, scheme in results:
        key = f"{worker} {scheme}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def tally(results: list[tuple[str, str, float, str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for outcome, _, _, _ in results:
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def main() -> int:
    logging.basicConfig(level=logging.ERROR)  # a stream cut by the kill is expected
    env = {**os.environ, "PYTHONPATH": str(BINDINGS), "ACP_STUB_DELAY": str(DELAY)}
    folder = Path(tempfile.mkdtemp(prefix="acp-scale-"))
    ports = [free_port() for _ in range(WORKERS)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "acp_bindings.stub_agent:app", "--port", str(port), "--log-level", "error", "--no-access-log"],
            env=env, stderr=subprocess.DEVNULL,
        )
        for port in ports
    ]
    front = free_port()
    stats = str(folder / "stats.sock")
    servers = "\n".join(f"    server w{i + 1} 127.0.0.1:{port} cookie w{i + 1}" for i, port in enumerate(ports))
    (folder / "haproxy.cfg").write_text(HAPROXY.format(stats=stats, port=front, servers=servers))
    balancer = subprocess.Popen(["haproxy", "-f", str(folder / "haproxy.cfg")], stderr=subprocess.PIPE)
    failures: list[str] = []
    try:
        for port, worker in zip(ports, workers):
            wait_listening(port, worker)
        wait_listening(front, balancer)
        time.sleep(1.0)  # the health checks pass (rise 2, every 200 ms)
        base = f"127.0.0.1:{front}"
        # 1. 200 concurrent sessions, a short quick turn each (no delay matters: 8 words, 8 updates).
        started = time.monotonic()
        first = asyncio.run(wave(base, SESSIONS, 8, timeout=120))
        elapsed = time.monotonic() - started
        counts = tally(first)
        print(f"1. {SESSIONS} concurrent sessions (half WebSocket, half Streamable HTTP): {counts} in {elapsed:.1f} s")
        print(f"   sessions per worker: {by_worker(first)}")
        if counts != {"ok": SESSIONS}:
            failures.append(f"concurrent sessions: {counts}")
        # 2. Slow turns; kill w1 mid-turn.
        async def kill_wave() -> list[tuple[str, str, float, str]]:
            runs = asyncio.ensure_future(wave(base, 40, 40, timeout=60, offset=1000))  # 40 updates x 50 ms
            await asyncio.sleep(1.0)
            workers[0].send_signal(signal.SIGKILL)
            return await runs

        killed_at = time.monotonic()
        second = asyncio.run(kill_wave())
        on_dead = [r for r in second if r[1] == "w1"]
        others = [r for r in second if r[1] != "w1"]
        slowest_failure = max((r[2] for r in on_dead), default=0.0)
        print(f"2. 40 slow sessions, w1 killed after 1 s: on w1 {tally(on_dead)}, on the others {tally(others)}")
        print(f"   sessions per worker: {by_worker(second)}")
        print(f"   the last call failing on w1 failed {slowest_failure - 1.0:.2f} s after the kill; wave took {time.monotonic() - killed_at:.1f} s")
        if not on_dead or any(r[0] == "ok" for r in on_dead) or slowest_failure > 1.0 + 2.0:
            failures.append(f"clients of the killed worker: {[(r[0], round(r[2], 2)) for r in on_dead]}")
        if tally(others) != {"ok": len(others)}:
            failures.append(f"clients of live workers: {tally(others)}")
        time.sleep(1.0)  # the health check takes w1 out (fall 2, every 200 ms)
        before = haproxy_stat(stats)
        third = asyncio.run(wave(base, 40, 8, timeout=60, offset=2000))
        after = haproxy_stat(stats)
        landed = {name: after[name] - before.get(name, 0) for name in after}
        print(f"3. 40 new sessions after the kill: {tally(third)}; landed per worker: {landed}")
        if tally(third) != {"ok": 40} or landed.get("w1", 0) != 0:
            failures.append(f"new sessions: {tally(third)}, landed {landed}")
    finally:
        for process in (balancer, *workers):
            if process.poll() is None:
                process.terminate()
        for process in (balancer, *workers):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
