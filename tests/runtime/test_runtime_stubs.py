"""The stub servers: ``python -m acp_bindings.stub_agent`` and ``stub_client``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import acp_bindings as acp
import pytest
from acp_bindings import models
from acp_bindings._runtime.wire._codec import decode, encode
from acp_bindings._stub_data import FEATURES
from acp_bindings.stub_agent import text_chunks
from acp_bindings.stub_client import StubClient
from support import docs
from support.runtime import (
    STUB_AGENT,
    STUB_CLIENT,
    child_env,
    make_workspace,
    run_async_tests,
)
from support.schema_instances import minimal


def _stub_client(cwd, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*STUB_CLIENT, *args], cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=60, check=False
    )


def test_stub_client_against_stub_agent_prints_updates_then_the_stop_reason(tmp_path):
    done = _stub_client(tmp_path, "--prompt", "one two  three", "--", *STUB_AGENT)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1] == {"stopReason": "end_turn"}
    updates = lines[:-1]
    assert {u["sessionId"] for u in updates} == {"stub-session-1"}
    assert [u["update"] for u in updates] == [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": word}}
        for word in ("one ", "two  ", "three")
    ]


@pytest.mark.parametrize(
    "agent, message",
    [
        (["no-such-agent-command"], "stub_client: cannot start the agent"),
        ([sys.executable, "-c", "pass"], "stub_client: the agent went away"),
        ([sys.executable, "-c", "print('not json', flush=True); import time; time.sleep(0.3)"], "stub_client: the agent went away"),
    ],
    ids=["missing-command", "agent-exits", "agent-speaks-nonsense"],
)
def test_stub_client_fails_with_a_message_when_the_agent_fails(tmp_path, agent, message):
    done = _stub_client(tmp_path, "--", *agent)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().splitlines()[-1].startswith(message)


def test_an_agent_that_dies_has_its_traceback_shown_once(tmp_path):
    agent = [sys.executable, "-c", "import sys; sys.stdin.readline(); raise RuntimeError('boom-42')"]
    done = _stub_client(tmp_path, "--", *agent)
    assert done.returncode == 1
    assert done.stderr.count("RuntimeError: boom-42") == 1, done.stderr  # passed through, not quoted again
    assert done.stderr.splitlines()[-1] == (
        "stub_client: the agent went away: the peer closed the connection: "
        "the process exited with status 1 (its stderr is above)"
    )


def test_text_chunks_are_runs_of_whole_words_that_join_back():
    assert text_chunks("") == []
    assert text_chunks("a b c") == ["a ", "b ", "c"]
    text = " ".join(f"word{i}" for i in range(1000))
    chunks = text_chunks(text)
    assert "".join(chunks) == text and len(chunks) <= 64
    assert all(c.split() and not c.startswith(" ") for c in chunks)


async def _with_stub_agent(client: acp.Client, *args: str):
    return acp.spawn_agent(client, *STUB_AGENT, *args, env=child_env())


@pytest.mark.parametrize("requested, answered", [(1, 1), (999, 1), (0, 1)])
async def test_stub_agent_negotiates_the_protocol_version(requested, answered):
    async with await _with_stub_agent(acp.Client()) as connection:
        response = await connection.agent.initialize(models.InitializeRequest(protocol_version=requested))
    assert response.protocol_version == answered
    capabilities = encode(response)["agentCapabilities"]
    assert capabilities["loadSession"] is True
    assert capabilities["promptCapabilities"] == {"image": True, "audio": True, "embeddedContext": True}


async def test_stub_agent_refuses_the_methods_it_does_not_advertise():
    """Every optional feature disabled, each request beyond the baseline answers -32601 (but
    ``authenticate`` of a method it does not list: -32602)."""
    special = {"initialize", "session/new", "session/prompt"}
    checked = 0
    disabled = [arg for feature in FEATURES for arg in ("--disable", feature)]
    async with await _with_stub_agent(acp.Client(), *disabled) as connection:
        await connection.agent.initialize(models.InitializeRequest(protocol_version=1))
        for method in acp.METHODS:
            if method.side != "agent" or method.kind != "request" or method.method in special:
                continue
            params = decode(getattr(models, method.params), minimal(method.params))
            with pytest.raises(acp.RequestError) as caught:
                await getattr(connection.agent, method.py_name)(params)
            # the minimal params name no auth method the agent lists
            assert caught.value.code == (-32602 if method.method == "authenticate" else -32601), method.method
            checked += 1
    assert checked >= 10


async def test_session_new_returns_fresh_ids_and_unknown_sessions_are_refused():
    async with await _with_stub_agent(acp.Client()) as connection:
        await connection.agent.initialize(models.InitializeRequest(protocol_version=1))
        new = models.NewSessionRequest(cwd="/", mcp_servers=[])
        first, second = await connection.agent.session_new(new), await connection.agent.session_new(new)
        assert first.session_id != second.session_id
        with pytest.raises(acp.RequestError) as caught:
            await connection.agent.session_prompt(
                decode(models.PromptRequest, {"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]})
            )
        assert caught.value.code == -32602


async def test_session_cancel_ends_a_running_prompt_with_cancelled():
    updates: list[str] = []

    class Canceller(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            updates.append(encode(params)["update"]["content"]["text"])
            if len(updates) == 2:
                await self.agent.session_cancel(models.CancelNotification(session_id=params.session_id))

    async with await _with_stub_agent(Canceller(), "--delay", "0.2") as connection:
        await connection.agent.initialize(models.InitializeRequest(protocol_version=1))
        session = await connection.agent.session_new(models.NewSessionRequest(cwd="/", mcp_servers=[]))
        prompt = {"sessionId": session.session_id, "prompt": [{"type": "text", "text": "a b c d e f g h i j"}]}
        response = await connection.agent.session_prompt(decode(models.PromptRequest, prompt))
    assert response.stop_reason == "cancelled"
    assert 2 <= len(updates) < 10


@pytest.mark.parametrize("can_read", [True, False])
async def test_stub_agent_reads_resource_links_only_from_clients_that_can(tmp_path, can_read):
    cwd = make_workspace(tmp_path)
    link = {"type": "resource_link", "uri": f"file://{cwd / 'hello.txt'}", "name": "hello.txt"}
    echoed: list[dict] = []

    class Reader(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            echoed.append(encode(params)["update"]["content"])

        async def fs_read_text_file(self, params: models.ReadTextFileRequest) -> models.ReadTextFileResponse:
            return models.ReadTextFileResponse(content=Path(params.path).read_text())

    async with await _with_stub_agent(Reader()) as connection:
        capabilities = {"fs": {"readTextFile": can_read, "writeTextFile": False}}
        await connection.agent.initialize(
            decode(models.InitializeRequest, {"protocolVersion": 1, "clientCapabilities": capabilities})
        )
        session = await connection.agent.session_new(models.NewSessionRequest(cwd=str(cwd), mcp_servers=[]))
        prompt = {"sessionId": session.session_id, "prompt": [link]}
        await connection.agent.session_prompt(decode(models.PromptRequest, prompt))
    assert echoed == ([{"type": "text", "text": "hello "}, {"type": "text", "text": "file\n"}] if can_read else [link])


# -- the stub client's answers, in process ------------------------------------------------------


class Caller(acp.Agent):
    """An agent that lets the test call the client through ``self.client``."""


async def _call_stub_client(stub: StubClient, method: str, params: dict):
    async with acp.in_memory_pair(Caller(), stub) as (agent_side, _):
        info = next(m for m in acp.METHODS if m.method == method)
        return await getattr(agent_side.client, info.py_name)(decode(getattr(models, info.params), params))


async def test_stub_client_reads_files_inside_the_cwd(tmp_path):
    cwd = make_workspace(tmp_path)
    (cwd / "lines.txt").write_text("1\n2\n3\n4\n")
    stub = StubClient(str(cwd))
    read = await _call_stub_client(stub, "fs/read_text_file", {"sessionId": "s", "path": str(cwd / "hello.txt")})
    assert read.content == "hello file\n"
    part = {"sessionId": "s", "path": str(cwd / "lines.txt"), "line": 2, "limit": 2}
    assert (await _call_stub_client(stub, "fs/read_text_file", part)).content == "2\n3\n"
    with pytest.raises(acp.RequestError) as caught:
        await _call_stub_client(stub, "fs/read_text_file", {"sessionId": "s", "path": str(cwd / "absent.txt")})
    assert caught.value.code == -32002


@pytest.mark.parametrize("where", ["outside", "relative", "symlink-out", "dotdot"])
async def test_stub_client_refuses_paths_outside_the_cwd(tmp_path, where):
    cwd = make_workspace(tmp_path)
    (cwd / "escape").symlink_to(tmp_path / "outside.txt")
    path = {
        "outside": str(tmp_path / "outside.txt"),
        "relative": "hello.txt",
        "symlink-out": str(cwd / "escape"),
        "dotdot": f"{cwd}/../outside.txt",
    }[where]
    stub = StubClient(str(cwd))
    for method, params in [
        ("fs/read_text_file", {"sessionId": "s", "path": path}),
        ("fs/write_text_file", {"sessionId": "s", "path": path, "content": "overwritten"}),
    ]:
        with pytest.raises(acp.RequestError) as caught:
            await _call_stub_client(stub, method, params)
        assert caught.value.code == -32602
    assert (tmp_path / "outside.txt").read_text() == "secret\n"


async def test_stub_client_writes_files_inside_the_cwd(tmp_path):
    cwd = make_workspace(tmp_path)
    params = {"sessionId": "s", "path": str(cwd / "new.txt"), "content": "written\n"}
    assert encode(await _call_stub_client(StubClient(str(cwd)), "fs/write_text_file", params)) == {}
    assert (cwd / "new.txt").read_text() == "written\n"


PERMISSION = {
    "sessionId": "s",
    "toolCall": {"toolCallId": "t"},
    "options": [
        {"optionId": "r1", "name": "No", "kind": "reject_once"},
        {"optionId": "a1", "name": "Yes", "kind": "allow_once"},
        {"optionId": "a2", "name": "Always", "kind": "allow_always"},
    ],
}


@pytest.mark.parametrize("reject, outcome", [(False, "a1"), (True, "r1")])
async def test_stub_client_answers_permission_with_the_first_allow_or_reject_option(tmp_path, reject, outcome):
    answer = await _call_stub_client(StubClient(str(tmp_path), reject=reject), "session/request_permission", PERMISSION)
    assert encode(answer) == {"outcome": {"outcome": "selected", "optionId": outcome}}
    only_allow = {**PERMISSION, "options": PERMISSION["options"][1:]}
    answer = await _call_stub_client(StubClient(str(tmp_path), reject=True), "session/request_permission", only_allow)
    assert encode(answer) == {"outcome": {"outcome": "cancelled"}}


async def test_stub_client_refuses_terminals_unless_allowed(tmp_path):
    create = {"sessionId": "s", "command": sys.executable, "args": ["-c", "print('hi from the terminal')"]}
    with pytest.raises(acp.RequestError) as caught:
        await _call_stub_client(StubClient(str(tmp_path)), "terminal/create", create)
    assert caught.value.code == -32601

    stub = StubClient(str(tmp_path), allow_terminal=True)
    async with acp.in_memory_pair(Caller(), stub) as (agent_side, _):
        client = agent_side.client
        terminal = await client.terminal_create(decode(models.CreateTerminalRequest, create))
        ids = {"sessionId": "s", "terminalId": terminal.terminal_id}
        status = await client.terminal_wait_for_exit(decode(models.WaitForTerminalExitRequest, ids))
        assert status.exit_code == 0
        output = await client.terminal_output(decode(models.TerminalOutputRequest, ids))
        assert output.output == "hi from the terminal\n" and output.truncated is False
        await client.terminal_release(decode(models.ReleaseTerminalRequest, ids))
        with pytest.raises(acp.RequestError):
            await client.terminal_output(decode(models.TerminalOutputRequest, ids))


async def test_stub_client_prints_each_update_as_one_json_line(tmp_path):
    out = io.StringIO()
    stub = StubClient(str(tmp_path), out=out)
    update = {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}}
    await stub.session_update(decode(models.SessionNotification, update))
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [update]


def test_stub_agent_keeps_stray_prints_off_the_wire(tmp_path):
    script = tmp_path / "noisy_agent.py"
    script.write_text(
        "import asyncio\n"
        "import acp_bindings as acp\n"
        "from acp_bindings.stub_agent import StubAgent\n"
        "class Noisy(StubAgent):\n"
        "    async def session_new(self, params):\n"
        "        print('a stray print')\n"
        "        return await super().session_new(params)\n"
        "asyncio.run(acp.run_agent(Noisy()))\n"
    )
    done = _stub_client(tmp_path, "--prompt", "still works", "--", sys.executable, str(script))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"stopReason": "end_turn"}
    assert "a stray print" in done.stderr and "a stray print" not in done.stdout



AGENT_EXAMPLE = docs.blocks("guides/writing-an-agent.md", "python")[0]


def test_the_guide_example_agent_serves_the_stub_client(tmp_path):
    code = AGENT_EXAMPLE.text
    assert "class EchoAgent(acp.Agent)" in code
    (tmp_path / "echo_agent.py").write_text(code)
    done = _stub_client(tmp_path, "--prompt", "from the readme", "--", sys.executable, str(tmp_path / "echo_agent.py"))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["update"]["content"] == {"type": "text", "text": "from the readme"}
    assert lines[-1] == {"stopReason": "end_turn"}


run_async_tests(globals())
