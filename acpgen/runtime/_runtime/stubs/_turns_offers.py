"""What the v2 stub agent offers, in its draft's shapes: the session features it serves, the auth
method it advertises, its prompt capabilities, its one config option and a session as
``session/list`` lists it (each read from ``_stub_data``, where the draft names them)."""

from __future__ import annotations

import json
from typing import Any

from ... import _stub_data
from ...methods import METHODS
from ._stub_sessions import Session

__all__ = [
    "PROMPT_CAPABILITIES",
    "STUB_LOGIN",
    "STYLE",
    "STYLES",
    "advertised",
    "config_option",
    "config_options",
    "info",
    "served",
]

#: The auth method it advertises without ``--auth-method`` (a login with it is optional).
STUB_LOGIN = "stub-login"
#: Its one config option, where the draft has ``session/set_config_option``: ``upper`` echoes
#: the prompt in upper case.
STYLE = {"id": "style", "name": "Reply style"}
STYLES = [{"value": "echo", "name": "Echo"}, {"value": "upper", "name": "Upper case"}]
#: What it advertises of prompts, where the draft has the ``session.prompt`` capability.
PROMPT_CAPABILITIES: dict[str, Any] = {"image": {}, "audio": {}, "embeddedContext": {}}


def served(enabled: frozenset[str]) -> frozenset[str]:
    """The session features the agent serves of those ``enabled``: none, when one that the bare
    ``session`` capability commits to is not (it cannot advertise ``session``, nor what is below).
    """
    bare = [f for f, path in _stub_data.SESSION_FEATURES.items() if len(path) == 1]
    return enabled if all(f in enabled for f in bare) else frozenset()


def config_option() -> dict[str, Any] | None:
    """The draft's config option, as its example update has it (None: the draft has none)."""
    example = _stub_data.EVERY_UPDATE.get("config_option_update")
    if example is None or not any(m.method == "session/set_config_option" for m in METHODS):
        return None
    option: dict[str, Any] = json.loads(example)["configOptions"][0]
    return option if option.get("type") == "select" else None


def config_options(session: Session) -> list[dict[str, Any]]:
    """The session's config options, in the shape of the draft's (``_config_option``)."""
    option = config_option() or {}
    key = "configId" if "configId" in option else "id"
    kept = {
        k: v for k, v in option.items() if k in ("type", key, "name", "currentValue", "options")
    }
    current = session.config.get(STYLE["id"], STYLES[0]["value"])
    named = {**kept, key: STYLE["id"], "name": STYLE["name"]}
    return [{**named, "currentValue": current, "options": STYLES}]


def info(session: Session) -> dict[str, Any]:
    """A session as ``session/list`` lists it: the fields its draft has."""
    info: dict[str, Any] = {
        "sessionId": session.session_id,
        "cwd": session.cwd,
        "updatedAt": session.updated_at,
    }
    if session.directories:
        info["additionalDirectories"] = session.directories
    return {k: v for k, v in info.items() if k in _stub_data.SESSION_INFO}


def advertised(method_id: str) -> dict[str, str]:
    """An auth method of the type the agent handles itself, as ``initialize`` advertises it."""
    method = {_stub_data.LOGIN_TAG: _stub_data.LOGIN_TYPE, _stub_data.LOGIN_ID: method_id}
    return {**method, "name": method_id} if _stub_data.LOGIN_NAMED else method
