"""``run_agent`` (the stub agent) and the inspector read stdin of any kind, or end in one line,
and never hang: a pipe, ``/dev/null``, a closed descriptor, a terminal, a regular file, a socket."""

from __future__ import annotations

import json
import os
import pty
import socket
import subprocess
import sys

import pytest
from support.runtime import child_env

AGENT = [sys.executable, "-m", "acp_bindings.stub_agent"]
INSPECTED = [sys.executable, "-m", "acp_bindings.inspect", "--", *AGENT]
REQUEST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}).encode() + b"\n"
TIMEOUT = 30


def _answered(stdout: bytes) -> None:
    answers = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    assert [a["id"] for a in answers] == [1] and "result" in answers[0], stdout


@pytest.mark.parametrize("command", [AGENT, INSPECTED], ids=["agent", "inspector"])
def test_a_pipe_is_read(command):
    done = subprocess.run(command, input=REQUEST, capture_output=True, env=child_env(), timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    _answered(done.stdout)


@pytest.mark.parametrize("command", [AGENT, INSPECTED], ids=["agent", "inspector"])
def test_dev_null_is_an_input_that_ends_at_once(command):
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, env=child_env(), timeout=TIMEOUT,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"" and b"PermissionError" not in done.stderr, done.stderr


@pytest.mark.parametrize("command", [AGENT, INSPECTED], ids=["agent", "inspector"])
def test_a_closed_stdin_ends_at_once_with_one_line_saying_so(command):
    done = subprocess.run(command, preexec_fn=lambda: os.close(0), capture_output=True, env=child_env(),
                          timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.decode().splitlines()
    assert line.endswith("stdin is not open (Bad file descriptor): no input"), line
    assert done.stdout == b""


@pytest.mark.parametrize("command", [AGENT, INSPECTED], ids=["agent", "inspector"])
def test_a_regular_file_is_read(command, tmp_path):
    path = tmp_path / "input.ndjson"
    path.write_bytes(REQUEST)
    with path.open("rb") as stdin:
        done = subprocess.run(command, stdin=stdin, capture_output=True, env=child_env(), timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    _answered(done.stdout)


def test_a_terminal_is_read_and_its_hang_up_is_the_end():
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(AGENT, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())
        os.close(terminal)
        terminal = -1
        os.write(controller, REQUEST)
        line = process.stdout.readline()  # the answer, while the terminal stays open
        _answered(line)
    finally:
        if terminal >= 0:
            os.close(terminal)
        os.close(controller)  # hang up
    assert process.wait(timeout=TIMEOUT) == 0, process.stderr.read()
    process.stdout.close()
    process.stderr.close()


def test_a_socket_is_read():
    ours, theirs = socket.socketpair()
    with ours:
        with theirs:
            process = subprocess.Popen(AGENT, stdin=theirs, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())
        ours.sendall(REQUEST)
        ours.shutdown(socket.SHUT_WR)
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, stderr
    _answered(stdout)
