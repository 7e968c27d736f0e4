"""The prompt turn in instructions (callgrind), client and agent, for packages side by side.

CPU time on a machine shared with other work moves by tens of percent from one round to the
next; the instructions a process executes barely move. Each candidate, a client and its agent in
two processes as ``bench_prompt.py`` runs them (the generated client against its stub agent; with
``--sdk``, the official SDK's client against its echo agent), runs under ``valgrind
--tool=callgrind`` twice, N and 3N sequential prompt turns after a warm-up; the difference of the
totals over the 2N turns between them is the instructions per turn, start-up and imports
cancelled out, for the client and the agent each.

Candidates are the committed ``generated/acp_bindings`` at git revisions (``--rev REV``, any
number) and package folders (``--package FOLDER``; default: the working tree's ``generated/``).

Run: ``python bench/bench_prompt_instructions.py --rev main [--sdk] [--turns N]``; needs valgrind,
and takes a few minutes (valgrind runs a process about 50 times slower).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_prompt  # noqa: E402
import bench_rpc  # noqa: E402
from bench_codec_ab import PACKAGE, committed_package  # noqa: E402

SDK = "sdk"


def _callgrind(folder: str, name: str) -> list[str]:
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/{name}.out", f"--log-file={folder}/{name}.log"]


def run_client(package: str, turns: int, folder: str) -> None:
    """Run ``turns`` prompt turns after 20 of warm-up, the agent under callgrind (logging to ``folder``)."""

    async def hold(work: bench_prompt.Turns) -> None:
        for _ in range(turns):
            await work.turn()
        while work.received < turns:
            await asyncio.sleep(0)

    async def counted(run: object) -> None:
        async def warm(work: bench_prompt.Turns) -> None:
            for _ in range(20):
                await work.turn()
            work.received = 0
            await hold(work)

        await run(warm)  # type: ignore[operator]

    agent = [*_callgrind(folder, "agent"), sys.executable]
    if package == SDK:
        command = (*agent, str(HERE / "bench_prompt.py"), "--serve")
        asyncio.run(counted(functools.partial(bench_prompt.run_sdk, command=command)))
    else:
        command = (*agent, "-m", f"{package}.stub_agent", "--delay", "0")
        asyncio.run(counted(functools.partial(bench_prompt.run_generated, package=package, name=package, command=command)))


def _collected(log: Path) -> int:
    found = re.search(r"Collected : (\d+)", log.read_text())
    if found is None:
        raise RuntimeError(f"callgrind said no total in {log}:\n{log.read_text()[-2000:]}")
    return int(found.group(1))


def instructions(package: str, turns: int, path: str) -> tuple[int, int]:
    """The instructions callgrind counts in the client and in the agent, for ``turns`` turns."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "PYTHONPATH": path}
        command = [*_callgrind(folder, "client"), sys.executable, __file__, "--client", package, "--turns", str(turns), "--folder", folder]
        subprocess.run(command, env=env, check=True, capture_output=True)
        return _collected(Path(folder) / "client.log"), _collected(Path(folder) / "agent.log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--rev", action="append", default=[], help="a git revision whose generated/ is a candidate")
    parser.add_argument("--package", action="append", type=Path, default=[], metavar="FOLDER", help="a package folder")
    parser.add_argument("--sdk", action="store_true", help="the official SDK's client and echo agent too")
    parser.add_argument("--turns", type=int, default=200, help="N, the smaller run's turns (default %(default)s)")
    args = parser.parse_args()
    if args.client:
        return run_client(args.client, args.turns, args.folder)
    if shutil.which("valgrind") is None:
        sys.exit("bench_prompt_instructions: needs valgrind on the PATH (a Debian package: valgrind)")
    packages = args.package or ([] if args.rev else [ROOT / "generated" / PACKAGE])
    with tempfile.TemporaryDirectory() as tmp:
        names = []
        for i, rev in enumerate(args.rev):
            committed_package(rev, Path(tmp) / f"rev{i}")
            names.append((f"rev{i}", rev))
        for i, folder in enumerate(packages):
            shutil.copytree(folder, Path(tmp) / f"folder{i}")
            names.append((f"folder{i}", str(folder)))
        subprocess.run([sys.executable, "-m", "compileall", "-q", tmp], check=True)
        if args.sdk:
            names.append((SDK, "agent-client-protocol"))
        path = os.pathsep.join([tmp, str(bench_rpc.GENERATED)])
        print(f"{sys.version.split()[0]}: instructions per prompt turn (callgrind), {args.turns} and {3 * args.turns} turns")
        print(f"{'candidate':<40} {'client':>10} {'agent':>10} {'both':>10}")
        for name, label in names:
            small, large = instructions(name, args.turns, path), instructions(name, 3 * args.turns, path)
            client, agent = ((b - a) / (2 * args.turns) for a, b in zip(small, large))
            print(f"{label:<40} {client:>10.0f} {agent:>10.0f} {client + agent:>10.0f}", flush=True)


if __name__ == "__main__":
    main()
