"""The prompt turn, before against after: two generated packages and the official SDK, round by round.

``before`` is the committed ``generated/acp_bindings`` at a git revision (``--before REV``),
``after`` the working tree's ``generated/acp_bindings`` (or ``--after FOLDER``). Both are copied
under names of their own into one temporary folder; each runs its own client in this process
against its own stub agent (``python -m before.stub_agent``, ``python -m after.stub_agent``), and
the SDK's client against its echo agent runs beside them (bench_prompt.py's candidates). The
connections stay open for the whole run and every round runs each once, in an order that rotates:
CPU per prompt turn (this process plus the agent's), medians and spreads, then after / before and
each package's sdk / ours.

Run: ``python bench/bench_prompt_ab.py --before REV [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_prompt  # noqa: E402
import bench_rpc  # noqa: E402
from _rounds import SDK  # noqa: E402
from bench_codec_ab import PACKAGE, SIDES, committed_package  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--before", required=True, metavar="REV", help="the git revision whose generated/ is the baseline")
    parser.add_argument("--after", type=Path, default=ROOT / "generated" / PACKAGE, metavar="FOLDER",
                        help="the package folder to compare (default: the working tree's generated/%(default)s)")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default %(default)s)")
    parser.add_argument("--turns", type=int, default=bench_prompt.TURNS, help="prompt turns per round (default %(default)s)")
    args = parser.parse_args()
    import shutil

    with tempfile.TemporaryDirectory() as tmp:
        committed_package(args.before, Path(tmp) / "before")
        shutil.copytree(args.after, Path(tmp) / "after")
        for side in SIDES:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(tmp) / side)], check=True)
        sys.path.insert(0, tmp)
        env = {**bench_rpc._env(), "PYTHONPATH": os.pathsep.join([tmp, str(bench_rpc.GENERATED)])}
        runners = [functools.partial(bench_prompt.run_generated, package=side, name=side, env=env) for side in SIDES]
        figures = asyncio.run(bench_prompt.measure_runs([*runners, bench_prompt.run_sdk], [*SIDES, SDK], args.rounds, args.turns))
    print(f"prompt turns (1 update each, sequential): before: generated/ at {args.before}; after: {args.after}; "
          f"median of {args.rounds} interleaved rounds of {args.turns} turns, Python {sys.version.split()[0]}")
    print(f"{'candidate':<10} {'us CPU/turn':>16} {'sdk/ours':>9}")
    sdk = figures[SDK].median
    for name, figure in figures.items():
        print(f"{name:<10} {figure.median:>9.4g} ±{figure.spread * 100:>3.0f}% {sdk / figure.median:>8.3f}x")
    print(f"after / before: {figures['after'].median / figures['before'].median:.3f}x")


if __name__ == "__main__":
    main()
