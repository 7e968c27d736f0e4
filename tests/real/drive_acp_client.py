"""Drive the `acp-client` library (PyPI) as its documentation shows: one `Agent` for an agent
command and a folder, one question, then `stop`. `make conformance-real` runs it with the
checking stub agent as the command.

    python drive_acp_client.py AGENT_COMMAND CWD PROMPT

Prints the answer; exit status 1 with the library's error on stderr when it raises.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from acp_client import Agent, AgentError


async def main(command: str, cwd: str, prompt: str) -> int:
    agent = Agent([command], Path(cwd))
    try:
        print(await agent.ask(prompt))
        return 0
    except AgentError as error:
        print(f"acp-client: {error}", file=sys.stderr)
        return 1
    finally:
        await agent.stop()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:4])))
