"""Where the suite's CPU goes: each test's CPU time (its process's and its children's) and wall time.

As a pytest plugin, each process of the run (each pytest-xdist worker) writes what it measured to
``FOLDER/<pid>.json``::

    ACPGEN_CPU_TIMES=FOLDER .venv/bin/python -m pytest -p support.cpu_times -n auto \\
        --maxprocesses 4 --dist loadfile --no-loadscope-reorder

and ``python tests/support/cpu_times.py FOLDER`` prints the modules by CPU, the most first, with the
total. The suite is CPU-bound (its workers keep every core busy), so CPU, not a test's wall time,
is what a change to the suite must cut.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

_measured: dict[str, tuple[float, float]] = {}


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cpu, wall = _cpu(), time.monotonic()
    yield
    _measured[item.nodeid] = (_cpu() - cpu, time.monotonic() - wall)


def pytest_sessionfinish(session: pytest.Session) -> None:
    folder = os.environ.get("ACPGEN_CPU_TIMES")
    if folder and _measured:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{os.getpid()}.json").write_text(json.dumps(_measured))


def main(folder: str) -> None:
    measured: dict[str, list[float]] = {}
    for path in sorted(Path(folder).glob("*.json")):
        measured.update(json.loads(path.read_text()))
    cpu: collections.Counter[str] = collections.Counter()
    wall: collections.Counter[str] = collections.Counter()
    for test, (spent, took) in measured.items():
        cpu[test.split("::")[0]] += spent
        wall[test.split("::")[0]] += took
    print(f"{len(measured)} tests: {sum(cpu.values()):.0f} s of CPU, {sum(wall.values()):.0f} s of wall time")
    print("   CPU s   wall s  module")
    for module, spent in cpu.most_common():
        print(f"{spent:8.1f} {wall[module]:8.1f}  {module}")


if __name__ == "__main__":
    main(sys.argv[1])
