"""Building messages by hand: the generated builders against the official ACP Python SDK's helpers.

What an agent does for every streamed chunk and tool call, built and turned into the wire form:

* chunk: ``session_update.agent_message_chunk(content_block.text(...))`` in a
  ``SessionNotification``, then ``to_json()``; baseline ``acp.update_agent_message_text(...)`` in
  ``acp.session_notification(...)``, then ``model_dump(by_alias=True, exclude_none=True)``;
* tool call: ``session_update.tool_call(...)`` with one content item, the same way; baseline
  ``acp.start_tool_call(...)`` with ``acp.tool_content(acp.text_block(...))``.

Both are measured round by round, interleaved, in this one process; each figure is the best round.
Prints messages per second of each and the ratio (generated / baseline; higher is better).

Run: ``make bench-build`` (or ``.venv/bin/python bench/bench_build.py``).
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))

import acp  # the baseline SDK
from acp_bindings import SessionNotification
from acp_bindings.builders import content_block, session_update, tool_call_content

TEXT = "I'll analyze your code for potential issues. Let me examine it..."


def chunk_generated() -> Any:
    update = session_update.agent_message_chunk(content_block.text(TEXT))
    return SessionNotification(session_id="sess_abc123", update=update).to_json()


def chunk_sdk() -> Any:
    note = acp.session_notification("sess_abc123", acp.update_agent_message_text(TEXT))
    return note.model_dump(by_alias=True, exclude_none=True)


def tool_generated() -> Any:
    content = [tool_call_content.content(content_block.text(TEXT))]
    update = session_update.tool_call(tool_call_id="call-1", title="Read", kind="read", status="pending", content=content)
    return SessionNotification(session_id="sess_abc123", update=update).to_json()


def tool_sdk() -> Any:
    content = [acp.tool_content(acp.text_block(TEXT))]
    update = acp.start_tool_call("call-1", "Read", kind="read", status="pending", content=content)
    return acp.session_notification("sess_abc123", update).model_dump(by_alias=True, exclude_none=True)


def best_rate(fn: Callable[[], Any], number: int, rounds: list[float]) -> None:
    rounds.append(number / timeit.timeit(fn, number=number))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000, help="messages per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    assert chunk_generated() == chunk_sdk(), "the two sides must build the same message"
    assert tool_generated() == tool_sdk(), "the two sides must build the same message"
    for name, ours, theirs in (("chunk", chunk_generated, chunk_sdk), ("tool call", tool_generated, tool_sdk)):
        generated: list[float] = []
        baseline: list[float] = []
        for _ in range(args.rounds):  # interleaved round by round
            best_rate(ours, args.number, generated)
            best_rate(theirs, args.number, baseline)
        print(f"{name:9}  generated {max(generated):>10,.0f}/s  baseline {max(baseline):>10,.0f}/s  "
              f"ratio {max(generated) / max(baseline):.2f}")


if __name__ == "__main__":
    main()
