"""The session state of a protocol version whose turns end through state updates (ACP v2),
folded from ``session/update`` notifications with that version's update semantics. ``session``
is its entry module, whose docstring says how to use it; the notification's type is the
version's (``_stub_data.UpdateParams``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..wire._codec import encode

if TYPE_CHECKING:
    from ..._stub_data import UpdateParams

__all__ = ["MessageState", "SessionState", "patched"]

#: The message updates, by tag: the role of the message they create or patch.
_MESSAGES = {"user_message": "user", "agent_message": "agent", "agent_thought": "thought"}
#: The chunk updates, by tag: the role of the message they add to.
_CHUNKS = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
#: The updates that replace one part of the state as a whole, by tag: (attribute, wire key).
_REPLACED = {
    "plan_update": ("plan", "plan"),
    "available_commands_update": ("available_commands", "availableCommands"),
    "config_option_update": ("config_options", "configOptions"),
    "usage_update": ("usage", None),
}


def patched(current: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``current`` with ``patch`` laid over it: a key the patch omits stays, a ``null`` removes
    the key, a value replaces it; ``_meta`` is patched the same way, key by key."""
    result = dict(current)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif key == "_meta" and isinstance(value, dict):
            result[key] = patched(result.get(key) or {}, value)
        else:
            result[key] = value
    return result


@dataclass
class MessageState:
    """One message of a session, by its id: its content blocks (JSON values) in order."""

    role: str
    """``"user"``, ``"agent"`` or ``"thought"`` (the agent's reasoning)."""
    message_id: str | None
    content: list[Any] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text of its text blocks, joined."""
        return "".join(
            str(block.get("text", ""))
            for block in self.content
            if isinstance(block, dict) and block.get("type") == "text"
        )


class SessionState:
    """The current state of one session, folded from its ``session/update`` notifications.

    Call :meth:`apply` with each notification in arrival order (the runtime hands them to a
    client's ``session_update`` handler in that order).
    """

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        """The session's id: the first notification's, unless given."""
        self.state = "idle"
        """The session's state: ``idle`` (a new session's), ``running``, ``requires_action``..."""
        self.stop_reason: str | None = None
        """Why the last turn ended: the ``stopReason`` of the last ``idle`` state, if it had one."""
        self.turns_ended = 0
        """How many turns ended: state updates to ``idle`` from another state."""
        self.messages: list[MessageState] = []
        """User messages, agent messages and thoughts, in the order they started."""
        self._by_id: dict[tuple[str, str], MessageState] = {}
        self.tool_calls: dict[str, dict[str, Any]] = {}
        """Every tool call by id, as its updates have patched it (JSON objects)."""
        self.plan: Any = None
        """The latest plan (each plan update replaces it)."""
        self.available_commands: list[Any] = []
        self.config_options: list[Any] = []
        self.session_info: dict[str, Any] = {}
        """The session's info (title, ...), each update patching it."""
        self.usage: dict[str, Any] | None = None
        """The latest usage update."""
        self.other: list[dict[str, Any]] = []
        """The updates of a kind this state does not fold, as they came."""
        self.updates = 0
        """How many notifications were applied."""

    def apply(self, notification: UpdateParams) -> bool:
        """Fold one notification in; True when it ended a turn. Raises ValueError for another
        session's."""
        if self.session_id is None:
            self.session_id = notification.session_id
        elif notification.session_id != self.session_id:
            raise ValueError(
                f"an update of session {notification.session_id!r}, not {self.session_id!r}"
            )
        self.updates += 1
        update: dict[str, Any] = encode(notification.update)
        kind = update.get("sessionUpdate")
        body = {k: v for k, v in update.items() if k != "sessionUpdate"}
        if kind == "state_update":
            return self._state(body)
        if kind in _MESSAGES:
            self._message(_MESSAGES[kind], body)
        elif kind in _CHUNKS:
            self._message_of(_CHUNKS[kind], body.get("messageId")).content.append(body["content"])
        elif kind == "tool_call_update":
            call_id = body["toolCallId"]
            self.tool_calls[call_id] = patched(self.tool_calls.get(call_id, {}), body)
        elif kind == "tool_call_content_chunk":
            call_id = body["toolCallId"]
            call = self.tool_calls.setdefault(call_id, {"toolCallId": call_id})
            call["content"] = [*(call.get("content") or []), body["content"]]
        elif kind in _REPLACED:
            attribute, key = _REPLACED[kind]
            setattr(self, attribute, body if key is None else body[key])
        elif kind == "session_info_update":
            self.session_info = patched(self.session_info, body)
        else:
            self.other.append(update)
        return False

    def _state(self, body: dict[str, Any]) -> bool:
        before, self.state = self.state, str(body.get("state"))
        if self.state != "idle":
            return False
        reason = body.get("stopReason")
        self.stop_reason = reason if isinstance(reason, str) else None
        if before == "idle":
            return False
        self.turns_ended += 1
        return True

    def _message(self, role: str, body: dict[str, Any]) -> None:
        message = self._message_of(role, body.get("messageId"))
        if "content" in body:
            message.content = list(body["content"] or [])

    def _message_of(self, role: str, message_id: Any) -> MessageState:
        """The message ``message_id`` of ``role``, started if it is new."""
        key = (role, str(message_id))
        message = self._by_id.get(key)
        if message is None:
            message = self._by_id[key] = MessageState(role, message_id)
            self.messages.append(message)
        return message
