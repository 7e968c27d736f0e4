"""What the generated ``Agent`` base does by default for what the spec asks of every agent: plain
frozen data on the agent's role, read from the schema by ``agent_duties.py``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentDefaults:
    """What the generated ``Agent`` base does by default for what the spec asks of every agent
    (read by ``agent_duties.py``): answer ``initialize`` naming itself, give each ``session/new`` a
    fresh id, and refuse a request naming a session that is not open."""

    #: ``initialize``'s result class, the Python name of its field naming the agent (``agent_info``;
    #: ``info`` in v2) and that field's class (``Implementation``); None: no default ``initialize``.
    initialize: tuple[str, str, str] | None = None
    #: ``session/new``'s result class and its session id field; None: no default ``session/new``.
    session_new: tuple[str, str] | None = None
    #: How requests bear on the open sessions: (wire name, a ``SessionUse`` member's name).
    sessions: tuple[tuple[str, str], ...] = ()

    def session_use(self, wire_name: str) -> str | None:
        return dict(self.sessions).get(wire_name)

    def default_of(self, wire_name: str) -> str | None:
        """The default the handler of ``wire_name`` has: ``"initialize"``, ``"session_new"``, or None."""
        if wire_name == "initialize" and self.initialize is not None:
            return "initialize"
        return "session_new" if wire_name == "session/new" and self.session_new is not None else None

    @property
    def doc(self) -> str:
        """What the handler base's docstring adds about them ("" when there are none)."""
        duties = [part for part, has in (
            ("``initialize`` names the agent (:attr:`name`, :attr:`version`)", self.initialize),
            ("``session/new`` answers a fresh session id", self.session_new),
            ("a request naming a session that is not open is answered -32002 (:meth:`session_known`)", self.sessions),
        ) if has]
        return f"\n\nWhat the spec asks of every agent it does by default, each overridable: {', '.join(duties)}." if (
            duties) else ""
