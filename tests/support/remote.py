"""Real servers on 127.0.0.1 for the remote transport tests: an ASGI app under uvicorn or
hypercorn, or the TypeScript SDK's Node server, each on a free port, every wait bounded."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from support import BINDINGS, INTEROP

#: Seconds a server may take to start listening.
START_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment(**extra: str) -> dict[str, str]:
    """This environment, with the generated package and the interop peers importable."""
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = os.pathsep.join([str(BINDINGS), str(INTEROP), env.get("PYTHONPATH", "")])
    return env


def wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before listening")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listened on port {port} within {timeout} s")


def server_command(kind: str, app: str, port: int) -> list[str]:
    """The command serving ``app`` (``module:attribute``, or a Node script) with ``kind``."""
    if kind == "uvicorn":  # its default WebSocket implementation
        return [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    if kind == "uvicorn-websockets":  # uvicorn with its (older) websockets implementation
        return [*server_command("uvicorn", app, port), "--ws", "websockets"]
    if kind == "hypercorn":  # HTTP/1.1, h2c (prior knowledge) and WebSocket on one port
        return [sys.executable, "-m", "hypercorn", app, "--bind", f"127.0.0.1:{port}", "--log-level", "warning"]
    if kind == "granian":  # a Rust ASGI server: HTTP/1.1, HTTP/2 and WebSocket
        return [sys.executable, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", app]
    if kind == "node":
        return ["node", str(INTEROP / app), str(port)]
    raise ValueError(kind)


@contextlib.contextmanager
def running(kind: str, app: str, *, env: dict[str, str] | None = None, cwd: Path | None = None, log: Path | None = None) -> Iterator[int]:
    """Serve ``app`` with ``kind`` on a free port; yields the port, stops the server on exit.
    With ``log``, the server's output (stdout and stderr) goes to that file; without, its stderr
    is written out when it stops. Never a pipe: a server that fills one would stop serving."""
    port = free_port()
    with log.open("wb") if log is not None else tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            server_command(kind, app, port), env=env or environment(), cwd=cwd or INTEROP,
            stdout=out if log is not None else subprocess.DEVNULL, stderr=out,
        )
        try:
            wait_listening(port, process)
            yield port
        finally:
            stop(process)
            if log is None:
                out.seek(0)
                err = out.read().decode(errors="replace")
                if err.strip():
                    sys.stderr.write(err[-4000:])


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server: asked to end, then killed if it has not within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_client(command: Sequence[str], *, env: dict[str, str] | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), env=env or environment(), cwd=INTEROP, capture_output=True, text=True, timeout=timeout, check=False)
