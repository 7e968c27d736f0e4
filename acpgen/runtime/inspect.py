"""Sit between a client and an agent, pass every byte through, and check every message.

``python -m <package>.inspect [--transcript FILE] [--html FILE] [--strict] -- AGENT_CMD [ARGS...]``

A client starts this as if it were the agent. It starts the agent, forwards the bytes of both
directions unchanged (each chunk is written on before it is looked at), and checks each message
on the side with :class:`~._checks.Checker`, against this package's method table and models.
Each problem is one line on stderr::

    inspect: error: agent-to-client session/update id=- #/params/update: ...: missing ...

The agent's stderr passes through. ``--transcript FILE`` writes every message as one NDJSON line
``{"time": SECONDS, "direction": "client-to-agent", "message": {...}}`` (``time`` from a
monotonic clock, since the start; a line that is not JSON is kept as a string under ``raw``).
``--html FILE`` writes, once the connection has ended, one self-contained page of the session
(a sequence diagram with every message and problem, see ``_session_page``).
``--strict`` reports warnings as errors. The exit status is the agent's.

The agent runs in a process group of its own: a signal to the inspector goes to the whole group,
and once the agent has exited, what it left behind there (a child holding a pipe) is ended.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from . import methods, models
from ._runtime.inspector import _session_page
from ._runtime.inspector._checks import (
    AGENT_TO_CLIENT,
    CLIENT_TO_AGENT,
    Checker,
    Problem,
)
from ._runtime.transports._process import (
    end_group,
    read_stdin,
    signal_group,
    start_on_pipes,
    take_stdout,
)
from ._runtime.wire._codec import DecodeError, decode_salvaging

__all__ = ["Session", "Tap", "main", "make_checker", "run"]

_OUTPUT_GRACE = 2.0  # seconds to wait for the agent's output to end once it has exited
_FLUSH_AFTER = 0.05  # seconds a transcript line may wait in the buffer


def make_checker(*, strict: bool = False) -> Checker:
    """A checker for this package's schema."""
    return Checker(
        methods.METHODS,
        models,
        decode_salvaging,
        DecodeError,
        methods.CAPABILITIES,
        methods.PROTOCOL_VERSION,
        strict=strict,
    )


def report(problem: Problem) -> None:
    """Write one problem to stderr."""
    sys.stderr.write(f"inspect: {problem.format()}\n")
    sys.stderr.flush()


class Session:
    """Every message of the connection, both directions in the order they travelled, with its
    problems: what the ``--html`` page shows."""

    def __init__(self) -> None:
        self.entries: list[tuple[float, str, bytes, list[Problem]]] = []

    def add(self, time: float, direction: str, line: bytes, problems: list[Problem]) -> None:
        self.entries.append((time, direction, line, problems))

    def page(self, title: str, after: Sequence[Problem] = ()) -> str:
        entries = []
        for number, (at, direction, line, problems) in enumerate(self.entries, 1):
            text = line.decode("utf-8", "backslashreplace")
            try:
                message, raw = json.loads(text), None
            except ValueError:
                message, raw = None, text
            found = tuple(p.to_json() for p in problems)
            entry = _session_page.Entry(number, direction, round(at, 6), message, raw, found)
            entries.append(entry)
        return _session_page.render(
            entries,
            title=title,
            source="python -m " + __package__ + ".inspect",
            after=[p.to_json() for p in after],
        )


class Tap:
    """Splits the bytes of one direction into lines and checks each; never changes a byte."""

    def __init__(
        self,
        direction: str,
        checker: Checker,
        report: Callable[[Problem], None],
        transcript: BinaryIO | None = None,
        start: float = 0.0,
        session: Session | None = None,
    ) -> None:
        self.direction = direction
        self.checker = checker
        self.report = report
        self.transcript = transcript
        self.start = start
        self.session = session
        self._head = b'{"time":%.6f,"direction":"' + direction.encode() + b'",'
        self._parts: list[bytes] = []

    def feed(self, data: bytes) -> None:
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if self._parts:
                self._parts.append(data[start:end])
                line = b"".join(self._parts)
                self._parts = []
            else:
                line = data[start:end]
            self._line(line)
            start = end + 1
        if start < len(data):
            self._parts.append(data[start:])

    def close(self) -> None:
        """The direction ended: check a last line that had no newline."""
        if self._parts:
            line = b"".join(self._parts)
            self._parts = []
            self._line(line)

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        checked = self.checker.check_line(self.direction, line)
        for problem in checked.problems:
            self.report(problem)
        if self.transcript is None and self.session is None:
            return
        at = time.monotonic() - self.start
        if self.session is not None:
            self.session.add(at, self.direction, line, checked.problems)
        if self.transcript is None:
            return
        head = self._head % at
        if checked.parsed:  # JSON, so UTF-8: the line goes in as it was
            self.transcript.write(head + b'"message":' + line + b"}\n")
        else:
            raw = json.dumps(line.decode("utf-8", "backslashreplace"))
            self.transcript.write(head + b'"raw":' + raw.encode() + b"}\n")


class _Pipe(asyncio.Protocol):
    """One end of a pipe (ours to the client, or the agent's), as an asyncio protocol."""

    def __init__(self, on_data: Callable[[bytes], None], on_end: Callable[[], None]) -> None:
        self.on_data = on_data
        self.on_end = on_end
        self.on_pause: Callable[[], None] = _nothing
        self.on_resume: Callable[[], None] = _nothing

    def data_received(self, data: bytes) -> None:
        self.on_data(data)

    def eof_received(self) -> bool | None:
        self.on_end()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_end()

    def pause_writing(self) -> None:
        self.on_pause()

    def resume_writing(self) -> None:
        self.on_resume()


def _nothing() -> None:
    return None


class _Inspector:
    """Wires the client's pipes to the agent's, with a :class:`Tap` on each direction."""

    def __init__(
        self,
        checker: Checker,
        transcript: BinaryIO | None,
        session: Session | None = None,
    ) -> None:
        start = time.monotonic()
        self.checker = checker
        self.to_agent = Tap(CLIENT_TO_AGENT, checker, report, transcript, start, session)
        self.to_client = Tap(AGENT_TO_CLIENT, checker, report, transcript, start, session)
        self.transcript = transcript
        self.flush_pending = False
        self.loop = asyncio.get_running_loop()
        self.agent_stdin: Any = None  # the transport writing the agent's stdin
        self.agent_stdout: Any = None  # the transport reading the agent's stdout
        self.client_in: Any = None  # the transport reading our stdin
        self.client_out: Any = None  # the transport writing our stdout
        self.client_ended = False
        self.output_ended = self.loop.create_future()

    # -- client -> agent ---------------------------------------------------------------------

    def from_client(self, data: bytes) -> None:
        if self.agent_stdin is not None and not self.agent_stdin.is_closing():
            self.agent_stdin.write(data)
        self.to_agent.feed(data)
        self.flush_soon()

    def client_input_ended(self) -> None:
        if self.client_ended:
            return
        self.client_ended = True
        self.to_agent.close()
        if self.agent_stdin is not None and not self.agent_stdin.is_closing():
            self.agent_stdin.close()

    def pause_client(self) -> None:
        if self.client_in is not None:
            self.client_in.pause_reading()

    def resume_client(self) -> None:
        if self.client_in is not None:
            self.client_in.resume_reading()

    def agent_input_ended(self) -> None:
        """The agent closed its stdin: nothing more can reach it."""
        if self.client_in is not None:
            self.client_in.pause_reading()

    # -- agent -> client ---------------------------------------------------------------------

    def from_agent(self, data: bytes) -> None:
        if self.client_out is not None and not self.client_out.is_closing():
            self.client_out.write(data)
        self.to_client.feed(data)
        self.flush_soon()

    def flush_soon(self) -> None:
        """Write the transcript out within ``_FLUSH_AFTER`` seconds (not once per message)."""
        if self.transcript is not None and not self.flush_pending:
            self.flush_pending = True
            self.loop.call_later(_FLUSH_AFTER, self.flush)

    def flush(self) -> None:
        self.flush_pending = False
        if self.transcript is not None:
            self.transcript.flush()

    def pause_agent(self) -> None:
        if self.agent_stdout is not None:
            self.agent_stdout.pause_reading()

    def resume_agent(self) -> None:
        if self.agent_stdout is not None:
            self.agent_stdout.resume_reading()

    def agent_output_ended(self) -> None:
        if not self.output_ended.done():
            self.to_client.close()
            self.output_ended.set_result(None)

    def client_gone(self) -> None:
        """The client stopped reading our stdout: the agent's input ends too."""
        self.client_input_ended()


async def run(
    command: Sequence[str],
    *,
    transcript: BinaryIO | None = None,
    strict: bool = False,
    html: BinaryIO | None = None,
    checker: Callable[..., Any] = make_checker,
) -> int:
    """Inspect one connection: our stdin and stdout are the client's, ``command`` the agent.
    ``html``: where to write the page of the session once it has ended. ``checker(strict=...)``
    makes the checker (a package of several versions passes one that picks the version)."""
    loop = asyncio.get_running_loop()
    session = Session() if html is not None else None
    inspector = _Inspector(checker(strict=strict), transcript, session)
    sink = _Pipe(_ignore, inspector.client_gone)
    sink.on_pause, sink.on_resume = inspector.pause_agent, inspector.resume_agent
    inspector.client_out, _ = await take_stdout(lambda: sink)  # a stray print cannot reach it
    process = await _start_agent(inspector, command)
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, _forward_signal, process, signum)
    source = _Pipe(inspector.from_client, inspector.client_input_ended)
    inspector.client_in = await read_stdin(source)
    code = await process.wait()
    try:  # what the agent wrote before it exited; a process it left behind may hold the pipe
        await asyncio.wait_for(asyncio.shield(inspector.output_ended), _OUTPUT_GRACE)
    except asyncio.TimeoutError:
        inspector.to_client.close()
    await end_group(process, _OUTPUT_GRACE)  # what it left behind, holding a pipe or not
    ended = inspector.checker.finish()
    for problem in ended:
        report(problem)
    inspector.flush()
    if html is not None and session is not None:
        html.write(session.page(" ".join(command), ended).encode("utf-8"))
    inspector.client_out.close()
    if inspector.client_in is not None:
        inspector.client_in.close()
    return code if code >= 0 else 128 - code


async def _start_agent(inspector: _Inspector, command: Sequence[str]) -> asyncio.subprocess.Process:
    """Start the agent on two pipes, read and written by ``inspector``."""
    loop = asyncio.get_running_loop()
    process, stdout, stdin = await start_on_pipes(command, stderr=None)
    source = _Pipe(inspector.from_agent, inspector.agent_output_ended)
    inspector.agent_stdout, _ = await loop.connect_read_pipe(lambda: source, stdout)
    sink = _Pipe(_ignore, inspector.agent_input_ended)
    sink.on_pause, sink.on_resume = inspector.pause_client, inspector.resume_client
    inspector.agent_stdin, _ = await loop.connect_write_pipe(lambda: sink, stdin)
    return process


def _ignore(data: bytes) -> None:
    return None


def _forward_signal(process: asyncio.subprocess.Process, signum: int) -> None:
    """A signal to us goes to the agent's process group: what it started too."""
    signal_group(process, signum)


def main(
    argv: Sequence[str] | None = None,
    *,
    checker: Callable[..., Any] = make_checker,
    prog: str = f"python -m {__package__}.inspect",
) -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Pass an ACP connection through unchanged and check every message.",
    )
    parser.add_argument("--transcript", metavar="FILE", help="write every message to FILE (NDJSON)")
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="write a page of the session to FILE when it ends",
    )
    parser.add_argument("--strict", action="store_true", help="report warnings as errors")
    parser.add_argument(
        "command", nargs="+", metavar="AGENT_CMD", help="the agent command, after --"
    )
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        transcript = None
        if args.transcript:
            try:
                transcript = stack.enter_context(open(args.transcript, "wb"))
            except OSError as exc:
                print(
                    f"inspect: cannot write {args.transcript}: {exc.strerror}",
                    file=sys.stderr,
                )
                return 2
        html = None
        if args.html:
            try:
                html = _Replacing(args.html)
            except OSError as exc:
                print(
                    f"inspect: cannot write {args.html}: {exc.strerror}",
                    file=sys.stderr,
                )
                return 2
            stack.callback(html.finish)
        try:
            code = asyncio.run(
                run(
                    args.command,
                    transcript=transcript,
                    strict=args.strict,
                    html=html.file if html else None,
                    checker=checker,
                )
            )
        except OSError as exc:
            print(f"inspect: cannot start the agent: {exc}", file=sys.stderr)
            return 2
        if html is not None:
            html.done = True
        return code


class _Replacing:
    """A file written beside ``path`` that replaces it only once complete (``done``); else it
    is removed, and ``path`` is left as it was."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.done = False
        folder = os.path.dirname(os.path.abspath(path))
        fd, self.temporary = tempfile.mkstemp(
            dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp"
        )
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.temporary, 0o666 & ~umask)  # as open() would have made it
        self.file = os.fdopen(fd, "wb")

    def finish(self) -> None:
        """Put the file in place when it is complete (``done``), else remove it."""
        self.file.close()
        if self.done:
            os.replace(self.temporary, self.path)
        else:
            os.unlink(self.temporary)


if __name__ == "__main__":
    sys.exit(main())
