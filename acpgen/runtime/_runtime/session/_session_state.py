"""The session state and the tool-call tracker of a protocol version whose turns end with the
prompt's response (ACP v1): :class:`SessionState` folds ``session/update`` notifications, and
:class:`ToolCallTracker` sends them for an agent's tool calls. ``session`` is their entry module,
whose docstring says how to use them. What they take from the schema is ``_session_data``: the
variant each part of the state is folded from (a part whose update the schema lacks is left out,
its attribute too), the wire names an update replaces, and the types they annotate with.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ... import _session_data
from ..wire._codec import decode, encode

if TYPE_CHECKING:
    from ..._session_data import (
        AvailableCommands,
        ConfigOptions,
        Content,
        ModeId,
        Notification,
        PlanEntries,
        SessionInfo,
        ToolCall,
        ToolCallStatus,
        ToolCallTarget,
        Usage,
    )

__all__ = ["MessageState", "SessionState", "ToolCallTracker"]

_FOLDED = _session_data.FOLDED
#: The chunk updates, by part: the role of the message they add to.
_CHUNKS = {"user_message": "user", "agent_message": "agent", "agent_thought": "thought"}
#: The updates that replace one attribute of the state, by part: (the attribute, the update's
#: field that replaces it; None: the update itself).
_REPLACED = {
    "plan": ("plan", "entries"),
    "available_commands": ("available_commands", "available_commands"),
    "current_mode": ("current_mode_id", "current_mode_id"),
    "config_options": ("config_options", "config_options"),
    "usage": ("usage", None),
}
_TOOL_CALL_KEYS = frozenset(_session_data.TOOL_CALL_KEYS)
_SESSION_INFO_KEYS = frozenset(_session_data.SESSION_INFO_KEYS)


def _merged(current: Any, update: Any, keys: frozenset[str]) -> Any:
    """``current`` with each of ``keys`` that ``update`` sends (not as ``null``) replaced: the
    wire forms of the two laid over each other and decoded, so any kind of model merges alike."""
    data = encode(current)
    for key, value in encode(update).items():
        if value is not None and key in keys:
            data[key] = value
    return decode(type(current), data)


@dataclass
class MessageState:
    """One message of a session: the chunks that share a message id, or that came in a row."""

    role: str
    """``"user"``, ``"agent"`` or ``"thought"`` (the agent's reasoning)."""
    message_id: str | None
    chunks: list[Content] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text of its text chunks, joined."""
        return "".join(
            getattr(c, "text", "") for c in self.chunks if getattr(c, "type", None) == "text"
        )


class SessionState:
    """The current state of one session, folded from its ``session/update`` notifications.

    Call :meth:`apply` with each notification in arrival order (the runtime hands them to a
    client's ``session_update`` handler in that order).
    """

    tool_calls: dict[str, ToolCall]
    """Every tool call by id, as its latest updates leave it (status, content, ...)."""
    plan: PlanEntries
    """The latest plan's entries (each plan update replaces the whole plan)."""
    available_commands: AvailableCommands
    current_mode_id: ModeId | None
    config_options: ConfigOptions
    session_info: SessionInfo | None
    """The latest session info (title, ...), each update's fields laid over the last."""
    usage: Usage | None
    """The latest usage update."""

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        """The session's id: the first notification's, unless given."""
        self.messages: list[MessageState] = []
        """User messages, agent messages and thoughts, in the order they started."""
        self._by_id: dict[tuple[str, str], MessageState] = {}
        if "tool_call" in _FOLDED:
            self.tool_calls = {}
        if "plan" in _FOLDED:
            self.plan = []
        if "available_commands" in _FOLDED:
            self.available_commands = []
        if "current_mode" in _FOLDED:
            self.current_mode_id = None
        if "config_options" in _FOLDED:
            self.config_options = []
        if "session_info" in _FOLDED:
            self.session_info = None
        if "usage" in _FOLDED:
            self.usage = None
        self.updates = 0
        """How many notifications were applied."""

    def apply(self, notification: Notification) -> None:
        """Fold one notification in; raises ValueError for another session's."""
        if self.session_id is None:
            self.session_id = notification.session_id
        elif notification.session_id != self.session_id:
            raise ValueError(
                f"an update of session {notification.session_id!r}, not {self.session_id!r}"
            )
        update = getattr(notification, _session_data.UPDATE_FIELD)
        self.updates += 1
        part = next((part for part, cls in _FOLDED.items() if isinstance(update, cls)), None)
        if part in _CHUNKS:
            self._chunk(_CHUNKS[part], getattr(update, "message_id", None), update.content)
        elif part == "tool_call":
            self.tool_calls[update.tool_call_id] = update
        elif part == "tool_call_update":
            current = self.tool_calls.get(update.tool_call_id)
            if current is None:
                blank = dict.fromkeys(_session_data.PLACEHOLDERS, "")
                current = _FOLDED["tool_call"](tool_call_id=update.tool_call_id, **blank)
            self.tool_calls[update.tool_call_id] = _merged(current, update, _TOOL_CALL_KEYS)
        elif part == "session_info":
            if self.session_info is None:
                self.session_info = update
            else:
                self.session_info = _merged(self.session_info, update, _SESSION_INFO_KEYS)
        elif part is not None:
            attribute, name = _REPLACED[part]
            setattr(self, attribute, update if name is None else getattr(update, name))

    def _chunk(self, role: str, message_id: str | None, content: Any) -> None:
        last = self.messages[-1] if self.messages else None
        if message_id is not None:
            message = self._by_id.get((role, message_id))
            if message is None:
                message = self._by_id[(role, message_id)] = MessageState(role, message_id)
                self.messages.append(message)
        elif last is not None and last.role == role and last.message_id is None:
            message = last
        else:
            message = MessageState(role, None)
            self.messages.append(message)
        message.chunks.append(content)


class _Sender(Protocol):
    async def session_update(self, params: Notification, /) -> None: ...


#: The last tool-call number of each session, per client (the client's connection holds it).
_CALL_NUMBERS: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()


class ToolCallTracker:
    """Reports one session's tool calls: ``start`` sends ``tool_call``, ``progress`` and
    ``finish`` send ``tool_call_update``; ``calls`` holds each call as the client now sees it.

    ``tools = ToolCallTracker(self.client, session_id)``; ``call = await tools.start("Read
    file", kind="read")``; ``await tools.finish(call, content=[...])``. Other keywords are the
    fields of the update classes. The ids it makes (``call-1``, ``call-2``, ...) are numbered
    per session of one client, so the trackers of a session's turns never repeat one.
    """

    def __init__(self, client: _Sender, session_id: str) -> None:
        self.client = client
        self.session_id = session_id
        self.calls: dict[str, ToolCall] = {}
        try:
            self._numbers = _CALL_NUMBERS.setdefault(client, {})
        except TypeError:  # a client that cannot be referenced weakly: numbered per tracker
            self._numbers = {}

    async def start(
        self,
        title: str,
        *,
        tool_call_id: str | None = None,
        status: ToolCallStatus = "pending",
        **fields: Any,
    ) -> str:
        """Send a new tool call (``pending`` unless ``status`` says otherwise); returns its id."""
        if tool_call_id is None:
            number = self._numbers.get(self.session_id, 0) + 1
            self._numbers[self.session_id] = number
            tool_call_id = f"call-{number}"
        call_id = tool_call_id
        call = _FOLDED["tool_call"](tool_call_id=call_id, title=title, status=status, **fields)
        self.calls[call_id] = call
        await self._notify(call)
        return call_id

    async def progress(
        self, tool_call_id: str, /, *, status: ToolCallStatus = "in_progress", **fields: Any
    ) -> None:
        """Send what changed (``in_progress`` unless ``status`` says otherwise)."""
        await self._send(tool_call_id, status=status, **fields)

    async def finish(
        self, tool_call_id: str, /, *, status: ToolCallStatus = "completed", **fields: Any
    ) -> None:
        """Send its end: ``completed``, or ``failed``."""
        await self._send(tool_call_id, status=status, **fields)

    def target(self, tool_call_id: str) -> ToolCallTarget:
        """The tool call as ``session/request_permission`` names it."""
        if _session_data.TARGET is None:
            raise TypeError("this schema's permission requests name no tool-call update type")
        target: ToolCallTarget = _session_data.TARGET(tool_call_id=tool_call_id)
        return target

    async def _send(self, tool_call_id: str, **fields: Any) -> None:
        update = _FOLDED["tool_call_update"](tool_call_id=tool_call_id, **fields)
        if tool_call_id in self.calls:
            self.calls[tool_call_id] = _merged(self.calls[tool_call_id], update, _TOOL_CALL_KEYS)
        await self._notify(update)

    async def _notify(self, update: Any) -> None:
        """Send ``update`` to the client in a ``session/update`` notification of this session."""
        notification = _session_data.NOTIFICATION
        if notification is None:
            raise TypeError("this schema has no session/update notification")
        fields = {_session_data.UPDATE_FIELD: update}
        await self.client.session_update(notification(session_id=self.session_id, **fields))
