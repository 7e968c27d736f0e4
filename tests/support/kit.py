"""Shared by the agent kit's tests (``tests/kit/``): the kit run in this process, its report read,
stub agents listening on the network, and the sloppy agent (``support/sloppy_agent.py``)."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support import ROOT
from support.remote import wait_listening

SLOPPY = ROOT / "tests" / "support" / "sloppy_agent.py"
#: The v2 stub's turns are instant by default: a delay lets a cancel reach one.
V2_DELAY = ("--delay", "0.05")


def kit_module(package: str, folder: Path) -> Any:
    """``PACKAGE.conformance``, imported from ``folder``."""
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(f"{package}.conformance")


def run_kit(module: Any, *args: str) -> tuple[int, dict[str, Any]]:
    """The kit's exit status and its JSON report."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = module.main(["--json", *args])
    return status, json.loads(out.getvalue())


def outcomes(report: dict[str, Any], outcome: str) -> set[str]:
    return {r["id"] for r in report["requirements"] if r["outcome"] == outcome}


def details(report: dict[str, Any]) -> str:
    """What did not pass, a line each: an assertion's message."""
    return "\n".join(f"{r['outcome']} {r['id']}: {r['detail']}" for r in report["requirements"]
                     if r["outcome"] != "passed")


def agents_import(monkeypatch: Any, *folders: Path) -> None:
    """Make ``folders`` importable by the agents the kit starts (they inherit the environment)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(str(f) for f in folders))


@contextlib.contextmanager
def listening(package: str, folder: Path, *args: str) -> Iterator[int]:
    """``python -m PACKAGE.stub_agent --listen 127.0.0.1:0 --token s3cret``: its port."""
    env = {**os.environ, "PYTHONPATH": str(folder)}
    command = [sys.executable, "-m", f"{package}.stub_agent", "--listen", "127.0.0.1:0", "--token", "s3cret", *args]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    try:
        assert process.stderr is not None
        said = re.search(r"ws://127\.0\.0\.1:(\d+)/acp", process.stderr.readline().decode())
        assert said, "the stub agent said nowhere it listens"
        port = int(said.group(1))
        wait_listening(port, process)
        yield port
    finally:
        process.terminate()
        process.communicate(timeout=10)


def sloppy_breaks() -> dict[str, str]:
    """The sloppy agent's breaks: name -> what it does."""
    sys.path.insert(0, str(SLOPPY.parent))
    try:
        import sloppy_agent
    finally:
        sys.path.remove(str(SLOPPY.parent))
    return dict(sloppy_agent.BREAKS)


def sloppy_command(breaks: list[str], agent: list[str]) -> list[str]:
    return [sys.executable, str(SLOPPY), ",".join(breaks), "--", *agent]
