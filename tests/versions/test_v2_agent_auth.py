"""The v2 stub agent with ``--auth-method ID`` requires a login, as an agent that handles its own
authentication does: it advertises each ID as an auth method of type ``agent``, answers
``session/new`` with -32000 until the draft's login request names one of them, refuses another id
with -32602 and keeps serving, and ``auth/logout`` undoes the login. Our stub client and the
TypeScript SDK's v2 client (``tests/interop/ts_versions_client.mjs``) log in to it over real
pipes; without the flag it requires nothing, and advertises ``stub-login``, which a client may
log in with (as the v1 stub agent advertises one)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest
from support import INTEROP
from support.runtime import run_async_tests
from support.versions import V2_SCHEMAS, env_for, run_stub_client, stub, v2_package

from acpgen.pipeline import Options, build_spec

TS_CLIENT = ["node", str(INTEROP / "ts_versions_client.mjs")]
TS_AUTH_AGENT = ["node", str(INTEROP / "ts_versions_auth_agent.mjs")]
#: A draft of each login: ``authenticate`` and methods' ``id``; ``auth/login`` and ``id``; the newest.
RELEASES = ["v0.13.8", "v1.2.0", "sdk"]


def _agent(release: str, *args: str) -> list[str]:
    return [*stub(v2_package(release)[1], "agent"), *args]


def _turn(done: subprocess.CompletedProcess[str]) -> list[dict]:
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1] == {"stopReason": "end_turn"}
    return lines


@pytest.mark.parametrize("release", RELEASES)
def test_our_stub_client_logs_in_and_the_turn_ends(tmp_path, release):
    agent = _agent(release, "--auth-method", "first", "--auth-method", "second")
    _turn(run_stub_client(release, tmp_path, "--prompt", "hi", agent=agent))
    _turn(run_stub_client(release, tmp_path, "--auth", "second", "--prompt", "hi", agent=agent))
    refused = run_stub_client(release, tmp_path, "--auth", "nope", agent=agent)
    message = "--auth nope is not one of the agent's auth methods (first (agent), second (agent))"
    assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", f"stub_client: {message}\n")


def _ts_client(tmp_path, agent: list[str]) -> dict:
    folder, _ = v2_package("sdk")
    done = subprocess.run([*TS_CLIENT, "v2", "2", str(tmp_path), *agent], env=env_for(folder), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    summary: dict = json.loads(done.stdout)
    assert "error" not in summary, summary
    return summary


def test_the_typescript_client_logs_in_to_our_stub_agent_as_to_a_typescript_agent(tmp_path):
    ours = _ts_client(tmp_path, _agent("sdk", "--auth-method", "first"))
    theirs = _ts_client(tmp_path, [*TS_AUTH_AGENT, json.dumps([{"type": "agent", "methodId": "first", "name": "first"}])])
    assert ours["initialize"]["authMethods"] == theirs["initialize"]["authMethods"]
    assert ours["authRequired"] == theirs["authRequired"] == {"code": -32000, "message": "Authentication required",
                                                              "data": None}
    assert ours["logins"] == theirs["logins"] == ["first"]
    assert ours["stopReason"] == theirs["stopReason"] == "end_turn"
    assert "".join(u["update"]["content"]["text"] for u in ours["updates"]
                   if u["update"]["sessionUpdate"] == "agent_message_chunk") == "Hello from the TypeScript client"


# -- the requests one by one, over the stub agent's stdio ------------------------------------------


class _Connection:
    """Raw requests to a v2 stub agent through the package's own client side."""

    def __init__(self, release: str, *args: str) -> None:
        folder, name = v2_package(release)
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        self.client = importlib.import_module(f"{name}.client")
        self.command = _agent(release, *args)
        self.env = env_for(folder)

    async def answers(self, *requests: tuple[str, dict]) -> list[object]:
        """Each request's result, or its error as ``(code, message, data)``, in turn on one connection."""
        found: list[object] = []
        async with self.client.spawn_agent(self.client.Client(), *self.command, env=self.env) as connection:
            for method, params in requests:
                try:
                    found.append(await connection.rpc.request(method, params))
                except self.client.RequestError as exc:
                    found.append((exc.code, exc.message, exc.data))
        return found


INITIALIZE = ("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}})
NEW = ("session/new", {"cwd": "/"})
AUTH_REQUIRED = (-32000, "Authentication required", None)


def _session(n: int, key: str = "configId") -> dict:
    """A session/new answer: the session and its config option (named by ``key`` in the draft)."""
    style = {"type": "select", key: "style", "name": "Reply style", "currentValue": "echo",
             "options": [{"value": "echo", "name": "Echo"}, {"value": "upper", "name": "Upper case"}]}
    return {"sessionId": f"stub-session-{n}", "configOptions": [style]}


async def test_an_unknown_id_is_refused_naming_it_and_the_connection_keeps_serving():
    answers = await _Connection("sdk", "--auth-method", "first", "--auth-method", "second").answers(
        INITIALIZE, NEW, ("auth/login", {"methodId": "nope"}), NEW, ("auth/login", {"methodId": "second"}), NEW)
    methods = [{"type": "agent", "methodId": i, "name": i} for i in ("first", "second")]
    assert answers[0]["authMethods"] == methods
    message = "nope is not an auth method this agent advertises (first, second)"
    assert answers[1:] == [AUTH_REQUIRED, (-32602, "Invalid params", {"methodId": "nope", "message": message}),
                           AUTH_REQUIRED, {}, _session(1)]


async def test_a_logout_makes_session_new_need_a_login_again():
    login = ("auth/login", {"methodId": "first"})
    answers = await _Connection("sdk", "--auth-method", "first").answers(
        INITIALIZE, login, NEW, ("auth/logout", {}), NEW, login, NEW)
    assert answers[1:] == [{}, _session(1), {}, AUTH_REQUIRED, {}, _session(2)]


async def test_the_oldest_login_advertises_id_and_logs_in_with_authenticate():
    new = ("session/new", {"cwd": "/", "mcpServers": []})  # required in the older drafts
    answers = await _Connection("v0.13.8", "--auth-method", "first").answers(
        INITIALIZE, new, ("authenticate", {"methodId": "first"}), new, ("logout", {}), new)
    assert answers[0]["authMethods"] == [{"type": "agent", "id": "first", "name": "first"}]
    assert answers[1:] == [AUTH_REQUIRED, {}, _session(1, "id"), {}, AUTH_REQUIRED]


async def test_without_the_flag_it_requires_no_login_and_advertises_one_a_client_may_use():
    answers = await _Connection("sdk").answers(
        INITIALIZE, NEW, ("auth/login", {"methodId": "first"}), ("auth/login", {"methodId": "stub-login"}),
        ("auth/logout", {}), NEW)
    assert answers[0]["authMethods"] == [{"type": "agent", "methodId": "stub-login", "name": "stub-login"}]
    message = "first is not an auth method this agent advertises (stub-login)"
    assert answers[1:] == [_session(1), (-32602, "Invalid params", {"methodId": "first", "message": message}),
                           {}, {}, _session(2)]


def test_the_logout_request_follows_the_draft():
    """``logout`` until v1.2.0 renamed it ``auth/logout``, as it did ``authenticate``."""
    def logout(release: str) -> str | None:
        spec, _ = build_spec(Options(schema=V2_SCHEMAS[release], protocol_version=2))
        return spec.stub_flows.login.logout if spec.stub_flows and spec.stub_flows.login else None

    assert [logout(r) for r in RELEASES] == ["logout", "auth/logout", "auth/logout"]


def test_an_id_given_twice_is_a_usage_error():
    folder, _ = v2_package("sdk")
    done = subprocess.run([*_agent("sdk", "--auth-method", "a", "--auth-method", "a")], env=env_for(folder),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1].endswith("error: argument --auth-method: a is given twice")


run_async_tests(globals())
