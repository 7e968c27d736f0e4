"""The v1 stub agent's capability matrix: each optional feature its schema defines, on and off.

Each case starts ``python -m <package>.stub_agent`` over real pipes and speaks raw JSON-RPC to
it (the conformance suite's client, :class:`support.conformance.Peer`). On, a feature is
advertised (in ``initialize``'s ``agentCapabilities``, or offered in ``session/new``'s answer) and
its request does what the spec says; off (``--disable FEATURE``), it is not advertised and its
request answers -32601, while every other feature stays on. The packages: the bundled schema's
(in both flavours of models), and two older releases', which define fewer features (v0.13.6's stable schema has
``session/delete`` and no ``session/fork``; v0.4.1's only ``session/load`` and modes).
"""

from __future__ import annotations

import atexit
import importlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import BINDINGS, CORPUS, write_package
from support.conformance import Peer
from support.flavours import PYDANTIC_PACKAGE, pydantic_folder
from support.run_cache import generated_files
from support.versions import env_for

from acpgen.pipeline import Options

METHOD_NOT_FOUND, INVALID_PARAMS, AUTH_REQUIRED = -32601, -32602, -32000
_FOLDER = Path(tempfile.mkdtemp(prefix="acpgen-stub-matrix-"))
atexit.register(shutil.rmtree, _FOLDER, ignore_errors=True)
#: The older releases the matrix runs on, by the package generated from each.
OLDER = {"acp_v0_13_6": CORPUS / "v0.13.6--schema.json", "acp_v0_4_1": CORPUS / "v0.4.1--schema.json"}
for _name, _schema in OLDER.items():
    write_package(generated_files(Options(schema=_schema, package=_name)), _FOLDER / _name)
#: The packages: the bundled schema's in both flavours of models, and the older releases'.
PACKAGES = {"acp_bindings": BINDINGS, PYDANTIC_PACKAGE: pydantic_folder(), **{name: _FOLDER / name for name in OLDER}}


def stub_data(package: str) -> Any:
    """The package's ``_stub_data`` module."""
    sys.path.insert(0, str(PACKAGES[package]))
    try:
        return importlib.import_module(f"{package}._stub_data")
    finally:
        sys.path.remove(str(PACKAGES[package]))


def features_of(package: str) -> dict[str, str]:
    """The features the package's schema defines (its ``_stub_data.FEATURES``)."""
    return dict(stub_data(package).FEATURES)


def test_each_package_defines_the_features_of_its_schema():
    assert list(features_of("acp_bindings")) == [
        "load", "resume", "list", "close", "fork", "additional-directories", "modes", "config-options", "logout"]
    assert list(features_of("acp_v0_13_6")) == [
        "load", "resume", "list", "close", "delete", "additional-directories", "modes", "config-options", "logout"]
    assert list(features_of("acp_v0_4_1")) == ["load", "modes"]


class Stub:
    """A stub agent of ``package`` started with ``args``, initialized; its session/new answer."""

    def __init__(self, package: str, tmp_path: Path, *args: str) -> None:
        self.package = package
        self.cwd = str(tmp_path)
        command = [sys.executable, "-m", f"{package}.stub_agent", "--delay", "0", *args]
        self.peer = Peer(command, env_for(PACKAGES[package]), cwd=self.cwd)
        self.hello = self.peer.result("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    def new(self, **params: Any) -> dict[str, Any]:
        answer: dict[str, Any] = self.peer.result("session/new", {"cwd": self.cwd, "mcpServers": [], **params})
        return answer

    def prompt(self, session_id: str, text: str = "hello matrix") -> dict[str, Any]:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        return self.peer.request("session/prompt", params)

    def code(self, method: str, params: dict[str, Any]) -> int | None:
        answer = self.peer.request(method, params)
        return None if "result" in answer else answer["error"]["code"]


def advertised(stub: Stub, feature: str, session: dict[str, Any]) -> bool:
    """The feature is advertised: in ``agentCapabilities`` or, for modes and config options, in
    the answer to ``session/new``."""
    offered = {"modes": "modes", "config-options": "configOptions"}
    if feature in offered:
        return session.get(offered[feature]) is not None
    path = {"load": ["loadSession"], "logout": ["auth", "logout"]}.get(
        feature, ["sessionCapabilities", {"additional-directories": "additionalDirectories"}.get(feature, feature)])
    value: Any = stub.hello["agentCapabilities"]
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value not in (None, False)


# -- each feature on: what its request does ---------------------------------------------------


def load_on(stub: Stub, session_id: str) -> None:
    """session/load replays the conversation as updates, all before its answer."""
    assert "result" in stub.prompt(session_id, "one two")
    before = len(stub.peer.updates(session_id))
    request_id = stub.peer.start("session/load", {"sessionId": session_id, "cwd": stub.cwd, "mcpServers": []})
    answer = stub.peer.response(request_id)
    assert "result" in answer, answer
    replayed = [u["update"] for u in stub.peer.updates(session_id)[before:]]
    assert replayed == [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "one two"}},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "one "}},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "two"}},
    ]
    lines = [json.loads(line) for line in stub.peer.lines]
    answered = next(i for i, m in enumerate(lines) if m.get("id") == request_id)
    last_update = max(i for i, m in enumerate(lines) if m.get("method") == "session/update")
    assert last_update < answered, "session/load answered before its replay ended"


def resume_on(stub: Stub, session_id: str) -> None:
    """session/resume takes the session back without replaying it; its turns go on."""
    assert "result" in stub.prompt(session_id)
    before = len(stub.peer.updates(session_id))
    assert stub.code("session/resume", {"sessionId": session_id, "cwd": stub.cwd}) is None
    assert len(stub.peer.updates(session_id)) == before, "session/resume replayed the conversation"
    assert stub.prompt(session_id)["result"] == {"stopReason": "end_turn"}


def list_on(stub: Stub, session_id: str) -> None:
    """session/list pages through the sessions of a cwd with its cursor; a cursor it never gave
    is -32602."""
    cwd = tempfile.mkdtemp(dir=stub.cwd)
    created = [stub.peer.result("session/new", {"cwd": cwd, "mcpServers": []})["sessionId"] for _ in range(3)]
    listed: list[str] = []
    cursor = None
    for _ in range(10):
        page = stub.peer.result("session/list", {"cwd": cwd, **({"cursor": cursor} if cursor else {})})
        assert len(page["sessions"]) <= 2 and all(s["cwd"] == cwd for s in page["sessions"])
        listed += [s["sessionId"] for s in page["sessions"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert listed == created, listed
    assert stub.code("session/list", {"cursor": "not-a-cursor"}) == INVALID_PARAMS
    # JSON-RPC 2.0 lets a request leave its params out: session/list's are all optional
    assert "sessions" in stub.peer.result("session/list")


def _forgets(method: str) -> Callable[[Stub, str], None]:
    def forgets(stub: Stub, session_id: str) -> None:
        assert stub.code(method, {"sessionId": session_id}) is None
        assert stub.prompt(session_id)["error"]["code"] == INVALID_PARAMS, f"{method}: the session lives on"
        # session-delete.mdx, "Semantics": deleting a session deleted or never created SHOULD
        # succeed silently; closing one the agent does not know is an error
        again = None if method == "session/delete" else INVALID_PARAMS
        assert stub.code(method, {"sessionId": session_id}) == again
        assert stub.code(method, {"sessionId": "never-created"}) == again

    forgets.__doc__ = f"{method} forgets the session: a prompt for it then answers the unknown-session error."
    return forgets


def fork_on(stub: Stub, session_id: str) -> None:
    """session/fork makes a new session holding a copy of the conversation."""
    assert "result" in stub.prompt(session_id, "forked")
    fork = stub.peer.result("session/fork", {"sessionId": session_id, "cwd": stub.cwd})["sessionId"]
    assert fork != session_id
    stub.peer.result("session/load", {"sessionId": fork, "cwd": stub.cwd, "mcpServers": []})
    assert stub.peer.updates(fork)[0]["update"]["content"]["text"] == "forked"


def directories_on(stub: Stub, session_id: str) -> None:
    """additionalDirectories of session/new are kept and listed; a relative one is -32602."""
    kept = stub.new(additionalDirectories=["/opt/extra"])["sessionId"]
    listed = [s for s in _every_session(stub) if s["sessionId"] == kept]
    assert listed and listed[0]["additionalDirectories"] == ["/opt/extra"], listed
    answer = stub.peer.request("session/new", {"cwd": stub.cwd, "mcpServers": [], "additionalDirectories": ["rel"]})
    assert answer["error"]["code"] == INVALID_PARAMS


def _every_session(stub: Stub) -> list[dict[str, Any]]:
    sessions, cursor = [], None
    while True:
        page = stub.peer.result("session/list", {"cursor": cursor} if cursor else {})
        sessions += page["sessions"]
        cursor = page.get("nextCursor")
        if cursor is None:
            return sessions


def modes_on(stub: Stub, session_id: str) -> None:
    """session/set_mode switches to an offered mode and reports it (current_mode_update, where the
    schema has it); a mode it does not offer is -32602."""
    session = stub.new()
    offered = [m["id"] for m in session["modes"]["availableModes"]]
    assert session["modes"]["currentModeId"] in offered
    assert stub.code("session/set_mode", {"sessionId": session["sessionId"], "modeId": offered[-1]}) is None
    updates = [u["update"] for u in stub.peer.updates(session["sessionId"])]
    reported = {"sessionUpdate": "current_mode_update", "currentModeId": offered[-1]}
    assert (reported in updates) == stub_data(stub.package).MODE_UPDATE, updates
    bad = {"sessionId": session["sessionId"], "modeId": "no-such-mode"}
    assert stub.code("session/set_mode", bad) == INVALID_PARAMS


def config_on(stub: Stub, session_id: str) -> None:
    """session/set_config_option sets a value, answers every option and reports them
    (config_option_update); the value changes the echo."""
    answer = stub.peer.result("session/set_config_option", {"sessionId": session_id, "configId": "style",
                                                            "value": "upper"})
    assert answer["configOptions"][0]["currentValue"] == "upper"
    update = stub.peer.updates(session_id)[-1]["update"]
    assert update == {"sessionUpdate": "config_option_update", "configOptions": answer["configOptions"]}
    stub.prompt(session_id, "loud")
    assert stub.peer.updates(session_id)[-1]["update"]["content"]["text"] == "LOUD"
    bad = {"sessionId": session_id, "configId": "style", "value": "no-such-value"}
    assert stub.code("session/set_config_option", bad) == INVALID_PARAMS


def logout_on(stub: Stub, session_id: str) -> None:
    """logout answers once logged in (and without the flag, the client needs no login anyway)."""
    method = stub.hello["authMethods"][0]["id"]
    assert stub.code("authenticate", {"methodId": method}) is None
    assert stub.code("logout", {}) is None


ON = {"load": load_on, "resume": resume_on, "list": list_on, "close": _forgets("session/close"),
      "delete": _forgets("session/delete"), "fork": fork_on, "additional-directories": directories_on,
      "modes": modes_on, "config-options": config_on, "logout": logout_on}
#: The params of each feature's request when it is off (the session's id filled in).
OFF_PARAMS: dict[str, dict[str, Any]] = {
    "load": {"cwd": "/", "mcpServers": []}, "resume": {"cwd": "/"}, "list": {}, "close": {}, "delete": {},
    "fork": {"cwd": "/"}, "modes": {"modeId": "ask"}, "config-options": {"configId": "style", "value": "upper"},
    "logout": {},
}
CASES = [(package, feature) for package in PACKAGES for feature in features_of(package)]
#: A feature off is the same in both flavours: the dataclass one's cases tell.
OFF_CASES = [(package, feature) for package, feature in CASES if package != PYDANTIC_PACKAGE]


@pytest.fixture(scope="module")
def serving(tmp_path_factory):
    """One stub agent per package with every feature on, shared by the cases that try each."""
    stubs: dict[str, Stub] = {}

    def stub_of(package: str) -> Stub:
        if package not in stubs:
            stubs[package] = Stub(package, tmp_path_factory.mktemp(package))
        return stubs[package]

    yield stub_of
    for stub in stubs.values():
        stub.peer.close()


@pytest.mark.parametrize(("package", "feature"), CASES, ids=[f"{p}-{f}" for p, f in CASES])
def test_a_feature_on_is_advertised_and_served(package, feature, serving):
    stub = serving(package)
    session = stub.new()
    assert advertised(stub, feature, session), f"{feature} is not advertised: {stub.hello}, {session}"
    ON[feature](stub, session["sessionId"])


@pytest.mark.parametrize(("package", "feature"), OFF_CASES, ids=[f"{p}-{f}" for p, f in OFF_CASES])
def test_a_feature_off_is_not_advertised_and_its_request_is_method_not_found(package, feature, tmp_path):
    stub = Stub(package, tmp_path, "--disable", feature)
    try:
        session = stub.new()
        assert not advertised(stub, feature, session), f"{feature} is disabled, yet advertised"
        others = [f for f in features_of(package) if f != feature]
        assert all(advertised(stub, other, session) for other in others), "disabling one feature hid another"
        method = features_of(package)[feature]
        if method:
            params = {**OFF_PARAMS[feature], **({} if method in ("session/list", "logout") else
                                                {"sessionId": session["sessionId"]})}
            assert stub.code(method, params) == METHOD_NOT_FOUND, f"{method} is served with {feature} off"
            # refused before its params are read: params that do not decode are no -32602
            assert stub.code(method, {"sessionId": 7}) == METHOD_NOT_FOUND, f"{method} reads its params"
        else:  # additional directories off: none is kept, none refused
            kept = stub.new(additionalDirectories=["/opt/extra"])
            assert "sessionId" in kept
            if "list" in features_of(package):
                assert all("additionalDirectories" not in s for s in _every_session(stub))
    finally:
        stub.peer.close()


def test_a_required_login_holds_session_requests_until_authenticate_and_again_after_logout(tmp_path):
    stub = Stub("acp_bindings", tmp_path, "--require-auth")
    try:
        method = stub.hello["authMethods"][0]["id"]
        assert stub.code("session/new", {"cwd": stub.cwd, "mcpServers": []}) == AUTH_REQUIRED
        assert stub.code("authenticate", {"methodId": "no-such-method"}) == INVALID_PARAMS
        assert stub.code("authenticate", {"methodId": method}) is None
        session_id = stub.new()["sessionId"]
        assert stub.code("logout", {}) is None
        assert stub.code("session/new", {"cwd": stub.cwd, "mcpServers": []}) == AUTH_REQUIRED
        assert stub.code("session/load", {"sessionId": session_id, "cwd": stub.cwd, "mcpServers": []}) == AUTH_REQUIRED
    finally:
        stub.peer.close()


def test_without_the_flag_auth_methods_are_listed_and_authenticate_succeeds_but_is_not_needed(tmp_path):
    stub = Stub("acp_bindings", tmp_path)
    try:
        assert [m["id"] for m in stub.hello["authMethods"]] == ["stub-login"]
        assert "sessionId" in stub.new()
        assert stub.code("authenticate", {"methodId": "stub-login"}) is None
    finally:
        stub.peer.close()


@pytest.mark.parametrize("package", list(PACKAGES))
def test_a_turn_is_slow_enough_to_cancel_by_default(package, tmp_path):
    """No --delay: a client that cancels once the first update came gets ``cancelled``."""
    command = [sys.executable, "-m", f"{package}.stub_agent"]
    peer = Peer(command, env_for(PACKAGES[package]), cwd=str(tmp_path))
    try:
        peer.result("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session_id = peer.result("session/new", {"cwd": str(tmp_path), "mcpServers": []})["sessionId"]
        turn = peer.start("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "a b c"}]})
        peer.wait_for("session/update", session_id)
        peer.notify("session/cancel", {"sessionId": session_id})
        assert peer.response(turn)["result"] == {"stopReason": "cancelled"}
        assert len(peer.updates(session_id)) < 3
    finally:
        peer.close()


def test_help_lists_every_feature_and_flag(tmp_path):
    import subprocess

    done = subprocess.run([sys.executable, "-m", "acp_bindings.stub_agent", "--help"], env=env_for(BINDINGS),
                          capture_output=True, text=True, timeout=60, check=True)
    for flag in ("--delay", "--disable FEATURE", "--require-auth", "--page-size", "--listen", "--token"):
        assert flag in done.stdout, flag
    for feature in features_of("acp_bindings"):
        assert f"\n  {feature}: " in done.stdout, feature
    old = subprocess.run([sys.executable, "-m", "acp_v0_4_1.stub_agent", "--help"], env=env_for(PACKAGES["acp_v0_4_1"]),
                         capture_output=True, text=True, timeout=60, check=True)
    assert "--page-size" not in old.stdout and "\n  list: " not in old.stdout and "\n  modes: " in old.stdout
