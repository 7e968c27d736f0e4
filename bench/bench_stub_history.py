"""The memory one long session holds in the stub agent: N prompt turns of one session, then the
resident set, with the kept history bounded (``_stub_sessions.HISTORY_TURNS``) against unbounded,
each in a fresh process, in one run. Also the session's ``session/load`` replay: how many updates.

    python bench/bench_stub_history.py [--turns N]      (or: make bench-stub-history)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: One process: ``argv[1]`` turns of one session against the stub agent (in-memory pipes, the
#: same JSON as over stdio), the history kept to ``argv[2]`` turns (0: the default); prints the
#: peak resident set in MB before and after the turns, and the updates a load replays.
RUN = """
import asyncio, resource, sys
import acp_bindings as acp
from acp_bindings import _stub_sessions, models
from acp_bindings.stub_agent import StubAgent
turns, kept = int(sys.argv[1]), int(sys.argv[2])
if kept:
    _stub_sessions.HISTORY_TURNS = kept
TEXT = "Please look at the function below and explain what it does, line by line, in plain words."

class Quiet(acp.Client):
    replayed = 0
    async def session_update(self, params):
        Quiet.replayed += 1

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

async def main():
    agent = StubAgent(delay=0)
    async with acp.in_memory_pair(agent, Quiet()) as (_, client):
        await client.agent.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await client.agent.session_new(cwd="/tmp", mcp_servers=[])
        start = rss()
        for n in range(turns):
            await client.agent.session_prompt(session_id=session.session_id, prompt=[models.Text(text=f"{n} {TEXT}")])
        end = rss()
        Quiet.replayed = 0
        await client.agent.session_load(session_id=session.session_id, cwd="/tmp", mcp_servers=[])
        print(start, end, Quiet.replayed, _stub_sessions.HISTORY_TURNS)

asyncio.run(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000, help="turns of the one session (default %(default)s)")
    args = parser.parse_args()
    env_path = str(ROOT / "generated")
    print(f"{args.turns} turns of one session in the stub agent; peak resident set, MB")
    for label, kept in (("bounded (default cap)", 0), ("unbounded", 10**9)):
        done = subprocess.run([sys.executable, "-c", RUN, str(args.turns), str(kept)], capture_output=True, text=True,
                              check=True, env={"PYTHONPATH": env_path, "PATH": ""})
        start, end, replayed, cap = done.stdout.split()
        shown = "all" if int(cap) >= 10**9 else f"{cap} turns"
        print(f"{label:<22} kept: {shown:<10} before {float(start):6.1f}  after {float(end):6.1f}"
              f"  grew {float(end) - float(start):6.1f}  load replays {replayed} updates")


if __name__ == "__main__":
    main()
