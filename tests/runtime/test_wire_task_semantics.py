"""Request handlers run in ordinary asyncio Tasks on every Python, in memory and over pipes:
``current_task()`` is an ``asyncio.Task`` listed in ``all_tasks()``, and timeouts, TaskGroup,
context variables and cancellation behave as in plain asyncio. Each interpreter runs
tests/support/task_semantics.py against the freshly generated package."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support import BINDINGS, ROOT
from support.interpreters import interpreters

SCRIPT = ROOT / "tests" / "support" / "task_semantics.py"
PYTHONS = interpreters()


def _observed(version: tuple[int, int]) -> dict:
    seen = {
        "task_type": "_asyncio.Task",
        "is_task": True,
        "in_all_tasks": True,
        "context_var": "unset",
        "wait_for": "timed out",
        "inner_cancel": "cancelled",
    }
    if version >= (3, 11):
        seen.update({"timeout": "timed out", "task_group": ["a", "b"], "cancelling": 0})
    return seen


@pytest.mark.parametrize("version", [(3, 10), (3, 11), (3, 13)], ids=lambda v: f"{v[0]}.{v[1]}")
def test_a_handler_runs_in_a_plain_task_in_memory_and_over_pipes(version, tmp_path: Path):
    python = PYTHONS.get(version)
    assert python is not None, f"no Python {version} found: {sorted(PYTHONS)}"
    env = {**os.environ, "PYTHONPATH": str(BINDINGS), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([python, str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    expected = _observed(version)
    cancelled = [1] if version >= (3, 11) else ["cancelled"]
    for where in ("memory", "pipes"):
        assert results[where] == {"first": expected, "second": expected, "cancelled": cancelled}, where
