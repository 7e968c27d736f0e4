"""A command the stub client runs for the agent (``terminal/create``): its output kept up to a
byte limit, in whole UTF-8 characters, and its exit status as the protocol reports it."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["Terminal"]


class Terminal:
    """A command started for the agent, its output kept up to a byte limit."""

    def __init__(self, process: asyncio.subprocess.Process, limit: int | None) -> None:
        self.process = process
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(1 << 16):
            self.output += chunk
            if self.limit is not None and len(self.output) > self.limit:
                del self.output[: len(self.output) - self.limit]
                # keep whole UTF-8 characters
                while self.output and (self.output[0] & 0xC0) == 0x80:
                    del self.output[0]
                self.truncated = True

    def exit_status(self) -> dict[str, Any] | None:
        code = self.process.returncode
        if code is None:
            return None
        return (
            {"exitCode": code, "signal": None}
            if code >= 0
            else {"exitCode": None, "signal": str(-code)}
        )
