"""The client kit's requirements, and how a finished conversation is judged against them: each
rule reads the messages the stub agent saw both ways (its observer's transcript) and gives a
verdict, or nothing when the client gave it no chance to (``not applicable``). The probes the
agent drives while the client is connected are :mod:`._client_kit`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ._kit_report import (
    FAILED,
    MUST,
    NOT_APPLICABLE,
    PASSED,
    SHOULD,
    Requirement,
    Verdict,
)

__all__ = ["BY_ID", "REQUIREMENTS", "judge", "obj", "quote"]

_JSONRPC = "https://www.jsonrpc.org/specification"
#: What the kit holds a client to, in the order it reports them.
REQUIREMENTS = (
    Requirement(
        "initialization.first",
        MUST,
        'initialization.mdx, "Initialization"',
        "The client calls initialize before any other request.",
    ),
    Requirement(
        "capabilities.agent-advertised",
        MUST,
        'initialization.mdx, "Agent Capabilities"',
        "The client calls no method the agent did not advertise (none answered -32601).",
    ),
    Requirement(
        "prompt.known-session",
        MUST,
        'session-setup.mdx, "Session ID"',
        "The client prompts only sessions the agent created on the connection.",
    ),
    Requirement(
        "prompt.one-at-a-time",
        SHOULD,
        'prompt-turn.mdx, "The Prompt Turn"',
        "The client sends no prompt for a session while a turn of it runs.",
    ),
    Requirement(
        "permission.offered-option",
        MUST,
        'tool-calls.mdx, "Requesting Permission"',
        "The client answers session/request_permission with an option it was offered,"
        " or cancelled.",
    ),
    Requirement(
        "permission.cancelled-after-cancel",
        MUST,
        'prompt-turn.mdx, "Cancellation"',
        "After session/cancel, the client answers the session's pending permission"
        " requests with the cancelled outcome.",
    ),
    Requirement(
        "fs.write",
        MUST,
        'file-system.mdx, "Writing Files"',
        "Where it advertises fs.writeTextFile, the client writes a file the agent asks it to.",
    ),
    Requirement(
        "fs.read",
        MUST,
        'file-system.mdx, "Reading Files"',
        "Where it advertises fs.readTextFile, the client answers a read with the file's text.",
    ),
    Requirement(
        "terminal.run",
        MUST,
        'terminals.mdx, "Executing Commands"',
        "Where it advertises terminal, the client runs a command and gives its output and exit"
        " status, and releases it.",
    ),
    Requirement(
        "jsonrpc.ids",
        MUST,
        f"{_JSONRPC}#response_object",
        "Every response answers a request the agent sent, once, with its id.",
    ),
    Requirement(
        "jsonrpc.envelope",
        MUST,
        f"{_JSONRPC}#request_object",
        "Every message is a JSON-RPC 2.0 object (the agent answered no -32700 or -32600).",
    ),
)
BY_ID = {r.id: r for r in REQUIREMENTS}
#: The file the fs probes write and read back, in the session's cwd.


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def quote(message: Any, most: int = 300) -> str:
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= most else text[: most - 3] + "..."


def judge(
    events: Sequence[tuple[float, str, dict[str, Any]]], probed: dict[str, Verdict]
) -> list[Verdict]:
    """Each requirement's verdict: the probes', and the rest from the transcript ``events``."""
    found: dict[str, Verdict] = dict(probed)
    for rid, check in _CHECKS.items():
        outcome = check([(d, m) for _, d, m in events])
        found[rid] = (
            Verdict(BY_ID[rid], *outcome)
            if outcome
            else found.get(rid)
            or Verdict(
                BY_ID[rid],
                NOT_APPLICABLE,
                "the client gave the agent no chance to send these requests",
            )
        )
    return [found.get(r.id) or Verdict(r, NOT_APPLICABLE, "not probed") for r in REQUIREMENTS]


Events = Sequence[tuple[str, dict[str, Any]]]
Outcome = tuple[str, str]


def _requests(events: Events, direction: str) -> list[dict[str, Any]]:
    return [m for d, m in events if d == direction and "method" in m and "id" in m]


def _responses(events: Events, direction: str) -> list[dict[str, Any]]:
    return [m for d, m in events if d == direction and "method" not in m]


def _initialize_first(events: Events) -> Outcome | None:
    received = _requests(events, "received")
    if not received:
        return None
    if received[0].get("method") != "initialize":
        return FAILED, f"the client's first request was {quote(received[0])}"
    return PASSED, ""


def _advertised(events: Events) -> Outcome | None:
    methods = {m.get("id"): m.get("method") for m in _requests(events, "received")}
    if not methods:
        return None
    for answer in _responses(events, "sent"):
        method = methods.get(answer.get("id"))
        error = obj(answer.get("error"))
        named = obj(error.get("data")).get("method", method)  # -32601 of the call itself
        if (
            error.get("code") == -32601
            and isinstance(method, str)
            and not method.startswith("_")
            and named == method
        ):
            return (
                FAILED,
                f"the client called {method}, which the agent did not advertise: {quote(answer)}",
            )
    return PASSED, ""


def _created(events: Events) -> set[str]:
    """The sessions the agent created (or restored) for the client in ``events``."""
    asked = {
        m.get("id"): m
        for m in _requests(events, "received")
        if m.get("method") in ("session/new", "session/load", "session/resume", "session/fork")
    }
    ids: set[str] = set()
    for answer in _responses(events, "sent"):
        request, result = asked.get(answer.get("id")), answer.get("result")
        if request is None or not isinstance(result, dict):
            continue
        session = result.get("sessionId") or (request.get("params") or {}).get("sessionId")
        if isinstance(session, str):
            ids.add(session)
    return ids


def _known_session(events: Events) -> Outcome | None:
    prompts = [m for m in _requests(events, "received") if m.get("method") == "session/prompt"]
    if not prompts:
        return None
    created: set[str] = set()
    for index, (direction, message) in enumerate(events):
        if message.get("method") == "session/prompt" and direction == "received":
            session = (message.get("params") or {}).get("sessionId")
            created = _created(events[:index])
            if session not in created:
                return (
                    FAILED,
                    f"the client prompted a session the agent never created: {quote(message)}",
                )
    return PASSED, ""


def _one_at_a_time(events: Events) -> Outcome | None:
    running: dict[Any, Any] = {}  # session -> the id of its running prompt
    prompts = 0
    for direction, message in events:
        params = obj(message.get("params"))
        if direction == "received" and message.get("method") == "session/prompt":
            prompts += 1
            session = params.get("sessionId")
            if session in running:
                return FAILED, f"the client prompted {session} while its turn ran: {quote(message)}"
            running[session] = message.get("id")
        elif direction == "sent" and "method" not in message:
            result = message.get("result")
            if isinstance(result, dict) and "stopReason" in result:  # v1: the turn's end
                running = {s: i for s, i in running.items() if i != message.get("id")}
        elif direction == "sent" and message.get("method") == "session/update":
            update = obj(params.get("update"))
            if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
                running.pop(params.get("sessionId"), None)  # v2: the turn's end
    return (PASSED, "") if prompts else None


def _permission_pairs(events: Events) -> list[tuple[dict[str, Any], dict[str, Any] | None, bool]]:
    """Each permission request the agent sent, its answer (None: none), and whether the client
    cancelled the session's turn while it was pending."""
    pairs = []
    for index, (direction, message) in enumerate(events):
        if (
            direction != "sent"
            or message.get("method") != "session/request_permission"
            or "id" not in message
        ):
            continue
        session = (message.get("params") or {}).get("sessionId")
        answer, cancelled = None, False
        for later_direction, later in events[index + 1 :]:
            if later_direction != "received":
                continue
            if (
                later.get("method") == "session/cancel"
                and (later.get("params") or {}).get("sessionId") == session
            ):
                cancelled = True
            if "method" not in later and later.get("id") == message["id"]:
                answer = later
                break
        pairs.append((message, answer, cancelled))
    return pairs


def _offered_option(events: Events) -> Outcome | None:
    pairs = [
        (asked, answer) for asked, answer, _ in _permission_pairs(events) if answer is not None
    ]
    if not pairs:
        return None
    for asked, answer in pairs:
        offered = [o.get("optionId") for o in (asked.get("params") or {}).get("options") or []]
        outcome = obj(answer.get("result")).get("outcome")
        if not isinstance(outcome, dict):
            return FAILED, f"the client answered a permission request {quote(answer)}"
        if outcome.get("outcome") == "cancelled":
            continue
        if outcome.get("outcome") != "selected" or outcome.get("optionId") not in offered:
            return FAILED, f"offered {offered}, the client answered {quote(answer)}"
    return PASSED, ""


def _cancelled_after_cancel(events: Events) -> Outcome | None:
    pending = [
        (asked, answer) for asked, answer, cancelled in _permission_pairs(events) if cancelled
    ]
    if not pending:
        return (
            NOT_APPLICABLE,
            "the client sent no session/cancel while a permission request was pending",
        )
    for _, answer in pending:
        outcome = obj(obj(obj(answer).get("result")).get("outcome"))
        if outcome.get("outcome") != "cancelled":
            return FAILED, f"after session/cancel the client answered {quote(answer)}"
    return PASSED, ""


def _ids(events: Events) -> Outcome | None:
    asked = {m.get("id") for m in _requests(events, "sent")}
    answered: set[Any] = set()
    for answer in _responses(events, "received"):
        rid = answer.get("id")
        if rid not in asked:
            return FAILED, f"the client answered a request the agent never sent: {quote(answer)}"
        if rid in answered:
            return FAILED, f"the client answered a request twice: {quote(answer)}"
        answered.add(rid)
    if not asked:
        return None
    missing = asked - answered
    if missing:
        return (
            FAILED,
            f"the client never answered the agent's request(s) {sorted(map(str, missing))}",
        )
    return PASSED, ""


def _envelope(events: Events) -> Outcome | None:
    # a request of the right shape refused -32600 (before initialize) is not the envelope's
    shaped = {
        m.get("id")
        for d, m in events
        if d == "received"
        and m.get("jsonrpc") == "2.0"
        and isinstance(m.get("method"), str)
        and "id" in m
        and m.get("id") is not None
    }
    for direction, message in events:
        error = obj(message.get("error"))
        code = error.get("code")
        if direction == "sent" and (
            code == -32700 or (code == -32600 and message.get("id") not in shaped)
        ):
            return FAILED, f"the agent had to answer {quote(message)}"
        if direction == "received" and message.get("jsonrpc") != "2.0":
            return FAILED, f"the client sent {quote(message)}"
    return (PASSED, "") if any(d == "received" for d, _ in events) else None


_CHECKS: dict[str, Callable[[Events], Outcome | None]] = {
    "initialization.first": _initialize_first,
    "capabilities.agent-advertised": _advertised,
    "prompt.known-session": _known_session,
    "prompt.one-at-a-time": _one_at_a_time,
    "permission.offered-option": _offered_option,
    "permission.cancelled-after-cancel": _cancelled_after_cancel,
    "jsonrpc.ids": _ids,
    "jsonrpc.envelope": _envelope,
}
