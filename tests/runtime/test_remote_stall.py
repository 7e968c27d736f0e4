"""An event stream's reader that stops reading is cut off after the stall timeout, and the rest of
its connection lives on, under uvicorn (``stub_agent --listen``), hypercorn and granian: a raw
socket (a small receive buffer) that reads the answer's head and then nothing more."""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import threading
import time
from typing import Any

import httpx
import pytest
from support.remote import free_port, server_command, stop, wait_listening
from support.runtime import STUB_AGENT, child_env

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
SSE = {"Accept": "text/event-stream"}
#: Updates enough to fill the sockets' buffers between the app and a reader that does not read.
BLOCKS = 4000


def read_stream(url: str, headers: dict[str, str], into: queue.Queue[Any]) -> None:
    with httpx.Client(timeout=30) as http, http.stream("GET", url, headers=headers) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                into.put(json.loads(line[6:]))


def answer(messages: queue.Queue[Any], request_id: int) -> Any:
    while True:
        message = messages.get(timeout=20)
        if message.get("id") == request_id and "method" not in message:
            return message


@pytest.mark.parametrize("server", ["listen", "hypercorn", "granian"])
def test_a_reader_that_stops_reading_is_cut_off_and_its_connection_lives_on(tmp_path, server: str) -> None:
    """``stub_agent --listen ... --stall-timeout 0.5`` (uvicorn), or ``stub_agent:app`` with
    ``ACP_STALL_TIMEOUT=0.5`` under hypercorn and granian."""
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    if server == "listen":
        command = [*STUB_AGENT, "--listen", f"127.0.0.1:{port}", "--stall-timeout", "0.5", "--delay", "0"]
    else:
        command = server_command(server, "acp_bindings.stub_agent:app", port)
    process = subprocess.Popen(command, env={**child_env(), "ACP_STALL_TIMEOUT": "0.5", "ACP_STUB_DELAY": "0"}, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}/acp"
    try:
        wait_listening(port, process)
        http = httpx.Client(timeout=20)
        connection = http.post(url, json=INIT).headers["acp-connection-id"]
        scoped = {"Acp-Connection-Id": connection}
        other: queue.Queue[Any] = queue.Queue()  # the connection's stream, read all along
        threading.Thread(target=read_stream, args=(url, {**SSE, **scoped}, other), daemon=True).start()
        new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}}
        assert http.post(url, json=new, headers=scoped).status_code == 202
        session = answer(other, 1)["result"]["sessionId"]

        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.settimeout(10)
        stalled.connect(("127.0.0.1", port))
        head = f"GET /acp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {connection}\r\nAcp-Session-Id: {session}\r\n\r\n"
        stalled.sendall(head.encode())
        got = b""
        while b"\r\n\r\n" not in got:
            got += stalled.recv(1024)
        assert got.startswith(b"HTTP/1.1 200")  # and from now on it reads nothing

        blocks = [{"type": "text", "text": f"{i:05}" + "x" * 2000} for i in range(BLOCKS)]
        prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": session, "prompt": blocks}}
        assert http.post(url, json=prompt, headers={**scoped, "Acp-Session-Id": session}).status_code == 202

        # Once cut off, the session's stream takes a new reader (409 while the stalled one holds
        # it), which gets what waited, up to the end of the turn.
        deadline = time.monotonic() + 30
        session_headers = {**SSE, **scoped, "Acp-Session-Id": session}
        while True:
            with http.stream("GET", url, headers=session_headers) as stream:
                if stream.status_code == 200:
                    lines = (json.loads(line[6:]) for line in stream.iter_lines() if line.startswith("data: "))
                    rest = next(message for message in lines if message.get("id") == 2)
                    break
                assert stream.status_code == 409 and time.monotonic() < deadline
            time.sleep(0.1)
        assert rest["result"]["stopReason"] == "end_turn"

        # The stalled reader's connection was closed: what the server had written comes, then
        # the end, without the chunked body's last chunk.
        received = bytearray(got)
        while chunk := stalled.recv(1 << 16):
            received += chunk
        stalled.close()
        assert not received.endswith(b"0\r\n\r\n")

        # The connection's own reader was not cut off: it gets the answer to the next request.
        assert http.post(url, json={**new, "id": 3}, headers=scoped).status_code == 202
        assert answer(other, 3)["result"]["sessionId"]
        http.delete(url, headers=scoped)
        http.close()
    finally:
        stop(process)
        log.close()
    assert "cut off an event stream's reader: it took nothing for 0.5 s" in (tmp_path / "server.log").read_text()
