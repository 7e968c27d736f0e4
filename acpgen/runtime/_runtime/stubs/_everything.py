"""A stub agent's turn that sends everything: one ``session/update`` of every kind its schema
defines (``_stub_data.EVERY_UPDATE``, examples made from the schema: a plan, a tool call and its
update with content and locations, a terminal's, mode and config changes, usage, ...) and then a
permission request about the tool call, before it echoes the prompt. A turn does it when the
agent runs with ``--all-updates``, or when its prompt has the word ``everything``; so a client
tested against a stub meets each kind of update its schema has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["OPTIONS", "WORD", "add_argument", "asked", "tool_call_id", "updates"]

#: The prompt word that asks a turn for every update.
WORD = "everything"
_WORDS = re.compile(r"\w+")
#: The options of the permission request the turn sends.
OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def asked(prompt: Iterable[Any]) -> bool:
    """Whether a prompt's text has the word :data:`WORD` (in any case)."""
    for block in prompt:
        text = (
            block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
        )
        if isinstance(text, str):
            lowered = text.lower()  # the words read only where the word may be: a prompt's cost
            if WORD in lowered and WORD in _WORDS.findall(lowered):
                return True
    return False


def updates(examples: Mapping[str, str], own: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The updates of such a turn, in the schema's order: its examples, but the kinds the agent
    has values of its own for (``own``: a session's mode, its config options) as the agent has
    them."""
    return [own.get(kind) or json.loads(text) for kind, text in examples.items()]


def tool_call_id(examples: Mapping[str, str], default: str = "everything-tool-call") -> str:
    """The id of the tool call the examples report (what the permission request names)."""
    for kind in ("tool_call", "tool_call_update"):
        if kind in examples:
            found = json.loads(examples[kind]).get("toolCallId")
            if isinstance(found, str):
                return found
    return default


def add_argument(parser: Any) -> None:
    """A stub agent's ``--all-updates``."""
    parser.add_argument(
        "--all-updates",
        action="store_true",
        help="every turn sends one session/update of each kind the schema defines, and a"
        f" permission request (without it, a turn whose prompt has the word {WORD} does)",
    )
