"""The stubs of protocol version 2: turns end through state updates, and the stub client and stub
agent of every v2 draft complete one, with and without a permission request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.versions import V2_SCHEMAS, run_stub_client

from acpgen.pipeline import Options, build_spec


def lines_of(done) -> list[dict]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_which_v2_drafts_get_stubs():
    """v0.13.7's draft still ends a turn with the prompt's stopReason and has none of v1's file
    methods: no stub is written against it; every later one gets both."""
    drafts = sorted(Path(V2_SCHEMAS["v1.7.0"]).parent.glob("*--v2-schema*.json"))
    stubs = {}
    for schema in drafts:
        spec, _ = build_spec(Options(schema=schema))
        stubs[schema.name] = tuple(r.side for r in spec.roles if r.stub)
    assert {name for name, sides in stubs.items() if not sides} == {
        "v0.13.7--v2-schema.json", "v0.13.7--v2-schema.unstable.json"
    }
    assert all(sides == ("agent", "client") for name, sides in stubs.items() if not name.startswith("v0.13.7"))


@pytest.mark.parametrize("release", sorted(V2_SCHEMAS))
def test_the_stub_client_completes_a_turn_against_the_stub_agent(tmp_path, release):
    lines = lines_of(run_stub_client(release, tmp_path, "--prompt", "one two  three"))
    assert lines[-1] == {"stopReason": "end_turn"}
    updates = [line["update"] for line in lines[:-1]]
    assert {line["sessionId"] for line in lines[:-1]} == {"stub-session-1"}
    assert updates[0] == {"sessionUpdate": "state_update", "state": "running"}
    assert updates[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    assert updates[1]["sessionUpdate"] == "user_message" and updates[1]["messageId"]
    assert updates[1]["content"] == [{"type": "text", "text": "one two  three"}]
    chunks = updates[2:-1]
    assert [c["content"]["text"] for c in chunks] == ["one ", "two  ", "three"]
    assert {c["sessionUpdate"] for c in chunks} == {"agent_message_chunk"}
    assert len({c["messageId"] for c in chunks}) == 1 and chunks[0]["messageId"] != updates[1]["messageId"]


@pytest.mark.parametrize("release", ["v0.13.8", "v1.3.0", "sdk"])
def test_a_permission_request_is_answered_and_honoured(tmp_path, release):
    allowed = lines_of(run_stub_client(release, tmp_path, "--prompt", "hi", agent=None))
    granted = lines_of(run_stub_client(release, tmp_path, "--prompt", "hi",
                                       agent=_agent(release, "--ask-permission")))
    refused = lines_of(run_stub_client(release, tmp_path, "--reject", "--prompt", "hi",
                                       agent=_agent(release, "--ask-permission")))
    states = [u["update"].get("state") for u in granted[:-1] if u["update"]["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    echoed = [u for u in granted[:-1] if u["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert [u["update"]["content"]["text"] for u in echoed] == ["hi"]
    assert len(allowed) == len(granted) - 2  # the same turn, less the two state updates around the request
    assert not [u for u in refused[:-1] if u["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert refused[-1] == granted[-1] == {"stopReason": "end_turn"}


def _agent(release: str, *args: str) -> list[str]:
    from support.versions import stub, v2_package

    return [*stub(v2_package(release)[1], "agent"), *args]


@pytest.mark.parametrize(("asked", "answered"), [(2, 2), (3, 2), (65535, 2)])
def test_the_stub_agent_answers_its_version_at_or_below_the_one_asked(tmp_path, asked, answered):
    lines = lines_of(run_stub_client("sdk", tmp_path, "--protocol-version", str(asked)))
    assert lines[-1] == {"stopReason": "end_turn"}


@pytest.mark.parametrize("asked", [0, 1])
def test_the_stub_agent_refuses_an_earlier_version_with_32022(tmp_path, asked):
    done = run_stub_client("sdk", tmp_path, "--protocol-version", str(asked))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == (
        "stub_client: the agent answered with an error: Unsupported protocol version (-32022):"
        f' {{"requested": {asked}, "supported": [2]}}'
    )
