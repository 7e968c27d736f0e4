"""Our own agents held to the spec's rules, over real pipes, by a test client written from its text.

The agents: the stub agent of the bundled schema's package (whose turns last long enough to
cancel), ``examples/echo_agent.py``, the README's quick-start agent, the agent of "Writing an
agent", and the stub agent of a package of the TypeScript SDK's v2 schema. Each check
is one function below whose docstring names the requirement and the spec page and heading it comes
from (the spec's ``docs/protocol/v1/*.mdx``; ``v2/`` where v2 says otherwise); each runs against
every agent it applies to. A capability the agent does not advertise holds it to the "off"
behaviour. Each agent process is started once for the module, and the checks share its
connection; the last checks close it and read its transcript whole.
"""

from __future__ import annotations

import atexit
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import ROOT, docs
from support.conformance import AgentUnderTest, Peer
from support.runtime import STUB_AGENT, child_env
from support.versions import env_for, stub, v2_package

STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}
CLIENT_INFO = {"name": "acpgen-conformance", "version": "1.0.0"}
METHOD_NOT_FOUND, INVALID_REQUEST, INVALID_PARAMS, PARSE_ERROR = -32601, -32600, -32602, -32700
#: The errors the schema defines (``ErrorCode``) that fit a session id nobody created.
UNKNOWN_SESSION_ERRORS = {INVALID_PARAMS, -32002}

_DOCS_AGENTS = Path(tempfile.mkdtemp(prefix="acpgen-conformance-"))
atexit.register(shutil.rmtree, _DOCS_AGENTS, ignore_errors=True)


def _docs_agent(name: str, code: str) -> tuple[str, ...]:
    path = _DOCS_AGENTS / name
    path.write_text(code)
    return (sys.executable, str(path))


(_QUICK_START,) = docs.blocks("README.md", "sh", "Quick start")
_README_AGENT = re.search(r"<<'EOF'\n(.*?)^EOF$", _QUICK_START.text, re.DOTALL | re.MULTILINE)
assert _README_AGENT, "README.md: the quick start writes no agent"
_GUIDE_AGENT = docs.blocks("guides/writing-an-agent.md", "python")[0]


def _v1(command: tuple[str, ...]) -> Callable[[], tuple[list[str], dict[str, str]]]:
    return lambda: (list(command), child_env())


def _v2_stub() -> tuple[list[str], dict[str, str]]:
    folder, package = v2_package("sdk")
    return stub(package, "agent"), env_for(folder)


AGENTS = [
    AgentUnderTest("stub-agent", _v1(STUB_AGENT), hold="updates"),  # slow enough to cancel by default
    AgentUnderTest("echo-example", _v1((sys.executable, str(ROOT / "examples" / "echo_agent.py"))),
                   hold="permission"),
    AgentUnderTest("readme-quick-start", _v1(_docs_agent("my_agent.py", _README_AGENT.group(1)))),
    AgentUnderTest("guide-echo-agent", _v1(_docs_agent("echo_agent.py", _GUIDE_AGENT.text))),
    AgentUnderTest("stub-agent-v2", _v2_stub, version=2),
]


def connect(agent: AgentUnderTest) -> Peer:
    command, env = agent.launch()
    return Peer(command, env, cwd=str(_DOCS_AGENTS))


def initialize(peer: Peer, agent: AgentUnderTest, version: int | None = None) -> dict[str, Any]:
    """The answer (result or error) to ``initialize`` at ``version`` (the agent's own by default)."""
    params: dict[str, Any] = {"protocolVersion": version or agent.version}
    if agent.version == 1:
        params.update(clientCapabilities={}, clientInfo=CLIENT_INFO)
    else:
        params.update(info=CLIENT_INFO)
    return peer.request("initialize", params)


def new_session(peer: Peer, **meta: Any) -> str:
    params: dict[str, Any] = {"cwd": str(_DOCS_AGENTS), "mcpServers": []}
    if meta:
        params["_meta"] = meta
    session_id = peer.result("session/new", params)["sessionId"]
    assert isinstance(session_id, str) and session_id, f"session/new answered the session id {session_id!r}"
    return session_id


def prompt(text: str, session_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def still_serves(peer: Peer, after: str) -> None:
    answer = peer.request("session/new", {"cwd": str(_DOCS_AGENTS), "mcpServers": []})
    assert "result" in answer, f"after {after} the agent no longer serves: session/new answered {answer}"


def error_code(answer: dict[str, Any]) -> int | None:
    return (answer.get("error") or {}).get("code") if "result" not in answer else None


# -- the checks ---------------------------------------------------------------------------------


def check_version_negotiation(peer: Peer, agent: AgentUnderTest) -> None:
    """The agent answers the version asked when it supports it, else the latest it supports.

    initialization.mdx, "Version Negotiation": "If the Agent supports the requested version, it
    MUST respond with the same version. Otherwise, the Agent MUST respond with the latest version
    it supports." (The connection opened asking for version 999, a client from the future.)
    """
    latest = peer.hello["protocolVersion"]
    assert latest == agent.version, f"asked for version 999, it answered {latest}, not its latest ({agent.version})"
    answer = initialize(peer, agent, version=agent.version)
    assert "result" in answer, f"asked for version {agent.version}, it answered the error {answer.get('error')}"
    answered = answer["result"]["protocolVersion"]
    assert answered == agent.version, f"asked for version {agent.version}, which it speaks, it answered {answered}"


def check_implementation_info(peer: Peer, agent: AgentUnderTest) -> None:
    """``initialize`` names the agent: a name and a version.

    initialization.mdx, "Implementation Information": "Both Clients and Agents SHOULD provide
    information about their implementation in the `clientInfo` and `agentInfo` fields" (v2's
    page: "MUST ... in the `info` field").
    """
    info = peer.hello.get("agentInfo" if agent.version == 1 else "info")
    assert isinstance(info, dict), f"initialize answered no agentInfo: {peer.hello}"
    assert isinstance(info.get("name"), str) and info["name"], f"agentInfo has no name: {info}"
    assert isinstance(info.get("version"), str) and info["version"], f"agentInfo has no version: {info}"


def check_session_ids_are_unique(peer: Peer, agent: AgentUnderTest) -> None:
    """Two ``session/new`` on one connection get two different session ids.

    session-setup.mdx, "Creating a Session": "The Agent MUST respond with a unique Session ID that
    identifies this conversation".
    """
    first, second = new_session(peer), new_session(peer)
    assert first != second, f"two session/new answered the same session id {first!r}"


def check_prompt_turn_ends_with_a_stop_reason(peer: Peer, agent: AgentUnderTest) -> None:
    """A prompt turn's updates name its session and come before its answer, a stop reason.

    prompt-turn.mdx, "Check for Completion": "the turn ends and the Agent MUST respond to the
    original `session/prompt` request with a `StopReason`"; "Stop Reasons" lists them.
    """
    session_id = new_session(peer)
    before = len(peer.notifications)
    answer = peer.result("session/prompt", prompt("hello conformance", session_id))
    assert answer.get("stopReason") == "end_turn", f"an uncancelled turn ended with {answer}"
    strays = [n for n in peer.notifications[before:] if (n.get("params") or {}).get("sessionId") not in
              (session_id, None)]
    assert not strays, f"during the turn of {session_id!r} the agent sent updates for other sessions: {strays}"


def check_cancel_ends_the_turn_cancelled(peer: Peer, agent: AgentUnderTest) -> None:
    """``session/cancel`` during a turn ends it with the stop reason ``cancelled``.

    prompt-turn.mdx, "Cancellation": "the Agent MUST respond to the original `session/prompt`
    request with the `cancelled` stop reason".
    """
    session_id = new_session(peer)
    if agent.hold == "permission":  # the user cancels while the agent asks for permission
        peer.permission = "cancel"
        try:
            answer = peer.result("session/prompt", prompt("hello cancellation", session_id))
        finally:
            peer.permission = "allow"
    else:  # cancelled once the first update shows the turn is under way
        turn = peer.start("session/prompt", prompt(" ".join(["word"] * 20), session_id))
        peer.wait_for("session/update", session_id)
        peer.notify("session/cancel", {"sessionId": session_id})
        answer = peer.response(turn)
        assert "result" in answer, f"a cancelled turn answered the error {answer.get('error')}"
        answer = answer["result"]
    assert answer.get("stopReason") == "cancelled", f"a cancelled turn ended with {answer}"


def check_unknown_session_is_an_error(peer: Peer, agent: AgentUnderTest) -> None:
    """A prompt for a session the agent never created is answered an error, not a turn; a cancel
    for one gets no answer and the agent keeps serving.

    session-setup.mdx, "Session ID": clients use the id `session/new` returned to send prompts and
    cancel; the schema's ``ErrorCode`` gives -32602 (invalid params) and -32002 (resource not
    found); overview.mdx, "Error Handling": "Notifications never receive responses".
    """
    answer = peer.request("session/prompt", prompt("hello nobody", "no-such-session"))
    assert error_code(answer) in UNKNOWN_SESSION_ERRORS, (
        f"a prompt for an unknown session answered {answer}, not an error {sorted(UNKNOWN_SESSION_ERRORS)}")
    assert not peer.updates("no-such-session"), "the agent sent updates for a session it never created"
    peer.notify("session/cancel", {"sessionId": "no-such-session"})
    still_serves(peer, "a session/cancel for an unknown session")
    assert not peer.unexpected_responses(), f"answers to no request: {peer.unexpected_responses()}"


#: v1's capability-gated methods: where the capability is in ``initialize``'s result, the method.
V1_GATES = [
    (("agentCapabilities", "loadSession"), "session/load"),
    (("agentCapabilities", "sessionCapabilities", "resume"), "session/resume"),
    (("agentCapabilities", "sessionCapabilities", "list"), "session/list"),
    (("agentCapabilities", "sessionCapabilities", "close"), "session/close"),
    (("agentCapabilities", "sessionCapabilities", "delete"), "session/delete"),
    (("agentCapabilities", "sessionCapabilities", "fork"), "session/fork"),
    (("agentCapabilities", "auth", "logout"), "logout"),
]
#: v2's: ``session`` advertises list, resume and close together; ``session.delete`` delete.
V2_GATES = [
    (("capabilities", "session"), "session/list"),
    (("capabilities", "session"), "session/resume"),
    (("capabilities", "session"), "session/close"),
    (("capabilities", "session", "delete"), "session/delete"),
]


def _advertised(hello: dict[str, Any], path: tuple[str, ...]) -> bool:
    value: Any = hello
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value not in (None, False)


def check_capability_gating(peer: Peer, agent: AgentUnderTest) -> None:
    """A method whose capability the agent did not advertise answers -32601 (method not found);
    one it advertised serves a session it created (``session/load`` replaying its turn first).

    initialization.mdx, "Capabilities": capabilities omitted are unsupported; session-setup.mdx,
    "Loading Sessions" ("The Agent MUST replay the entire conversation to the Client in the form
    of `session/update` notifications"), "Resuming Sessions", "Closing Active Sessions" (and
    session-list.mdx): each only when advertised (v2's initialization.mdx, "Session
    Capabilities"); the schema's ``ErrorCode`` -32601: "The method does not exist or is not
    available".
    """
    cwd = str(_DOCS_AGENTS)
    for path, method in V1_GATES if agent.version == 1 else V2_GATES:
        session_id = new_session(peer)
        advertised = _advertised(peer.hello, path)
        if advertised and method == "session/load":
            turn = peer.result("session/prompt", prompt("hello again", session_id))
            assert turn.get("stopReason") == "end_turn", f"a turn ended with {turn}"
        params = {"session/list": {}, "session/close": {"sessionId": session_id}, "logout": {},
                  "session/delete": {"sessionId": session_id},
                  "session/load": {"sessionId": session_id, "cwd": cwd, "mcpServers": []}}
        before = len(peer.updates(session_id))
        answer = peer.request(method, params.get(method, {"sessionId": session_id, "cwd": cwd}))
        capability = ".".join(path[1:])
        if not advertised:
            assert error_code(answer) == METHOD_NOT_FOUND, (
                f"{capability} is not advertised, yet {method} answered {answer}, not -32601")
            continue
        assert "result" in answer, f"{capability} is advertised, yet {method} answered {answer}"
        if method == "session/list":  # page by page (session-list.mdx, "Pagination")
            listed, page = [], answer["result"]
            for _ in range(100):
                assert isinstance(page.get("sessions"), list), f"session/list answered {page}"
                listed += [s.get("sessionId") for s in page["sessions"]]
                if page.get("nextCursor") is None:
                    break
                page = peer.result("session/list", {"cursor": page["nextCursor"]})
            assert session_id in listed, f"session/list does not list the session {session_id!r}: {listed}"
        if method == "session/load":
            assert len(peer.updates(session_id)) > before, "session/load answered before replaying the turn"
    if agent.version == 1 and not peer.hello.get("authMethods"):
        answer = peer.request("authenticate", {"methodId": "no-such-method"})
        assert "error" in answer, f"no auth method is advertised, yet authenticate answered {answer}"


def _gated(peer: Peer, agent: AgentUnderTest, method: str) -> bool:
    """The agent advertised the capability that gates ``method``."""
    return any(_advertised(peer.hello, path) for path, gated in (V1_GATES if agent.version == 1 else V2_GATES)
               if gated == method)


def check_session_list_pages_with_its_cursor(peer: Peer, agent: AgentUnderTest) -> None:
    """Where ``session/list`` is advertised, it lists the sessions of a ``cwd`` page by page,
    following ``nextCursor`` until it is absent; a cursor it never gave is an error; a ``cwd`` no
    session has lists none.

    session-list.mdx, "Pagination": "the response includes `nextCursor` when more results are
    available", "Agents SHOULD return an error if the cursor is invalid"; "Listing Sessions":
    "When no sessions match the criteria, the Agent MUST return an empty `sessions` array".
    """
    if not _gated(peer, agent, "session/list"):
        return
    cwd = tempfile.mkdtemp(dir=_DOCS_AGENTS)
    created = [peer.result("session/new", {"cwd": cwd, "mcpServers": []})["sessionId"] for _ in range(3)]
    listed: list[str] = []
    cursor = None
    for _ in range(len(created) + 1):
        page = peer.result("session/list", {"cwd": cwd, **({"cursor": cursor} if cursor else {})})
        listed += [s.get("sessionId") for s in page.get("sessions", [])]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert sorted(listed) == sorted(created), f"session/list of {cwd} listed {listed}, not {created}"
    answer = peer.request("session/list", {"cursor": "no such cursor, surely"})
    assert "error" in answer, f"an invalid cursor was answered {answer}"
    empty = peer.result("session/list", {"cwd": tempfile.mkdtemp(dir=_DOCS_AGENTS)})
    assert empty.get("sessions") == [], f"a cwd with no session listed {empty}"


def check_closed_session_is_unknown(peer: Peer, agent: AgentUnderTest) -> None:
    """Where ``session/close`` (``session/delete``) is advertised, a session closed (deleted) is
    gone: a prompt for it is answered an error, as for a session never created.

    session-setup.mdx, "Closing Active Sessions" (and session-delete.mdx): the session ends and
    the Agent frees it; "Session ID": clients send prompts with the id of a session; the
    schema's ``ErrorCode`` -32602 (invalid params) and -32002 (resource not found).
    """
    for method in ("session/close", "session/delete"):
        if not _gated(peer, agent, method):
            continue
        session_id = new_session(peer)
        assert "result" in peer.request(method, {"sessionId": session_id}), f"{method} failed"
        answer = peer.request("session/prompt", prompt("hello again", session_id))
        assert error_code(answer) in UNKNOWN_SESSION_ERRORS, (
            f"after {method} a prompt for the session answered {answer}, not an error")


def check_session_modes(peer: Peer, agent: AgentUnderTest) -> None:
    """Where ``session/new`` offers modes, the current one is among them, ``session/set_mode``
    switches to another listed one, and a mode not listed is refused.

    session-modes.mdx, "Initial state": "`currentModeId` ... The ID of the mode that is currently
    active", "availableModes"; "Setting the current mode": the ``modeId`` "Must be one of the
    modes listed in `availableModes`".
    """
    answer = peer.result("session/new", {"cwd": str(_DOCS_AGENTS), "mcpServers": []})
    modes = answer.get("modes")
    if modes is None:
        return
    offered = [mode["id"] for mode in modes["availableModes"]]
    assert modes["currentModeId"] in offered, f"the current mode is not one offered: {modes}"
    session_id = answer["sessionId"]
    switched = peer.request("session/set_mode", {"sessionId": session_id, "modeId": offered[-1]})
    assert "result" in switched, f"session/set_mode to the offered mode {offered[-1]} answered {switched}"
    refused = peer.request("session/set_mode", {"sessionId": session_id, "modeId": "no-such-mode"})
    assert "error" in refused, f"session/set_mode to a mode never offered answered {refused}"


def check_config_options(peer: Peer, agent: AgentUnderTest) -> None:
    """Where ``session/new`` offers config options, ``session/set_config_option`` to a listed
    value answers every option with its current value, the one set included.

    session-config-options.mdx, "Setting a Config Option": "The Agent MUST respond with the
    complete list of all configuration options and their current values"; "Default Values and
    Graceful Degradation": "Agents MUST always provide a default value for every configuration
    option".
    """
    answer = peer.result("session/new", {"cwd": str(_DOCS_AGENTS), "mcpServers": []})
    options = answer.get("configOptions")
    if not options:
        return
    assert all("currentValue" in option for option in options), f"an option has no current value: {options}"
    select = next((o for o in options if o.get("type") == "select" and len(o.get("options", [])) > 1), None)
    if select is None:
        return
    value = next(v["value"] for v in select["options"] if v["value"] != select["currentValue"])
    params = {"sessionId": answer["sessionId"], "configId": select["id"], "value": value}
    result = peer.result("session/set_config_option", params)
    ids = [o.get("id") for o in result.get("configOptions", [])]
    assert sorted(ids) == sorted(o["id"] for o in options), f"the answer does not list every option: {result}"
    current = next(o for o in result["configOptions"] if o["id"] == select["id"])["currentValue"]
    assert current == value, f"{select['id']} was set to {value!r}, the answer says {current!r}"


def check_parse_error(peer: Peer, agent: AgentUnderTest) -> None:
    """A line that is not JSON is answered -32700 (parse error, id null) and the agent keeps serving.

    transports.mdx, "stdio": messages are JSON-RPC; JSON-RPC 2.0 "Error object" (cited by
    overview.mdx, "Error Handling"); the schema's ``ErrorCode`` -32700.
    """
    peer.send_bytes(b'{"jsonrpc": "2.0", "id": \n')
    answer = peer.response(None)
    assert error_code(answer) == PARSE_ERROR, f"a line that is not JSON was answered {answer}"
    still_serves(peer, "a line that is not JSON")


def check_invalid_request(peer: Peer, agent: AgentUnderTest) -> None:
    """A message that is not a valid request object is answered -32600 (invalid request).

    overview.mdx, "Error Handling" (JSON-RPC 2.0's error object); the schema's ``ErrorCode``
    -32600: "The JSON sent is not a valid Request object".
    """
    bad = {"jsonrpc": "2.0", "id": "bad-request", "method": 42}
    peer.start("", message=bad)
    answer = peer.response("bad-request")
    assert error_code(answer) == INVALID_REQUEST, f"a request whose method is a number was answered {answer}"
    still_serves(peer, "an invalid request")


def check_unknown_method(peer: Peer, agent: AgentUnderTest) -> None:
    """A request for a method the agent does not have is answered -32601 (method not found).

    overview.mdx, "Error Handling"; the schema's ``ErrorCode`` -32601.
    """
    answer = peer.request("no/such_method", {})
    assert error_code(answer) == METHOD_NOT_FOUND, f"an unknown method was answered {answer}"


def check_notification_gets_no_reply(peer: Peer, agent: AgentUnderTest) -> None:
    """An unknown notification gets no reply, not even an error, and the agent keeps serving.

    overview.mdx, "Error Handling": "Notifications never receive responses (success or error)".
    """
    peer.notify("no/such_notification", {})
    still_serves(peer, "an unknown notification")
    assert not peer.unexpected_responses(), f"answers to no request: {peer.unexpected_responses()}"


def check_extension_request(peer: Peer, agent: AgentUnderTest) -> None:
    """An extension request (``_`` and a name) the agent does not know answers -32601.

    extensibility.mdx, "Custom Requests": "If the receiving end doesn't recognize the custom method
    name, it should respond with the standard "Method not found" error".
    """
    answer = peer.request("_conformance/ping", {"asked": True})
    assert error_code(answer) == METHOD_NOT_FOUND, f"an unknown extension request was answered {answer}"


def check_extension_notification(peer: Peer, agent: AgentUnderTest) -> None:
    """An extension notification the agent does not know is ignored: no reply, still serving.

    extensibility.mdx, "Custom Notifications": "implementations SHOULD ignore unrecognized
    notifications".
    """
    peer.notify("_conformance/note", {"noted": True})
    still_serves(peer, "an unknown extension notification")
    assert not peer.unexpected_responses(), f"answers to no request: {peer.unexpected_responses()}"


def check_meta_is_accepted(peer: Peer, agent: AgentUnderTest) -> None:
    """``_meta`` in a request's params and in a content block is accepted, never refused.

    extensibility.mdx, "The `_meta` Field": "All types in the protocol include a `_meta` field ...
    that implementations can use to attach custom information", trace context keys included.
    """
    meta = {"traceparent": "00-80e1afed08e019fc1110464cfa66635c-7a085853722dc6d2-01", "example.com/flag": True}
    session_id = new_session(peer, **meta)
    if agent.version == 1:
        params = prompt("hello meta", session_id)
        params["_meta"] = meta
        params["prompt"][0]["_meta"] = {"example.com/block": 1}
        answer = peer.result("session/prompt", params)
        assert answer.get("stopReason") in STOP_REASONS, f"a prompt with _meta ended with {answer}"


def check_stdout_hygiene(peer: Peer, agent: AgentUnderTest) -> None:
    """Everything the agent wrote on stdout is a JSON-RPC 2.0 message, one a line, and every
    response answers one request of ours, once.

    transports.mdx, "stdio": "The agent MUST NOT write anything to its `stdout` that is not a
    valid ACP message", messages "MUST NOT contain embedded newlines"; overview.mdx, "Error
    Handling": notifications never receive responses. (Read after the agent exited.)
    """
    peer.close()
    assert peer.lines, "the agent wrote nothing"
    for number, line in enumerate(peer.lines, 1):
        try:
            message = json.loads(line)
        except ValueError:
            raise AssertionError(f"stdout line {number} is not JSON: {line[:200]!r}") from None
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", (
            f"stdout line {number} is not a JSON-RPC 2.0 message: {line[:200]!r}")
        assert ("method" in message) or ("result" in message) != ("error" in message), (
            f"stdout line {number} is neither a request, a notification nor a response: {line[:200]!r}")
    assert not peer.unexpected_responses(), f"answers to no request: {peer.unexpected_responses()}"


def check_clean_shutdown(peer: Peer, agent: AgentUnderTest) -> None:
    """Stdin closed, the agent exits by itself, with status 0.

    transports.mdx, "stdio": the client ends the exchange by closing the agent's stdin ("Close
    stdin, terminate subprocess").
    """
    status = peer.close()
    assert status is not None, "the agent did not exit after its stdin was closed"
    assert status == 0, f"the agent exited {status} after its stdin was closed; stderr:\n{peer.stderr()[-2000:]}"


#: Every check, in the order they run on one connection (the last two close it), and the protocol
#: versions each applies to.
CHECKS: list[tuple[Callable[[Peer, AgentUnderTest], None], tuple[int, ...]]] = [
    (check_version_negotiation, (1, 2)),
    (check_implementation_info, (1, 2)),
    (check_session_ids_are_unique, (1, 2)),
    (check_prompt_turn_ends_with_a_stop_reason, (1,)),  # v2 turns end through state updates
    (check_cancel_ends_the_turn_cancelled, (1,)),
    (check_unknown_session_is_an_error, (1, 2)),
    (check_capability_gating, (1, 2)),
    (check_session_list_pages_with_its_cursor, (1, 2)),
    (check_closed_session_is_unknown, (1, 2)),
    (check_session_modes, (1,)),
    (check_config_options, (1,)),
    (check_parse_error, (1, 2)),
    (check_invalid_request, (1, 2)),
    (check_unknown_method, (1, 2)),
    (check_notification_gets_no_reply, (1, 2)),
    (check_extension_request, (1, 2)),
    (check_extension_notification, (1, 2)),
    (check_meta_is_accepted, (1, 2)),
    (check_clean_shutdown, (1, 2)),
    (check_stdout_hygiene, (1, 2)),
]


#: The checks that read a connection's end: they run on a closed one as it is.
CLOSING = (check_clean_shutdown, check_stdout_hygiene)


def _applies(check: Callable[..., None], versions: tuple[int, ...], agent: AgentUnderTest) -> bool:
    if agent.version not in versions:
        return False
    return check is not check_cancel_ends_the_turn_cancelled or agent.hold is not None


CASES = [pytest.param(agent, check, id=f"{agent.name}-{check.__name__.removeprefix('check_')}")
         for agent in AGENTS for check, versions in CHECKS if _applies(check, versions, agent)]


@pytest.fixture(scope="module")
def peers():
    """One connection per agent, started when a check first needs it (again, once closed, for a
    check that needs it open), initialized by a client whose latest version is 999."""
    open_peers: dict[str, Peer] = {}

    def peer_of(agent: AgentUnderTest, check: Callable[..., None]) -> Peer:
        peer = open_peers.get(agent.name)
        if peer is None or peer.closed and check not in CLOSING:
            peer = open_peers[agent.name] = connect(agent)
            answer = initialize(peer, agent, version=999)
            assert "result" in answer, f"{agent.name}: initialize answered {answer}"
            peer.hello = answer["result"]
        return peer

    yield peer_of
    for peer in open_peers.values():
        peer.close()


def requirement(check: Callable[..., None]) -> str:
    return " ".join((check.__doc__ or "").split("\n\n")[0].split())


@pytest.mark.parametrize(("agent", "check"), CASES)
def test_the_agent_meets_the_spec(agent, check, peers):
    peer = peers(agent, check)
    try:
        check(peer, agent)
    except AssertionError as error:
        source = " ".join((check.__doc__ or "").split("\n\n")[1].split())
        pytest.fail(f"{agent.name} breaks: {requirement(check)}\n  ({source})\n  {error}", pytrace=False)


def test_every_check_cites_the_spec_and_runs_on_every_agent_it_applies_to():
    for check, _ in CHECKS:
        assert re.search(r"\w+\.mdx, \"[^\"]+\"", check.__doc__ or ""), f"{check.__name__} cites no spec section"
    assert {agent.name for agent, _ in (case.values for case in CASES)} == {agent.name for agent in AGENTS}
    held = [agent for agent in AGENTS if agent.version == 1 and agent.hold is not None]
    assert len(held) >= 2, "cancellation is exercised on fewer than two agents"


SLOPPY_AGENT = '''
import asyncio
import acp_bindings as acp
from acp_bindings import models
from acp_bindings.builders import content_block as content, session_update as update
print("starting up")  # before run_agent guards the wire: it reaches stdout


class Sloppy(acp.Agent):
    async def initialize(self, params):
        # a version it does not speak (the connection hands it the one negotiated, its own)
        return models.InitializeResponse(protocol_version=params.protocol_version + 1)

    async def session_new(self, params):
        return models.NewSessionResponse(session_id="s-1")

    async def session_load(self, params):  # not advertised
        return models.LoadSessionResponse()

    def session_known(self, session_id):  # takes any session the base would refuse
        return True

    async def session_prompt(self, params):  # deaf to session/cancel
        await self.client.session_update(session_id=params.session_id,
                                         update=update.agent_message_chunk(content.text("thinking")))
        await asyncio.sleep(0.5)
        return models.PromptResponse(stop_reason="end_turn")


asyncio.run(acp.run_agent(Sloppy()))
'''


def test_the_checks_fail_an_agent_that_breaks_their_rules():
    """The checks can fail: an agent that breaks seven rules fails those seven checks, and only those."""
    agent = AgentUnderTest("sloppy", _v1(_docs_agent("sloppy_agent.py", SLOPPY_AGENT)), hold="updates")
    peer = connect(agent)
    peer.hello = initialize(peer, agent, version=999)["result"]
    broken: dict[str, str] = {}
    try:
        for check, versions in CHECKS:
            if _applies(check, versions, agent):
                try:
                    check(peer, agent)
                except AssertionError as error:
                    broken[check.__name__.removeprefix("check_")] = str(error)
    finally:
        peer.close()
    assert set(broken) == {"version_negotiation", "implementation_info", "session_ids_are_unique",
                           "cancel_ends_the_turn_cancelled", "unknown_session_is_an_error", "capability_gating",
                           "stdout_hygiene"}, broken
    assert "b'starting up\\n'" in broken["stdout_hygiene"] and "session/load" in broken["capability_gating"]


def test_capability_gating_holds_the_stub_agent_to_each_half():
    """The stub agent advertises and serves every v1 capability its schema defines (the "on"
    half of the check); with each one disabled, it advertises none and answers -32601 (the "off"
    half)."""
    from acp_bindings._stub_data import FEATURES

    everything = AgentUnderTest("stub-agent-all-on", _v1(STUB_AGENT))
    nothing = AgentUnderTest("stub-agent-all-off", _v1((*STUB_AGENT, *(a for f in FEATURES for a in ("--disable", f)))))
    for agent, expected in ((everything, True), (nothing, False)):
        peer = connect(agent)
        try:
            peer.hello = initialize(peer, agent)["result"]
            defined = [(path, method) for path, method in V1_GATES if method != "session/delete"]
            assert [_advertised(peer.hello, path) for path, _ in defined] == [expected] * len(defined), peer.hello
            for check in (check_capability_gating, check_session_list_pages_with_its_cursor,
                          check_closed_session_is_unknown, check_session_modes, check_config_options):
                check(peer, agent)
            assert {method for _, method in defined} <= set(peer.requested)
            assert ("session/set_mode" in peer.requested) == expected, agent.name
        finally:
            peer.close()
