"""The "Two protocol versions" guide's ``versions`` module example: its agents of one's own (a v1
class and a v2 class in one package of both versions) served on stdio and as an ASGI app under
uvicorn; its client of both binds the version each answers, on stdio and over the network; the
package's root stub client and the TypeScript SDK's v1 client complete a turn against it (the SDK's
v2 client speaks another draft)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from support import INTEROP, docs
from support.remote import running
from support.versions import env_for, guide_versions_package

SECTION = "Serving and connecting several versions: the `versions` module"
BOTH_VERSIONS, BOTH_CLIENT = docs.blocks("guides/protocol-versions.md", "python", SECTION)


@pytest.fixture(scope="module")
def guide(tmp_path_factory):
    folder = tmp_path_factory.mktemp("guide-versions")
    (folder / "both_versions.py").write_text(BOTH_VERSIONS.text)
    (folder / "both_client.py").write_text(BOTH_CLIENT.text)
    return folder, env_for(guide_versions_package(), folder)


def _run(command: list[str], env: dict[str, str], cwd) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done


AGENT = [sys.executable, "both_versions.py"]


@pytest.mark.parametrize(("ask", "printed"), [
    ("1", ["the agent answered protocol version 1", "session one-1"]),
    ("3", ["the agent answered protocol version 2, lower than the 3 asked for: this connection speaks 2",
           "session two-1"]),
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
    ("ws", "1", ["the agent answered protocol version 1", "session one-N"]),
    ("http", "2", ["the agent answered protocol version 2", "session two-N"]),
])
def test_the_guide_client_binds_the_version_the_guide_app_answers_over_the_network(served, scheme, ask, printed):
    """N: the app's count of sessions so far, every connection's (one process serves them all)."""
    folder, env, port = served
    url = f"{scheme}://127.0.0.1:{port}/acp"
    lines = _run([sys.executable, "both_client.py", ask, url], env, folder).stdout.splitlines()
    assert [re.sub(r"-[1-9]\d*$", "-N", line) for line in lines] == printed


def test_the_typescript_v1_client_completes_a_turn_against_the_guide_app(served, tmp_path):
    _, env, port = served
    command = ["node", str(INTEROP / "ts_versions_client.mjs"), "v1", "1", str(tmp_path), f"ws://127.0.0.1:{port}/acp"]
    summary = json.loads(_run(command, env, tmp_path).stdout)
    assert "error" not in summary, json.dumps(summary)
    assert summary["initialize"]["protocolVersion"] == 1
    assert summary["stopReason"] == "end_turn"


def test_the_root_stub_client_runs_a_v2_turn_against_the_guide_app_and_the_typescript_v2_client_cannot(served, tmp_path):
    """The app's v2 speaks the spec's draft of v1.7.0: the package's own client completes a turn
    over Streamable HTTP; the TypeScript SDK's v2 client, of its own draft, refuses the prompt's
    answer for the ``messageId`` its draft requires there, as the guide says."""
    _, env, port = served
    url = f"http://127.0.0.1:{port}/acp"
    lines = [json.loads(line) for line in _run([sys.executable, "-m", "both.stub_client", "--url", url], env,
                                                tmp_path).stdout.splitlines()]
    assert lines[-1] == {"stopReason": "end_turn"} and lines[-2]["update"]["state"] == "idle"
    command = ["node", str(INTEROP / "ts_versions_client.mjs"), "v2", "2", str(tmp_path), url]
    summary = json.loads(_run(command, env, tmp_path).stdout)
    assert '"messageId"' in summary["error"]["message"] and summary["stopReason"] is None, json.dumps(summary)
