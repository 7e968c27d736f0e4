"""The stub peers under hostile input: the stub client's file service, its authentication, the
stub agent's capability gates, and integer fields given as 1.0 or 1E2."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import acp_bindings as acp
import pytest
from acp_bindings import models
from acp_bindings._runtime.wire._codec import decode, encode
from acp_bindings.stub_client import StubClient, auth_method
from support.runtime import (
    STUB_AGENT,
    STUB_CLIENT,
    child_env,
    make_workspace,
    run_async_tests,
)


def _read(path: str) -> models.ReadTextFileRequest:
    return decode(models.ReadTextFileRequest, {"sessionId": "s", "path": path})


def _write(path: str, content: str) -> models.WriteTextFileRequest:
    return decode(models.WriteTextFileRequest, {"sessionId": "s", "path": path, "content": content})


async def _code(call) -> int:
    with pytest.raises(acp.RequestError) as caught:
        await asyncio.wait_for(call, 10)
    return caught.value.code


# -- the file service ----------------------------------------------------------------------------


async def test_a_folder_swapped_for_a_link_between_check_and_use_never_leads_outside(tmp_path):
    cwd = make_workspace(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "f.txt").write_text("secret\n")
    (cwd / "sub").mkdir()
    (cwd / "sub" / "f.txt").write_text("inside\n")
    (cwd / "sub.link").symlink_to(outside)
    stop = threading.Event()

    def swap() -> None:  # "sub" is the real folder, then a link to the outside one, and so on
        while not stop.is_set():
            os.rename(cwd / "sub", cwd / "sub.real")
            os.rename(cwd / "sub.link", cwd / "sub")
            os.rename(cwd / "sub", cwd / "sub.link")
            os.rename(cwd / "sub.real", cwd / "sub")

    stub = StubClient(str(cwd))
    swapper = threading.Thread(target=swap)
    swapper.start()
    read_outside = 0
    try:
        for n in range(400):
            try:
                read = await stub.fs_read_text_file(_read(f"{cwd}/sub/f.txt"))
                read_outside += read.content == "secret\n"
            except acp.RequestError:
                pass
            try:
                await stub.fs_write_text_file(_write(f"{cwd}/sub/f.txt", f"write {n}\n"))
            except acp.RequestError:
                pass
    finally:
        stop.set()
        swapper.join()
        await stub.close()
    assert read_outside == 0
    assert (outside / "f.txt").read_text() == "secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]


async def test_links_inside_the_cwd_are_followed_and_links_out_are_refused(tmp_path):
    cwd = make_workspace(tmp_path)
    (cwd / "sub").mkdir()
    (cwd / "abs-link").symlink_to(cwd / "hello.txt")
    (cwd / "sub" / "rel-link").symlink_to("../hello.txt")
    (cwd / "sub" / "out-link").symlink_to("../../outside.txt")
    (cwd / "dir-link").symlink_to(tmp_path)
    stub = StubClient(str(cwd))
    for path in (f"{cwd}/abs-link", f"{cwd}/sub/rel-link", f"{cwd}/sub/../hello.txt", f"{cwd}/./sub//../hello.txt"):
        assert (await stub.fs_read_text_file(_read(path))).content == "hello file\n", path
    for path in (f"{cwd}/sub/out-link", f"{cwd}/dir-link/outside.txt", f"{cwd}/sub/../../outside.txt", f"{cwd}/.."):
        assert await _code(stub.fs_read_text_file(_read(path))) == -32602, path
        assert await _code(stub.fs_write_text_file(_write(path, "x"))) == -32602, path
    assert (tmp_path / "outside.txt").read_text() == "secret\n"
    await stub.close()


async def test_a_fifo_is_refused_at_once(tmp_path):
    cwd = make_workspace(tmp_path)
    os.mkfifo(cwd / "pipe")
    stub = StubClient(str(cwd))
    try:
        assert await _code(stub.fs_read_text_file(_read(f"{cwd}/pipe"))) == -32602
        assert await _code(stub.fs_write_text_file(_write(f"{cwd}/pipe", "x"))) == -32602
    finally:  # a thread stuck opening the FIFO (the failure this test is about) is let go
        for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
            try:
                os.close(os.open(cwd / "pipe", flags))
            except OSError:
                pass
        await stub.close()


async def test_a_write_that_cannot_be_encoded_leaves_the_file_as_it_was(tmp_path):
    cwd = make_workspace(tmp_path)
    stub = StubClient(str(cwd))
    assert await _code(stub.fs_write_text_file(_write(f"{cwd}/hello.txt", "a\ud800b"))) == -32602
    assert (cwd / "hello.txt").read_text() == "hello file\n"
    (cwd / "hello.txt").chmod(0o640)
    await stub.fs_write_text_file(_write(f"{cwd}/hello.txt", "new\n"))
    assert (cwd / "hello.txt").read_text() == "new\n"
    assert (cwd / "hello.txt").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in cwd.iterdir()) == ["hello.txt"]  # no temporary file left
    await stub.close()


@pytest.mark.parametrize("path", ["{cwd}/a\0b", "{cwd}/" + chr(0xD800), "{cwd}/" + chr(0xDCFF), "{cwd}/" + "d/" * 3000 + "f", "{cwd}/" + "n" * 5000])
async def test_a_path_the_system_cannot_take_is_refused_without_a_traceback(tmp_path, caplog, path):
    cwd = make_workspace(tmp_path)
    stub = StubClient(str(cwd))
    with caplog.at_level(logging.ERROR):
        async with acp.in_memory_pair(acp.Agent(), stub) as (agent_side, _):
            for call in (
                agent_side.client.fs_read_text_file(_read(path.format(cwd=cwd))),
                agent_side.client.fs_write_text_file(_write(path.format(cwd=cwd), "x")),
            ):
                assert await _code(call) in (-32602, -32002, -32603)
    assert "Traceback" not in caplog.text and not caplog.records
    assert sorted(p.name for p in cwd.iterdir()) == ["hello.txt"]


# -- authentication ------------------------------------------------------------------------------

AUTH_AGENT = '''
import asyncio, sys
import acp_bindings as acp
from acp_bindings import models, decode

class NeedsAuth(acp.Agent):
    method = None

    async def initialize(self, params):
        return decode(models.InitializeResponse, {"protocolVersion": 1, "authMethods": [
            {"id": "login", "name": "Log in"},
            {"type": "env_var", "id": "other-key", "name": "Other", "vars": [{"name": "STUB_TEST_OTHER"}]},
            {"type": "env_var", "id": "key", "name": "Key",
             "vars": [{"name": "STUB_TEST_KEY"}, {"name": "STUB_TEST_HINT", "optional": True}]},
        ]})

    async def authenticate(self, params):
        self.method = params.method_id
        return models.AuthenticateResponse()

    async def session_new(self, params):
        if self.method is None:
            raise acp.RequestError.auth_required()
        return models.NewSessionResponse(session_id="s")

    async def session_prompt(self, params):
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": self.method}}
        await self.client.session_update(decode(models.SessionNotification, {"sessionId": "s", "update": update}))
        return decode(models.PromptResponse, {"stopReason": "end_turn"})

asyncio.run(acp.run_agent(NeedsAuth()))
'''


def _stub_client(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "auth_agent.py").write_text(AUTH_AGENT)
    return subprocess.run(
        [*STUB_CLIENT, *args, "--", sys.executable, str(tmp_path / "auth_agent.py")],
        cwd=tmp_path, env={**child_env(), **(env or {})}, capture_output=True, text=True, timeout=60, check=False,
    )


@pytest.mark.parametrize(
    "args, env, method",
    [([], {"STUB_TEST_KEY": "k"}, "key"), (["--auth", "login"], {}, "login"), (["--auth", "key"], {}, "key")],
    ids=["env-var-set", "auth-option", "auth-option-env-var"],
)
def test_the_stub_client_authenticates_when_the_agent_requires_it(tmp_path, args, env, method):
    done = _stub_client(tmp_path, *args, env=env)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["update"]["content"]["text"] == method
    assert lines[-1] == {"stopReason": "end_turn"}


@pytest.mark.parametrize("args, message", [([], "pick one of its methods with --auth (login, other-key, key)"), (["--auth", "nope"], "--auth nope is not one")])
def test_the_stub_client_says_why_it_cannot_authenticate(tmp_path, args, message):
    env = {k: v for k, v in child_env().items() if not k.startswith("STUB_TEST_")}
    (tmp_path / "auth_agent.py").write_text(AUTH_AGENT)
    done = subprocess.run(
        [*STUB_CLIENT, *args, "--", sys.executable, str(tmp_path / "auth_agent.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert message in done.stderr.strip().splitlines()[-1]


def test_auth_method_takes_the_first_env_var_method_whose_variables_are_set():
    methods = [
        {"id": "agent"},
        {"type": "env_var", "id": "a", "vars": [{"name": "A"}, {"name": "B"}]},
        {"type": "env_var", "id": "b", "vars": [{"name": "B"}, {"name": "C", "optional": True}]},
    ]
    assert auth_method(methods, None, {"B": "1"}) == "b"
    assert auth_method(methods, None, {"A": "1", "B": "1"}) == "a"
    assert auth_method(methods, "agent", {}) == "agent"


# -- the stub agent ------------------------------------------------------------------------------


async def test_the_stub_agent_needs_initialize_and_an_absolute_cwd():
    async with acp.spawn_agent(acp.Client(), *STUB_AGENT, env=child_env()) as connection:
        new = models.NewSessionRequest(cwd="/", mcp_servers=[])
        assert await _code(connection.agent.session_new(new)) == -32600
        await connection.agent.initialize(models.InitializeRequest(protocol_version=1))
        relative = models.NewSessionRequest(cwd="some/where", mcp_servers=[])
        assert await _code(connection.agent.session_new(relative)) == -32602
        load = models.LoadSessionRequest(session_id="s", cwd="/", mcp_servers=[])
        assert await _code(connection.agent.session_load(load)) == -32602  # no session "s"
        assert (await connection.agent.session_new(new)).session_id == "stub-session-1"


# -- integers given as integer-valued numbers ----------------------------------------------------


def test_integer_fields_take_integer_valued_numbers_and_give_ints():
    request = decode(models.ReadTextFileRequest, {"sessionId": "s", "path": "/p", "line": 2.0, "limit": 1e2})
    assert (request.line, request.limit) == (2, 100)
    assert type(request.line) is int and type(request.limit) is int
    assert encode(request) == {"sessionId": "s", "path": "/p", "line": 2, "limit": 100}
    assert decode(models.InitializeRequest, json.loads('{"protocolVersion": 1E0}')).protocol_version == 1
    assert decode(acp.RequestId, 7.0) == 7 and type(decode(acp.RequestId, 7.0)) is int
    assert decode(int, 3.0) == 3
    for bad in (1.5, True, float("inf"), float("nan"), 70000.0, "1"):
        with pytest.raises(acp.DecodeError):
            decode(models.InitializeRequest, {"protocolVersion": bad})


run_async_tests(globals())
