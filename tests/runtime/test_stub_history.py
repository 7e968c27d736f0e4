"""The stub agent keeps the last ``HISTORY_TURNS`` turns of a session for ``session/load`` replay
(``_stub_sessions.History``): a session of more turns replays the last ones, its first update's
``_meta`` saying how many earlier turns were dropped. ``bench/bench_stub_history.py`` measures
the memory a long session holds."""

from __future__ import annotations

import asyncio
from typing import Any

import acp_bindings as acp
from acp_bindings import models
from acp_bindings._runtime.stubs import _stub_sessions
from acp_bindings._runtime.stubs._stub_sessions import DROPPED_TURNS, History, Session
from acp_bindings.stub_agent import StubAgent


def turn(n: int) -> list[dict[str, Any]]:
    """The updates of a v1 turn: the prompt's two blocks, then the agent's two chunks."""
    said = [{"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": f"p{n}-{i}"}} for i in (1, 2)]
    answered = [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"a{n}-{i}"}} for i in (1, 2)]
    return said + answered


def test_the_history_keeps_the_last_turns_and_says_how_many_it_dropped() -> None:
    opening = {"sessionUpdate": "available_commands_update", "availableCommands": []}
    history = History([opening], turns=3)  # the updates before the first prompt are a turn too
    for n in range(1, 6):
        for update in turn(n):
            history.append(update)
    kept = [u for n in (3, 4, 5) for u in turn(n)]
    replayed = list(history)
    assert len(history) == len(kept) == 12 and history.dropped == 3
    assert replayed[0] == {**kept[0], "_meta": {DROPPED_TURNS: 3}} and replayed[1:] == kept[1:]
    # a fork (what its source replays) keeps the count, and drops its own on top of it
    fork = Session("fork", "/", history=replayed)  # type: ignore[arg-type]
    assert isinstance(fork.history, History) and list(fork.history) == replayed
    fork.history.turns = 3
    fork.history.append(turn(6)[0])
    assert fork.history.dropped == 4 and next(iter(fork.history)) == {**turn(4)[0], "_meta": {DROPPED_TURNS: 4}}
    # a v2 prompt is one user_message: each opens a turn; nothing dropped, nothing marked
    v2 = History(turns=2)
    for n in range(2):
        v2.append({"sessionUpdate": "user_message", "messageId": f"m{n}", "content": []})
    assert v2.dropped == 0 and [u.get("_meta") for u in v2] == [None, None]


class Recorder(acp.Client):
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    async def session_update(self, params: models.SessionNotification) -> None:
        self.updates.append(acp.encode(params)["update"])


def test_a_session_of_more_turns_than_kept_replays_the_last_ones(monkeypatch) -> None:
    monkeypatch.setattr(_stub_sessions, "HISTORY_TURNS", 2)
    recorder = Recorder()

    async def main() -> tuple[int, list[dict[str, Any]], list[dict[str, Any]]]:
        async with acp.in_memory_pair(StubAgent(delay=0), recorder) as (_, client):
            await client.agent.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await client.agent.session_new(cwd="/tmp", mcp_servers=[])
            opening = len(recorder.updates)  # updates before the first prompt: a turn of their own
            for n in range(1, 5):
                await client.agent.session_prompt(session_id=session.session_id, prompt=[models.Text(text=f"turn {n}")])
            told = len(recorder.updates)
            await client.agent.session_load(session_id=session.session_id, cwd="/tmp", mcp_servers=[])
            return opening, recorder.updates[:told], recorder.updates[told:]

    opening, live, replayed = asyncio.run(main())
    prompts = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert prompts == ["turn 3", "turn 4"]
    assert replayed[0]["_meta"] == {DROPPED_TURNS: 2 + bool(opening)}  # turns 1 and 2 (and the opening)
    answers = [u for u in replayed if u["sessionUpdate"] != "user_message_chunk"]
    assert answers == live[-len(answers):] and "_meta" not in str(replayed[1:])  # what turns 3 and 4 said
