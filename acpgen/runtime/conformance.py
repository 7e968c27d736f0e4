"""Hold an ACP agent to the spec's requirements of this package's protocol version.

``python -m <package>.conformance [--json] [--junit FILE] [--html FILE] [--timeout SECONDS]
[--run-timeout SECONDS] [--cwd DIR] -- AGENT_CMD [ARGS...]``, or ``--url URL [--token TOKEN]`` for a remote agent
(WebSocket or Streamable HTTP).

Each requirement cites the section of the spec's docs it comes from and gets a verdict: passed,
failed (quoting the message that broke it) or not applicable (and why). Which requirements apply
comes from this package's schema: its method table (``methods``) and what its stubs serve
(``_stub_data``): the session features it defines, its login, how its turns end. Exit status: 0
when every MUST holds, 1 when one fails, 2 for a usage error. See ``_kit_cli`` for the options.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from typing import Any

from . import _stub_data, methods
from ._runtime.kits._kit_agent import Target
from ._runtime.kits._kit_cli import main as _main

__all__ = ["TARGET", "main", "page", "target"]


def target() -> Target:
    """What the kit holds an agent to, read from this package's schema."""
    requests = frozenset(
        m.method for m in methods.METHODS if m.side == "agent" and m.kind == "request"
    )
    data: Any = _stub_data
    features: dict[str, tuple[str, tuple[str, ...]]] = {}
    if hasattr(data, "REQUEST_INFO"):  # a draft whose turns end through state updates (v2)
        where = (data.RESPONSE_CAPABILITIES,)
        for name, path in getattr(data, "SESSION_FEATURES", {}).items():
            method = "" if name == "additional-directories" else f"session/{name}"
            if not method or method in requests:
                features[name] = (method, (*where, *path))
        if "session/set_config_option" in requests:  # offered by session/new, no capability
            features["config-options"] = ("session/set_config_option", ())
        logout = getattr(data, "LOGOUT", None)
        if (
            isinstance(logout, str) and logout in requests
        ):  # advertising auth methods commits to logging out
            features["logout"] = (logout, ("authMethods",))
        login = getattr(data, "LOGIN", None)
        return Target(
            methods.PROTOCOL_VERSION,
            requests,
            dict(methods.CAPABILITIES),
            features,
            state_turns=True,
            info=data.RESPONSE_INFO,
            request_info=data.REQUEST_INFO,
            request_capabilities=data.REQUEST_CAPABILITIES,
            mcp_servers=data.MCP_SERVERS_REQUIRED,
            login=login if login in requests else None,
            login_id=getattr(data, "LOGIN_ID", "methodId"),
            prompt_capabilities=(data.RESPONSE_CAPABILITIES, "session", "prompt"),
        )
    advertised = getattr(data, "ADVERTISED", {})
    for name, method in getattr(data, "FEATURES", {}).items():
        path = ("agentCapabilities", *advertised[name]) if name in advertised else ()
        features[name] = (method, path)
    login = "authenticate" if "authenticate" in requests else None
    return Target(
        methods.PROTOCOL_VERSION, requests, dict(methods.CAPABILITIES), features, login=login
    )


TARGET = target()


def page(version: int, title: str, entries: Sequence[tuple[float, str, bytes, int]]) -> str:
    """The inspector's page of a run: every message of every connection, each checked by a
    checker of its connection."""
    from . import inspect

    session = inspect.Session()
    checkers: dict[int, Any] = {}
    for at, direction, line, number in entries:
        checker = checkers.setdefault(number, inspect.make_checker())
        session.add(at, direction, line, list(checker.check_line(direction, line).problems))
    return str(session.page(title, [p for c in checkers.values() for p in c.finish()]))


def _has_inspector() -> bool:
    return importlib.util.find_spec(f"{__package__}.inspect") is not None


def main(argv: Sequence[str] | None = None) -> int:
    return _main(
        argv,
        {TARGET.version: TARGET},
        prog=f"python -m {__package__}.conformance",
        page=page if _has_inspector() else None,
    )


if __name__ == "__main__":
    sys.exit(main())
