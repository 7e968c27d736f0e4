"""Version negotiation by the rule of the package's draft, over real pipes to the stub agents and
to the root router of a package of two versions.

* The spec's releases (v1.7.0's v2 draft, ``docs/protocol/v2/initialization.mdx``, "Version
  Negotiation"; v1's page says the same): "If the Agent supports the requested version, it
  **MUST** respond with the same version. Otherwise, the Agent **MUST** respond with the latest
  version it supports." Their schemas define no error for it.
* The TypeScript SDK's v2 draft defines ``-32022`` "Unsupported protocol version": "No protocol
  version supported by the Agent is at or below the requested version", its data
  ``UnsupportedProtocolVersionErrorData`` (``requested``, ``supported``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import BINDINGS, CORPUS, write_package
from support.versions import env_for, stub, v2_package

from acpgen.pipeline import Options
from acpgen.runtime._runtime.connection._typed import negotiated_version
from acpgen.runtime._runtime.wire._errors import RequestError


def initialize(version: int, shape: int, request_id: int = 0) -> dict:
    """An ``initialize`` asking for ``version``, its params in the shape of protocol ``shape``."""
    if shape < 2:
        params = {"protocolVersion": version, "clientCapabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    else:
        params = {"protocolVersion": version, "info": {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def answers(command: list[str], env: dict[str, str], lines: list[dict]) -> list[dict]:
    """Each line to a fresh agent (one connection each): its answer."""
    found = []
    for line in lines:
        done = subprocess.run(command, input=json.dumps(line) + "\n", env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        found.append(json.loads(done.stdout.splitlines()[0]))
    return found


def served(answer: dict) -> int | dict:
    """The version an answer serves, or its error."""
    return answer["result"]["protocolVersion"] if "result" in answer else answer["error"]


@pytest.mark.parametrize(("requested", "supported", "error", "expected"), [
    (2, (2,), None, 2), (1, (2,), None, 2), (3, (2,), None, 2), (0, (1, 2), None, 2), (1, (1, 2), None, 1),
    (2, (2,), -32022, 2), (3, (2,), -32022, 2), (1, (2,), -32022, None), (0, (1, 2), -32022, None),
    (3, (1, 2), -32022, 2), (1, (1, 2), -32022, 1),
    (0, (1,), None, 1), (2, (1,), None, 1), (0, (1,), -32022, 1), (7, (1,), -32022, 1),
])
def test_the_rule_of_each_kind_of_draft(requested, supported, error, expected):
    if expected is None:
        with pytest.raises(RequestError) as refused:
            negotiated_version(requested, supported, error)
        assert (refused.value.code, refused.value.data) == (error, {"requested": requested, "supported": list(supported)})
    else:
        assert negotiated_version(requested, supported, error) == expected


def test_the_v1_7_0_v2_draft_answers_the_latest_version_it_supports():
    folder, package = v2_package("v1.7.0")
    found = answers(stub(package, "agent"), env_for(folder),
                    [initialize(2, 2), initialize(1, 2), initialize(3, 2), initialize(0, 2), initialize(1, 1)])
    assert [served(a) for a in found[:4]] == [2, 2, 2, 2]  # the same version, else the latest it supports
    # params in v1's shape are not a v2 initialize: invalid params, which say the version it speaks
    refused = found[4]["error"]
    assert refused["code"] == -32602 and (refused["data"]["requested"], refused["data"]["supported"]) == (1, [2])


def test_the_typescript_sdks_v2_draft_answers_its_own_unsupported_version_error():
    folder, package = v2_package("sdk")
    found = answers(stub(package, "agent"), env_for(folder),
                    [initialize(2, 2), initialize(3, 2), initialize(1, 2), initialize(1, 1), initialize(0, 2)])
    assert [served(a) for a in found[:2]] == [2, 2]  # the highest at or below the one asked for
    for answer, requested in zip(found[2:], [1, 1, 0]):
        assert answer["error"]["code"] == -32022
        assert (answer["error"]["data"]["requested"], answer["error"]["data"]["supported"]) == (requested, [2])


def test_a_v1_package_answers_version_1_to_every_request():
    found = answers([sys.executable, "-m", "acp_bindings.stub_agent"], env_for(BINDINGS),
                    [initialize(1, 1), initialize(2, 1), initialize(0, 1), initialize(2, 2)])
    assert [served(a) for a in found] == [1, 1, 1, 1]


@pytest.fixture(scope="module")
def spec_pair(tmp_path_factory) -> Path:
    """The package ``spec17`` of v1.7.0's v1 and v2 schemas (drafts without a version error)."""
    from acpgen.versioned import generate_versions

    schemas = tmp_path_factory.mktemp("schemas")
    for name in ("v1-schema.json", "v2-schema.json"):
        shutil.copy(CORPUS / f"v1.7.0--{name}", schemas / name)
    (schemas / "v2-meta.json").write_text('{"version": 2}\n')
    folder = tmp_path_factory.mktemp("spec17")
    write_package(generate_versions(Options(package="spec17"), [schemas / "v1-schema.json", schemas / "v2-schema.json"]).files,
                  folder)
    return folder


def test_the_root_router_of_the_spec_drafts_serves_the_latest_version_when_the_asked_one_is_not_supported(spec_pair):
    command = [sys.executable, "-m", "spec17.stub_agent"]
    found = answers(command, env_for(spec_pair), [initialize(1, 1), initialize(2, 2), initialize(3, 2), initialize(0, 2)])
    assert [served(a) for a in found] == [1, 2, 2, 2]


def test_the_root_router_of_the_typescript_sdks_drafts_refuses_with_its_error():
    from support.versions import several_versions_package

    command = [sys.executable, "-m", "both.stub_agent"]
    found = answers(command, env_for(several_versions_package()), [initialize(1, 1), initialize(3, 2), initialize(0, 1)])
    assert [served(a) for a in found[:2]] == [1, 2]
    assert found[2]["error"]["code"] == -32022 and found[2]["error"]["data"] == {"requested": 0, "supported": [1, 2]}
