"""Vendoring: generate the agent side's stable bindings into a user's project under a dotted
package name, import them there, and run a real round trip against the stub client."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys

import pytest
from support import BINDINGS

from acpgen.pipeline import Options, build_spec

PACKAGE = "myproject._vendor.acp"

AGENT = '''
import asyncio

from myproject._vendor.acp import Agent, decode, models, run_agent


class FileEchoAgent(Agent):
    """Echoes the prompt, then the text of notes.txt, read through the client proxy."""

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=params.protocol_version)

    async def session_new(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        self.cwd = params.cwd
        return models.NewSessionResponse(session_id="s-1")

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        read = decode(models.ReadTextFileRequest, {"sessionId": params.session_id, "path": self.cwd + "/notes.txt"})
        notes = await self.client.fs_read_text_file(read)
        texts = [block.to_json()["text"] for block in params.prompt] + [notes.content]
        for text in texts:
            update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
            await self.client.session_update(
                decode(models.SessionNotification, {"sessionId": params.session_id, "update": update})
            )
        return decode(models.PromptResponse, {"stopReason": "end_turn"})


asyncio.run(run_agent(FileEchoAgent()))
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project with src/myproject/, and the agent side's stable bindings generated into it."""
    from click.testing import CliRunner

    from acpgen.cli import main

    project = tmp_path_factory.mktemp("project")
    (project / "src" / "myproject").mkdir(parents=True)
    (project / "src" / "myproject" / "__init__.py").write_text("")
    result = CliRunner().invoke(
        main, ["generate", "--out", str(project / "src"), "--package", PACKAGE, "--side", "agent", "--stable-only"]
    )
    assert result.exit_code == 0, result.stderr
    sys.path.insert(0, str(project / "src"))
    try:
        yield project
    finally:
        sys.path.remove(str(project / "src"))
        for name in [m for m in sys.modules if m == "myproject" or m.startswith("myproject.")]:
            del sys.modules[name]


def test_a_round_trip_against_the_stub_client(project):
    (project / "agent.py").write_text(AGENT)
    (project / "notes.txt").write_text("read through the client proxy")
    # The client: the stub client of this repository's full package, generated from the same schema.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BINDINGS), str(project / "src")])}
    result = subprocess.run(
        [sys.executable, "-m", "acp_bindings.stub_client", "--prompt", "hello", "--", sys.executable, "agent.py"],
        cwd=project, env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["update"]["content"]["text"] for line in lines[:-1]] == ["hello", "read through the client proxy"]
    assert lines[-1] == {"stopReason": "end_turn"}


def test_only_the_agent_side_and_no_unstable_method_is_present(project):
    vendored = project / "src" / "myproject" / "_vendor" / "acp"
    package = importlib.import_module(PACKAGE)
    assert package.__name__ == PACKAGE and package.__file__.startswith(str(vendored))
    full, _ = build_spec(Options())
    stable = [m for m in full.methods if not m.unstable]
    unstable = [m for m in full.methods if m.unstable]
    assert unstable and [m.method for m in package.METHODS] == [m.wire_name for m in stable]
    # The agent's handler base and the client's proxy; the client side only as the test peer
    # (its modules, not exported from the root).
    assert hasattr(package, "Agent") and hasattr(package, "ClientProxy")
    assert not hasattr(package, "Client") and not hasattr(package, "AgentProxy")
    assert all((vendored / name).exists() for name in ("client.py", "stub_client.py", "pair.py"))
    for m in full.methods:
        owner = package.Agent if m.side == "agent" else package.ClientProxy if m.side == "client" else None
        if owner is not None:
            assert hasattr(owner, m.py_name) is (not m.unstable), m.wire_name
    assert not hasattr(package.Agent, "fs_read_text_file"), "a client-side handler on the agent"
    # No type that only unstable methods use: their params and results are gone from the models.
    stable_types = {name for m in stable for name in (m.params_type, m.result_type) if name}
    for m in unstable:
        for name in (m.params_type, m.result_type):
            if name and name not in stable_types:
                assert not hasattr(package.models, name), name


def test_the_package_imports_only_itself_and_the_standard_library(project):
    vendored = project / "src" / "myproject" / "_vendor" / "acp"
    modules = sorted(vendored.glob("*.py"))
    assert len(modules) > 3
    for module in modules:
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                continue  # relative: works wherever the package is placed
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in ("orjson", "msgspec") and module.name == "_framing.py" and node not in tree.body:
                    continue  # json_backend="orjson", "msgspec" or "auto" only: imported when a connection asks for it
                if top == "opentelemetry" and module.name == "_tracing.py" and node not in tree.body:
                    continue  # tracing: imported only where it is installed (tests/runtime/test_tracing.py)
                assert top in sys.stdlib_module_names or top == "__future__", f"{module.name} imports {name}"
