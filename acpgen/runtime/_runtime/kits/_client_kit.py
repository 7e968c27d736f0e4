"""The client kit: a stub agent's checking mode (``python -m <package>.stub_agent --check``, on
stdio or with ``--listen``) holds the client that connects to it to what the spec asks of a
client, and reports each requirement when the connection ends, in the agent kit's forms
(``_kit_report``).

While the client does what it does (``initialize``, ``session/new``, prompts), the agent watches
every message both ways (the connection's observer) and drives what a client must answer: each
turn sends every kind of update and a ``session/request_permission`` (``_everything``); the
first turn, before it, asks the client to write, read and run what it advertised (``fs/*``,
``terminal/*``, where the package's protocol version has them; a client that advertises reads but
wrote nothing is asked to read a file the agent puts in the session's cwd, where that is a folder
of this machine). Each requirement (``_client_rules.RULES``) records the sentence it rests on (its
section, the peer it binds, its keyword), and its level is read from them: MUST or SHOULD where
the sentence binds the client so, ADVICE (shown, never failing) where it does not. What it judges:

* ``initialize`` answered with a result before any session request (a client whose initialize
  was refused, or that never sent one, fails);
* no method whose agent capability the agent did not advertise, whatever the answer (none too),
  no ``additionalDirectories`` unless advertised; and no method the agent does not have (advice;
  an extension method aside);
* prompts only for sessions the agent created, one at a time per session (advice; a prompt
  answered with an error ends its turn);
* the permission request answered with an option it offered (advice), and with ``cancelled``
  when the client cancelled the turn while it was pending;
* each ``fs/*`` and ``terminal/*`` request the client advertised served (one it did not: not
  applicable, the agent sends none);
* every answer of the right id, once; every message a JSON-RPC 2.0 object (nothing the agent had
  to answer -32700 or -32600).

A requirement the client gave no chance to test is "not applicable", never passed.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._client_rules import RULES, judge, obj, quote, requirements
from ._kit_report import FAILED, NOT_APPLICABLE, PASSED, Verdict

__all__ = ["RULES", "ClientCheck", "judge", "quote", "requirements"]

PROBE_FILE = ".acp-client-check.txt"
PROBE_TEXT = "written by the ACP client kit\n"
#: Seconds a probe waits for its answer.
PATIENCE = 30.0


@dataclass
class ClientCheck:
    """One connection's transcript and probes, judged when it ends."""

    #: every message both ways: (seconds since the start, "sent" or "received", message)
    events: list[tuple[float, str, dict[str, Any]]] = field(default_factory=list)
    #: the probes' outcomes and details, by requirement id (the rest: judged from the transcript)
    probed: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the JSON pointer into ``initialize``'s answer of the capability each of the agent's
    #: methods needs (the package's ``methods.CAPABILITIES``)
    gates: Mapping[str, str] = field(default_factory=dict)
    #: the JSON pointer into ``initialize``'s answer of the capability a request's field needs
    #: (``additionalDirectories``), where the schema has it
    fields: Mapping[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    probing: bool = False  # the first turn's probes are done or under way
    on_end: Callable[[], Any] | None = None  # a remote connection's report, when it ends

    def observe(self, direction: str, message: dict[str, Any], session: str | None) -> None:
        self.events.append((time.monotonic() - self.started, direction, message))

    def capabilities(self) -> dict[str, Any]:
        """What the client advertised in ``initialize`` (v1's ``clientCapabilities``, v2's
        ``capabilities``)."""
        for _, direction, message in self.events:
            if direction == "received" and message.get("method") == "initialize":
                params = message.get("params") or {}
                found = params.get("clientCapabilities", params.get("capabilities"))
                return found if isinstance(found, dict) else {}
        return {}

    def version(self) -> int | None:
        """The protocol version the agent answered ``initialize`` with (None: none yet)."""
        asked = {
            m.get("id")
            for _, d, m in self.events
            if d == "received" and m.get("method") == "initialize"
        }
        for _, direction, message in self.events:
            if direction == "sent" and "method" not in message and message.get("id") in asked:
                found = obj(message.get("result")).get("protocolVersion")
                return found if isinstance(found, int) else None
        return None

    def cwd_of(self, session_id: str) -> str | None:
        """The cwd the client created (or restored) the session in."""
        asked = {
            m.get("id"): (m.get("params") or {}).get("cwd")
            for _, d, m in self.events
            if d == "received" and "method" in m and "id" in m
        }
        for _, direction, message in self.events:
            sent = direction == "sent" and "method" not in message
            if sent and obj(message.get("result")).get("sessionId") == session_id:
                return asked.get(message.get("id"))
        return None

    async def probe(
        self, call: Callable[[str, Any], Any], session_id: str, methods: Sequence[str]
    ) -> None:
        """Once per connection: the ``fs/*`` and ``terminal/*`` requests of ``methods`` (those the
        package's version has) that the client advertised; each one's verdict."""
        if self.probing:
            return
        self.probing = True
        capabilities = self.capabilities()
        fs = obj(capabilities.get("fs"))
        cwd = self.cwd_of(session_id) or os.getcwd()
        path = os.path.join(cwd, PROBE_FILE)
        session = {"sessionId": session_id}
        wrote = placed = False
        if "fs/write_text_file" not in methods:
            self._not_applicable("fs.write", "this protocol version has no fs/write_text_file")
        elif fs.get("writeTextFile") is not True:
            self._not_applicable("fs.write", "the client does not advertise fs.writeTextFile")
        else:
            wrote = (
                await self._step(
                    "fs.write",
                    call,
                    "fs/write_text_file",
                    {**session, "path": path, "content": PROBE_TEXT},
                )
                is not None
            )
        if "fs/read_text_file" not in methods:
            self._not_applicable("fs.read", "this protocol version has no fs/read_text_file")
        elif fs.get("readTextFile") is not True:
            self._not_applicable("fs.read", "the client does not advertise fs.readTextFile")
        elif not wrote and not (placed := _place(path)):
            self._not_applicable(
                "fs.read",
                f"the client wrote no file to read back, and the session's cwd ({cwd}) is not"
                " a folder of this machine the agent can write a file in",
            )
        else:
            read = await self._step("fs.read", call, "fs/read_text_file", {**session, "path": path})
            if read is not None and read.get("content") != PROBE_TEXT:
                self._fail("fs.read", f"read back {path}, the client answered {quote(read)}")
        if "terminal/create" not in methods:
            self._not_applicable("terminal.run", "this protocol version has no terminal/create")
        elif capabilities.get("terminal") is not True:
            self._not_applicable("terminal.run", "the client does not advertise terminal")
        else:
            await self._terminal(call, session)
        if wrote or placed:  # leave the client's folder as it was, where it is this machine's
            try:
                os.remove(path)
            except OSError:
                pass

    async def _terminal(self, call: Callable[[str, Any], Any], session: dict[str, Any]) -> None:
        # a program on any POSIX machine's PATH: a remote client may run it on another machine
        command = {**session, "command": "echo", "args": ["acp-client-check"]}
        created = await self._step("terminal.run", call, "terminal/create", command)
        terminal = created.get("terminalId") if created is not None else None
        if created is None:
            return
        if not isinstance(terminal, str):
            self._fail(
                "terminal.run", f"terminal/create was answered {quote(created)}, with no terminalId"
            )
            return
        named = {**session, "terminalId": terminal}
        for method in ("terminal/wait_for_exit", "terminal/output", "terminal/release"):
            answer = await self._step("terminal.run", call, method, named)
            if answer is None:
                return
            if method == "terminal/output" and "acp-client-check" not in str(answer.get("output")):
                self._fail("terminal.run", f"terminal/output was answered {quote(answer)}")
                return

    async def _step(
        self, rid: str, call: Callable[[str, Any], Any], method: str, params: Any
    ) -> Any:
        """Call ``method``; its result (a dict), or None with the requirement failed."""
        try:
            result = await asyncio.wait_for(call(method, params), PATIENCE)
        except asyncio.TimeoutError:
            self._fail(rid, f"{method} was not answered within {PATIENCE:g} s")
            return None
        # an error answer, or none: the client did not serve it
        except Exception as exc:  # noqa: BLE001
            code = getattr(exc, "code", None)
            what = (
                f"error {code} {getattr(exc, 'message', '')}".strip()
                if code is not None
                else repr(exc)
            )
            self._fail(rid, f"{method} was answered {what}")
            return None
        if not isinstance(result, dict):
            self._fail(rid, f"{method} was answered {quote(result)}, not an object")
            return None
        self.probed.setdefault(rid, (PASSED, ""))
        return result

    def _fail(self, rid: str, detail: str) -> None:
        if self.probed.get(rid, (None,))[0] != FAILED:
            self.probed[rid] = (FAILED, detail)

    def _not_applicable(self, rid: str, why: str) -> None:
        self.probed[rid] = (NOT_APPLICABLE, why)

    def verdicts(self, version: int) -> list[Verdict]:
        """Each requirement's verdict, held to protocol ``version`` (the one the agent answered
        ``initialize`` with, where it did)."""
        return judge(self.events, self.probed, self.version() or version, self.gates, self.fields)


def _place(path: str) -> bool:
    """Write the probe file at ``path`` for the client to read, where no file is: whether it is
    there (the session's cwd is a folder of this machine that the agent may write in)."""
    try:
        with open(path, "x", encoding="utf-8") as placed:
            placed.write(PROBE_TEXT)
    except OSError:
        return False
    return True
