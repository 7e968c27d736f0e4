"""The runtime's rough edges a new user meets first: extension params, a cancelled call's late
answer, a peer that dies at once, a stray print on the agent's stdout, tool-call ids across
turns, what an error says, the stub agent's answer before ``initialize``, and a socket server
that ends quietly."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import acp_bindings as acp
import pytest
from acp_bindings import models
from acp_bindings._runtime.connection import _rpc
from acp_bindings.session import SessionState, ToolCallTracker
from acp_bindings.stub_agent import StubAgent
from support.interpreters import interpreters
from support.runtime import RawPeer, child_env, run_async_tests


class Recorder(acp.Agent):
    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []

    async def ext_method(self, method: str, params: object) -> object:
        self.seen.append((method, params))
        return {"got": params}

    async def ext_notification(self, method: str, params: object) -> None:
        self.seen.append((method, params))


async def test_array_params_reach_the_extension_handlers_unchanged():
    agent = Recorder()
    async with acp.in_memory_pair(agent, acp.Client()) as (_, client_side):
        assert await client_side.agent.ext_method("_acme/list", [1, 2]) == {"got": [1, 2]}
        await client_side.agent.ext_notification("_acme/note", ["a", {"b": 1}])
        assert await client_side.agent.ext_method("_acme/map", {"k": "v"}) == {"got": {"k": "v"}}
    assert agent.seen == [("_acme/list", [1, 2]), ("_acme/note", ["a", {"b": 1}]), ("_acme/map", {"k": "v"})]


async def test_a_cancelled_calls_late_response_is_dropped_quietly(caplog):
    (ours_reader, ours_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.ClientSideConnection(acp.Client(), ours_reader, ours_writer)
    peer = RawPeer(peer_reader, peer_writer)
    with caplog.at_level(logging.DEBUG, logger="acp_bindings._rpc"):
        call = asyncio.ensure_future(connection.agent.authenticate(models.AuthenticateRequest(method_id="x")))
        request = await peer.receive()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        cancel = await peer.receive()
        assert cancel["method"] == "$/cancel_request" and cancel["params"] == {"requestId": request["id"]}
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})  # the peer answers anyway
        peer.send({"jsonrpc": "2.0", "id": 4242, "result": {}})  # an id we never used
        answered = asyncio.ensure_future(connection.agent.authenticate(models.AuthenticateRequest(method_id="y")))
        second = await peer.receive()
        peer.send({"jsonrpc": "2.0", "id": second["id"], "result": {}})
        assert isinstance(await answered, models.AuthenticateResponse)
    late = [r for r in caplog.records if f"cancelled request {request['id']}" in r.getMessage()]
    assert [r.levelno for r in late] == [logging.DEBUG]
    assert not [r for r in caplog.records if f"unknown id {request['id']}" in r.getMessage()]
    assert [r.levelno for r in caplog.records if "unknown id 4242" in r.getMessage()] == [logging.WARNING]
    await connection.close()


CRASHING_AGENT = "import sys; sys.stderr.write('starting\\nfatal: no API key\\n'); sys.exit(3)"


async def test_a_peer_that_exits_reports_its_status_and_stderr_tail(capfd):
    async with acp.spawn_agent(acp.Client(), sys.executable, "-c", CRASHING_AGENT, env=child_env()) as connection:
        with pytest.raises(acp.ConnectionClosed) as caught:
            await asyncio.wait_for(
                connection.agent.initialize(models.InitializeRequest(protocol_version=acp.PROTOCOL_VERSION)), 20
            )
    message = str(caught.value)
    assert "exited with status 3" in message, message
    assert message.endswith("stderr:\n  starting\n  fatal: no API key"), message
    assert "fatal: no API key" in capfd.readouterr().err  # still passed through


STRAY_PRINT_AGENT = """
import asyncio, sys
import acp_bindings as acp
print("Loading model weights...", flush=True)  # before run_agent: goes to the real stdout
asyncio.run(acp.run_agent(acp.Agent()))
"""


async def test_bytes_before_the_first_message_are_reported_as_what_they_are(caplog):
    with caplog.at_level(logging.DEBUG, logger="acp_bindings._rpc"):
        async with acp.spawn_agent(acp.Client(), sys.executable, "-c", STRAY_PRINT_AGENT, env=child_env()) as conn:
            answer = await asyncio.wait_for(  # the bare Agent answers initialize by default
                conn.agent.initialize(models.InitializeRequest(protocol_version=acp.PROTOCOL_VERSION)), 20
            )
            assert answer.agent_info and answer.agent_info.name == "Agent"  # the connection survived the noise
    noise = [r.getMessage() for r in caplog.records if "not JSON" in r.getMessage()]
    assert noise == [
        (
            "client: the peer wrote 24 bytes that are not JSON before its first message (a stray print?): "
            "b'Loading model weights...'"
        )
    ]
    assert not [r for r in caplog.records if "unknown id" in r.getMessage()]


PRINT_AND_EXIT_AGENT = "print('usage: my-agent --acp', flush=True); raise SystemExit(2)"


async def test_a_peer_that_prints_and_exits_says_so_in_the_connection_closed_message():
    command = (sys.executable, "-c", PRINT_AND_EXIT_AGENT)
    async with acp.spawn_agent(acp.Client(), *command, env=child_env()) as connection:
        with pytest.raises(acp.ConnectionClosed) as caught:
            await asyncio.wait_for(
                connection.agent.initialize(models.InitializeRequest(protocol_version=acp.PROTOCOL_VERSION)), 20
            )
    assert str(caught.value) == (
        "the peer closed the connection: the process exited with status 2; "
        "it sent no message, only text that is not JSON: b'usage: my-agent --acp'"
    )


async def test_an_error_with_no_id_is_reported_as_the_peers_error(caplog):
    (ours_reader, ours_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.AgentSideConnection(acp.Agent(), ours_reader, ours_writer)
    peer = RawPeer(peer_reader, peer_writer)
    with caplog.at_level(logging.WARNING, logger="acp_bindings._rpc"):
        peer.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        assert (await peer.request(1, "session/list", {}))["error"]["code"] == -32601
    assert [r.getMessage() for r in caplog.records] == [
        "agent: the peer reported an error about no request of ours: -32700 Parse error"
    ]
    await connection.close()


class TwoTurns(acp.Agent):
    """Reports a tool call in each turn, with a tracker per turn (as the README's example does)."""

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        tools = ToolCallTracker(self.client, params.session_id)
        call = await tools.start(f"turn of {params.session_id}")
        await tools.finish(call)
        return models.PromptResponse(stop_reason="end_turn")


class Keeping(acp.Client):
    def __init__(self) -> None:
        self.states: dict[str, SessionState] = {}

    async def session_update(self, params: models.SessionNotification) -> None:
        self.states.setdefault(params.session_id, SessionState()).apply(params)


async def test_tool_call_ids_are_unique_within_a_session_across_its_turns():
    client = Keeping()
    async with acp.in_memory_pair(TwoTurns(), client) as (_, conn):
        a, b = [(await conn.agent.session_new(cwd="/", mcp_servers=[])).session_id for _ in range(2)]
        for session_id in (a, a, b):
            await conn.agent.session_prompt(session_id=session_id, prompt=[])
    assert list(client.states[a].tool_calls) == ["call-1", "call-2"]
    assert list(client.states[b].tool_calls) == ["call-1"]


def test_a_request_errors_text_includes_its_data():
    error = acp.RequestError.invalid_params({"path": "/cwd"})
    assert str(error) == 'Invalid params (-32602): {"path": "/cwd"}'
    assert str(acp.RequestError.internal_error()) == "Internal error (-32603)"


async def test_the_stub_agent_says_initialize_first_to_any_request_before_it():
    """Every request before a successful initialize gets the same refusal, whatever the method
    (logout and session/list were once served, session/new refused)."""
    calls = {"session/prompt": ("session_prompt", {"session_id": "s", "prompt": []}),
             "session/new": ("session_new", {"cwd": "/", "mcp_servers": []}),
             "session/list": ("session_list", {}), "logout": ("logout", {})}
    async with acp.in_memory_pair(StubAgent(), acp.Client()) as (_, conn):
        for method, (name, params) in calls.items():
            with pytest.raises(acp.RequestError) as refused:
                await getattr(conn.agent, name)(**params)
            assert (refused.value.code, refused.value.data) == (
                -32600, {"details": "call initialize first", "method": method})


class Failing(acp.Agent):
    async def ext_method(self, method: str, params: object) -> object:
        return {}["s"]  # a bug: KeyError


async def test_a_handler_exception_reaches_the_peer_as_its_type_and_message_without_traceback(caplog):
    (ours_reader, ours_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.AgentSideConnection(Failing(), ours_reader, ours_writer)
    peer = RawPeer(peer_reader, peer_writer)
    with caplog.at_level(logging.ERROR, logger="acp_bindings._rpc"):
        reply = await peer.request(1, "_boom", {})
    assert reply["error"] == {"code": -32603, "message": "Internal error", "data": {"details": "KeyError: 's'"}}
    assert "Traceback" in caplog.text  # logged here, not sent
    await connection.close()


async def test_a_stray_line_of_text_is_logged_not_answered_and_a_broken_message_is(caplog):
    (ours_reader, ours_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.AgentSideConnection(Recorder(), ours_reader, ours_writer)
    peer = RawPeer(peer_reader, peer_writer)
    with caplog.at_level(logging.WARNING, logger="acp_bindings._rpc"):
        peer.send_bytes(b"Loading model weights...\n")
        assert (await peer.request(1, "_x", {}))["id"] == 1  # the first answer is the request's
        peer.send_bytes(b'{"jsonrpc": "2.0", "id": 2, "method": \n')
        assert (await peer.receive())["error"]["code"] == -32700
    assert "a stray print?" in caplog.text
    await connection.close()


#: A connection served as ``asyncio.start_server``'s handler, the server closed once the client is
#: done, as most servers are written: nothing waits for the handler's task but the server.
SOCKET_SERVER = """
import asyncio
import acp_bindings as acp

class Hello(acp.Agent):
    async def initialize(self, params):
        return acp.models.InitializeResponse(protocol_version=params.protocol_version)

async def serve(reader, writer):
    async with acp.AgentSideConnection(Hello(), reader, writer) as conn:
        await conn.wait_closed()

async def main():
    async with await asyncio.start_server(serve, "127.0.0.1", 0) as server:
        reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
        async with acp.ClientSideConnection(acp.Client(), reader, writer) as conn:
            await conn.agent.initialize(protocol_version=acp.PROTOCOL_VERSION)

asyncio.run(main())
"""


def test_a_socket_server_closed_after_its_client_ends_with_its_handler_done():
    """Python 3.12's ``Server.wait_closed`` waits for the connections' transports; the handler's
    close must not outlive its transport, or the loop's end cancels it and Python before 3.13 logs
    the cancelled task with a traceback. Under 3.12, and the newest Python found."""
    found = interpreters()
    assert (3, 12) in found, f"no Python 3.12 found: {sorted(found)}"
    for python in dict.fromkeys([found[(3, 12)], found[max(found)]]):
        for _ in range(3):
            done = subprocess.run([python, "-c", SOCKET_SERVER], env=child_env(), capture_output=True, text=True,
                                  timeout=60, check=False)
            assert (done.returncode, done.stderr) == (0, ""), python


run_async_tests(globals())
