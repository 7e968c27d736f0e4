"""Processes the tests start through ``rough_agent.py`` (which lists them in ``ROUGH_PIDS``)."""

from __future__ import annotations

import os
import signal
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped is not running)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def started_pids(listed: Path, end: bool = False) -> list[int]:
    """The process ids a rough agent wrote to ``listed``; ``end``: kill those still running."""
    pids = [int(line) for line in listed.read_text().split()] if listed.exists() else []
    for pid in pids if end else []:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    return pids
