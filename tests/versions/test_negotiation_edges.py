"""Negotiation to the edges, and the root stub client of a package of several versions.

The root stub client (``both``: the TypeScript SDK's v1 and v2 schemas) asks for the newest
version and completes a turn with an agent of v1 alone and one of v2 alone, with no flags: on
stdio the Python SDK's agent (v1) and the TypeScript SDK's v2 app, over ``--url`` (a WebSocket,
Streamable HTTP) our stub agents of one version (``--listen``). The
router of the spec's v1.7.0 pair (whose draft defines batches and no refusal) answers a v1
``initialize`` asking for version 0 with version 1 (the v2 agent cannot read it), a v2 one with
the draft's answer (the latest version), and a batch before ``initialize`` entry by entry. Our
``batch()`` fails at once when the TypeScript SDK's router answers a batch with one error of id
null."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import CORPUS, INTEROP, write_package
from support.remote import free_port, stop, wait_listening
from support.versions import env_for, several_versions_package

from acpgen.pipeline import Options
from acpgen.versioned import generate_versions


def _stub_client(*args: str, env: dict[str, str], cwd: Path) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "both.stub_client", "--prompt", "one two", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _echoed(lines: list[dict]) -> str:
    return "".join(line["update"]["content"]["text"] for line in lines[:-1]
                   if line["update"]["sessionUpdate"] == "agent_message_chunk")


@contextlib.contextmanager
def _listening(module: str, env: dict[str, str]) -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", module, "--listen", f"127.0.0.1:{port}"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, process)
        yield port
    finally:
        stop(process)


#: An agent of one version on stdio: the Python SDK's (v1), the TypeScript SDK's v2 app.
LOCAL = {1: [sys.executable, str(INTEROP / "sdk_agent.py")], 2: ["node", str(INTEROP / "ts_versions_agent.mjs"), "v2"]}


@pytest.mark.parametrize(("version", "remote"), [(1, None), (2, None), (1, "ws"), (2, "http")])
def test_the_root_stub_client_completes_a_turn_with_an_agent_of_one_version(tmp_path, version, remote):
    env = env_for(several_versions_package())
    if remote is None:
        lines = _stub_client("--", *LOCAL[version], env=env, cwd=tmp_path)
    else:
        with _listening(f"both.v{version}.stub_agent", env) as port:
            lines = _stub_client("--url", f"{remote}://127.0.0.1:{port}/acp", env=env, cwd=tmp_path)
    assert lines[-1] == {"stopReason": "end_turn"}
    expected = {
        # the Python SDK's agent, after asking the client for a file (none there), one outside its cwd,
        # a permission and a terminal (not allowed without --allow-terminal)
        1: 'read: {"code": -32002, "message": "Resource not found"}outside: {"code": -32602, "message": "Invalid'
           ' params"}permission: {"ok": {"outcome": {"optionId": "yes", "outcome": "selected"}}}missing: {"code":'
           ' -32601, "message": "Method not found"}echo: one echo: two',
        2: 'permission: {"optionId":"yes","outcome":"selected"}echo: one echo: two',  # the TypeScript app's, allowed
    }
    assert _echoed(lines) == (expected[version] if remote is None else "one two")
    states = [line["update"]["state"] for line in lines[:-1] if line["update"]["sessionUpdate"] == "state_update"]
    assert states == ([] if version == 1 else ["running", "idle"])


def test_the_root_stub_client_names_the_command_the_user_ran(tmp_path):
    done = subprocess.run([sys.executable, "-m", "both.stub_client", "--help"], cwd=tmp_path,
                          env=env_for(several_versions_package()), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m both.stub_client ")
    for option in ("--url", "--token", "--http2", "--prompt", "--reject", "--auth", "--allow-terminal",
                   "--protocol-version"):
        assert option in done.stdout


@pytest.fixture(scope="module")
def spec_pair(tmp_path_factory):
    """``spec_pair``: the bundled v1 schema and the spec's v1.7.0 v2 draft, imported here."""
    folder = tmp_path_factory.mktemp("spec-pair")
    schemas = [CORPUS / "v0.12.2--schema.unstable.json", CORPUS / "v1.7.0--v2-schema.json"]
    write_package(generate_versions(Options(package="spec_pair"), schemas).files, folder)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("spec_pair.stub_agent"), importlib.import_module("spec_pair.versions")
    finally:
        sys.path.remove(str(folder))


class _Writer:
    def __init__(self) -> None:
        self.messages: list = []

    def write(self, data: bytes) -> None:
        self.messages += [json.loads(line) for line in data.splitlines()]

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False


async def _exchange(spec_pair, lines: list, count: int) -> list:
    stub_agent, versions = spec_pair
    methods = importlib.import_module("spec_pair.v2.methods")
    assert methods.UNSUPPORTED_VERSION_ERROR is None and methods.BATCHES is True  # the spec's draft
    reader, writer = asyncio.StreamReader(), _Writer()
    router = versions.AgentRouter(stub_agent.connectors(), reader, writer,
                                  unsupported_version_error=methods.UNSUPPORTED_VERSION_ERROR,
                                  batches=methods.BATCHES)
    reader.feed_data(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    for _ in range(500):
        if len(writer.messages) >= count:
            break
        await asyncio.sleep(0.01)
    reader.feed_eof()
    await router.close()
    return writer.messages


V1_ASKING_0 = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": 0, "clientCapabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
V2_ASKING_0 = {"jsonrpc": "2.0", "id": 2, "method": "initialize",
               "params": {"protocolVersion": 0, "capabilities": {}, "info": {"name": "t", "version": "0"}}}


def test_a_version_below_every_one_served_by_the_spec_draft(spec_pair):
    """The draft says: the latest version. A v2 ``initialize`` gets version 2; a v1 one, which
    the v2 agent cannot read (no ``info``), gets the latest version that reads it, 1, in v1's
    shape, and the connection speaks 1 from then on (a session/new of v1's shape is served)."""
    [v2] = asyncio.run(_exchange(spec_pair, [V2_ASKING_0], 1))
    assert v2["id"] == 2 and v2["result"]["protocolVersion"] == 2
    session = {"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    v1, created = asyncio.run(_exchange(spec_pair, [V1_ASKING_0, session], 2))
    assert v1["id"] == 1 and v1["result"]["protocolVersion"] == 1
    assert v1["result"]["agentInfo"]["name"] and "info" not in v1["result"]
    assert created["id"] == 3 and created["result"]["sessionId"]


def test_a_batch_before_initialize_is_answered_entry_by_entry_where_the_draft_has_batches(spec_pair):
    v1_asking_1 = {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": 1}}
    batch = [{**V2_ASKING_0, "id": "in-batch"}, {"jsonrpc": "2.0", "id": "new", "method": "session/new", "params": {}},
             {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}, 5]
    answers = asyncio.run(_exchange(spec_pair, [batch, [], [{"jsonrpc": "2.0", "method": "x"}], v1_asking_1], 3))
    array, empty, routed = answers
    assert array == [
        {"jsonrpc": "2.0", "id": "in-batch", "error": {"code": -32600, "message": "Invalid request", "data":
                                                        "initialize must come alone, not in a batch: it picks the"
                                                        " protocol version"}},
        {"jsonrpc": "2.0", "id": "new", "error": {"code": -32600, "message": "Invalid request",
                                                   "data": "first ACP request must be initialize"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request",
                                                  "data": "first ACP message must be an initialize request"}},
    ]
    assert empty == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request",
                                                             "data": "a batch must not be empty"}}
    assert routed["id"] == 3 and routed["result"]["protocolVersion"] == 1  # the batch of a notification: nothing


def test_batch_fails_at_once_when_the_typescript_router_answers_it_with_one_error(spec_pair):
    client = importlib.import_module("spec_pair.v2.client")
    rpc = importlib.import_module("spec_pair._runtime.connection._rpc")

    async def run() -> None:
        command = ["node", str(INTEROP / "ts_versions_agent.mjs"), "router"]
        async with client.spawn_agent(client.Client(), *command, env=env_for()) as connection:
            with pytest.raises(rpc.RequestError) as refused:
                await asyncio.wait_for(connection.rpc.batch([("session/list", {}), ("_x", {})]), 20)
            assert refused.value.code == -32600 and "batches are not supported" in refused.value.message
            assert not connection.rpc._pending  # nothing left waiting

    asyncio.run(run())
