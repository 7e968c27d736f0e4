"""The agent kit's checks of initialization, sessions and prompt turns, and the list of every check.

:func:`requirements` gives the checks that apply to a :class:`~._kit_agent.Target`, in the order
they run: these, the capability gating of :mod:`._kit_features`, the envelope and extensibility
of :mod:`._kit_wire`, and last the transport's (which close the connection).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._kit_agent import (
    FUTURE_VERSION,
    SESSION_UPDATES,
    Check,
    Cite,
    Kit,
    NotApplicable,
    Target,
    cites,
    turn_state,
    unknown_session_error,
)
from ._kit_features import feature_checks
from ._kit_peer import Broken, quote
from ._kit_wire import CLOSING, ENVELOPE

__all__ = ["CHECKS", "requirements"]


# -- initialization ---------------------------------------------------------------------------------


async def version_negotiation(kit: Kit) -> None:
    try:
        peer = await kit.live()
    except NotApplicable:  # the first connection: initialize failed
        raise Broken(str(kit.failure)) from None
    version = kit.target.version
    answered = peer.hello.get("protocolVersion")
    if answered != version:
        raise Broken(
            f"asked for version {version}, which it speaks, it answered {quote(peer.hello)}"
        )
    probe = await kit.connection(FUTURE_VERSION)
    latest = probe.hello.get("protocolVersion")
    await probe.close()
    if (
        not isinstance(latest, int)
        or isinstance(latest, bool)
        or not version <= latest < FUTURE_VERSION
    ):
        raise Broken(
            f"asked for version {FUTURE_VERSION}, which no release defines, it answered "
            f"{quote(probe.hello)}, not the latest version it supports"
        )


async def implementation_info(kit: Kit) -> None:
    hello = await kit.hello()
    info = hello.get(kit.target.info)
    if not isinstance(info, dict) or not all(
        isinstance(info.get(k), str) and info[k] for k in ("name", "version")
    ):
        raise Broken(
            f"initialize names no agent (a name and a version in {kit.target.info}): {quote(hello)}"
        )


# -- sessions and turns -----------------------------------------------------------------------------


async def unique_session_ids(kit: Kit) -> None:
    first, second = await kit.new_session(), await kit.new_session()
    if first == second:
        raise Broken(f"two session/new answered the same session id {first!r}")


async def unknown_session(kit: Kit) -> None:
    peer = await kit.live()
    start = len(peer.messages)
    answer = await peer.request("session/prompt", kit.prompt("kit-no-such-session", "hello nobody"))
    if not unknown_session_error(answer, peer):
        raise Broken(f"a prompt for a session never created answered {quote(answer)}, not an error")
    if peer.updates("kit-no-such-session", start):
        raise Broken(
            f"it sent updates for a session it never created: {quote(peer.updates('kit-no-such-session')[0])}"
        )
    method, path = kit.target.features.get("close", ("", ()))
    if not method or not kit.advertised(path):
        return
    closed = await kit.new_session()
    await kit.turn(closed, "hello before")
    if "result" not in await peer.request(method, {"sessionId": closed}):
        return  # a refused close is capabilities.close's
    answer = await peer.request("session/prompt", kit.prompt(closed, "hello again"))
    if not unknown_session_error(answer, peer):
        raise Broken(
            f"after {method} a prompt for the session answered {quote(answer)}, not an error"
        )


async def stop_reason(kit: Kit) -> None:
    """A turn ends with ``end_turn``; an update during it names its session or another the agent
    made (no text forbids a live session's updates, such as its commands, mid-turn), never one
    the agent never made."""
    session_id = await kit.new_session()
    peer = await kit.live()
    start = len(peer.messages)
    end = await kit.turn(session_id)
    if end.get("stopReason") != "end_turn":
        raise Broken(f"an uncancelled turn ended with {quote(end)}, not the stop reason end_turn")
    made = kit.sessions_made()
    strays = [
        m
        for m in peer.messages[start:]
        if m.get("method") == "session/update"
        and (m.get("params") or {}).get("sessionId") not in made
    ]
    if strays:
        raise Broken(
            f"during the turn of {session_id!r} it sent an update of a session it never made: "
            f"{quote(strays[0])}"
        )


#: A prompt that asks for a long turn: time for a cancel to reach it while it is under way.
LONG_TURN = (
    "Please write a long, detailed answer, at least two thousand words, on the history of "
    "computing, and check the files of the current folder as you go."
)


async def cancellation(kit: Kit) -> None:
    """Cancel a turn before the agent could have answered it: ``session/cancel`` in the same write
    as the prompt; if that turn ended before the agent read the cancel, again once a turn asked
    to be long is under way. A turn that ends otherwise fails only where the agent had read the
    cancel first: it answered a request sent after the cancel before it ended the turn (or it
    was waiting for a permission the cancel answered). Where neither try could test it, the
    verdict says why. The turn cancelled is kept for ``prompt.no-update-after-cancel``."""
    kit.cancelled_turn = None
    first = await _cancelled(kit, at_once=True)
    if isinstance(first, str):
        second = await _cancelled(kit, at_once=False)
        if isinstance(second, str):
            raise NotApplicable(
                f"could not test it: with the prompt, {first}; during a long turn, {second}"
            )


async def _cancelled(kit: Kit, at_once: bool) -> str | None:
    """One try: None once the turn ended cancelled (kept in ``kit.cancelled_turn``), or why it
    could not test the requirement; :class:`Broken` when the agent read the cancel and the turn
    ended otherwise."""
    session_id = await kit.new_session()
    peer = await kit.live()
    start = len(peer.messages)
    peer.permission = "cancel"  # a permission request is answered cancelled, after session/cancel
    ping = None
    cancel = peer.notification("session/cancel", {"sessionId": session_id})
    try:
        if at_once:
            prompt = peer.asking("session/prompt", kit.prompt(session_id, "hello cancellation"))
            after = peer.asking("kit/after_cancel", {})  # answered once the cancel is read
            await peer.send_together([prompt, cancel, after])
            turn, ping = prompt["id"], after["id"]
        else:
            turn = await peer.start("session/prompt", kit.prompt(session_id, LONG_TURN))
            ended = None if kit.target.state_turns else turn  # v2: the answer takes the prompt
            busy = await peer.wait_for(
                lambda m: _busy(m, session_id, ended), start, session=session_id
            )
            if busy is None or "method" not in busy or turn_state(busy, session_id) == "idle":
                return "the turn ended before it sent an update or asked for permission"
            if busy.get("method") != "session/request_permission":
                after = peer.asking("kit/after_cancel", {})
                await peer.send_together([cancel, after])
                ping = after["id"]
        answer = await peer.response(turn, "session/prompt")
        if not isinstance(answer.get("result"), dict):
            raise Broken(f"a cancelled turn answered {quote(answer)}")
        end = (
            await kit.idle(peer, session_id, start) if kit.target.state_turns else answer["result"]
        )
        if ping is not None and end.get("stopReason") != "cancelled":
            pong = await peer.response(ping, "a request sent after the cancel")
            if _index(peer.messages, end, start) < peer.messages.index(pong, start):
                return f"the turn ended ({quote(end)}) before the agent read the cancel"
    finally:
        peer.permission = "allow"
    if end.get("stopReason") != "cancelled":
        raise Broken(f"a turn cancelled by session/cancel ended with {quote(end)}")
    kit.cancelled_turn = (peer, session_id, _index(peer.messages, end, start))
    return None


async def no_update_after_cancel(kit: Kit) -> None:
    """After the cancelled turn's end (v1: its response; v2: its ``idle``), no update of what the
    turn did (content, tool calls, a plan) for its session, within a second."""
    if kit.cancelled_turn is None:
        raise NotApplicable("no turn was cancelled (see prompt.cancellation)")
    peer, session_id, end = kit.cancelled_turn

    def late(message: Mapping[str, Any]) -> bool:
        params = message.get("params")
        if message.get("method") != "session/update" or not isinstance(params, dict):
            return False
        update = params.get("update")
        return (
            params.get("sessionId") == session_id
            and isinstance(update, dict)
            and update.get("sessionUpdate") not in SESSION_UPDATES
        )

    found = await peer.wait_for(late, end + 1, timeout=min(1.0, peer.patience))
    if found is not None:
        raise Broken(
            f"after the cancelled turn's end ({quote(peer.messages[end], 200)}) it sent {quote(found)}"
        )


def _index(messages: list[dict[str, Any]], end: Mapping[str, Any], start: int) -> int:
    """Where the message that ended a turn is (``end``: v1's result, v2's idle update)."""
    for index in range(start, len(messages)):
        message = messages[index]
        params = message.get("params")
        if message.get("result") is end or isinstance(params, dict) and params.get("update") is end:
            return index
    return len(messages)


def _ends(message: Mapping[str, Any], session_id: str, turn: Any) -> bool:
    """The message ends the turn: v1's response to ``turn``, v2's state ``idle``."""
    return turn_state(message, session_id) == "idle" or (
        "method" not in message and message.get("id") == turn
    )


def _busy(message: Mapping[str, Any], session_id: str, turn: Any) -> bool:
    """The turn is under way (an update of its session other than a state change, or a
    permission request) or over (v1: its response, ``turn``; v2: the state ``idle``)."""
    if "method" not in message:
        return turn is not None and bool(message.get("id") == turn)
    if turn_state(message, session_id) == "idle":
        return True
    params: Mapping[str, Any] = message["params"] if isinstance(message.get("params"), dict) else {}
    if message["method"] == "session/request_permission":
        return True
    return (
        message["method"] == "session/update"
        and params.get("sessionId") == session_id
        and (turn_state(message, session_id) is None)
    )


#: The requirements in the order they run (the closing ones last), each with the sentence it rests
#: on in v1's docs and in v2's.
CHECKS = (
    Check(
        "initialization.version-negotiation",
        cites(
            "initialization#version-negotiation",
            "agent",
            "MUST",
            "the agent answers the version asked for when it supports it, else the latest it supports",
        ),
        "initialize answers the version asked for when the agent speaks it, else the latest it speaks",
        version_negotiation,
    ),
    Check(
        "initialization.implementation-info",
        (
            Cite(
                "initialization#implementation-information",
                "either",
                "SHOULD",
                "each peer names its implementation in initialize (agentInfo, clientInfo)",
            ),
            Cite(
                "initialization#implementation-information",
                "either",
                "MUST",
                "each peer names its implementation in initialize's info",
            ),
        ),
        "initialize names the agent: a name and a version",
        implementation_info,
    ),
    Check(
        "session.unique-ids",
        cites(
            "session-setup#creating-a-session",
            "agent",
            "MUST",
            "session/new answers a unique session id",
        ),
        "session/new answers a unique session id",
        unique_session_ids,
    ),
    Check(
        "session.unknown-session",
        cites(
            "session-setup#closing-a-session",
            "agent",
            "MAY",
            "an agent may answer an error for a session that does not exist or is no longer active "
            "(no text asks more)",
            "session-setup#closing-active-sessions",
        ),
        "a prompt for a session never created (or closed, where close is advertised) is answered "
        "an error, whatever its code, with no update",
        unknown_session,
    ),
    Check(
        "prompt.stop-reason",
        cites(
            "prompt-turn#4-check-for-completion",
            "agent",
            "MUST",
            "a turn's end is reported with its stop reason",
            "prompt-lifecycle#4-report-completion",
        ),
        "a turn ends with a stop reason (end_turn when nothing cut it short), its updates naming its session",
        stop_reason,
    ),
    Check(
        "prompt.cancellation",
        cites(
            "prompt-turn#cancellation",
            "agent",
            "MUST",
            "once its work is aborted, a cancelled turn ends with the stop reason cancelled",
            "prompt-lifecycle#cancellation",
        ),
        "session/cancel during a turn ends it with the stop reason cancelled",
        cancellation,
    ),
    Check(
        "prompt.no-update-after-cancel",
        cites(
            "prompt-turn#cancellation",
            "agent",
            "MUST",
            "updates of content or tool calls sent after the cancel come before the turn's answer",
            "prompt-lifecycle#cancellation",
        ),
        "a cancelled turn's updates of content and tool calls all come before its end",
        no_update_after_cancel,
    ),
)


def requirements(target: Target) -> list[Check]:
    """The checks that apply to ``target``, in the order they run."""
    checks = (*CHECKS, *feature_checks(target), *ENVELOPE, *CLOSING)
    return [check for check in checks if check.applies(target)]
