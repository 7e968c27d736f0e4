"""The v2 stub agent's session features, on and off, as each draft defines them.

Later drafts (v1.3.0 on, and the TypeScript SDK's) make the bare ``session`` capability commit to
``session/list``, ``session/resume`` and ``session/close``, with ``session.delete`` and
``session.additionalDirectories`` below it; earlier ones (v0.13.8 to v1.2.0) give each method a
capability of its own below ``session`` (``session.load``, ``session.list``, ...). The stub agent
advertises what it serves and serves what it advertises, over real pipes; a feature disabled is
not advertised and its request answers -32601.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from support.conformance import Peer
from support.versions import env_for, stub, v2_package

METHOD_NOT_FOUND, INVALID_PARAMS = -32601, -32602
LATER, EARLIER = "sdk", "v1.2.0"
#: The prompt capabilities the stub agent advertises (in the ``session`` capability).
PROMPT = {"image": {}, "audio": {}, "embeddedContext": {}}


class Agent:
    """The stub agent of a draft started with ``args``, initialized."""

    def __init__(self, release: str, cwd: str, *args: str) -> None:
        folder, package = v2_package(release)
        self.cwd = cwd
        self.peer = Peer([*stub(package, "agent"), *args], env_for(folder), cwd=cwd)
        self.hello = self.peer.result("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}})

    def new(self, **params: Any) -> str:
        session_id: str = self.peer.result("session/new", {"cwd": self.cwd, "mcpServers": [], **params})["sessionId"]
        return session_id

    def code(self, method: str, params: dict[str, Any]) -> int | None:
        answer = self.peer.request(method, params)
        return None if "result" in answer else answer["error"]["code"]

    def listed(self, **params: Any) -> list[dict[str, Any]]:
        sessions, cursor = [], None
        for _ in range(50):
            page = self.peer.result("session/list", {**params, **({"cursor": cursor} if cursor else {})})
            assert len(page["sessions"]) <= 2
            sessions += page["sessions"]
            cursor = page.get("nextCursor")
            if cursor is None:
                return sessions
        raise AssertionError("session/list never ended")

    def turn(self, session_id: str, text: str) -> None:
        self.peer.result("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})
        deadline = time.monotonic() + 30
        while not any(u["update"].get("state") == "idle" for u in self.peer.updates(session_id)):
            assert time.monotonic() < deadline, "the turn never ended"
            time.sleep(0.02)


@pytest.fixture
def agents(tmp_path):
    started: list[Agent] = []

    def start(release: str, *args: str) -> Agent:
        started.append(Agent(release, str(tmp_path), *args))
        return started[-1]

    yield start
    for agent in started:
        agent.peer.close()


def test_a_later_draft_advertises_the_session_capability_and_serves_what_it_commits_to(agents):
    agent = agents(LATER)
    assert agent.hello["capabilities"] == {"session": {"prompt": PROMPT, "delete": {}, "additionalDirectories": {}}}
    first, second, third = agent.new(additionalDirectories=["/opt/extra"]), agent.new(), agent.new()
    listed = agent.listed()
    assert [s["sessionId"] for s in listed] == [first, second, third]
    assert listed[0]["additionalDirectories"] == ["/opt/extra"]
    assert agent.code("session/list", {"cursor": "not-a-cursor"}) == INVALID_PARAMS
    agent.turn(first, "hello again")
    before = len(agent.peer.updates(first))
    assert agent.code("session/resume", {"sessionId": first, "cwd": agent.cwd}) is None
    assert len(agent.peer.updates(first)) == before, "a resume without replayFrom replayed"
    assert agent.code("session/resume", {"sessionId": first, "cwd": agent.cwd, "replayFrom": {"type": "start"}}) is None
    replayed = [u["update"] for u in agent.peer.updates(first)[before:]]
    assert [u["sessionUpdate"] for u in replayed][:1] == ["user_message"] and len(replayed) >= 2
    bad = {"sessionId": first, "cwd": agent.cwd, "replayFrom": {"type": "_somewhere"}}
    assert agent.code("session/resume", bad) == INVALID_PARAMS
    assert agent.code("session/close", {"sessionId": first}) is None
    assert agent.code("session/delete", {"sessionId": second}) is None
    # session-delete.mdx, "Semantics": deleting a session already deleted, or never created,
    # SHOULD succeed silently
    assert agent.code("session/delete", {"sessionId": second}) is None
    assert agent.code("session/delete", {"sessionId": "never-created"}) is None
    assert [s["sessionId"] for s in agent.listed()] == [third]
    assert agent.code("session/close", {"sessionId": first}) == INVALID_PARAMS


@pytest.mark.parametrize("feature", ["list", "resume", "close"])
def test_a_later_draft_without_one_of_what_session_commits_to_advertises_no_session_capability(agents, feature):
    agent = agents(LATER, "--disable", feature)
    assert agent.hello["capabilities"] == {}
    session_id = agent.new()
    for method, params in [("session/list", {}), ("session/resume", {"sessionId": session_id, "cwd": agent.cwd}),
                           ("session/close", {"sessionId": session_id}), ("session/delete", {"sessionId": session_id})]:
        assert agent.code(method, params) == METHOD_NOT_FOUND, method


def test_a_later_draft_without_delete_keeps_the_rest(agents):
    agent = agents(LATER, "--disable", "delete")
    assert agent.hello["capabilities"] == {"session": {"prompt": PROMPT, "additionalDirectories": {}}}
    assert agent.code("session/delete", {"sessionId": agent.new()}) == METHOD_NOT_FOUND
    assert agent.code("session/list", {}) is None


def test_an_earlier_draft_advertises_each_method_below_session_and_loads_with_a_replay(agents):
    agent = agents(EARLIER)
    session = agent.hello["capabilities"]["session"]
    assert {"load", "list", "resume", "close", "delete"} <= set(session)
    session_id = agent.new()
    agent.turn(session_id, "remember me")
    before = len(agent.peer.updates(session_id))
    assert agent.code("session/load", {"sessionId": session_id, "cwd": agent.cwd, "mcpServers": []}) is None
    assert len(agent.peer.updates(session_id)) > before, "session/load answered before replaying the turn"


@pytest.mark.parametrize("feature", ["load", "list", "resume", "close", "delete"])
def test_an_earlier_draft_disables_one_method_alone(agents, feature):
    agent = agents(EARLIER, "--disable", feature)
    session = agent.hello["capabilities"]["session"]
    assert feature not in session and len(session) >= 4
    session_id = agent.new()
    params = {"sessionId": session_id, "cwd": agent.cwd, "mcpServers": []} if feature != "list" else {}
    if feature in ("close", "delete"):
        params = {"sessionId": session_id}
    assert agent.code(f"session/{feature}", params) == METHOD_NOT_FOUND


def test_a_session_offers_a_config_option_that_changes_the_echo(agents):
    """At parity with the v1 stub agent: ``session/new`` offers the ``style`` option, which
    ``session/set_config_option`` sets (and reports in a ``config_option_update``); ``upper``
    echoes the prompt in upper case; a value it does not offer is -32602."""
    agent = agents(LATER)
    answer = agent.peer.result("session/new", {"cwd": agent.cwd})
    session_id, options = answer["sessionId"], answer["configOptions"]
    assert [(o["configId"], o["currentValue"]) for o in options] == [("style", "echo")]
    assert agent.code("session/set_config_option", {"sessionId": session_id, "configId": "style", "type": "id",
                                                    "value": "no-such-value"}) == INVALID_PARAMS
    changed = agent.peer.result("session/set_config_option", {"sessionId": session_id, "configId": "style",
                                                              "type": "id", "value": "upper"})
    assert changed["configOptions"][0]["currentValue"] == "upper"
    assert agent.peer.updates(session_id)[-1]["update"] == {"sessionUpdate": "config_option_update", **changed}
    agent.turn(session_id, "quiet please")
    echoed = [u["update"]["content"]["text"] for u in agent.peer.updates(session_id)
              if u["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(echoed) == "QUIET PLEASE"
