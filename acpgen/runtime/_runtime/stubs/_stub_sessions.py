"""The sessions of a stub agent: what each one holds (its working directory, its additional
directories, the updates of its conversation, its mode and config values) and the store that
creates, finds, pages through and forgets them. Nothing here depends on the schema: the stub
agent (``_stub_agent``) turns sessions into the messages of its protocol version.

Each stub agent has a store of its own unless given one: agents that share a store (``store=``)
let a client that reconnects load, resume or list the sessions it made before.

A session keeps the last :data:`HISTORY_TURNS` turns of its conversation for replay (see
:class:`History`), so a stub serving one long session for a day stays within a few megabytes.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import itertools
import json
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..connection._rpc import RequestError
from ..wire._codec import dump_json

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "DROPPED_TURNS",
    "HISTORY_TURNS",
    "History",
    "Session",
    "SessionStore",
    "add_arguments",
    "page_size",
    "served_requests",
]

#: Sessions per page of ``session/list`` (``--page-size``): small, so that a client meets the cursor.
DEFAULT_PAGE_SIZE = 2


def add_arguments(
    parser: argparse.ArgumentParser, features: Collection[str], together: str
) -> None:
    """A stub agent's ``--disable FEATURE`` over ``features`` (none: no flag), and ``--page-size``
    where ``session/list`` is one of them; ``together``: what the help adds to "repeatable"."""
    if features:
        parser.add_argument(
            "--disable",
            action="append",
            default=[],
            choices=list(features),
            metavar="FEATURE",
            help="neither advertise nor serve FEATURE: its request answers -32601"
            f" (repeatable; {together})",
        )
    if "list" in features:
        parser.add_argument(
            "--page-size",
            type=int,
            default=DEFAULT_PAGE_SIZE,
            metavar="N",
            help=f"sessions per page of session/list (default: {DEFAULT_PAGE_SIZE})",
        )


def page_size(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--page-size`` of ``args`` (the default where the flag is not offered); below 1 is an error."""
    size: int = getattr(args, "page_size", DEFAULT_PAGE_SIZE)
    if size < 1:
        parser.error("argument --page-size: must be at least 1")
    return size


def served_requests(
    agent: type, base: type, routes: Iterable[Any], refused: Collection[str]
) -> frozenset[str]:
    """The requests a stub agent serves: those of ``routes`` (its version's ``AGENT_ROUTES``)
    whose handler its class ``agent`` overrides from ``base`` (its version's ``Agent``), but
    those whose handler is in ``refused`` (the handlers of the features it does not serve).
    Given to its connection as its ``handled_requests``, every other request is answered -32601
    whatever its params, as the capabilities it does not advertise say."""
    return frozenset(
        route.method
        for route in routes
        if route.is_request
        and getattr(agent, route.handler, None) is not getattr(base, route.handler, None)
        and route.handler not in refused
    )


#: The turns of a session's conversation kept for replay: the last ones (about 5 KB a turn).
HISTORY_TURNS = 500
#: The ``_meta`` key of a replay's first update when earlier turns were not kept: how many.
DROPPED_TURNS = "acpgen.stub/droppedTurns"
#: The updates that open a turn: the prompt (one ``user_message``; ``user_message_chunk``s in a row).
_PROMPTS = ("user_message", "user_message_chunk")


class History:
    """The ``update`` objects of a session's conversation, in order: what ``session/load``
    replays. Only the last ``turns`` turns are kept, each update as compact JSON text. A turn is
    a prompt (its ``user_message``, or its ``user_message_chunk`` updates in a row) and every
    update after it until the next prompt; the updates before the first prompt count as one. When
    earlier turns were dropped, the first update replayed (then always a prompt's, which has
    ``_meta``) says how many in ``_meta["acpgen.stub/droppedTurns"]``."""

    def __init__(self, updates: Iterable[dict[str, Any]] = (), turns: int | None = None) -> None:
        self.turns = max(1, HISTORY_TURNS if turns is None else turns)
        self.dropped = 0  # the turns no longer kept
        self._kept: deque[list[str]] = deque()
        self._last = ""  # the kind of the last update kept
        for update in updates:  # a fork's: what its source replays, the count of dropped included
            meta = update.get("_meta")
            if not self._kept and isinstance(meta, dict) and DROPPED_TURNS in meta:
                self.dropped = int(meta[DROPPED_TURNS])
                rest = {k: v for k, v in meta.items() if k != DROPPED_TURNS}
                update = {k: v for k, v in update.items() if k != "_meta"}
                if rest:
                    update["_meta"] = rest
            self.append(update)

    def append(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        opens = kind == "user_message" or (kind == "user_message_chunk" != self._last)
        if opens or not self._kept:
            self._kept.append([])
            if len(self._kept) > self.turns:
                self._kept.popleft()
                self.dropped += 1
        try:  # the compact encoder built once: json.dumps(..., separators=...) builds one a call
            text = dump_json(update)
        except ValueError:  # NaN or an infinity, which the strict encoder refuses
            text = json.dumps(update, separators=(",", ":"))
        self._kept[-1].append(text)
        self._last = kind if isinstance(kind, str) else ""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        first = True
        for turn in list(self._kept):
            for text in turn:
                update: dict[str, Any] = json.loads(text)
                if first and self.dropped:
                    meta = update.get("_meta")
                    update["_meta"] = {
                        **(meta if isinstance(meta, dict) else {}),
                        DROPPED_TURNS: self.dropped,
                    }
                first = False
                yield update

    def __len__(self) -> int:
        return sum(len(turn) for turn in self._kept)


def _now() -> str:
    """The time now, as ISO 8601 in UTC."""
    moment = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


@dataclass
class Session:
    """One session: where it works, what was said, and what it is set to."""

    session_id: str
    cwd: str
    #: the additional directories it may work in, besides ``cwd``
    directories: list[str] = field(default_factory=list)
    #: the ``update`` objects of its conversation, in order: what ``session/load`` replays (its
    #: last :data:`HISTORY_TURNS` turns; a list given becomes a :class:`History`)
    history: History = field(default_factory=History)
    mode: str = ""  # the current mode's id ("": the session has no modes)
    config: dict[str, Any] = field(default_factory=dict)  # config option id -> its current value
    title: str | None = None  # from its first prompt
    updated_at: str = field(default_factory=_now)
    #: set by ``session/cancel`` (and by closing the session): the running turn ends ``cancelled``
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    serial: int = 0  # its place in the order of creation: what a list's cursor counts

    def __post_init__(self) -> None:
        if not isinstance(self.history, History):
            self.history = History(self.history)

    def touch(self) -> None:
        self.updated_at = _now()


class SessionStore:
    """The sessions of one stub agent, or of all the agents of one server."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._serials = itertools.count(1)

    def create(self, cwd: str, directories: list[str], **settings: Any) -> Session:
        """A new session, with a fresh id (``stub-session-N``)."""
        serial = next(self._serials)
        session = Session(
            f"stub-session-{serial}", cwd, list(directories), serial=serial, **settings
        )
        self._sessions[session.session_id] = session
        return session

    def get(self, session_id: Any) -> Session | None:
        return self._sessions.get(session_id) if isinstance(session_id, str) else None

    def require(self, session_id: Any) -> Session:
        """The session of that id; else -32602 (invalid params: an unknown session)."""
        session = self.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "message": "unknown session"}
            )
        return session

    def forget(self, session_id: str) -> None:
        """Drop the session: later requests for it answer as for an unknown one."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.cancelled.set()

    def page(
        self, cursor: Any, size: int, cwd: str | None = None
    ) -> tuple[list[Session], str | None]:
        """Up to ``size`` sessions (of ``cwd``, when given) after ``cursor``, in the order they
        were created, and the cursor of the next page (None: that was the last). A cursor is
        opaque to the client; one this store did not give is -32602 (invalid params)."""
        after = 0
        if cursor is not None:
            if not isinstance(cursor, str) or not cursor.startswith("after-"):
                raise RequestError.invalid_params({"cursor": cursor, "message": "unknown cursor"})
            try:
                after = int(cursor.removeprefix("after-"))
            except ValueError:
                raise RequestError.invalid_params(
                    {"cursor": cursor, "message": "unknown cursor"}
                ) from None
        matching = [s for s in self._sessions.values() if s.serial > after and cwd in (None, s.cwd)]
        shown = matching[: max(1, size)]
        more = len(matching) > len(shown)
        return shown, f"after-{shown[-1].serial}" if more else None
