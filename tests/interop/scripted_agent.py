"""A scripted ACP "agent" for the inspector tests: it reads and writes exactly what it is told.

Usage: python scripted_agent.py SCRIPT LOG

SCRIPT is a JSON list of steps: ``{"read": true}`` reads one line from stdin, ``{"write": TEXT}``
writes TEXT and a newline to stdout. Every byte read from stdin is appended to LOG; after the
last step it reads to the end of its input. It knows nothing of ACP: a test scripts both the
right messages and the wrong ones.
"""

from __future__ import annotations

import json
import sys

with open(sys.argv[1], encoding="utf-8") as handle:
    steps = json.load(handle)
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
with open(sys.argv[2], "wb") as log:
    for step in steps:
        if "read" in step:
            line = stdin.readline()
            log.write(line)
            log.flush()
            if not line:
                break
        else:
            stdout.write(step["write"].encode("utf-8") + b"\n")
            stdout.flush()
    log.write(stdin.read())
