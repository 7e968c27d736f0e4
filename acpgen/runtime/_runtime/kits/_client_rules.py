"""The client kit's requirements, and how a finished conversation is judged against them: each
rule reads the messages the stub agent saw both ways (its observer's transcript) and gives a
verdict, or nothing when the client gave it no chance to (``not applicable``). The probes the
agent drives while the client is connected are :mod:`._client_kit`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._kit_report import FAILED, NOT_APPLICABLE, PASSED, Requirement, Verdict, level_for

__all__ = ["BY_ID", "RULES", "Rule", "judge", "obj", "quote", "requirements"]

_JSONRPC = "https://www.jsonrpc.org/specification"


@dataclass(frozen=True)
class Rule:
    """A requirement of the client kit and the sentence it rests on, as data: where the sentence
    is (the page and heading of v1's docs and of v2's, ``page#heading``; a page alone where the
    sentence precedes every heading; a URL for JSON-RPC 2.0's text), the peer it binds
    (``client``, ``agent``, ``either``; ``""`` for no sentence) and its RFC 2119 keyword (``""``
    for none). Its level is read from them (:func:`~._kit_report.level_for`, as the agent kit's
    are), never set."""

    id: str
    sections: tuple[str, str]  # v1's docs, v2's ("": the draft has no such, v1's is cited)
    binds: str
    keyword: str
    text: str  # what the client does, in the kit's own words

    @property
    def level(self) -> str:
        return level_for(self.binds, self.keyword, "client")

    def requirement(self, version: int) -> Requirement:
        """The requirement as the report of a client of protocol ``version`` cites it."""
        # a v2 client is held to v1's text where the draft has none (v2: fs/*, terminal/*)
        docs = 2 if version >= 2 and self.sections[1] else 1
        page = self.sections[docs - 1]
        section = page if page.startswith("http") else f"protocol/v{docs}/{page}"
        return Requirement(self.id, self.level, section, self.text, self.binds, self.keyword)


#: What the kit holds a client to, in the order it reports them.
RULES = (
    Rule(
        "initialization.first",
        ("initialization",) * 2,
        "client",
        "MUST",
        "The client initializes the connection (an initialize the agent answered with a result)"
        " before any session request.",
    ),
    Rule(
        "capabilities.agent-advertised",
        ("initialization#capabilities",) * 2,
        "either",
        "MUST",
        "The client calls no method (request or notification) whose agent capability the agent"
        " did not advertise, whatever the answer.",
    ),
    Rule(
        "capabilities.known-method",
        ("extensibility#custom-requests",) * 2,
        "either",
        "MAY",
        "The client calls only the protocol's methods, and extension methods named with a"
        " leading underscore.",
    ),
    Rule(
        "session.additional-directories",
        ("session-setup#additional-workspace-roots",) * 2,
        "client",
        "MUST",
        "The client sends additionalDirectories only where the agent advertises them.",
    ),
    Rule(
        "prompt.known-session",
        ("prompt-turn", "prompt-lifecycle"),
        "client",
        "MUST",
        "The client prompts only sessions it set up with the agent on the connection.",
    ),
    Rule(
        "prompt.one-at-a-time",
        ("prompt-turn#the-prompt-turn-lifecycle", "prompt-lifecycle#prompt-lifecycle"),
        "",
        "",
        "The client sends no prompt for a session while a turn of it runs (an error answer ends"
        " the turn).",
    ),
    Rule(
        "permission.offered-option",
        ("tool-calls#requesting-permission",) * 2,
        "client",
        "",
        "The client answers session/request_permission with an option it was offered,"
        " or cancelled.",
    ),
    Rule(
        "permission.cancelled-after-cancel",
        ("prompt-turn#cancellation", "prompt-lifecycle#cancellation"),
        "client",
        "MUST",
        "After session/cancel, the client answers the session's pending permission"
        " requests with the cancelled outcome.",
    ),
    Rule(
        "fs.write",
        ("file-system#writing-files", ""),
        "client",
        "MUST",
        "Where it advertises fs.writeTextFile, the client writes (creating) a file the agent"
        " asks it to.",
    ),
    Rule(
        "fs.read",
        ("file-system#reading-files", ""),
        "client",
        "",
        "Where it advertises fs.readTextFile, the client answers a read with the file's text.",
    ),
    Rule(
        "terminal.run",
        ("terminals#executing-commands", ""),
        "client",
        "",
        "Where it advertises terminal, the client runs a command and gives its output and exit"
        " status, and releases it.",
    ),
    Rule(
        "jsonrpc.ids",
        (f"{_JSONRPC}#response_object",) * 2,
        "client",  # JSON-RPC's Server: here the client, answering the agent's requests
        "MUST",
        "Every response answers a request the agent sent, once, with its id, and every request"
        " is answered.",
    ),
    Rule(
        "jsonrpc.envelope",
        ("transports#stdio",) * 2,
        "client",
        "MUST NOT",
        "Every message is a JSON-RPC 2.0 object (the agent answered no -32700 or -32600).",
    ),
)
BY_ID = {r.id: r for r in RULES}


def requirements(version: int) -> tuple[Requirement, ...]:
    """The requirements as a client of protocol ``version`` is held to them."""
    return tuple(rule.requirement(version) for rule in RULES)


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def quote(message: Any, most: int = 300) -> str:
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= most else text[: most - 3] + "..."


Outcome = tuple[str, str]


def judge(
    events: Sequence[tuple[float, str, dict[str, Any]]],
    probed: Mapping[str, Outcome],
    version: int,
    gates: Mapping[str, str] | None = None,
    fields: Mapping[str, str] | None = None,
) -> list[Verdict]:
    """Each requirement's verdict for a client of protocol ``version``: the probes' (``probed``,
    by id), and the rest from the transcript ``events``; ``gates``: the JSON pointer into
    ``initialize``'s answer of the capability each of the agent's methods needs; ``fields``: that
    of each field of a request (``additionalDirectories``), where the schema has it."""
    found: dict[str, Outcome] = dict(probed)
    pairs = [(d, m) for _, d, m in events]
    for rid, check in _CHECKS.items():
        outcome = check(pairs)
        if outcome is not None:
            found[rid] = outcome
    outcome = _advertised(pairs, gates or {})
    if outcome is not None:
        found["capabilities.agent-advertised"] = outcome
    outcome = _directories(pairs, (fields or {}).get("additionalDirectories"))
    if outcome is not None:
        found["session.additional-directories"] = outcome
    untested = (NOT_APPLICABLE, "the client gave the agent no chance to send these requests")
    return [Verdict(rule.requirement(version), *found.get(rule.id, untested)) for rule in RULES]


Events = Sequence[tuple[str, dict[str, Any]]]
#: The session requests a client may send only once initialized (the v2 drafts' too).
_SESSION_REQUESTS = ("session/",)
#: The requests that make or restore a session.
_SESSION_SETUP = ("session/new", "session/load", "session/resume", "session/fork")


def _requests(events: Events, direction: str) -> list[dict[str, Any]]:
    return [m for d, m in events if d == direction and "method" in m and "id" in m]


def _responses(events: Events, direction: str) -> list[dict[str, Any]]:
    return [m for d, m in events if d == direction and "method" not in m]


def _initialize_first(events: Events) -> Outcome | None:
    answers: dict[Any, dict[str, Any]] = {}  # initialize's id -> the agent's answer
    asked: set[Any] = set()
    requested = False
    for direction, message in events:
        method = message.get("method")
        if direction == "received" and method == "initialize" and "id" in message:
            asked.add(message.get("id"))
        elif direction == "sent" and method is None and message.get("id") in asked:
            answers[message.get("id")] = message
        elif direction == "received" and isinstance(method, str):
            requested = True
            if method.startswith(_SESSION_REQUESTS) and not _initialized(answers):
                return FAILED, _uninitialized(answers, f"went on with {quote(message)}")
    if _initialized(answers):
        return PASSED, ""
    if asked or requested:  # every initialize refused (or unanswered), or none sent
        return FAILED, _uninitialized(answers, "never initialized the connection")
    return None


def _initialized(answers: Mapping[Any, dict[str, Any]]) -> bool:
    return any(isinstance(a.get("result"), dict) for a in answers.values())


def _uninitialized(answers: Mapping[Any, dict[str, Any]], then: str) -> str:
    if not answers:
        return f"the client sent no initialize the agent answered, and {then}"
    last = list(answers.values())[-1]
    return f"the agent refused the client's initialize ({quote(last)}), and the client {then}"


def _pointer(document: Any, pointer: str) -> Any:
    """The value at JSON ``pointer`` in ``document`` (None where there is none)."""
    for key in pointer.strip("/").split("/"):
        if not isinstance(document, dict):
            return None
        document = document.get(key.replace("~1", "/").replace("~0", "~"))
    return document


def _hello(events: Events) -> dict[str, Any] | None:
    """The agent's answer to the client's first initialize answered with a result."""
    asked = {m.get("id") for m in _requests(events, "received") if m.get("method") == "initialize"}
    for answer in _responses(events, "sent"):
        if answer.get("id") in asked and isinstance(answer.get("result"), dict):
            return answer
    return None


_UNANSWERED = (NOT_APPLICABLE, "no initialize of the client's was answered: nothing was advertised")


def _advertised(events: Events, gates: Mapping[str, str]) -> Outcome | None:
    """A method called whose capability the agent's answer to ``initialize`` does not advertise
    fails; with no ``initialize`` answered with a result, nothing is advertised
    (initialization#capabilities): every capability-gated method called fails."""
    hello = _hello(events)
    if hello is None and not _requests(events, "received"):
        return None
    answers = {m.get("id"): m for m in _responses(events, "sent")}
    for direction, message in events:
        method = message.get("method")
        pointer = gates.get(method) if isinstance(method, str) else None
        if direction != "received" or pointer is None or not pointer.startswith("/result/"):
            continue
        if _pointer(hello, pointer) in (None, False):  # null or false: not advertised
            answer = answers.get(message.get("id")) if "id" in message else None
            answered = f", answered {quote(answer)}" if answer is not None else ""
            capability = pointer[len("/result/") :]
            detail = f"the client sent {method}, whose capability ({capability}) the agent did"
            if hello is None:
                detail = (
                    f"no initialize of the client's was answered, so nothing was advertised, and"
                    f" the client sent {method} (its capability: {capability}): {quote(message)}"
                )
                return FAILED, f"{detail}{answered}"
            return FAILED, f"{detail} not advertise: {quote(message)}{answered}"
    return PASSED, ""


def _directories(events: Events, pointer: str | None) -> Outcome | None:
    hello = _hello(events)
    if pointer is None:
        return NOT_APPLICABLE, "this protocol version has no additionalDirectories"
    if hello is None:
        return _UNANSWERED if _requests(events, "received") else None
    advertised = _pointer(hello, pointer) not in (None, False)
    asked = [m for m in _requests(events, "received") if m.get("method") in _SESSION_SETUP]
    for request in asked:
        if not advertised and "additionalDirectories" in obj(request.get("params")):
            capability = pointer[len("/result/") :]
            detail = f"the agent did not advertise {capability}, the client sent"
            return FAILED, f"{detail} {quote(request)}"
    return (PASSED, "") if asked else None


def _known_method(events: Events) -> Outcome | None:
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
                f"the client called {method}, a method the agent does not have: {quote(answer)}",
            )
    return PASSED, ""


def _created(events: Events) -> set[str]:
    """The sessions the agent created (or restored) for the client in ``events``."""
    asked = {
        m.get("id"): m for m in _requests(events, "received") if m.get("method") in _SESSION_SETUP
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
            # v1: a stop reason ends the turn; an error ends it in either version (none began)
            if "error" in message or (isinstance(result, dict) and "stopReason" in result):
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
    "capabilities.known-method": _known_method,
    "prompt.known-session": _known_session,
    "prompt.one-at-a-time": _one_at_a_time,
    "permission.offered-option": _offered_option,
    "permission.cancelled-after-cancel": _cancelled_after_cancel,
    "jsonrpc.ids": _ids,
    "jsonrpc.envelope": _envelope,
}
