"""The stubs' schema-free machinery unit-tested where it lives (acpgen/runtime/): the stub
client's file access confined to a folder (``_sandbox``) and the terminals it runs
(``_terminal``); the stub agents' echo (``_echo``) and their network flags (``_listen``); the
stub clients' command line (``_client_cli``)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

import pytest

from acpgen.runtime._runtime.connection._rpc import ConnectionClosed, RequestError
from acpgen.runtime._runtime.remote import _listen
from acpgen.runtime._runtime.stubs import _client_cli, _echo, _sandbox, _terminal


@pytest.fixture
def root(tmp_path):
    """A folder holding ``a/b.txt``, a link ``in`` to it, a link ``out`` to a file beside the
    folder and a FIFO ``pipe``; its descriptor and its path."""
    (tmp_path / "cwd" / "a").mkdir(parents=True)
    (tmp_path / "cwd" / "a" / "b.txt").write_text("hello\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    (tmp_path / "cwd" / "out").symlink_to(tmp_path / "secret.txt")
    (tmp_path / "cwd" / "in").symlink_to("a/b.txt")
    os.mkfifo(tmp_path / "cwd" / "pipe")
    fd = os.open(tmp_path / "cwd", os.O_RDONLY | os.O_DIRECTORY)
    yield fd, str(tmp_path / "cwd")
    os.close(fd)


def test_it_reads_a_file_inside_the_folder_through_dots_and_links(root):
    fd, path = root
    assert _sandbox.read_text(fd, path, ["a", "b.txt"]) == "hello\n"
    assert _sandbox.read_text(fd, path, ["a", "..", "a", ".", "b.txt"]) == "hello\n"
    assert _sandbox.read_text(fd, path, ["in"]) == "hello\n"


@pytest.mark.parametrize(
    ("parts", "why"),
    [
        (["..", "secret.txt"], "path is outside the session's cwd"),
        (["out"], "path leads outside the session's cwd"),
        (["pipe"], "path is not a regular file"),
        (["a", ""], "path names a directory, not a file"),
    ],
)
def test_it_refuses_what_lies_outside_or_is_no_file_and_says_why(root, parts, why):
    fd, path = root
    with pytest.raises(_sandbox.Refused, match=why):
        _sandbox.read_text(fd, path, parts)
    with pytest.raises(_sandbox.Refused, match=why):
        _sandbox.write_text(fd, path, parts, b"x")


def test_a_loop_of_links_is_refused_after_the_kernels_limit(root):
    fd, path = root
    os.symlink("loop", os.path.join(path, "loop"))
    with pytest.raises(_sandbox.Refused, match="too many levels of symbolic links"):
        _sandbox.read_text(fd, path, ["loop"])


def test_a_write_replaces_the_file_whole_keeps_its_mode_and_leaves_no_temporary(root):
    fd, path = root
    target = os.path.join(path, "a", "b.txt")
    os.chmod(target, 0o640)
    _sandbox.write_text(fd, path, ["a", "b.txt"], b"written\n")
    assert Path(target).read_text() == "written\n"
    assert os.stat(target).st_mode & 0o777 == 0o640
    _sandbox.write_text(fd, path, ["a", "new.txt"], b"new\n")
    assert sorted(os.listdir(os.path.join(path, "a"))) == ["b.txt", "new.txt"]
    with pytest.raises(_sandbox.Refused):
        _sandbox.write_text(fd, path, ["out"], b"x")  # never through a link out of the folder
    assert Path(path, "..", "secret.txt").read_text() == "secret\n"


def test_a_terminal_keeps_the_last_bytes_of_its_output_in_whole_characters():
    async def run() -> tuple[bytes, bool, object]:
        code = "import sys; sys.stdout.write('ab' + 'é' * 3); sys.exit(3)"
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
        terminal = _terminal.Terminal(process, limit=5)
        await process.wait()
        await terminal.reader
        return bytes(terminal.output), terminal.truncated, terminal.exit_status()

    output, truncated, status = asyncio.run(run())
    assert (output.decode("utf-8"), truncated, status) == ("éé", True, {"exitCode": 3, "signal": None})


@pytest.mark.parametrize("text", ["", "one", "one two  three ", " lead", "a " * 500, "x" * 1000])
def test_text_chunks_are_runs_of_whole_words_that_join_back(text):
    chunks = _echo.text_chunks(text)
    assert "".join(chunks) == text
    assert len(chunks) <= _echo.MAX_CHUNKS_PER_BLOCK
    assert all(chunk for chunk in chunks)
    assert _echo.text_chunks("a b c d", most=2) == ["a b ", "c d"]


def test_echoes_split_text_blocks_and_keep_the_others():
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    assert list(_echo.echoes([{"type": "text", "text": "hi there"}, image])) == [
        {"type": "text", "text": "hi "}, {"type": "text", "text": "there"}, image]


def test_listen_addresses_and_seconds_are_checked():
    assert _listen.listen_address("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert _listen.listen_address("[::1]:9") == ("::1", 9)
    assert _listen.listen_address("localhost:0") == ("localhost", 0)  # any free port
    for bad in ("8080", ":80", "host:-1", "host:65536", "host:x"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected HOST:PORT"):
            _listen.listen_address(bad)
    assert _listen.seconds("0.5") == 0.5
    for bad in ("0", "-1", "soon", "nan"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected seconds above 0"):
            _listen.seconds(bad)


def test_the_environment_sets_the_apps_delay_token_and_stall_timeout(monkeypatch):
    monkeypatch.setenv("ACP_STUB_DELAY", "0.25")
    monkeypatch.setenv("ACP_TOKEN", "")
    monkeypatch.setenv("ACP_STALL_TIMEOUT", "not a number")
    assert (_listen.env_delay(), _listen.env_token()) == (0.25, None)

    class App:
        stall_timeout = 0.0

    assert _listen.stalling(App()).stall_timeout == _listen._asgi.STALL_TIMEOUT
    monkeypatch.setenv("ACP_STALL_TIMEOUT", "5")
    monkeypatch.setenv("ACP_TOKEN", "s3cret")
    assert (_listen.stalling(App()).stall_timeout, _listen.env_token()) == (5.0, "s3cret")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--token", "t"], "argument --token: only with --listen"),
        (["--stall-timeout", "3"], "argument --stall-timeout: only with --listen"),
        (["--listen", "192.0.2.1:8080"], "argument --listen: 192.0.2.1 is beyond loopback: give a --token"),
    ],
)
def test_serve_refuses_flags_that_do_not_go_together(argv, message, capsys):
    parser = argparse.ArgumentParser(prog="stub")
    _listen.add_arguments(parser)
    served: list[str] = []
    with pytest.raises(SystemExit):
        _listen.serve(parser, parser.parse_args(argv), lambda: served.append("stdio"), lambda: served.append("app"))
    assert served == []
    assert capsys.readouterr().err.splitlines()[-1] == f"stub: error: {message}"


def test_serve_without_listen_serves_stdio():
    parser = argparse.ArgumentParser(prog="stub")
    _listen.add_arguments(parser)
    served: list[str] = []
    _listen.serve(parser, parser.parse_args([]), lambda: served.append("stdio"), lambda: served.append("app"))
    assert served == ["stdio"]


class _Told(Exception):
    pass


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (None, None),
        (_Told("no auth method"), "stub_client: no auth method"),
        (RequestError(-32603, "boom"), "stub_client: the agent answered with an error: "),
        (ConnectionClosed("gone"), "stub_client: the agent went away: gone"),
        (ConnectionRefusedError("refused"), "stub_client: cannot reach the agent: refused"),
        (FileNotFoundError("no-such-agent"), "stub_client: cannot start the agent: no-such-agent"),
        (ImportError("install websockets"), "stub_client: install websockets"),
        (ValueError("bad"), "stub_client: the agent sent an invalid response: bad"),
    ],
)
def test_a_stub_clients_turn_ends_in_an_exit_status_and_one_line(error, line, capsys):
    async def turn() -> None:
        if error is not None:
            raise error

    status = _client_cli.exit_status(turn(), (_Told,))
    err = capsys.readouterr().err
    assert (status, err.count("\n")) == ((0, 0) if line is None else (1, 1))
    assert line is None or err.startswith(line)


def test_a_stub_clients_parser_has_the_options_every_stub_client_has():
    args = _client_cli.parser("stub_client").parse_args(["--reject"])
    assert (args.prompt, args.reject) == ("Hello from the stub client.", True)
