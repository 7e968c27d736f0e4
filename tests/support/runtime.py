"""Shared by the runtime tests: processes, raw peers, async tests.

The runtime tests exercise the freshly generated ``acp_bindings`` (see :data:`support.BINDINGS`),
in this process and in child processes that import it through ``PYTHONPATH``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

from support import BINDINGS, INTEROP, ROOT  # noqa: F401  (re-exported for the runtime tests)

STUB_AGENT = (sys.executable, "-m", "acp_bindings.stub_agent")
STUB_CLIENT = (sys.executable, "-m", "acp_bindings.stub_client")


def child_env() -> dict[str, str]:
    """The environment for child processes: the generated package importable."""
    path = os.pathsep.join([str(BINDINGS), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "PYTHONPATH": path}


def make_workspace(tmp_path: Path) -> Path:
    """A session cwd holding ``hello.txt``, next to an ``outside.txt`` no client may serve."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "hello.txt").write_text("hello file\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return cwd


class RawPeer:
    """The far end of an in-memory pipe, speaking raw bytes: for wire-level tests."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any) -> None:
        self.reader = reader
        self.writer = writer

    def send_bytes(self, data: bytes) -> None:
        self.writer.write(data)

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    async def receive(self, timeout: float = 5.0) -> Any:
        line = await asyncio.wait_for(self.reader.readline(), timeout)
        assert line, "the connection closed"
        return json.loads(line)

    async def request(self, request_id: Any, method: str, params: Any = None) -> Any:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await self.receive()


def run_async_tests(namespace: dict[str, Any], timeout: float = 60.0) -> None:
    """Make every ``async def test_*`` in a module run in its own event loop (with a timeout).

    Call it at the end of a test module: ``run_async_tests(globals())``.
    """
    for name, value in list(namespace.items()):
        if name.startswith("test_") and inspect.iscoroutinefunction(value):
            namespace[name] = _in_event_loop(value, timeout)


def _in_event_loop(test: Any, timeout: float) -> Any:
    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), timeout))

    return run
