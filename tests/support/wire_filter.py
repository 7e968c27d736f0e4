"""A filter on an agent's wire: the frame the sloppy and the rough agents share.

It runs ``AGENT_CMD`` as a child on pipes; a subclass reads the client's lines (``incoming``) and
the child's (``outgoing``), and passes, changes, answers or drops each. Run as a script, each
filter imports this module from its own folder; standard library only, so that it starts in
milliseconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Collection
from typing import Any


class WireFilter:
    """An agent run as a child, and the two pipes between it and the client."""

    NAME = "filter"  # the error messages of its own answers

    def __init__(self, command: list[str]) -> None:
        self.child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lock = threading.Lock()  # the client's stdout
        self.to_child = threading.Lock()  # the child's stdin

    def write(self, message: Any) -> None:
        """Write a message (or a line as it is) to the client, one line."""
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        if not line.endswith(b"\n"):
            line += b"\n"
        with self.lock:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    def forward(self, line: bytes) -> None:
        """Pass a line of the client's to the agent."""
        assert self.child.stdin is not None
        with self.to_child:
            self.child.stdin.write(line)
            self.child.stdin.flush()

    def reply(self, request: dict[str, Any], result: Any = None, error: int | None = None) -> None:
        """Answer ``request`` in the agent's stead."""
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
        if error is not None:
            answer["error"] = {"code": error, "message": self.NAME}
        else:
            answer["result"] = result
        self.write(answer)

    def outgoing(self, line: bytes) -> None:
        """A line of the agent's, on its way to the client."""
        raise NotImplementedError

    def pump_out(self) -> None:
        assert self.child.stdout is not None
        for line in self.child.stdout:
            self.outgoing(line)


def main(argv: list[str], script: str, what: str, known: Collection[str],
         start: Callable[[str, list[str]], int]) -> int:
    """``script WHAT[,WHAT...] -- AGENT_CMD [ARGS...]``: each WHAT (``name`` or ``name=value``)
    one of ``known``; ``start(spec, command)`` runs the filter."""
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write(f"usage: {script} {what}[,{what}...] -- AGENT_CMD [ARGS...]\n")
        return 2
    unknown = sorted({m.partition("=")[0] for m in argv[0].split(",") if m} - set(known))
    if unknown:
        sys.stderr.write(f"{script}: no such {what.lower()}: {', '.join(unknown)}\n")
        return 2
    return start(argv[0], argv[2:])
