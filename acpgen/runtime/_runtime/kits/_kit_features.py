"""The agent kit's capability gating: for each session feature the schema defines, both halves.

A feature the agent advertises in ``initialize`` must be served (``session/load`` replays the
session before it answers, ``session/list`` lists the sessions page by page, a session closed is
gone, ...): a MUST, as the agent answers ``initialize`` with the capabilities it supports. It is
tried as a client would use it: on a session that has had a turn, with content that is what it
says (a real PNG image, a real WAV sound). A method the agent does not advertise should be
refused with -32601 (method not found): a requirement of its own, of the level ADVICE, since the
text's MUST NOT binds the client (it never calls what is not advertised). A feature that is a field
of ``session/new`` (modes, config options, additional directories) not offered is not
applicable. :func:`feature_checks` makes the checks of a :class:`~._kit_agent.Target`'s
features, of its login, and of every other method whose capability the schema names
(``methods.CAPABILITIES``: the unstable ones among them).
"""

from __future__ import annotations

import base64
import io
import os
import struct
import tempfile
import wave
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

from ._kit_agent import (
    SESSION_UPDATES,
    STOP_REASONS,
    Check,
    Cite,
    Kit,
    NotApplicable,
    Target,
    cites,
    error_code,
)
from ._kit_peer import Broken, Peer, quote

__all__ = ["feature_checks"]

Serve = Callable[[Kit, str], Awaitable[None]]  # checks a feature served, given its method


async def _served(kit: Kit, feature: str, serve: Serve) -> None:
    """The advertised half: ``serve`` checks the feature is served; not applicable unadvertised."""
    method, _ = await _advertised(kit, feature)
    await serve(kit, method)


async def _refused(kit: Kit, feature: str) -> None:
    """The unadvertised half: its method is answered -32601; not applicable where advertised."""
    method, path = kit.target.features[feature]
    peer = await kit.live()
    if kit.advertised(path):
        raise NotApplicable(f"{'.'.join(path)} is advertised")
    session_id = await kit.new_session()
    answer = await peer.request(method, {"sessionId": session_id, **kit.session_params()})
    if error_code(answer) != -32601:
        raise Broken(
            f"{'.'.join(path)} is not advertised, yet {method} answered {quote(answer)}, not -32601"
        )


async def _used(kit: Kit, cwd: str | None = None) -> str:
    """A session in the state a client lists, resumes, forks or closes one: it has had a turn."""
    session_id = await kit.new_session(cwd)
    await kit.turn(session_id, "hello before")
    return session_id


async def _load(kit: Kit, method: str) -> None:
    session_id = await _used(kit)
    peer = await kit.live()
    start = len(peer.messages)
    answer = await peer.request(method, kit.session_params(sessionId=session_id))
    if not _succeeded(answer):
        raise Broken(f"loadSession is advertised, yet {method} answered {quote(answer)}")
    if not peer.updates(session_id, start):
        raise Broken(f"{method} answered {quote(answer)} before replaying the session's turn")


def _succeeded(answer: dict[str, Any]) -> bool:
    """A result: an object, or null where it has no field (v1's text shows ``session/load``'s so)."""
    return (
        "error" not in answer
        and (answer.get("result") is None or isinstance(answer["result"], dict))
        and "result" in answer
    )


#: How long after ``session/load``'s answer the kit waits for a replayed update that came late.
QUIET = 0.5


async def _replay_first(kit: Kit) -> None:
    """The whole replay of a ``session/load`` comes before its answer: no update of the session
    that is an entry of its conversation after it (within :data:`QUIET` seconds). What says what
    the session is (:data:`SESSION_UPDATES`: its commands, its title, its mode...) may follow."""
    method, peer = await _advertised(kit, "load")
    session_id = await _used(kit)
    start = len(peer.messages)
    answer = await peer.request(method, kit.session_params(sessionId=session_id))
    if not _succeeded(answer):
        raise NotApplicable(f"{method} answered {quote(answer)} (capabilities.load holds that)")
    at = next(i for i in range(start, len(peer.messages)) if peer.messages[i] is answer)
    late = await peer.wait_for(
        lambda m: m.get("method") == "session/update"
        and (m.get("params") or {}).get("sessionId") == session_id
        and ((m.get("params") or {}).get("update") or {}).get("sessionUpdate")
        not in SESSION_UPDATES,
        at + 1,
        timeout=min(QUIET, peer.patience),
    )
    if late is not None:
        raise Broken(f"{method} answered {quote(answer)}, then sent {quote(late)}")


async def _resume(kit: Kit, method: str) -> None:
    session_id = await _used(kit)
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
    created = [await _used(kit, folder) for _ in range(3)]
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
    """``session/close`` (``session/delete``) of a session that has had a turn succeeds. What a
    prompt for it then gets is not the text's to say (an error is what an agent MAY answer for a
    session no longer active: ``session.unknown-session`` advises it; for a deleted one it is
    implementation-defined)."""
    session_id = await _used(kit)
    await (await kit.live()).result(method, {"sessionId": session_id})


async def _fork(kit: Kit, method: str) -> None:
    session_id = await _used(kit)
    result = await (await kit.live()).result(method, kit.session_params(sessionId=session_id))
    forked = result.get("sessionId")
    if not isinstance(forked, str) or forked == session_id:
        raise Broken(f"{method} of {session_id!r} answered {quote(result)}, not a new session id")


async def _logout(kit: Kit, method: str) -> None:
    peer = await kit.live()
    await peer.result(method, {})
    # no login again: a check after it logs in where an answer asks for it (-32000)


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
    missing = {str(o[key]) for o in options} - set(map(str, after))
    if missing or after.get(select[key]) != value:
        # the complete configuration: options a change brings (an effort for a model) are welcome
        raise Broken(
            f"{select[key]} set to {value!r} answered {quote(result)}, not every option with the new value"
        )


def _png() -> str:
    """A real image, base64: one white pixel, a PNG of 8-bit RGB (its signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1 x 1, 8 bits, RGB, no interlace
    pixels = zlib.compress(b"\x00\xff\xff\xff", 9)  # one row: filter none, a white pixel
    png = (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )
    return base64.b64encode(png).decode("ascii")


def _wav() -> str:
    """A real sound, base64: a tenth of a second of silence, 8 kHz mono 16-bit PCM WAV."""
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\x00\x00" * 800)
    return base64.b64encode(out.getvalue()).decode("ascii")


#: A content block of each kind a prompt capability allows, each what it says it is.
_CONTENT = {
    "image": {"type": "image", "mimeType": "image/png", "data": _png()},
    "audio": {"type": "audio", "mimeType": "audio/wav", "data": _wav()},
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


def _gated_method(method: str, pointer: str, advertised: bool) -> Callable[[Kit], Awaitable[None]]:
    """A method the schema gates by a capability but the kit knows nothing more of: the half where
    it is ``advertised`` (it is not answered -32601), or the other (it is)."""
    path = tuple(pointer.split("/")[2:])

    async def check(kit: Kit) -> None:
        peer = await kit.live()
        if kit.advertised(path) != advertised:
            raise NotApplicable(f"{'.'.join(path)} is {'not ' * advertised}advertised")
        answer = await peer.request(method, {})
        if advertised and error_code(answer) == -32601:
            raise Broken(f"{'.'.join(path)} is advertised, yet {method} answered {quote(answer)}")
        if not advertised and error_code(answer) != -32601:
            raise Broken(
                f"{'.'.join(path)} is not advertised, yet {method} answered {quote(answer)}, not -32601"
            )

    return check


def _half(feature: str, serve: Serve | None) -> Callable[[Kit], Awaitable[None]]:
    async def check(kit: Kit) -> None:
        await (_refused(kit, feature) if serve is None else _served(kit, feature, serve))

    return check


#: The sentence every advertised half rests on: the agent answers initialize with the
#: capabilities it supports (the page's opening, in v1's docs and v2's).
_SUPPORTS = cites(
    "initialization",
    "agent",
    "MUST",
    "initialize answers the capabilities the agent supports: one advertised is served",
)
#: What the text says of a method the agent does not advertise: the client never calls it (v1's
#: pages of load, resume, list, close, delete and logout), or the agent may serve more methods by
#: advertising their capabilities (where no page says more).
_NEVER_CALLED = "the client never calls a method whose capability is not advertised"
_MAY_SERVE = "the agent may serve more methods, each advertised by its capability"


def _never(section: str) -> Cite:
    return Cite(section, "client", "MUST NOT", _NEVER_CALLED)


def _may(section: str = "initialization#session-capabilities") -> Cite:
    return Cite(section, "agent", "MAY", _MAY_SERVE)


#: The features that are methods: how the advertised half is checked, the sentences it rests on
#: (v1's, v2's), those of the unadvertised half, and what the advertised half asks.
_METHODS: dict[str, tuple[Serve, tuple[Cite, Cite], tuple[Cite, Cite], str]] = {
    "load": (
        _load,
        cites(
            "session-setup#loading-sessions",
            "agent",
            "MUST",
            "session/load replays the whole conversation as session/update notifications, then "
            "answers",
            "initialization",
        ),
        (_never("session-setup#loading-sessions"), _may()),
        "the agent replays the session (after a turn) before it answers",
    ),
    "resume": (
        _resume,
        (
            _SUPPORTS[0],
            Cite(
                "session-setup#resuming-sessions",
                "agent",
                "MUST",
                "an agent of the session surface supports session/resume",
            ),
        ),
        (_never("session-setup#resuming-sessions"), _may()),
        "the agent resumes a session it made, after a turn",
    ),
    "list": (
        _list,
        cites(
            "session-list#listing-sessions",
            "agent",
            "MUST",
            "session/list answers the sessions that match, an empty array when none do",
        ),
        (_never("session-list#checking-support"), _may()),
        "the agent lists a cwd's sessions (each after a turn) page by page, none for a cwd with none",
    ),
    "close": (
        _ends,
        cites(
            "session-setup#closing-active-sessions",
            "agent",
            "MUST",
            "session/close cancels the session's work and frees what it holds",
        ),
        (_never("session-setup#closing-active-sessions"), _may()),
        "the agent closes a session it made, after a turn",
    ),
    "delete": (
        _ends,
        _SUPPORTS,
        (_never("session-delete#checking-support"),) * 2,
        "the agent deletes a session it made, after a turn",
    ),
    "fork": (
        _fork,
        _SUPPORTS,
        (_may(), _may()),
        "a fork of a session (after a turn) answers a new session id",
    ),
    "logout": (
        _logout,
        (
            _SUPPORTS[0],
            Cite(
                "authentication#advertising-authentication",
                "agent",
                "MUST",
                "an agent that advertises auth methods implements auth/login and auth/logout",
            ),
        ),
        (_never("authentication#advertising-authentication"),) * 2,
        "the agent logs the client out",
    ),
}
_FIELDS: dict[str, tuple[Callable[[Kit], Awaitable[None]], tuple[Cite, Cite], str]] = {
    "additional-directories": (
        _directories,
        _SUPPORTS,
        "advertised additionalDirectories are accepted by session/new",
    ),
    "modes": (
        _modes,
        cites(
            "session-modes#setting-the-current-mode",
            "agent",
            "",
            "the client switches to one of the modes offered with session/set_mode (no keyword "
            "binds the agent)",
        ),
        "the current mode is one offered; session/set_mode switches to an offered one, refuses another",
    ),
    "config-options": (
        _config,
        cites(
            "session-config-options#setting-a-config-option",
            "agent",
            "MUST",
            "setting an option answers the complete configuration, every option with its value",
        ),
        "every option has a value; setting one answers them all (and any it brings), the new value set",
    ),
}


def _surface(target: Target, name: str) -> bool:
    """The capability of feature ``name`` is a whole surface (v2's ``session``, which other
    features' capabilities are in): unadvertised, the agent serves no session at all, so its
    unadvertised half is not held alone."""
    path = target.features[name][1]
    return any(
        len(other) > len(path) and other[: len(path)] == path
        for _, other in target.features.values()
    )


def feature_checks(target: Target) -> tuple[Check, ...]:
    """The checks of the features ``target``'s schema defines, in a fixed order."""
    checks: list[Check] = []
    for name, (serve, served, refused, does) in _METHODS.items():
        if name in target.features and target.features[name][0]:
            checks.append(
                Check(
                    f"capabilities.{name}",
                    served,
                    f"{name}: advertised, {does}",
                    _half(name, serve),
                )
            )
            if not _surface(target, name):
                checks.append(
                    Check(
                        f"capabilities.{name}.unadvertised",
                        refused,
                        f"{name}: not advertised, its method is answered -32601",
                        _half(name, None),
                    )
                )
            if name == "load":
                checks.append(
                    Check(
                        "session-load.replay-first",
                        cites(
                            "session-setup#loading-sessions",
                            "agent",
                            "MUST",
                            "the agent answers session/load once every entry is streamed",
                            "initialization",
                        ),
                        "session/load's replay comes wholly before its answer: no update of the "
                        "session's conversation after it",
                        _replay_first,
                    )
                )
    for name, (run, cited, does) in _FIELDS.items():
        if name in target.features:
            checks.append(Check(f"capabilities.{name}", cited, does, run))
    checks.append(
        Check(
            "capabilities.prompt-content",
            _SUPPORTS,
            "a prompt with the content its prompt capabilities advertise (a real image, audio, "
            "embedded context) is served",
            _prompt_content,
        )
    )
    if target.login is not None and target.login in target.methods:
        checks.append(
            Check(
                "auth.unknown-method",
                cites(
                    "authentication#advertising-authentication",
                    "agent",
                    "",
                    "the agent advertises its auth methods (no keyword asks it to refuse another)",
                ),
                f"{target.login} naming a method the agent did not advertise is refused",
                _login_refused,
            )
        )
    if "list" in target.features:
        checks.append(
            Check(
                "session-list.omitted-params",
                cites(
                    "session-list#listing-sessions",
                    "client",
                    "",
                    "the client lists with a params object, its filters optional (nothing asks the "
                    "agent to take params omitted)",
                ),
                "session/list without params (every one optional) is served",
                _list_without_params,
            )
        )
        checks.append(
            Check(
                "session-list.invalid-cursor",
                cites(
                    "session-list#pagination",
                    "agent",
                    "SHOULD",
                    "the agent answers an error for a cursor that is not valid",
                ),
                "session/list with a cursor it never gave is an error",
                _bad_cursor,
            )
        )
    if "delete" in target.features:
        checks.append(
            Check(
                "session-delete.unknown-session",
                cites(
                    "session-delete#semantics",
                    "agent",
                    "SHOULD",
                    "deleting a session already deleted or never made succeeds silently",
                ),
                "session/delete of a session that never existed succeeds silently",
                _delete_unknown,
            )
        )
    known = {method for method, _ in target.features.values()}
    for method, pointer in sorted(target.capabilities.items()):
        if pointer.startswith("/result/") and method in target.methods and method not in known:
            checks.append(
                Check(
                    f"capabilities.{method}",
                    _SUPPORTS,
                    f"{method}: advertised, it is served (not answered -32601)",
                    _gated_method(method, pointer, True),
                )
            )
            checks.append(
                Check(
                    f"capabilities.{method}.unadvertised",
                    (_may("initialization#agent-capabilities"),) * 2,
                    f"{method}: not advertised, it is answered -32601",
                    _gated_method(method, pointer, False),
                )
            )
    return tuple(checks)


def scratch_folder() -> str:
    """An empty folder for the cwd of sessions no other has (removed by the caller)."""
    return os.path.realpath(tempfile.mkdtemp(prefix="acp-conformance-"))
