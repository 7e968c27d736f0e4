"""What the benchmarks share: interleaved rounds, medians and spread, one table of ratios.

Every candidate of a workload runs once per round, in an order that rotates from round to round,
so that a machine busy with something else slows all of them alike. Each figure is the median of
the rounds; its spread is (slowest - fastest) / median.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple


class Figure(NamedTuple):
    """The cost of one candidate on one workload (lower is better): median and spread."""

    median: float
    spread: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Figure:
        median = statistics.median(samples)
        return cls(median, (max(samples) - min(samples)) / median if median else 0.0)


class Row(NamedTuple):
    """One workload: the cost of each candidate (same unit), and the unit's name."""

    workload: str
    unit: str
    figures: dict[str, Figure]


def interleave(candidates: dict[str, Callable[[int], float]], rounds: int) -> dict[str, Figure]:
    """Run every candidate once per round (rotating the order); ``candidate(round)`` returns its
    cost. Returns each candidate's median and spread."""
    names = list(candidates)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            samples[name].append(candidates[name](r))
    return {name: Figure.of(values) for name, values in samples.items()}


def rotated(names: Sequence[str], r: int) -> list[str]:
    """``names`` in the order of round ``r`` (the same rotation as :func:`interleave`)."""
    return list(names[r % len(names) :]) + list(names[: r % len(names)])


def process_cpu(pid: int) -> float:
    """CPU seconds a live process has used so far, all its threads (Linux /proc: nanoseconds
    from schedstat where the kernel keeps it, else clock ticks from stat)."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        return total / 1e9
    except OSError:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


FLOOR = "floor"
OURS = "acpgen"
SDK = "sdk"


def table(rows: Iterable[Row]) -> str:
    """One table: each candidate's median (with spread), and acpgen's cost against the floor
    (lower is better, 1.00x is the floor) and the SDK's cost against acpgen's (higher is better)."""
    lines = [
        f"{'workload':<44} {'unit':<10} {'floor':>16} {'acpgen':>16} {'sdk':>16} {'vs floor':>9} {'sdk/ours':>9}"
    ]

    def cell(row: Row, name: str) -> str:
        f = row.figures.get(name)
        return f"{f.median:>9.4g} ±{f.spread * 100:>3.0f}%" if f else f"{'-':>15}"

    for row in rows:
        ours = row.figures[OURS].median
        floor = row.figures.get(FLOOR)
        sdk = row.figures.get(SDK)
        vs_floor = f"{ours / floor.median:>8.2f}x" if floor else f"{'-':>9}"
        vs_sdk = f"{sdk.median / ours:>8.2f}x" if sdk else f"{'-':>9}"
        lines.append(
            f"{row.workload:<44} {row.unit:<10} {cell(row, FLOOR):>16} {cell(row, OURS):>16} {cell(row, SDK):>16} {vs_floor} {vs_sdk}"
        )
    return "\n".join(lines)
