"""The agent kit's capability gating: for each session feature the schema defines, both halves.

A feature the agent advertises in ``initialize`` must be served (``session/load`` replays the
session before it answers, ``session/list`` lists the sessions page by page, a session closed is
gone, ...); one it does not advertise must be refused with -32601 (method not found), or, for a
feature that is a field of ``session/new`` (modes, config options, additional directories), is
not applicable. :func:`feature_checks` makes the checks of a :class:`~._kit_agent.Target`'s
features, of its login, and of every other method whose capability the schema names
(``methods.CAPABILITIES``: the unstable ones among them).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

from ._kit_agent import (
    STOP_REASONS,
    Check,
    Kit,
    NotApplicable,
    Target,
    error_code,
    unknown_session_error,
)
from ._kit_peer import Broken, Peer, quote
from ._kit_report import MUST, SHOULD

__all__ = ["feature_checks"]

Serve = Callable[[Kit, str], Awaitable[None]]  # checks a feature served, given its method


async def _gate(kit: Kit, feature: str, serve: Serve) -> None:
    """Both halves of a feature that is a method: advertised, ``serve`` checks it is served; not,
    it must answer -32601."""
    method, path = kit.target.features[feature]
    peer = await kit.live()
    if kit.advertised(path):
        await serve(kit, method)
        return
    session_id = await kit.new_session()
    answer = await peer.request(method, {"sessionId": session_id, **kit.session_params()})
    if error_code(answer) != -32601:
        raise Broken(
            f"{'.'.join(path)} is not advertised, yet {method} answered {quote(answer)}, not -32601"
        )


async def _load(kit: Kit, method: str) -> None:
    session_id = await kit.new_session()
    await kit.turn(session_id, "hello again")
    peer = await kit.live()
    start = len(peer.messages)
    answer = await peer.request(method, kit.session_params(sessionId=session_id))
    if not isinstance(answer.get("result"), dict):
        raise Broken(f"loadSession is advertised, yet {method} answered {quote(answer)}")
    if not peer.updates(session_id, start):
        raise Broken(f"{method} answered {quote(answer)} before replaying the session's turn")


async def _resume(kit: Kit, method: str) -> None:
    session_id = await kit.new_session()
    await (await kit.live()).result(method, kit.session_params(sessionId=session_id))


async def _listed(kit: Kit, method: str, params: dict[str, Any]) -> list[Any]:
    """Every session id ``session/list`` gives, following ``nextCursor`` page by page."""
    peer = await kit.live()
    listed: list[Any] = []
    for _ in range(100):
        page = await peer.result(method, params)
        if not isinstance(page.get("sessions"), list):
            raise Broken(f"{method} answered {quote(page)}: no sessions array")
        listed += [s.get("sessionId") if isinstance(s, dict) else s for s in page["sessions"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            return listed
        params = {**params, "cursor": cursor}
    raise Broken(f"{method} gave a hundred pages and a nextCursor still: {quote(page)}")


async def _list(kit: Kit, method: str) -> None:
    folder = tempfile.mkdtemp(dir=kit.scratch)
    created = [await kit.new_session(folder) for _ in range(3)]
    listed = await _listed(kit, method, {"cwd": folder})
    if sorted(map(str, listed)) != sorted(created):
        raise Broken(
            f"{method} of {folder} listed {listed}, not the sessions made there, {created}"
        )
    empty = await (await kit.live()).result(method, {"cwd": tempfile.mkdtemp(dir=kit.scratch)})
    if empty.get("sessions") != []:
        raise Broken(
            f"{method} of a cwd with no session answered {quote(empty)}, not an empty sessions array"
        )


async def _ends(kit: Kit, method: str) -> None:
    """``session/close`` (``session/delete``): the session is gone; a prompt for it is an error."""
    session_id = await kit.new_session()
    peer = await kit.live()
    await peer.result(method, {"sessionId": session_id})
    answer = await peer.request("session/prompt", kit.prompt(session_id, "hello again"))
    if not unknown_session_error(answer, peer):
        raise Broken(
            f"after {method} a prompt for the session answered {quote(answer)}, not an error"
        )


async def _fork(kit: Kit, method: str) -> None:
    session_id = await kit.new_session()
    result = await (await kit.live()).result(method, kit.session_params(sessionId=session_id))
    forked = result.get("sessionId")
    if not isinstance(forked, str) or forked == session_id:
        raise Broken(f"{method} of {session_id!r} answered {quote(result)}, not a new session id")


async def _logout(kit: Kit, method: str) -> None:
    peer = await kit.live()
    await peer.result(method, {})
    await kit.login(peer)  # the checks after it may need a login again


async def _directories(kit: Kit) -> None:
    _, path = kit.target.features["additional-directories"]
    await kit.live()
    if not kit.advertised(path):
        raise NotApplicable(f"{'.'.join(path)} is not advertised, so a client sends none")
    await kit.new_session(additionalDirectories=[tempfile.mkdtemp(dir=kit.scratch)])


async def _modes(kit: Kit) -> None:
    peer = await kit.live()
    answer = await peer.result("session/new", kit.session_params())
    modes = answer.get("modes")
    if modes is None:
        raise NotApplicable("session/new offers no modes")
    offered = [m.get("id") for m in modes.get("availableModes") or [] if isinstance(m, dict)]
    if modes.get("currentModeId") not in offered:
        raise Broken(f"the current mode is not one offered: {quote(modes)}")
    session_id = answer["sessionId"]
    method = kit.target.features["modes"][0]
    await peer.result(method, {"sessionId": session_id, "modeId": offered[-1]})
    refused = await peer.request(method, {"sessionId": session_id, "modeId": "kit-no-such-mode"})
    if "error" not in refused:
        raise Broken(f"{method} to a mode never offered answered {quote(refused)}")


async def _config(kit: Kit) -> None:
    peer = await kit.live()
    answer = await peer.result("session/new", kit.session_params())
    options = answer.get("configOptions")
    if not options:
        raise NotApplicable("session/new offers no config options")
    if not all(isinstance(o, dict) and "currentValue" in o for o in options):
        raise Broken(f"a config option has no current value: {quote(options)}")
    select = next(
        (o for o in options if o.get("type") == "select" and len(o.get("options") or []) > 1), None
    )
    if select is None:
        raise NotApplicable("no config option offers a choice of values")
    value = next(v["value"] for v in select["options"] if v.get("value") != select["currentValue"])
    method = kit.target.features["config-options"][0]
    key = "configId" if "configId" in select else "id"  # v2's later drafts name it configId
    # "type": "id" tags the value as the id of a value offered, where the draft tags it
    params = {
        "sessionId": answer["sessionId"],
        "configId": select[key],
        "type": "id",
        "value": value,
    }
    result = await peer.result(method, params)
    after = {
        o.get(key): o.get("currentValue")
        for o in result.get("configOptions") or []
        if isinstance(o, dict)
    }
    if (
        sorted(map(str, after)) != sorted(str(o[key]) for o in options)
        or after.get(select[key]) != value
    ):
        raise Broken(
            f"{select[key]} set to {value!r} answered {quote(result)}, not every option with the new value"
        )


#: A content block of each kind a prompt capability allows.
_CONTENT = {
    "image": {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
    "audio": {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
    "embeddedContext": {
        "type": "resource",
        "resource": {"uri": "file:///conformance.txt", "mimeType": "text/plain", "text": "hello"},
    },
}


async def _prompt_content(kit: Kit) -> None:
    await kit.live()
    kinds = [kind for kind in _CONTENT if kit.advertised((*kit.target.prompt_capabilities, kind))]
    if not kinds:
        raise NotApplicable("no prompt capability is advertised, so a prompt carries text alone")
    session_id = await kit.new_session()
    params = kit.prompt(session_id, "hello content")
    params["prompt"] += [_CONTENT[kind] for kind in kinds]
    end = await kit.turn(session_id, prompt=params)
    if end.get("stopReason") not in STOP_REASONS:
        raise Broken(
            f"a prompt with {', '.join(kinds)} content, advertised, ended with {quote(end)}"
        )


async def _login_refused(kit: Kit) -> None:
    peer = await kit.live()
    advertised = [
        m.get("id", m.get("methodId"))
        for m in peer.hello.get("authMethods") or []
        if isinstance(m, dict)
    ]
    method = kit.target.login or "authenticate"
    answer = await peer.request(method, {kit.target.login_id: "kit-no-such-auth-method"})
    if "error" not in answer:
        raise Broken(
            f"{method} with a method it never advertised ({advertised}) answered {quote(answer)}"
        )


async def _advertised(kit: Kit, feature: str) -> tuple[str, Peer]:
    """The method of ``feature`` and the live peer, for a check of what the feature does once
    advertised: not applicable where the agent does not advertise it."""
    method, path = kit.target.features[feature]
    peer = await kit.live()
    if not kit.advertised(path):
        raise NotApplicable(f"{'.'.join(path)} is not advertised")
    return method, peer


async def _list_without_params(kit: Kit) -> None:
    method, peer = await _advertised(kit, "list")
    answer = await peer.request(method)
    if not isinstance(answer.get("result"), dict):
        raise Broken(f"{method} without params (all of them optional) answered {quote(answer)}")


async def _bad_cursor(kit: Kit) -> None:
    method, peer = await _advertised(kit, "list")
    answer = await peer.request(method, {"cursor": "kit-no-such-cursor"})
    if "error" not in answer:
        raise Broken(f"{method} with a cursor it never gave answered {quote(answer)}")


async def _delete_unknown(kit: Kit) -> None:
    method, peer = await _advertised(kit, "delete")
    answer = await peer.request(method, {"sessionId": "kit-no-such-session"})
    if not isinstance(answer.get("result"), dict):
        raise Broken(f"{method} of a session that never existed answered {quote(answer)}")


def _gated_method(method: str, pointer: str) -> Callable[[Kit], Awaitable[None]]:
    """A method the schema gates by a capability but the kit knows nothing more of: advertised,
    it is not answered -32601; not, it is."""
    path = tuple(pointer.split("/")[2:])

    async def check(kit: Kit) -> None:
        peer = await kit.live()
        answer = await peer.request(method, {})
        advertised = kit.advertised(path)
        if advertised and error_code(answer) == -32601:
            raise Broken(f"{'.'.join(path)} is advertised, yet {method} answered {quote(answer)}")
        if not advertised and error_code(answer) != -32601:
            raise Broken(
                f"{'.'.join(path)} is not advertised, yet {method} answered {quote(answer)}, not -32601"
            )

    return check


def _method_gate(feature: str, serve: Serve) -> Callable[[Kit], Awaitable[None]]:
    async def check(kit: Kit) -> None:
        await _gate(kit, feature, serve)

    return check


#: The features that are methods: (how the advertised half is checked, v1's section, v2's).
_METHODS: dict[str, tuple[Serve, str, str, str]] = {
    "load": (
        _load,
        "session-setup#loading-sessions",
        "initialization#session-capabilities",
        "the agent replays the session before it answers",
    ),
    "resume": (
        _resume,
        "session-setup#resuming-sessions",
        "session-setup#resuming-sessions",
        "the agent resumes a session it made",
    ),
    "list": (
        _list,
        "session-list#listing-sessions",
        "session-list#listing-sessions",
        "the agent lists a cwd's sessions page by page (nextCursor), none for a cwd with none",
    ),
    "close": (
        _ends,
        "session-setup#closing-active-sessions",
        "session-setup#closing-active-sessions",
        "a closed session is gone: a prompt for it is an error",
    ),
    "delete": (
        _ends,
        "session-delete#checking-support",
        "session-delete#checking-support",
        "a deleted session is gone: a prompt for it is an error",
    ),
    "fork": (
        _fork,
        "initialization#session-capabilities",
        "initialization#session-capabilities",
        "a fork answers a new session id",
    ),
    "logout": (
        _logout,
        "authentication#logging-out",
        "authentication#logging-out",
        "the agent logs the client out",
    ),
}
_FIELDS: dict[str, tuple[Callable[[Kit], Awaitable[None]], str, str, str]] = {
    "additional-directories": (
        _directories,
        "session-setup#additional-workspace-roots",
        "session-setup#additional-workspace-roots",
        "advertised additionalDirectories are accepted by session/new",
    ),
    "modes": (
        _modes,
        "session-modes#setting-the-current-mode",
        "session-modes#setting-the-current-mode",
        "the current mode is one offered; session/set_mode switches to an offered one, refuses another",
    ),
    "config-options": (
        _config,
        "session-config-options#setting-a-config-option",
        "session-config-options#setting-a-config-option",
        "every option has a value; setting one answers every option, with the new value",
    ),
}


def feature_checks(target: Target) -> tuple[Check, ...]:
    """The checks of the features ``target``'s schema defines, in a fixed order."""
    checks: list[Check] = []
    for name, (serve, v1, v2, does) in _METHODS.items():
        if name in target.features and target.features[name][0]:
            text = f"{name}: advertised, {does}; not advertised, its method answers -32601"
            checks.append(
                Check(f"capabilities.{name}", MUST, (v1, v2), text, _method_gate(name, serve))
            )
    for name, (run, v1, v2, does) in _FIELDS.items():
        if name in target.features:
            checks.append(Check(f"capabilities.{name}", MUST, (v1, v2), does, run))
    checks.append(
        Check(
            "capabilities.prompt-content",
            MUST,
            ("initialization#prompt-capabilities", "initialization#session-prompt-capabilities"),
            "a prompt with the content its prompt capabilities advertise (image, audio, embedded "
            "context) is served",
            _prompt_content,
        )
    )
    if target.login is not None and target.login in target.methods:
        checks.append(
            Check(
                "auth.unknown-method",
                SHOULD,
                ("authentication#advertising-authentication",) * 2,
                f"{target.login} naming a method the agent did not advertise is refused",
                _login_refused,
            )
        )
    if "list" in target.features:
        checks.append(
            Check(
                "session-list.omitted-params",
                MUST,
                ("https://www.jsonrpc.org/specification#request_object",) * 2,
                "session/list without params (every one optional) is served",
                _list_without_params,
            )
        )
        checks.append(
            Check(
                "session-list.invalid-cursor",
                SHOULD,
                ("session-list#pagination",) * 2,
                "session/list with a cursor it never gave is an error",
                _bad_cursor,
            )
        )
    if "delete" in target.features:
        checks.append(
            Check(
                "session-delete.unknown-session",
                SHOULD,
                ("session-delete#semantics",) * 2,
                "session/delete of a session that never existed succeeds silently",
                _delete_unknown,
            )
        )
    known = {method for method, _ in target.features.values()}
    for method, pointer in sorted(target.capabilities.items()):
        if pointer.startswith("/result/") and method in target.methods and method not in known:
            text = f"{method}: advertised, it is served; not advertised, it answers -32601"
            checks.append(
                Check(
                    f"capabilities.{method}",
                    MUST,
                    ("initialization#agent-capabilities",) * 2,
                    text,
                    _gated_method(method, pointer),
                )
            )
    return tuple(checks)


def scratch_folder() -> str:
    """An empty folder for the cwd of sessions no other has (removed by the caller)."""
    return os.path.realpath(tempfile.mkdtemp(prefix="acp-conformance-"))
