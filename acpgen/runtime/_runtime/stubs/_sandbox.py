"""File access confined to a folder, the stub client's session cwd: a path is opened one
component at a time from the folder's descriptor, links resolved here without leaving it, and a
write goes to a temporary file renamed over the target. What it will not touch raises
:class:`Refused`, whose message says why."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat

__all__ = ["MAX_LINKS", "PATH_ERRORS", "Refused", "read_text", "resolve", "write_text"]


class Refused(Exception):
    """A path the file service will not touch: the message says why (answered -32602)."""


#: The errors of a path that cannot name a file (answered -32602, like a path outside the cwd).
PATH_ERRORS = frozenset({errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR, errno.EISDIR})
#: Symbolic links followed, at most, while resolving one path (as the kernel does).
MAX_LINKS = 40


def resolve(root: int, root_path: str, parts: list[str]) -> tuple[int, str]:
    """The directory holding the last of ``parts`` inside the directory ``root`` (an open
    descriptor, whose real path is ``root_path``), and the last part's name.

    The walk opens one component at a time relative to the directory before it, never following
    a link by path: ``..`` steps back (never above ``root``) and a symbolic link is read and
    resolved here, refused if it leads outside ``root``. A folder swapped for a link in between
    makes an open fail (``O_NOFOLLOW``), never leave ``root``. The caller closes the returned
    descriptor.
    """
    stack = [os.dup(root)]  # the directories walked into; stack[0] is root
    todo = list(reversed(parts))  # the components still to walk, the next one last
    links = 0
    try:
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) == 1:
                    raise Refused("path is outside the session's cwd")
                os.close(stack.pop())
                continue
            try:
                info = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
            except FileNotFoundError:
                if todo:
                    raise
                return stack.pop(), name  # a file yet to be written
            if stat.S_ISLNK(info.st_mode):
                links += 1  # a retry below counts too, so a path that keeps changing ends
                if links > MAX_LINKS:
                    raise Refused("too many levels of symbolic links")
                try:
                    target = os.readlink(name, dir_fd=stack[-1])
                except OSError as exc:
                    if exc.errno != errno.EINVAL:
                        raise
                    todo.append(name)  # no longer a link: it changed under us, look again
                    continue
                if target.startswith("/"):
                    if target != root_path and not target.startswith(root_path.rstrip("/") + "/"):
                        raise Refused("path leads outside the session's cwd")
                    for fd in stack[1:]:
                        os.close(fd)
                    del stack[1:]
                    target = target[len(root_path) :]
                todo.extend(reversed(target.split("/")))
                continue
            if not todo:
                return stack.pop(), name
            if not stat.S_ISDIR(info.st_mode):
                raise NotADirectoryError(f"{name} is not a directory")
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                stack.append(os.open(name, flags, dir_fd=stack[-1]))
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or links >= MAX_LINKS:
                    raise
                links += 1
                todo.append(name)  # no longer a folder: it changed under us, look again
        raise Refused("path names a directory, not a file")
    finally:
        for fd in stack:
            os.close(fd)


def read_text(root: int, root_path: str, parts: list[str]) -> str:
    folder, name = resolve(root, root_path, parts)
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(name, flags, dir_fd=folder)  # a FIFO opens at once, then is refused
    finally:
        os.close(folder)
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused("path is not a regular file")
        return handle.read().decode("utf-8")


def write_text(root: int, root_path: str, parts: list[str], data: bytes) -> None:
    """Write ``data`` atomically: a temporary file in the same folder, renamed over the name."""
    folder, name = resolve(root, root_path, parts)
    try:
        mode = 0o666
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISREG(info.st_mode):
                raise Refused("path is not a regular file")
            mode = stat.S_IMODE(info.st_mode)
        temporary = f".{name[:200]}.{secrets.token_hex(8)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temporary, flags, mode, dir_fd=folder)
        try:
            with open(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
    finally:
        os.close(folder)
