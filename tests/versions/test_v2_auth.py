"""The v2 stub client logs in when ``session/new`` answers -32000 (authentication required): with
the draft's login request (``auth/login``; ``authenticate`` before v2 renamed it) and ``--auth
METHOD_ID`` or the first advertised method of type ``agent``, against the TypeScript SDK's v2 side
(``tests/interop/ts_versions_auth_agent.mjs``) over real pipes; a method it cannot use is one line
on stderr and exit status 1."""

from __future__ import annotations

import json

import pytest
from support import INTEROP
from support.versions import V2_SCHEMAS, run_stub_client

from acpgen.pipeline import Options, build_spec, generate

TERMINAL = {"type": "terminal", "methodId": "term", "name": "In a terminal"}
VENDOR = {"type": "_vendor", "methodId": "sso", "name": "Single sign-on"}
FIRST = {"type": "agent", "methodId": "first", "name": "First"}
SECOND = {"type": "agent", "methodId": "second", "name": "Second"}
METHODS = [TERMINAL, FIRST, SECOND, VENDOR]
LISTED = "term (terminal), first (agent), second (agent), sso (_vendor)"


def ts_agent(methods: list[dict]) -> list[str]:
    return ["node", str(INTEROP / "ts_versions_auth_agent.mjs"), json.dumps(methods)]


def logged_in(tmp_path, methods: list[dict], *args: str) -> str:
    """The logins the agent saw (one chunk of the turn), once the turn ended."""
    done = run_stub_client("sdk", tmp_path, *args, agent=ts_agent(methods))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1] == {"stopReason": "end_turn"}
    assert lines[-2]["update"] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    [chunk] = [line["update"] for line in lines if line.get("update", {}).get("sessionUpdate") == "agent_message_chunk"]
    return chunk["content"]["text"]


def test_the_first_agent_method_is_logged_in_with_and_the_turn_ends(tmp_path):
    assert logged_in(tmp_path, METHODS) == 'logins: ["first"]'


def test_auth_names_the_method(tmp_path):
    assert logged_in(tmp_path, METHODS, "--auth", "second") == 'logins: ["second"]'


NO_AGENT_METHOD = "the agent requires authentication but advertises no method of type agent to log in with"


@pytest.mark.parametrize(("methods", "args", "message"), [
    (METHODS, ["--auth", "nope"], f"--auth nope is not one of the agent's auth methods ({LISTED})"),
    (METHODS, ["--auth", "term"], f"--auth term is not of type agent, the one type this client logs in with ({LISTED})"),
    ([TERMINAL, VENDOR], [], f"{NO_AGENT_METHOD} (term (terminal), sso (_vendor))"),
    ([], [], f"{NO_AGENT_METHOD} (none)"),
])
def test_a_method_it_cannot_log_in_with_is_one_line_and_exit_1(tmp_path, methods, args, message):
    done = run_stub_client("sdk", tmp_path, *args, agent=ts_agent(methods))
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"stub_client: {message}\n")


def _login(schema) -> tuple[str, str] | None:
    spec, _ = build_spec(Options(schema=schema, protocol_version=2))
    login = spec.stub_flows.login if spec.stub_flows else None
    return (login.method, login.id_field) if login else None


def test_the_login_request_and_the_method_id_follow_the_draft():
    """``authenticate`` until v1.2.0 renamed it ``auth/login``; an advertised method's id is ``id``
    until v1.3.0 renamed it ``methodId``."""
    assert _login(V2_SCHEMAS["v0.13.8"]) == ("authenticate", "id")
    assert _login(V2_SCHEMAS["v1.2.0"]) == ("auth/login", "id")
    assert _login(V2_SCHEMAS["v1.3.0"]) == _login(V2_SCHEMAS["sdk"]) == ("auth/login", "methodId")


def test_without_an_agent_auth_method_type_the_client_does_not_log_in(tmp_path):
    schema = json.loads(V2_SCHEMAS["sdk"].read_text())
    union = schema["$defs"]["AuthMethod"]
    union["anyOf"] = [v for v in union["anyOf"] if v.get("properties", {}).get("type", {}).get("const") != "agent"]
    path = tmp_path / "v2-schema.json"
    path.write_text(json.dumps(schema))
    assert _login(path) is None
    client = generate(Options(schema=path, package="noagent", protocol_version=2)).files["noagent/stub_client.py"]
    assert "--auth" not in client and "NoAuthMethod" not in client
    assert "--auth" in generate(Options(schema=V2_SCHEMAS["sdk"], package="sdk", protocol_version=2)).files[
        "sdk/stub_client.py"]
