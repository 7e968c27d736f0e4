"""The "Two protocol versions" guide: its agent serving both versions runs, on stdio and as an
ASGI app under uvicorn, and the TypeScript SDK's v1 and v2 clients each complete a turn against
it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import BINDINGS, INTEROP, docs, write_package
from support.remote import running
from support.versions import SDK_SCHEMAS, env_for

from acpgen.pipeline import Options, generate

(BOTH_VERSIONS,) = docs.blocks("guides/protocol-versions.md", "python", "Two protocol versions: v2 packages and one agent for both")
(BOTH_REMOTE,) = docs.blocks("guides/protocol-versions.md", "python", "Over the network")


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    folder = tmp_path_factory.mktemp("readme-versions")
    schema = SDK_SCHEMAS / "v2-schema.json"
    write_package(generate(Options(schema=schema, package="acp_v2", protocol_version=2)).files, folder)
    (folder / "both_versions.py").write_text(BOTH_VERSIONS.text)
    (folder / "both_remote.py").write_text(BOTH_REMOTE.text)
    return folder


@pytest.mark.parametrize(("mode", "version"), [("v1", 1), ("v2", 2)])
def test_the_guide_agent_serves_both_typescript_clients(agent, tmp_path, mode, version):
    command = ["node", str(INTEROP / "ts_versions_client.mjs"), mode, str(version), str(tmp_path),
               sys.executable, str(agent / "both_versions.py")]
    done = subprocess.run(command, env=env_for(BINDINGS, agent), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert "error" not in summary, summary
    assert summary["initialize"]["protocolVersion"] == version and summary["stopReason"] == "end_turn"


@pytest.fixture(scope="module")
def remote(agent):
    with running("uvicorn", "both_remote:app", env=env_for(BINDINGS, agent)) as port:
        yield port


@pytest.mark.parametrize(("mode", "version", "scheme"), [("v1", 1, "ws"), ("v2", 2, "http")])
def test_the_guide_app_routes_each_typescript_client_to_its_version(agent, remote, tmp_path, mode, version, scheme):
    command = ["node", str(INTEROP / "ts_versions_client.mjs"), mode, str(version), str(tmp_path),
               f"{scheme}://127.0.0.1:{remote}/acp"]
    done = subprocess.run(command, env={**env_for(BINDINGS, agent), "ACP_TOKEN": "s3cret"}, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert "error" not in summary, summary
    assert summary["initialize"]["protocolVersion"] == version and summary["stopReason"] == "end_turn"
