"""``connection.observe(observer)``: every message a connection sends and receives, with its
direction and session, in memory, over stdio and over WebSocket; an observer that fails or is
removed changes nothing on the wire."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import acp_bindings as acp
from acp_bindings import builders, models
from acp_bindings._runtime.wire._codec import decode
from acp_bindings.client import connect_agent
from support import docs
from support.remote import environment, running
from support.runtime import STUB_AGENT, child_env, make_workspace, run_async_tests

(EXAMPLE,) = docs.blocks("guides/debugging.md", "python", "In-process: `observe`")


class Seen(list):
    """An observer: keeps ``(direction, message, session_id)``."""

    def __call__(self, direction: str, message: dict[str, Any], session_id: str | None) -> None:
        self.append((direction, message, session_id))

    def methods(self, direction: str) -> list[tuple[str, Any, str | None]]:
        """(method, or "result of <method>" for a response, id, session) of each message one way."""
        names: dict[Any, str] = {}
        out = []
        for way, message, session in self:
            if "method" in message and "id" in message:
                names[(way, message["id"])] = message["method"]
            if way != direction:
                continue
            if "method" in message:
                out.append((message["method"], message.get("id"), session))
            else:
                other = "received" if way == "sent" else "sent"
                out.append(("result of " + names[(other, message["id"])], message["id"], session))
        return out


class Agent(acp.Agent):
    def __init__(self, seen: Seen) -> None:
        self.seen = seen

    def on_connect(self, connection: acp.AgentSideConnection) -> None:
        super().on_connect(connection)
        connection.observe(self.seen)  # before the first message is read

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=params.protocol_version)

    async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return models.NewSessionResponse(session_id="s-1")

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        update = builders.session_update.agent_message_chunk(builders.content_block.text("hi"))
        await self.client.session_update(session_id=params.session_id, update=update)
        return models.PromptResponse(stop_reason="end_turn")


async def _talk(client: acp.ClientSideConnection) -> None:
    await client.agent.initialize(models.InitializeRequest(protocol_version=1))
    session = await client.agent.session_new(models.NewSessionRequest(cwd="/", mcp_servers=[]))
    prompt = models.PromptRequest(session_id=session.session_id, prompt=[builders.content_block.text("a b")])
    assert (await client.agent.session_prompt(prompt)).stop_reason == "end_turn"


async def test_both_ends_see_every_message_with_its_direction_and_session_in_memory():
    agent_seen, client_seen = Seen(), Seen()
    async with acp.in_memory_pair(Agent(agent_seen), acp.Client()) as (_, client):
        client.observe(client_seen)
        await _talk(client)
    assert client_seen.methods("sent") == [
        ("initialize", 0, None),
        ("session/new", 1, None),
        ("session/prompt", 2, "s-1"),
    ]
    assert client_seen.methods("received") == [
        ("result of initialize", 0, None),
        ("result of session/new", 1, "s-1"),  # the session its result names
        ("session/update", None, "s-1"),
        ("result of session/prompt", 2, "s-1"),  # its request's session
    ]
    # what one end sent, the other received: the same messages, in the same order
    assert [m for d, m, _ in client_seen if d == "sent"] == [m for d, m, _ in agent_seen if d == "received"]
    assert [m for d, m, _ in agent_seen if d == "sent"] == [m for d, m, _ in client_seen if d == "received"]
    assert client_seen[0][1] == {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


async def test_an_observer_that_raises_or_is_removed_changes_nothing(caplog):
    calls = []

    def broken(direction: str, message: dict[str, Any], session_id: str | None) -> None:
        calls.append(direction)
        raise RuntimeError("observer bug")

    async with acp.in_memory_pair(Agent(Seen()), acp.Client()) as (_, client):
        client.observe(broken)
        await _talk(client)
        assert len(calls) == 7
        assert "the observer failed" in caplog.text
        client.observe(None)
        await client.agent.initialize(models.InitializeRequest(protocol_version=1))
    assert len(calls) == 7


async def test_a_broken_message_is_answered_and_the_observer_sees_only_json_objects():
    seen = Seen()
    (agent_reader, agent_writer), (peer_reader, peer_writer) = acp._rpc.memory_pipe()
    connection = acp.AgentSideConnection(Agent(seen), agent_reader, agent_writer)
    peer_writer.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize",\n{"jsonrpc":"2.0","id":2,"method":"nope"}\n')
    assert b"-32700" in await peer_reader.readline()
    assert b"-32601" in await peer_reader.readline()
    await connection.close()
    assert [(d, m.get("method"), m.get("error", {}).get("code")) for d, m, _ in seen] == [
        ("sent", None, -32700),
        ("received", "nope", None),
        ("sent", None, -32601),
    ]


class Reader(acp.Client):
    async def fs_read_text_file(self, params: models.ReadTextFileRequest) -> models.ReadTextFileResponse:
        return models.ReadTextFileResponse(content="from the client")


async def _prompt_with_a_file(client: acp.ClientSideConnection, cwd: str) -> None:
    capabilities = {"fs": {"readTextFile": True}}
    await client.agent.initialize(decode(models.InitializeRequest, {"protocolVersion": 1, "clientCapabilities": capabilities}))
    session = await client.agent.session_new(models.NewSessionRequest(cwd=cwd, mcp_servers=[]))
    link = builders.content_block.resource_link(name="hello", uri=f"file://{cwd}/hello.txt")
    prompt = models.PromptRequest(session_id=session.session_id, prompt=[builders.content_block.text("one two"), link])
    assert (await client.agent.session_prompt(prompt)).stop_reason == "end_turn"


def _check_a_prompt_with_a_file(seen: Seen) -> None:
    session = seen.methods("received")[1][2]
    assert session is not None
    received = seen.methods("received")
    assert [(m, s) for m, _, s in received if m == "fs/read_text_file"] == [("fs/read_text_file", session)]
    assert {s for m, _, s in received if m == "session/update"} == {session}
    assert seen.methods("sent")[-1][0] == "result of fs/read_text_file"
    assert seen.methods("sent")[-1][2] == session  # the session of the request it answers
    assert received[-1][0] == "result of session/prompt" and received[-1][2] == session


async def test_a_client_sees_every_message_of_a_prompt_over_stdio(tmp_path):
    seen = Seen()
    cwd = make_workspace(tmp_path)
    async with acp.spawn_agent(Reader(), *STUB_AGENT, env=child_env()) as client:
        client.observe(seen)
        await _prompt_with_a_file(client, str(cwd))
    _check_a_prompt_with_a_file(seen)


def test_a_client_sees_every_message_of_a_prompt_over_websocket(tmp_path):
    seen = Seen()
    cwd = make_workspace(tmp_path)

    async def main(port: int) -> None:
        async with connect_agent(Reader(), f"ws://127.0.0.1:{port}/acp") as client:
            client.observe(seen)
            await _prompt_with_a_file(client, str(cwd))

    with running("uvicorn", "acp_bindings.stub_agent:app", env=environment()) as port:
        asyncio.run(asyncio.wait_for(main(port), 60))
    _check_a_prompt_with_a_file(seen)


def test_the_guide_s_example_counts_what_the_agent_sees(tmp_path):
    script = tmp_path / "observe.py"
    script.write_text(EXAMPLE.text)
    done = subprocess.run([sys.executable, str(script)], env=child_env(), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[(('received', 'initialize'), 1), (('sent', 'response'), 1)]\n"


run_async_tests(globals())
