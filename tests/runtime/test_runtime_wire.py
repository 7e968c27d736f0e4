"""Wire behaviour of the generated runtime: JSON-RPC errors, sizes, ordering, cancellation.

Most tests speak raw bytes to a generated connection through an in-memory pipe; the ones about
processes (a killed peer, many requests, ordering) use the stub agent over real OS pipes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import signal
import time

import acp_bindings as acp
import pytest
from acp_bindings import models
from acp_bindings._runtime.connection import _rpc
from acp_bindings._runtime.wire._codec import decode, encode
from support.runtime import STUB_AGENT, RawPeer, child_env, run_async_tests

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


class EchoAgent(acp.Agent):
    """An agent for wire tests: echoes prompts, fails on demand, sleeps on demand."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.cancelled: list[str] = []

    async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return models.NewSessionResponse(session_id="s-1")

    def session_known(self, session_id: str) -> bool:
        return True  # the wire tests prompt "s-1" without opening it first

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        method = params.method_id
        self.started.append(method)
        if method == "boom":
            raise RuntimeError("the handler broke")
        if method == "missing-resource":
            raise acp.RequestError.resource_not_found("file:///nowhere")
        if method == "needs-auth":
            raise acp.RequestError.auth_required()
        if method == "slow":
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled.append(method)
                raise
        return models.AuthenticateResponse()

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        for block in encode(params)["prompt"]:
            await self.client.session_update(
                decode(
                    models.SessionNotification,
                    {"sessionId": params.session_id, "update": {"sessionUpdate": "agent_message_chunk", "content": block}},
                )
            )
        return decode(models.PromptResponse, {"stopReason": "end_turn"})


async def _serve_raw(agent: acp.Agent, **options) -> tuple[acp.AgentSideConnection, RawPeer]:
    (agent_reader, agent_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.AgentSideConnection(agent, agent_reader, agent_writer, **options)
    return connection, RawPeer(peer_reader, peer_writer)


def _prompt(text: str, session_id: str = "s-1") -> dict:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def test_invalid_json_answers_parse_error_with_null_id():
    connection, peer = await _serve_raw(EchoAgent())
    peer.send_bytes(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
    reply = await peer.receive()
    assert reply["id"] is None and reply["error"]["code"] == -32700
    assert (await peer.request(2, "authenticate", {"methodId": "ok"}))["result"] == {}
    await connection.close()


@pytest.mark.parametrize(
    "message, expected_id",
    [
        ([{"jsonrpc": "2.0", "id": 1, "method": "authenticate", "params": {"methodId": "ok"}}], None),  # a batch
        (42, None),
        ({"jsonrpc": "1.0", "id": 7, "method": "authenticate", "params": {"methodId": "ok"}}, 7),
        ({"jsonrpc": "2.0", "id": 8}, 8),  # neither a request nor a response
        ({"jsonrpc": "2.0", "id": 9, "method": 5}, 9),
        ({"jsonrpc": "2.0", "id": 10, "method": "authenticate", "params": "text"}, 10),
        ({"jsonrpc": "2.0", "id": [1], "method": "authenticate"}, None),
    ],
    ids=["batch", "not-an-object", "wrong-version", "no-method", "method-not-a-string", "params-not-structured", "bad-id"],
)
async def test_not_a_request_object_answers_invalid_request(message, expected_id):
    connection, peer = await _serve_raw(EchoAgent())
    peer.send(message)
    reply = await peer.receive()
    assert reply["error"]["code"] == -32600
    assert reply["id"] == expected_id
    assert (await peer.request(2, "authenticate", {"methodId": "ok"}))["result"] == {}
    await connection.close()


@pytest.mark.parametrize("method", ["no/such_method", "session/update", "_vendor/unknown"])
async def test_unknown_method_answers_method_not_found(method):
    connection, peer = await _serve_raw(EchoAgent())
    reply = await peer.request(1, method, {})
    assert reply["error"]["code"] == -32601
    assert reply["error"]["data"] == {"method": method}
    await connection.close()


async def test_handler_not_overridden_answers_method_not_found():
    connection, peer = await _serve_raw(EchoAgent())
    reply = await peer.request(1, "session/list", {})
    assert reply["error"]["code"] == -32601
    await connection.close()


async def test_params_that_fail_to_decode_answer_invalid_params_with_the_path():
    connection, peer = await _serve_raw(EchoAgent())
    reply = await peer.request(1, "session/prompt", {"sessionId": "s-1", "prompt": [{"type": "text", "text": 5}]})
    error = reply["error"]
    assert error["code"] == -32602
    assert error["data"]["path"] == "/prompt/0/text"
    assert "string" in error["data"]["message"]
    reply = await peer.request(2, "authenticate", {})
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["path"] == "/methodId"
    await connection.close()


class ListingAgent(EchoAgent):
    """Lists no sessions, and keeps the params of each list it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.lists: list[models.ListSessionsRequest] = []

    async def session_list(self, params: models.ListSessionsRequest) -> models.ListSessionsResponse:
        self.lists.append(params)
        return models.ListSessionsResponse(sessions=[])


async def test_params_left_out_stand_for_an_empty_object_where_no_field_is_required():
    """JSON-RPC 2.0: a request's params "MAY be omitted". session/list's params have no required
    field: left out, they decode as ``{}``; session/prompt's have some: left out, -32602."""
    agent = ListingAgent()
    connection, peer = await _serve_raw(agent)
    peer.send({"jsonrpc": "2.0", "id": "a", "method": "session/list"})
    assert await peer.receive() == {"jsonrpc": "2.0", "id": "a", "result": {"sessions": []}}
    assert [encode(params) for params in agent.lists] == [{}]
    reply = await peer.request("b", "session/prompt")
    assert reply["error"]["code"] == -32602 and "got null" in reply["error"]["data"]["message"]
    reply = await peer.request("c", "session/list", {"cursor": 5})
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["path"] == "/cursor"
    await connection.close()


async def test_handler_exception_answers_internal_error_and_the_next_request_succeeds(caplog):
    connection, peer = await _serve_raw(EchoAgent())
    with caplog.at_level(logging.ERROR):
        reply = await peer.request(1, "authenticate", {"methodId": "boom"})
    assert reply["error"]["code"] == -32603
    assert reply["error"]["data"] == {"details": "RuntimeError: the handler broke"}  # its type and message, no traceback
    assert "Traceback" not in json.dumps(reply)
    assert "the handler broke" in caplog.text
    assert (await peer.request(2, "authenticate", {"methodId": "ok"})) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    await connection.close()


@pytest.mark.parametrize("method_id, code", [("missing-resource", -32002), ("needs-auth", -32000)])
async def test_typed_request_error_sends_its_own_code(method_id, code):
    connection, peer = await _serve_raw(EchoAgent())
    reply = await peer.request(1, "authenticate", {"methodId": method_id})
    assert reply["error"]["code"] == code
    assert (await peer.request(2, "authenticate", {"methodId": "ok"}))["result"] == {}
    await connection.close()


async def test_cancel_request_cancels_the_task_and_answers_request_cancelled():
    agent = EchoAgent()
    connection, peer = await _serve_raw(agent)
    peer.send({"jsonrpc": "2.0", "id": "slow-1", "method": "authenticate", "params": {"methodId": "slow"}})
    while not agent.started:
        await asyncio.sleep(0.01)
    peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "slow-1"}})
    reply = await peer.receive()
    assert reply["id"] == "slow-1" and reply["error"]["code"] == -32800
    assert agent.cancelled == ["slow"]
    assert (await peer.request(2, "authenticate", {"methodId": "ok"}))["result"] == {}
    await connection.close()


async def test_cancelling_a_call_sends_cancel_request_to_the_peer():
    agent = EchoAgent()
    async with acp.in_memory_pair(agent, acp.Client()) as (_, client_side):
        call = asyncio.ensure_future(client_side.agent.authenticate(models.AuthenticateRequest(method_id="slow")))
        while not agent.started:
            await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(100):
            if agent.cancelled:
                break
            await asyncio.sleep(0.01)
        assert agent.cancelled == ["slow"]


async def test_unhandled_notification_is_ignored_and_logged_at_debug(caplog):
    connection, peer = await _serve_raw(EchoAgent())
    with caplog.at_level(logging.DEBUG, logger="acp_bindings._rpc"):
        peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-1"}})
        peer.send({"jsonrpc": "2.0", "method": "no/such_notification", "params": {}})
        assert (await peer.request(1, "authenticate", {"methodId": "ok"}))["result"] == {}
    assert "session/cancel" in caplog.text and "no/such_notification" in caplog.text
    await connection.close()


async def test_response_to_unknown_id_is_logged_and_dropped(caplog):
    connection, peer = await _serve_raw(EchoAgent())
    with caplog.at_level(logging.WARNING):
        peer.send({"jsonrpc": "2.0", "id": 999, "result": {}})
        assert (await peer.request(1, "authenticate", {"methodId": "ok"}))["result"] == {}
    assert "unknown id 999" in caplog.text
    await connection.close()


async def test_ten_megabyte_prompt_is_echoed_over_os_pipes():
    text = ("0123456789abcdef" * 64 + "\n") * 10_000  # 10.25 MB, many lines
    received: list[str] = []

    class Collect(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            received.append(encode(params)["update"]["content"]["text"])

    async with acp.spawn_agent(Collect(), *STUB_AGENT, "--delay", "0", env=child_env()) as connection:
        await connection.agent.initialize(models.InitializeRequest(protocol_version=1))
        session = await connection.agent.session_new(models.NewSessionRequest(cwd="/", mcp_servers=[]))
        response = await connection.agent.session_prompt(
            decode(models.PromptRequest, _prompt(text, session.session_id))
        )
    assert response.stop_reason == "end_turn"
    assert len(text) > 10_000_000 and "".join(received) == text


async def test_message_above_the_maximum_is_refused_and_the_connection_survives():
    connection, peer = await _serve_raw(EchoAgent(), max_message_size=10_000)
    big = {"jsonrpc": "2.0", "id": 41, "method": "session/prompt", "params": _prompt("x" * 50_000)}
    peer.send(big)
    reply = await peer.receive()
    assert reply["id"] == 41 and reply["error"]["code"] == -32600
    assert "exceeds the maximum of 10000 bytes" in reply["error"]["data"]["details"]
    peer.send({"jsonrpc": "2.0", "id": 42, "method": "session/prompt", "params": _prompt("small")})
    update, reply = await peer.receive(), await peer.receive()
    assert update["params"]["update"]["content"]["text"] == "small"
    assert reply == {"jsonrpc": "2.0", "id": 42, "result": {"stopReason": "end_turn"}}
    await connection.close()


async def test_oversized_response_fails_only_its_own_call():
    class Big(acp.Agent):
        async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
            return models.AuthenticateResponse(meta={"blob": "x" * (100_000 if params.method_id == "big" else 1)})

    (a_reader, a_writer), (c_reader, c_writer) = _rpc.memory_pipe()
    agent_side = acp.AgentSideConnection(Big(), a_reader, a_writer)
    client_side = acp.ClientSideConnection(acp.Client(), c_reader, c_writer, max_message_size=50_000)
    with pytest.raises(acp.RequestError) as caught:
        await client_side.agent.authenticate(models.AuthenticateRequest(method_id="big"))
    assert "exceeds the maximum" in str(caught.value.data)
    small = await client_side.agent.authenticate(models.AuthenticateRequest(method_id="small"))
    assert small.meta == {"blob": "x"}
    await client_side.close()
    await agent_side.close()


async def test_peer_killed_mid_request_fails_the_pending_call_within_a_second():
    started = asyncio.Event()

    class Watch(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            started.set()

    async with acp.spawn_agent(Watch(), *STUB_AGENT, "--delay", "5", env=child_env()) as connection:
        await connection.agent.initialize(models.InitializeRequest(protocol_version=1))
        session = await connection.agent.session_new(models.NewSessionRequest(cwd="/", mcp_servers=[]))
        call = asyncio.ensure_future(
            connection.agent.session_prompt(decode(models.PromptRequest, _prompt("one two", session.session_id)))
        )
        await asyncio.wait_for(started.wait(), 10)
        assert connection.process is not None
        connection.process.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        with pytest.raises(acp.ConnectionClosed):
            await asyncio.wait_for(call, 5)
        assert time.monotonic() - killed_at < 1.0
        with pytest.raises(acp.ConnectionClosed):
            await connection.agent.session_new(models.NewSessionRequest(cwd="/", mcp_servers=[]))


async def test_a_thousand_concurrent_requests_are_all_answered():
    async with acp.spawn_agent(acp.Client(), *STUB_AGENT, "--delay", "0", env=child_env()) as connection:
        await connection.agent.initialize(models.InitializeRequest(protocol_version=1))
        calls = [
            connection.agent.session_new(models.NewSessionRequest(cwd=f"/{i}", mcp_servers=[])) for i in range(1000)
        ]
        sessions = await asyncio.gather(*calls)
    assert len({s.session_id for s in sessions}) == 1000


async def test_requests_run_concurrently_in_their_own_tasks():
    gate = asyncio.Event()
    running = 0

    class Gate(acp.Agent):
        async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
            nonlocal running
            running += 1
            if running == 200:
                gate.set()
            await gate.wait()  # only returns once all 200 are in flight at once
            return models.AuthenticateResponse()

    async with acp.in_memory_pair(Gate(), acp.Client()) as (_, client_side):
        calls = [client_side.agent.authenticate(models.AuthenticateRequest(method_id=str(i))) for i in range(200)]
        await asyncio.wait_for(asyncio.gather(*calls), 10)
    assert running == 200


async def test_updates_are_handled_before_the_prompt_response_over_many_runs():
    order: list[str] = []

    class Slow(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            await asyncio.sleep(random.random() / 1000)  # a handler that takes its time
            order.append(encode(params)["update"]["content"]["text"])

    async with acp.spawn_agent(Slow(), *STUB_AGENT, "--delay", "0", env=child_env()) as connection:
        await connection.agent.initialize(models.InitializeRequest(protocol_version=1))
        session = await connection.agent.session_new(models.NewSessionRequest(cwd="/", mcp_servers=[]))
        for run in range(50):
            order.clear()
            words = [f"r{run}w{i} " for i in range(20)]
            await connection.agent.session_prompt(
                decode(models.PromptRequest, _prompt("".join(words), session.session_id))
            )
            assert order == words, f"run {run}: the response overtook an update"


async def test_notifications_of_one_session_are_handled_in_arrival_order():
    handled: dict[str, list[int]] = {"a": [], "b": []}

    class Record(acp.Agent):
        async def session_cancel(self, params: models.CancelNotification) -> None:
            await asyncio.sleep(random.random() / 1000)  # a handler that takes its time
            assert params.meta is not None
            handled[params.session_id].append(params.meta["n"])

    connection, peer = await _serve_raw(Record())
    for number in range(100):
        for session in ("a", "b"):
            peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session, "_meta": {"n": number}}})
    for _ in range(500):
        if len(handled["a"]) == len(handled["b"]) == 100:
            break
        await asyncio.sleep(0.01)
    await connection.close()
    assert handled == {"a": list(range(100)), "b": list(range(100))}


async def test_an_answer_waits_for_the_notifications_of_every_session_that_came_before_it():
    release = asyncio.Event()
    handled: list[str] = []

    class Held(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            if params.session_id == "slow":
                await release.wait()
            handled.append(params.session_id)

    (client_reader, client_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.ClientSideConnection(Held(), client_reader, client_writer)
    peer = RawPeer(peer_reader, peer_writer)
    call = asyncio.ensure_future(connection.rpc.request("_x", {}))
    request = await peer.receive()
    for session in ("slow", "fast"):
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
        peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})
    peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": True}})
    for _ in range(100):
        if handled:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    assert handled == ["fast"] and not call.done()  # the slow session's update is not handled yet
    release.set()
    assert await asyncio.wait_for(call, 5) == {"ok": True}
    assert handled == ["fast", "slow"]
    await connection.close()


async def test_a_notification_handler_may_call_the_peer_and_await_the_answer():
    answers: list[str] = []

    class Asker(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            session = await self.agent.session_new(models.NewSessionRequest(cwd="/", mcp_servers=[]))
            answers.append(session.session_id)

    async with acp.in_memory_pair(EchoAgent(), Asker()) as (_, client_side):
        response = await asyncio.wait_for(
            client_side.agent.session_prompt(decode(models.PromptRequest, _prompt("hi"))), 5
        )
    assert response.stop_reason == "end_turn" and answers == ["s-1"]


async def test_extension_methods_reach_the_hooks_in_both_directions():
    seen: list[tuple[str, str, dict]] = []

    class ExtAgent(acp.Agent):
        async def ext_method(self, method: str, params: dict) -> dict:
            seen.append(("agent", method, params))
            return {"echo": params}

        async def ext_notification(self, method: str, params: dict) -> None:
            seen.append(("agent", method, params))

    class ExtClient(acp.Client):
        async def ext_method(self, method: str, params: dict) -> dict:
            if method != "_zed.dev/pong":
                return await super().ext_method(method, params)
            seen.append(("client", method, params))
            return {"n": 2}

    async with acp.in_memory_pair(ExtAgent(), ExtClient()) as (agent_side, client_side):
        assert await client_side.agent.ext_method("_zed.dev/ping", {"n": 1}) == {"echo": {"n": 1}}
        await client_side.agent.ext_notification("_zed.dev/note", {"k": "v"})
        assert await agent_side.client.ext_method("_zed.dev/pong", {"n": 1}) == {"n": 2}
        with pytest.raises(acp.RequestError) as caught:
            await agent_side.client.ext_method("_nobody/has", {})
        assert caught.value.code == -32601
        with pytest.raises(ValueError):
            await client_side.agent.ext_method("not-an-extension", {})
        for _ in range(100):
            if len(seen) == 3:
                break
            await asyncio.sleep(0.01)
    assert seen == [
        ("agent", "_zed.dev/ping", {"n": 1}),
        ("agent", "_zed.dev/note", {"k": "v"}),
        ("client", "_zed.dev/pong", {"n": 1}),
    ]



async def test_updates_and_the_answer_sent_just_before_the_peer_leaves_are_all_delivered():
    handled: list[str] = []

    class Slow(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            await asyncio.sleep(0.002)
            handled.append(encode(params)["update"]["content"]["text"])

    (client_reader, client_writer), (peer_reader, peer_writer) = _rpc.memory_pipe()
    connection = acp.ClientSideConnection(Slow(), client_reader, client_writer)
    peer = RawPeer(peer_reader, peer_writer)
    call = asyncio.ensure_future(connection.agent.session_prompt(decode(models.PromptRequest, _prompt("x"))))
    request = await peer.receive()
    for i in range(20):
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": str(i)}}
        peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1", "update": update}})
    peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "end_turn"}})
    peer_writer.close()  # the agent exits right after answering
    response = await asyncio.wait_for(call, 5)
    assert response.stop_reason == "end_turn"
    assert handled == [str(i) for i in range(20)]
    assert connection.is_closed
    await connection.close()


run_async_tests(globals())
