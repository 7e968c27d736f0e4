"""``Options.side``: a package for one side exports only that side's runtime, carries the other
side as its test peer (not exported), and drives itself end to end."""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import BINDINGS, mini_schema
from support.runtime import STUB_AGENT, STUB_CLIENT, child_env
from support.typecheck import mypy_strict

from acpgen.pipeline import Options, generate, output_modules

RUNTIME = {"agent.py", "client.py", "pair.py", "stub_agent.py", "stub_client.py"}
#: Every package has both sides' runtime: a one-side package carries the other as its test peer.
ONLY = {"agent": RUNTIME, "client": RUNTIME, "both": RUNTIME}
#: Modules that do not depend on the side: copied from the committed output (rendering the models
#: is slow), which test_generate keeps current.
SIDE_FREE = ("models.py", "methods.py", "py.typed")


@pytest.mark.parametrize("side", ["agent", "client", "both"])
def test_each_side_gets_only_its_runtime_modules(side):
    modules = set(output_modules(side))
    assert modules & RUNTIME == ONLY[side]
    assert {"__init__.py", "_rpc.py", "models.py", "_codec.py", "methods.py"} <= modules


def _write_package(tmp_path: Path, side: str) -> str:
    package = f"acp_{side}_only"
    rendered = generate(Options(side=side, package=package), only=set(output_modules(side)) - set(SIDE_FREE))
    for rel, text in rendered.files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for name in SIDE_FREE:
        shutil.copy(BINDINGS / "acp_bindings" / name, tmp_path / package / name)
    return package


@pytest.mark.parametrize("side", ["agent", "client"])
def test_a_one_side_package_exports_that_side_and_drives_itself_end_to_end(tmp_path, monkeypatch, side):
    package = _write_package(tmp_path, side)
    names = {p.name for p in (tmp_path / package).iterdir()}
    assert names & RUNTIME == ONLY[side] and "inspect.py" not in names

    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(package)
    ours, theirs = ("Agent", "Client") if side == "agent" else ("Client", "Agent")
    assert hasattr(module, ours) and not hasattr(module, theirs) and hasattr(module, "in_memory_pair")
    assert ours in module.__all__ and theirs not in module.__all__
    peer = importlib.import_module(f"{package}.{theirs.lower()}")
    models = importlib.import_module(f"{package}.models")

    class Echo(module.Agent if side == "agent" else peer.Agent):  # type: ignore[misc]
        async def session_prompt(self, params):
            await self.client.session_update(session_id=params.session_id, update=models.AgentMessageChunk(
                content=params.prompt[0]))
            return models.PromptResponse(stop_reason="end_turn")

    seen = []

    class Watch(peer.Client if side == "agent" else module.Client):  # type: ignore[misc]
        async def session_update(self, params):
            seen.append(params.update.content.text)

    async def drive():
        async with module.in_memory_pair(Echo(), Watch()) as (_, client_side):
            session = await client_side.agent.session_new(cwd="/", mcp_servers=[])
            return await client_side.agent.session_prompt(session_id=session.session_id,
                                                          prompt=[models.Text(text="in memory")])

    assert asyncio.run(drive()).stop_reason == "end_turn" and seen == ["in memory"]

    env = child_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    # the package's own stub client drives its own stub agent
    command = [sys.executable, "-m", f"{package}.stub_client", "--prompt", "one side", "--",
               sys.executable, "-m", f"{package}.stub_agent"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1] == {"stopReason": "end_turn"}
    assert "".join(u["update"]["content"]["text"] for u in lines[:-1]) == "one side"
    for command in ([*STUB_CLIENT, "--prompt", "x", "--", sys.executable, "-m", f"{package}.stub_agent"],
                    [sys.executable, "-m", f"{package}.stub_client", "--prompt", "x", "--", *STUB_AGENT]):
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0 and json.loads(done.stdout.splitlines()[-1]) == {"stopReason": "end_turn"}


def test_a_schema_without_the_stub_methods_gets_no_stubs_and_its_own_methods_route(tmp_path, monkeypatch):
    schema = tmp_path / "mini.json"
    schema.write_text(json.dumps(mini_schema()))
    files = generate(Options(schema=schema, package="acp_mini")).files
    assert {Path(p).name for p in files} & RUNTIME == {"agent.py", "client.py", "pair.py"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    mini = importlib.import_module("acp_mini")
    lines: list[str] = []

    class Pinged(mini.Agent):
        async def ping(self, params):
            await self.client.log_line(mini.LogNotification(line=f"pinged {params.session_id}"))
            return mini.PingResponse()

    class Logger(mini.Client):
        async def log_line(self, params):
            lines.append(params.line)

    async def run() -> None:
        async with mini.in_memory_pair(Pinged(), Logger()) as (_, client_side):
            assert await client_side.agent.ping(mini.PingRequest(session_id="s")) == mini.PingResponse()

    asyncio.run(run())
    assert lines == ["pinged s"]


def test_a_request_whose_result_the_schema_leaves_untyped_carries_plain_json(tmp_path, monkeypatch, write_schema):
    """Early releases (v0.0.33) give some requests no result type: handler and proxy use plain JSON."""
    doc = mini_schema()
    doc["$defs"]["StatusRequest"] = {"type": "object", "properties": {}, "x-method": "status", "x-side": "agent"}
    files = generate(Options(schema=write_schema(doc), package="untyped")).files
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert "    async def status(self, params: StatusRequest) -> Any:\n" in files["untyped/agent.py"]
    checked = mypy_strict("untyped", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    monkeypatch.syspath_prepend(str(tmp_path))
    untyped = importlib.import_module("untyped")

    class Answering(untyped.Agent):
        async def status(self, params):
            return {"busy": False, "queue": [1, None]}

    async def run(agent) -> object:
        async with untyped.in_memory_pair(agent, untyped.Client()) as (_, client_side):
            return await client_side.agent.status(untyped.StatusRequest())

    assert asyncio.run(run(Answering())) == {"busy": False, "queue": [1, None]}
    with pytest.raises(untyped.RequestError) as raised:
        asyncio.run(run(untyped.Agent()))
    assert raised.value.code == -32601
