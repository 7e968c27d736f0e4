"""Processes: this process's stdio as the wire, and a child process started on two pipes.

Stdin of any kind is read or refused in one line, never waited on forever: a pipe or a socket is
read through the event loop; a regular file, ``/dev/null``, a terminal or another device in a
thread (the event loop cannot wait on them, and a terminal must not be made non-blocking); a
closed stdin is an input that ends at once, with the reason logged. Stdout is written the same
way. The inspector reads and writes through these too.

A child process starts in a session of its own (a process group it leads), so that stopping it
reaches what it started: an agent that runs its real work in a child of its own (a launcher, as
an npm entry is) cannot leave that child holding the pipes open, and no wait for it is unbounded
(:func:`stop_process`, :func:`signal_group`).
"""

from __future__ import annotations

import asyncio
import collections
import errno
import logging
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, BinaryIO

from ..wire._framing import READ_CHUNK, WIRE_LOG
from ._transports import MessageWriter, PipeReader

__all__ = [
    "ProcessReader",
    "describe_exit",
    "end_group",
    "read_stdin",
    "signal_group",
    "spawn",
    "start_on_pipes",
    "stderr_not_quoted",
    "stdio_streams",
    "stop_process",
    "take_stdout",
]

logger = logging.getLogger(WIRE_LOG)


class _WriteProtocol(asyncio.streams.FlowControlMixin):
    """The protocol of a pipe written through a :class:`asyncio.StreamWriter`: flow control, and
    ``writer.wait_closed()`` (which waits until everything written has gone out)."""

    def __init__(self) -> None:
        super().__init__()
        self._gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self._gone.done():
            self._gone.set_result(None)

    def _get_close_waiter(self, stream: object) -> asyncio.Future[None]:
        return asyncio.shield(self._gone)  # a waiter cancelled must not cancel the others


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``: a pipe or a socket."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def read_stdin(protocol: asyncio.Protocol) -> asyncio.ReadTransport | None:
    """Read this process's stdin into ``protocol`` (its ``data_received`` and ``eof_received``):
    through the event loop when stdin is a pipe or a socket (the read transport is returned),
    else in a thread (None). A closed stdin ends at once: ``connection_lost`` with the reason."""
    loop = asyncio.get_running_loop()
    try:
        if (
            sys.__stdin__ is None
        ):  # closed when Python started: descriptor 0 may be another file now
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        fd = os.dup(0)
    except OSError as exc:
        logger.warning("stdin is not open (%s): no input", exc.strerror)
        loop.call_soon(protocol.connection_lost, OSError(exc.errno, "stdin is not open"))
        return None
    source = os.fdopen(fd, "rb", buffering=0)
    if _pollable(fd):
        try:
            transport, _ = await loop.connect_read_pipe(lambda: protocol, source)
            return transport
        except (ValueError, OSError):
            logger.debug("stdin cannot be read through the event loop", exc_info=True)
    _pump_in_thread(loop, protocol, source)
    return None


def _pump_in_thread(
    loop: asyncio.AbstractEventLoop, protocol: asyncio.Protocol, source: Any
) -> None:
    def pump() -> None:
        try:
            while data := source.read(READ_CHUNK):
                loop.call_soon_threadsafe(protocol.data_received, data)
            loop.call_soon_threadsafe(protocol.eof_received)
        except OSError as exc:  # a terminal hung up, a device that cannot be read
            try:
                loop.call_soon_threadsafe(protocol.connection_lost, exc)
            except RuntimeError:
                pass
        except RuntimeError:  # the loop is closed: nobody reads any more
            pass

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


class FileWriter:
    """A file written directly (a regular file, ``/dev/null``, a terminal): a writer and a
    write transport that never wait."""

    def __init__(self, file: Any) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        self._file.write(data)

    async def drain(self) -> None:
        return None

    def get_write_buffer_size(self) -> int:
        return 0

    def close(self) -> None:
        self._file.close()

    def abort(self) -> None:
        self._file.close()

    def is_closing(self) -> bool:
        return bool(self._file.closed)


async def take_stdout(protocol_factory: Callable[[], asyncio.BaseProtocol]) -> tuple[Any, Any]:
    """This process's stdout for the wire alone: a private copy of its descriptor, and
    descriptor 1 pointed at stderr, so a stray ``print`` can never corrupt a message. Returns
    the write transport and protocol of a pipe or a socket, else a :class:`FileWriter` and None."""
    loop = asyncio.get_running_loop()
    if sys.stdout is not None:
        sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(fd, "wb", buffering=0)
    if _pollable(fd):
        try:
            return await loop.connect_write_pipe(protocol_factory, out)
        except (ValueError, OSError):
            logger.debug("stdout cannot be written through the event loop", exc_info=True)
    return FileWriter(out), None


async def stdio_streams() -> tuple[PipeReader, MessageWriter]:
    """This process's stdin and stdout as the wire (see :func:`read_stdin`, :func:`take_stdout`)."""
    loop = asyncio.get_running_loop()
    reader = PipeReader()
    await read_stdin(reader)
    transport, protocol = await take_stdout(_WriteProtocol)
    if protocol is None:
        return reader, transport
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def start_on_pipes(
    command: Sequence[str],
    *,
    stderr: int | None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[asyncio.subprocess.Process, BinaryIO, BinaryIO]:
    """Start ``command`` on two pipes of its own: the child, its stdout's read end and its
    stdin's write end, unbuffered, for the caller to connect to the loop with protocols of its
    own (``connect_read_pipe``), without the layer of asyncio's subprocess pipes."""
    child_stdin, to_child = os.pipe()
    from_child, child_stdout = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=child_stdin,
            stdout=child_stdout,
            stderr=stderr,
            cwd=cwd,
            env=env,
            start_new_session=_GROUPS,
        )
    except BaseException:
        os.close(to_child)
        os.close(from_child)
        raise
    finally:
        os.close(child_stdin)
        os.close(child_stdout)
    return process, os.fdopen(from_child, "rb", buffering=0), os.fdopen(to_child, "wb", buffering=0)


async def spawn(
    command: str,
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: int | None = None,
) -> tuple[asyncio.subprocess.Process, ProcessReader, asyncio.StreamWriter]:
    """Start ``command`` with its stdin and stdout connected to the returned reader and writer.

    With ``stderr=None`` the child's stderr is passed through to ours line by line, and its last
    lines are kept: when the child goes away, the reason every pending call fails with names its
    exit status and those lines (see :class:`ProcessReader`).
    """
    loop = asyncio.get_running_loop()
    process, stdout, stdin = await start_on_pipes(
        [command, *args],
        stderr=asyncio.subprocess.PIPE if stderr is None else stderr,
        cwd=cwd,
        env=env,
    )
    reader = ProcessReader(process)
    await loop.connect_read_pipe(lambda: reader, stdout)
    transport, protocol = await loop.connect_write_pipe(_WriteProtocol, stdin)
    return process, reader, asyncio.StreamWriter(transport, protocol, None, loop)


class ProcessReader(PipeReader):
    """Reads a child process's stdout; when it ends, says how the child went away.

    The reason pending calls fail with names the exit status (waiting up to ``grace`` seconds for
    the child to exit) and the last lines it wrote to a piped stderr, which is passed through.
    """

    TAIL_LINES = 10

    def __init__(self, process: asyncio.subprocess.Process, grace: float = 2.0) -> None:
        super().__init__()
        self.process = process
        self.grace = grace
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=self.TAIL_LINES)
        self._stderr_done: asyncio.Future[None] | None = None
        self._report_task: asyncio.Future[None] | None = None
        if process.stderr is not None:
            self._stderr_done = asyncio.ensure_future(self._pass_stderr(process.stderr))

    async def _pass_stderr(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self.stderr_tail.append(line.decode(errors="replace").rstrip("\r\n"))
            out = getattr(sys.stderr, "buffer", None)
            if out is not None:
                out.write(line)
            else:
                sys.stderr.write(line.decode(errors="replace"))
            sys.stderr.flush()

    def _lost(self, reason: str) -> None:
        if self._report_task is None:
            self._report_task = asyncio.ensure_future(self._report(reason))

    async def finished(self) -> None:
        """Wait until the child's end is reported and its stderr passed through. The report bounds
        its own wait (``grace`` seconds for the exit status), so it is never cut short; the
        stderr gets ``grace`` seconds (a process the child left behind may hold it open)."""
        if self._report_task is not None:
            await asyncio.gather(self._report_task, return_exceptions=True)
        if self._stderr_done is not None:
            await asyncio.wait([self._stderr_done], timeout=self.grace)
            if not self._stderr_done.done():
                self._stderr_done.cancel()
            await asyncio.gather(self._stderr_done, return_exceptions=True)

    async def _report(self, reason: str) -> None:
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self.process.wait())]
        if self._stderr_done is not None:
            waits.append(self._stderr_done)
        await asyncio.wait(waits, timeout=self.grace)
        PipeReader._lost(
            self, describe_exit(reason, self.process.returncode, tuple(self.stderr_tail))
        )


def describe_exit(reason: str, returncode: int | None, stderr_tail: tuple[str, ...]) -> str:
    """``reason`` with how the peer process ended: its exit status and the last lines of its stderr."""
    if returncode is None:
        text = f"{reason} (the process is still running)"
    elif returncode < 0:
        text = f"{reason}: the process was killed by signal {-returncode}"
    else:
        text = f"{reason}: the process exited with status {returncode}"
    if stderr_tail:
        text += _QUOTED + "\n".join(f"  {line}" for line in stderr_tail)
    return text


_QUOTED = "; the last lines of its stderr:\n"


def stderr_not_quoted(reason: str) -> str:
    """``reason`` (see :func:`describe_exit`) for one who saw the peer's stderr passed through:
    the lines it quotes from there left out, so they are not shown twice."""
    head, quoted, _ = reason.partition(_QUOTED)
    return f"{head} (its stderr is above)" if quoted else reason


_GROUPS = hasattr(os, "killpg")  # POSIX: a child leads a process group of its own
_POLL = 0.02  # seconds between looks at whether a child has exited
_KILL: int = getattr(signal, "SIGKILL", signal.SIGTERM)


def signal_group(process: asyncio.subprocess.Process, signum: int) -> None:
    """Send ``signum`` to ``process`` and every process of its group (what it started and did
    not move elsewhere); to the process alone where there are no process groups. A group
    already gone is no error."""
    try:
        if _GROUPS:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
    except (ProcessLookupError, PermissionError):
        pass


async def exited(process: asyncio.subprocess.Process, timeout: float) -> bool:
    """Whether ``process`` has exited within ``timeout`` seconds. Unlike ``process.wait()``, this
    does not wait for the pipes it shares with processes it left behind to close."""
    deadline = asyncio.get_running_loop().time() + timeout
    while process.returncode is None:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            return False
        await asyncio.sleep(min(_POLL, left))
    return True


def _group_left(process: asyncio.subprocess.Process) -> bool:
    """Whether a process of ``process``'s group still exists (``process`` itself included)."""
    try:
        os.killpg(process.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def end_group(process: asyncio.subprocess.Process, grace: float) -> None:
    """Once ``process`` has exited, end what it left behind in its group (a child holding its
    pipes open, whose end a reader of them would wait for in vain): terminated, then killed if
    it is still there after ``grace`` seconds. Nothing to do for a group already gone."""
    if not _GROUPS or not _group_left(process):
        return
    signal_group(process, signal.SIGTERM)
    deadline = asyncio.get_running_loop().time() + grace
    while _group_left(process) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(_POLL)
    signal_group(process, _KILL)


async def stop_process(process: asyncio.subprocess.Process, grace: float) -> None:
    """Stop ``process`` after its stdin closed, in bounded time: wait ``grace`` seconds for it to
    exit, then terminate its process group, then kill it; once it has exited, what it left behind
    in its group is ended too (:func:`end_group`)."""
    for signum in (None, signal.SIGTERM, _KILL):
        if signum is not None:
            signal_group(process, signum)
        if await exited(process, grace):
            break
    await end_group(process, grace)
    waiter = asyncio.ensure_future(process.wait())  # the child reaped
    done, _ = await asyncio.wait([waiter], timeout=grace)
    if not done:
        waiter.cancel()
