"""The stubs over the network: ``stub_agent --listen HOST:PORT [--token]`` (and ``stub_agent:app``
under uvicorn), ``stub_client --url URL [--token]``, with the same output as over stdio; and the
one-line errors of bad flags, refusals and missing client libraries."""

from __future__ import annotations

import re
import selectors
import subprocess
import sys
from collections.abc import Iterator

import pytest
from acp_bindings._runtime.remote._asgi import Guard, is_loopback, listening_line
from support import docs
from support.remote import free_port, wait_listening
from support.runtime import STUB_AGENT, STUB_CLIENT, child_env

PROMPT = "one two  three"


def stub_client(cwd, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*STUB_CLIENT, "--prompt", PROMPT, *args], cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=60, check=False
    )


#: What a stub agent started with ``--listen`` says on stderr once it listens.
LISTENING = re.compile(r"stub_agent: listening on ws://127\.0\.0\.1:(\d+)/acp \(WebSocket\) and "
                       r"http://127\.0\.0\.1:\1/acp \(Streamable HTTP\)\n")


def first_line(process: subprocess.Popen[bytes], timeout: float = 20.0) -> str:
    """The first line ``process`` writes on stderr, within ``timeout`` seconds."""
    assert process.stderr is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        assert selector.select(timeout), f"nothing on stderr within {timeout} s"
    return process.stderr.readline().decode()


@pytest.fixture(scope="module")
def listening() -> Iterator[int]:
    """``stub_agent --listen 127.0.0.1:0 --token s3cret``: the port it says it took."""
    process = subprocess.Popen([*STUB_AGENT, "--listen", "127.0.0.1:0", "--token", "s3cret"], env=child_env(), stderr=subprocess.PIPE)
    try:
        line = first_line(process)
        said = LISTENING.fullmatch(line)
        assert said, line
        port = int(said.group(1))
        wait_listening(port, process)
        yield port
    finally:
        process.terminate()
        process.communicate(timeout=10)


def test_the_line_of_where_it_listens_names_every_address() -> None:
    guide = " ".join(docs.section("guides/remote-transports.md", "WebSocket and Streamable HTTP").split())
    assert f"(`stub_agent: {listening_line([('127.0.0.1', 8000)])}`;" in guide
    assert listening_line([("::1", 8000, 0, 0), ("127.0.0.1", 8000)]) == (
        "listening on ws://[::1]:8000/acp, ws://127.0.0.1:8000/acp (WebSocket) and "
        "http://[::1]:8000/acp, http://127.0.0.1:8000/acp (Streamable HTTP)"
    )


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_the_stub_client_drives_a_listening_stub_agent_as_it_drives_a_spawned_one(tmp_path, listening: int, scheme: str) -> None:
    spawned = stub_client(tmp_path, "--", *STUB_AGENT)
    assert spawned.returncode == 0, spawned.stderr
    remote = stub_client(tmp_path, "--url", f"{scheme}://127.0.0.1:{listening}/acp", "--token", "s3cret")
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == spawned.stdout
    assert spawned.stdout.count("\n") == 4  # three updates, then the stop reason


@pytest.mark.parametrize("scheme", ["ws", "http"])
@pytest.mark.parametrize("token", [None, "wrong"])
def test_the_stub_client_says_when_the_agent_refuses_it(tmp_path, listening: int, scheme: str, token: str | None) -> None:
    done = stub_client(tmp_path, "--url", f"{scheme}://127.0.0.1:{listening}/acp", *(["--token", token] if token else []))
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    said = "refused the token" if token else "requires a token"  # the same on both profiles
    assert line == f"stub_client: cannot reach the agent: {scheme}://127.0.0.1:{listening}/acp: the server {said} (HTTP 401)"


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_connect_agent_says_the_token_was_refused_on_both_profiles(listening: int, scheme: str) -> None:
    """A token sent in ``headers`` (not ``token=``) is named as one; over Streamable HTTP the
    pending ``initialize`` fails with the transport's words, not "reading failed"."""
    import asyncio

    import acp_bindings as acp

    url = f"{scheme}://127.0.0.1:{listening}/acp"

    async def connect() -> None:
        async with acp.connect_agent(acp.Client(), url, headers={"authorization": "Bearer wrong"}) as conn:
            await conn.agent.initialize(protocol_version=acp.PROTOCOL_VERSION)

    with pytest.raises(ConnectionError) as refused:
        asyncio.run(connect())
    assert str(refused.value) == f"{url}: the server refused the token (HTTP 401)"


def test_the_stub_app_under_uvicorn(tmp_path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "acp_bindings.stub_agent:app", "--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(command, env={**child_env(), "ACP_TOKEN": "t"}, stderr=subprocess.PIPE)
    try:
        wait_listening(port, process)
        done = stub_client(tmp_path, "--url", f"ws://127.0.0.1:{port}/acp", "--token", "t")
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == '{"stopReason":"end_turn"}'
    finally:
        process.terminate()
        process.communicate(timeout=10)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--listen", "0.0.0.0:8000"], "argument --listen: 0.0.0.0 is beyond loopback: give a --token"),
        (["--listen", "localhost"], "argument --listen: expected HOST:PORT, got 'localhost'"),
        (["--listen", "127.0.0.1:99999"], "argument --listen: expected HOST:PORT, got '127.0.0.1:99999'"),
        (["--token", "t"], "argument --token: only with --listen"),
        (["--stall-timeout", "1"], "argument --stall-timeout: only with --listen"),
        (["--listen", "127.0.0.1:8000", "--stall-timeout", "0"], "argument --stall-timeout: expected seconds above 0, got '0'"),
    ],
)
def test_stub_agent_flags_are_checked(args: list[str], message: str) -> None:
    done = subprocess.run([*STUB_AGENT, *args], env=child_env(), capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(f"error: {message}")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--url", "ws://127.0.0.1:1/acp", "--", "agent"], "give either --url URL or an agent command (after --)"),
        ([], "give either --url URL or an agent command (after --)"),
        (["--token", "t", "--", "agent"], "--token and --http2 go with --url"),
    ],
)
def test_stub_client_flags_are_checked(tmp_path, args: list[str], message: str) -> None:
    done = subprocess.run([*STUB_CLIENT, *args], cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(f"error: {message}")


BLOCK = "import sys; sys.modules[{name!r}] = None; from acp_bindings.stub_client import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize(
    ("url", "blocked", "message"),
    [
        ("ws://127.0.0.1:1/acp", "websockets", "stub_client: ws URLs need websockets>=13: pip install 'websockets>=13'"),
        ("http://127.0.0.1:1/acp", "httpx", "stub_client: http URLs need httpx: pip install 'httpx'"),
    ],
)
def test_a_missing_client_library_is_named(tmp_path, url: str, blocked: str, message: str) -> None:
    code = BLOCK.format(name=blocked)
    done = subprocess.run([sys.executable, "-c", code, "--url", url], cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [message]


def test_an_unreachable_agent_is_one_line(tmp_path) -> None:
    done = stub_client(tmp_path, "--url", f"http://127.0.0.1:{free_port()}/acp")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("stub_client: ") and "http://127.0.0.1:" in line


def test_without_a_token_only_loopback_is_served() -> None:
    def scope(server: str, host: str) -> dict:
        return {"server": (server, 8000), "headers": [(b"host", host.encode())]}

    open_guard = Guard()
    assert open_guard.refusal(scope("127.0.0.1", "127.0.0.1:8000")) is None
    assert open_guard.refusal(scope("::1", "[::1]:8000")) is None
    assert open_guard.refusal(scope("10.0.0.5", "10.0.0.5:8000")) == (401, "a bearer token is required beyond loopback")
    assert open_guard.refusal(scope("0.0.0.0", "box.example:8000")) == (401, "a bearer token is required beyond loopback")
    token = Guard("t", allowed_hosts=["agent.example"])
    bearer = [(b"authorization", b"Bearer t")]
    assert token.refusal({"server": ("0.0.0.0", 1), "headers": [(b"host", b"box.example"), *bearer]}) is None
    assert token.refusal({"server": ("10.0.0.5", 1), "headers": [(b"host", b"agent.example:1"), *bearer]}) is None
    assert token.refusal({"server": ("10.0.0.5", 1), "headers": [(b"host", b"evil.example:1"), *bearer]}) == (403, "Host not allowed")
    allowed = Guard(allowed_origins=["https://editor.example/"])
    assert allowed.refusal({**scope("127.0.0.1", "localhost"), "headers": [(b"host", b"localhost"), (b"origin", b"https://editor.example")]}) is None
    assert [is_loopback(h) for h in ("localhost", "127.0.0.2", "[::1]", "a.localhost", "10.0.0.1", "example.com")] == [True] * 4 + [False] * 2


REMOTE_AGENT_EXAMPLE, REMOTE_CLIENT_EXAMPLE = docs.blocks("guides/remote-transports.md", "python", "WebSocket and Streamable HTTP")


def test_the_guides_remote_examples_serve_under_uvicorn_and_connect(tmp_path) -> None:
    """The agent block under uvicorn, reached by the stub client and by the client block (its
    imports from the package root), with the port the test found free in place of 8000."""
    (tmp_path / "my_agent.py").write_text(REMOTE_AGENT_EXAMPLE.text)
    port = free_port()
    (tmp_path / "my_client.py").write_text(REMOTE_CLIENT_EXAMPLE.text.replace(":8000/", f":{port}/"))
    command = [sys.executable, "-m", "uvicorn", "my_agent:app", "--app-dir", str(tmp_path), "--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(command, env=child_env(), stderr=subprocess.PIPE)
    try:
        wait_listening(port, process)
        done = stub_client(tmp_path, "--url", f"http://127.0.0.1:{port}/acp", "--token", "s3cret")
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == '{"stopReason":"end_turn"}'
        refused = stub_client(tmp_path, "--url", f"ws://127.0.0.1:{port}/acp")
        assert refused.returncode == 1 and "the server requires a token (HTTP 401)" in refused.stderr
        connected = subprocess.run([sys.executable, "my_client.py"], cwd=tmp_path, env=child_env(), capture_output=True,
                                   text=True, timeout=60, check=False)
        assert (connected.returncode, connected.stdout) == (0, "protocol version 1\n"), connected.stderr
    finally:
        process.terminate()
        process.communicate(timeout=10)


def test_a_listening_stub_agent_exits_on_sigterm_with_streams_open() -> None:
    """uvicorn waits for every response to complete before it exits: the open event stream ends
    at SIGTERM, and the WebSocket is closed."""
    import threading
    import time

    import httpx
    from websockets.sync.client import connect as ws_connect

    port = free_port()
    process = subprocess.Popen([*STUB_AGENT, "--listen", f"127.0.0.1:{port}"], env=child_env(), stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, process)
        url = f"http://127.0.0.1:{port}/acp"
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
        connection = httpx.post(url, json=init, timeout=10).headers["acp-connection-id"]
        opened = threading.Event()

        def read() -> None:
            headers = {"Accept": "text/event-stream", "Acp-Connection-Id": connection}
            with httpx.Client(timeout=30) as http, http.stream("GET", url, headers=headers) as stream:
                opened.set()
                for _ in stream.iter_lines():
                    pass

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        socket = ws_connect(url.replace("http", "ws", 1), open_timeout=10)
        assert opened.wait(10)
        started = time.monotonic()
        process.terminate()
        process.wait(timeout=10)
        assert time.monotonic() - started < 5
        reader.join(10)
        assert not reader.is_alive()
        socket.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
