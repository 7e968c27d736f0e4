"""The "Two protocol versions" guide's ``versions`` module example: its agents of one's own (a v1
class and a v2 class in one package of both versions) served on stdio and as an ASGI app under
uvicorn; its client of both binds the version each answers, on stdio and over the network; the
package's root stub client and the TypeScript SDK's v1 and v2 clients complete a turn against it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import INTEROP, docs
from support.remote import running
from support.versions import env_for, several_versions_package

SECTION = "Serving and connecting several versions: the `versions` module"
BOTH_VERSIONS, BOTH_CLIENT = docs.blocks("guides/protocol-versions.md", "python", SECTION)


@pytest.fixture(scope="module")
def guide(tmp_path_factory):
    folder = tmp_path_factory.mktemp("guide-versions")
    (folder / "both_versions.py").write_text(BOTH_VERSIONS.text)
    (folder / "both_client.py").write_text(BOTH_CLIENT.text)
    return folder, env_for(several_versions_package(), folder)


def _run(command: list[str], env: dict[str, str], cwd) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done


AGENT = [sys.executable, "both_versions.py"]


@pytest.mark.parametrize(("ask", "printed"), [
    ("1", ["the agent answered protocol version 1", "session one"]),
    ("3", ["the agent answered protocol version 2, lower than the 3 asked for: this connection speaks 2",
           "session two"]),
])
def test_the_guide_client_binds_the_version_the_guide_agent_answers_on_stdio(guide, ask, printed):
    folder, env = guide
    assert _run([sys.executable, "both_client.py", ask, "--", *AGENT], env, folder).stdout.splitlines() == printed


def test_the_root_stub_client_runs_a_v2_turn_in_the_guide_agents_own_class(guide):
    folder, env = guide
    lines = [json.loads(line) for line in _run([sys.executable, "-m", "both.stub_client", "--", *AGENT], env,
                                                folder).stdout.splitlines()]
    assert lines[-1] == {"stopReason": "end_turn"}
    assert [line["update"].get("state") for line in lines[:-1]] == ["running", None, "idle"]
    assert lines[1]["update"]["content"]["text"] == "hi from v2"


@pytest.fixture(scope="module")
def served(guide):
    folder, env = guide
    with running("uvicorn", "both_versions:app", env=env, cwd=folder) as port:
        yield folder, env, port


@pytest.mark.parametrize(("scheme", "ask", "printed"), [
    ("ws", "1", ["the agent answered protocol version 1", "session one"]),
    ("http", "2", ["the agent answered protocol version 2", "session two"]),
])
def test_the_guide_client_binds_the_version_the_guide_app_answers_over_the_network(served, scheme, ask, printed):
    folder, env, port = served
    url = f"{scheme}://127.0.0.1:{port}/acp"
    assert _run([sys.executable, "both_client.py", ask, url], env, folder).stdout.splitlines() == printed


@pytest.mark.parametrize(("mode", "version"), [("v1", 1), ("v2", 2)])
def test_the_typescript_clients_complete_a_turn_against_the_guide_app(served, tmp_path, mode, version):
    _, env, port = served
    command = ["node", str(INTEROP / "ts_versions_client.mjs"), mode, str(version), str(tmp_path),
               f"{'ws' if mode == 'v1' else 'http'}://127.0.0.1:{port}/acp"]
    summary = json.loads(_run(command, env, tmp_path).stdout)
    assert "error" not in summary, summary
    assert summary["initialize"]["protocolVersion"] == version
    assert summary["stopReason"] == "end_turn"
