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
    Check,
    Kit,
    NotApplicable,
    Target,
    turn_state,
    unknown_session_error,
)
from ._kit_features import feature_checks
from ._kit_peer import Broken, quote
from ._kit_report import MUST, SHOULD
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
    hello = (await kit.live()).hello
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
        raise Broken(f"a prompt for a session never created answered {quote(answer)}")
    if peer.updates("kit-no-such-session", start):
        raise Broken(
            f"it sent updates for a session it never created: {quote(peer.updates('kit-no-such-session')[0])}"
        )


async def stop_reason(kit: Kit) -> None:
    session_id = await kit.new_session()
    peer = await kit.live()
    start = len(peer.messages)
    end = await kit.turn(session_id)
    if end.get("stopReason") != "end_turn":
        raise Broken(f"an uncancelled turn ended with {quote(end)}, not the stop reason end_turn")
    strays = [
        m
        for m in peer.messages[start:]
        if m.get("method") == "session/update"
        and (m.get("params") or {}).get("sessionId") != session_id
    ]
    if strays:
        raise Broken(
            f"during the turn of {session_id!r} it sent an update of another session: {quote(strays[0])}"
        )


async def cancellation(kit: Kit) -> None:
    """Cancel a turn once it is under way. A turn that ends otherwise fails only where the agent
    had read the cancel first: it answered a request sent after the cancel before it ended the
    turn (or it was waiting for a permission the cancel answered)."""
    session_id = await kit.new_session()
    peer = await kit.live()
    start = len(peer.messages)
    peer.permission = "cancel"  # a permission request is answered cancelled, after session/cancel
    ping = None
    try:
        turn = await peer.start(
            "session/prompt", kit.prompt(session_id, " ".join(["conformance"] * 20))
        )
        ended = (
            None if kit.target.state_turns else turn
        )  # v2: the answer only says the prompt is taken
        busy = await peer.wait_for(lambda m: _busy(m, session_id, ended), start)
        if busy is None or "method" not in busy or turn_state(busy, session_id) == "idle":
            raise NotApplicable(
                "the turn ended before it sent an update or asked for permission: no chance to cancel it"
            )
        if busy.get("method") != "session/request_permission":
            await peer.notify("session/cancel", {"sessionId": session_id})
            ping = await peer.start("kit/after_cancel", {})  # answered once the cancel is read
        answer = await peer.response(turn, "session/prompt")
        if not isinstance(answer.get("result"), dict):
            raise Broken(f"a cancelled turn answered {quote(answer)}")
        end = (
            await kit.idle(peer, session_id, start) if kit.target.state_turns else answer["result"]
        )
        if ping is not None:
            pong = await peer.response(ping, "a request sent after the cancel")
            read = peer.messages.index(pong, start)
            if end.get("stopReason") != "cancelled" and _index(peer.messages, end, start) < read:
                raise NotApplicable(
                    f"the turn ended ({quote(end)}) before the agent had read the cancel"
                )
    finally:
        peer.permission = "allow"
    if end.get("stopReason") != "cancelled":
        raise Broken(f"a turn cancelled by session/cancel ended with {quote(end)}")


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


def _v1(target: Target) -> bool:
    return target.version < 2


#: The requirements in the order they run (the closing ones last), with their sections in v1's
#: docs and v2's.
CHECKS = (
    Check(
        "initialization.version-negotiation",
        MUST,
        ("initialization#version-negotiation",) * 2,
        "initialize answers the version asked for when the agent speaks it, else the latest it speaks",
        version_negotiation,
    ),
    Check(
        "initialization.implementation-info",
        SHOULD,
        ("initialization#implementation-information",) * 2,
        "initialize names the agent: a name and a version",
        implementation_info,
        _v1,
    ),
    Check(
        "initialization.implementation-info",
        MUST,
        ("initialization#implementation-information",) * 2,
        "initialize names the agent: a name and a version",
        implementation_info,
        lambda t: not _v1(t),
    ),
    Check(
        "session.unique-ids",
        MUST,
        ("session-setup#creating-a-session",) * 2,
        "session/new answers a unique session id",
        unique_session_ids,
    ),
    Check(
        "session.unknown-session",
        SHOULD,
        ("session-setup#session-id",) * 2,
        "a prompt for a session never created is an error (-32602 or -32002), with no update",
        unknown_session,
    ),
    Check(
        "prompt.stop-reason",
        MUST,
        ("prompt-turn#4-check-for-completion", "prompt-lifecycle#4-report-completion"),
        "a turn ends with a stop reason (end_turn when nothing cut it short), its updates naming its session",
        stop_reason,
    ),
    Check(
        "prompt.cancellation",
        MUST,
        ("prompt-turn#cancellation", "prompt-lifecycle#cancellation"),
        "session/cancel during a turn ends it with the stop reason cancelled",
        cancellation,
    ),
)


def requirements(target: Target) -> list[Check]:
    """The checks that apply to ``target``, in the order they run."""
    checks = (*CHECKS, *feature_checks(target), *ENVELOPE, *CLOSING)
    return [check for check in checks if check.applies(target)]
