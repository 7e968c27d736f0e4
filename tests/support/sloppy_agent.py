"""A sloppy agent: a good one (``AGENT_CMD``, a stub agent) made to break requirements of the
agent kit, each by a change on the wire that breaks that requirement and no other.

``python sloppy_agent.py BREAK[,BREAK...] -- AGENT_CMD [ARGS...]``

It runs the agent as a child on pipes and passes every line both ways, but for what each break
(a key of :data:`BREAKS`, named after the requirement it breaks) changes: a message it answers
itself, drops, or rewrites. Standard library only, so that it starts in milliseconds.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
from typing import Any

import wire_filter
from wire_filter import WireFilter

#: The requirement each break makes the agent fail (or, for a requirement of the level ADVICE,
#: be advised on): each break is named after its requirement.
BREAKS = {
    "initialization.version-negotiation": "answers the version asked for, whatever it is",
    "initialization.implementation-info": "names no agent",
    "session.unique-ids": "answers its second session/new with the first one's id",
    "session.unknown-session": "runs a turn for a session it never made",
    "prompt.stop-reason": "sends an update of another session during a turn",
    "prompt.cancellation": "never hears session/cancel",
    "prompt.no-update-after-cancel": "sends a message chunk after a cancelled turn's response",
    "capabilities.load": "advertises loadSession, but refuses session/load",
    "capabilities.load.unadvertised": "serves session/load without advertising it",
    "session-load.replay-first": "sends a replayed update again after session/load's answer",
    "capabilities.resume": "advertises resume, but refuses session/resume",
    "capabilities.resume.unadvertised": "serves session/resume without advertising it",
    "capabilities.list": "lists the first page only (drops nextCursor)",
    "capabilities.list.unadvertised": "serves session/list without advertising it",
    "capabilities.close": "advertises close, but refuses session/close",
    "capabilities.close.unadvertised": "serves session/close without advertising it",
    "capabilities.delete": "advertises delete, but refuses session/delete of a session it made",
    "capabilities.delete.unadvertised": "serves session/delete without advertising it",
    "capabilities.fork": "advertises fork, but refuses session/fork",
    "capabilities.fork.unadvertised": "serves session/fork without advertising it",
    "capabilities.logout": "advertises logout, but refuses it",
    "capabilities.logout.unadvertised": "serves logout without advertising it",
    "capabilities.additional-directories": "advertises additional directories, but refuses them",
    "capabilities.modes": "offers modes, but refuses session/set_mode",
    "capabilities.config-options": "offers config options, but refuses to set one",
    "capabilities.prompt-content": "advertises prompt content beyond text, but refuses it",
    "auth.unknown-method": "logs in with any method id",
    "session-list.omitted-params": "refuses session/list without params",
    "session-list.invalid-cursor": "lists nothing for a cursor it never gave, without an error",
    "session-delete.unknown-session": "refuses to delete a session it never made",
    "jsonrpc.ids-echoed": "answers a request of a number id with the id as a string",
    "jsonrpc.method-not-found": "answers an unknown method result: null",
    "jsonrpc.invalid-params": "makes a session whatever the cwd",
    "jsonrpc.invalid-request": "answers a method that is a number -32601",
    "jsonrpc.notification-no-reply": "answers an unknown notification",
    "jsonrpc.parse-error": "drops a line that is not JSON",
    "extensibility.meta": "refuses params with _meta",
    "extensibility.unknown-request": "never answers an unknown extension request",
    "extensibility.method-not-found": "answers an unknown extension request result: null",
    "extensibility.unknown-notification": "answers an unknown extension notification",
    "transports.shutdown": "does not exit when its stdin ends",
    "transports.stdout-hygiene": "prints a banner on stdout",
}
#: Ways of a demanding agent that break nothing the text asks, as real products do; the kit, asking
#: only what a client would, holds such an agent to no failure.
QUIRKS = {
    "demanding": "loads, resumes, forks and closes only a session that has had a turn, lists only "
    "those, answers a prompt on a closed session -32603, refuses an image that is no PNG, "
    "adds an effort option to the configuration once an option is set, follows session/load's "
    "answer with the session's commands and title, answers a request whose method is a number "
    "-32600 with the id null, and during a turn sends the commands of another session it made",
}
#: The updates that say what a session is, no entry of its conversation (the kit's list).
STATE_UPDATES = {"state_update", "available_commands_update", "current_mode_update", "config_option_update",
                 "session_info_update", "usage_update"}
#: A select option a change of configuration brings (an effort for a model).
EFFORT = {"id": "effort", "name": "Effort", "type": "select", "currentValue": "low",
          "options": [{"value": "low", "name": "Low"}, {"value": "high", "name": "High"}]}
#: The method each "refuses" break refuses.
REFUSED = {
    "capabilities.load": "session/load",
    "capabilities.resume": "session/resume",
    "capabilities.close": "session/close",
    "capabilities.delete": "session/delete",
    "capabilities.fork": "session/fork",
    "capabilities.logout": ("logout", "auth/logout"),
    "capabilities.modes": "session/set_mode",
    "capabilities.config-options": "session/set_config_option",
}
#: The capability each "unadvertised" break takes out of initialize's result.
UNADVERTISED = {
    "capabilities.load.unadvertised": (("agentCapabilities", "loadSession"),),
    "capabilities.list.unadvertised": (("agentCapabilities", "sessionCapabilities", "list"),),
    "capabilities.resume.unadvertised": (("agentCapabilities", "sessionCapabilities", "resume"),),
    "capabilities.close.unadvertised": (("agentCapabilities", "sessionCapabilities", "close"),),
    "capabilities.fork.unadvertised": (("agentCapabilities", "sessionCapabilities", "fork"),),
    "capabilities.delete.unadvertised": (("agentCapabilities", "sessionCapabilities", "delete"),
                                         ("capabilities", "session", "delete")),
    "capabilities.logout.unadvertised": (("agentCapabilities", "auth", "logout"), ("authMethods",)),
}


class Sloppy(WireFilter):
    NAME = "sloppy"

    def __init__(self, breaks: set[str], command: list[str]) -> None:
        super().__init__(command)
        self.breaks = breaks
        self.asked: dict[str, tuple[str, Any]] = {}  # request id -> (method, params)
        self.sessions: list[str] = []  # the ids of the sessions it made
        self.cursors: set[Any] = set()  # the cursors it gave
        self.last_update: dict[Any, Any] = {}  # session id -> the last session/update of it
        self.turned: set[Any] = set()  # the sessions that have had a turn
        self.closed: set[Any] = set()  # the sessions closed

    def stray(self) -> None:
        self.write({"jsonrpc": "2.0", "id": "sloppy-reply", "error": {"code": -32601, "message": "sloppy"}})

    # -- client to agent ------------------------------------------------------------------------

    def incoming(self, line: bytes) -> bool:
        """Handle a line from the client: True to pass it to the agent."""
        b = self.breaks
        try:
            message = json.loads(line)
        except ValueError:
            return "jsonrpc.parse-error" not in b
        if not isinstance(message, dict):
            return True
        method, params = message.get("method"), message.get("params")
        params = params if isinstance(params, dict) else {}
        request = "id" in message and method is not None
        if request:
            self.asked[json.dumps(message["id"])] = (method, params)
        if not isinstance(method, str):
            if method is not None and "jsonrpc.invalid-request" in b:
                self.reply(message, error=-32601)
                return False
            if method is not None and "demanding" in b:  # as JSON-RPC 2.0's own example answers it
                self.write({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}})
                return False
            return True
        if "demanding" in b and request and self.demands(message, method, params):
            return False
        for name, refused in REFUSED.items():
            if name in b and request and method in ((refused,) if isinstance(refused, str) else refused):
                if name == "capabilities.delete" and params.get("sessionId") not in self.sessions:
                    break  # it refuses to delete what it made: one never made is another requirement's
                self.reply(message, error=-32601)
                return False
        rules = [
            ("session.unknown-session", method == "session/prompt" and params.get("sessionId") not in self.sessions,
             {"stopReason": "end_turn"}),
            ("prompt.cancellation", method == "session/cancel", False),
            ("capabilities.additional-directories", request and "additionalDirectories" in params, -32602),
            ("capabilities.prompt-content", method == "session/prompt" and any(
                isinstance(b, dict) and b.get("type") != "text" for b in params.get("prompt") or []), -32602),
            ("auth.unknown-method", method in ("authenticate", "auth/login"), {}),
            ("session-list.omitted-params", method == "session/list" and "params" not in message, -32602),
            ("session-list.invalid-cursor", method == "session/list" and "cursor" in params
             and params["cursor"] not in self.cursors, {"sessions": []}),
            ("session-delete.unknown-session", method == "session/delete"
             and params.get("sessionId") not in self.sessions, -32602),
            ("jsonrpc.method-not-found", request and method.startswith("kit/no_such"), None),
            ("jsonrpc.invalid-params", method == "session/new" and not isinstance(params.get("cwd"), str),
             {"sessionId": "sloppy-session"}),
            ("jsonrpc.notification-no-reply", not request and method.startswith("kit/"), "stray"),
            ("extensibility.meta", request and "_meta" in params, -32602),
            ("extensibility.unknown-request", request and method.startswith("_"), False),
            ("extensibility.method-not-found", request and method.startswith("_"), None),
            ("extensibility.unknown-notification", not request and method.startswith("_"), "stray"),
        ]
        for name, applies, outcome in rules:
            if name in b and applies:
                if outcome is False:
                    return False
                if outcome == "stray":
                    self.stray()
                    return False
                if isinstance(outcome, int):
                    self.reply(message, error=outcome)
                else:
                    self.reply(message, outcome)
                return False
        return True

    def demands(self, message: dict[str, Any], method: str, params: dict[str, Any]) -> bool:
        """The demanding agent's ways with a request: True when it answered it itself."""
        session = params.get("sessionId")
        if method in ("session/load", "session/resume", "session/fork", "session/close"):
            if session not in self.turned:
                self.reply(message, error=-32602)  # no conversation to go on with
                return True
            if method == "session/close":
                self.closed.add(session)
        elif method == "session/prompt" and session in self.closed:
            self.write({"jsonrpc": "2.0", "id": message.get("id"),
                        "error": {"code": -32603, "message": "Session not found"}})
            return True
        elif method == "session/prompt" and not all(_image(block) for block in params.get("prompt") or []):
            self.reply(message, error=-32602)
            return True
        return False

    # -- agent to client ------------------------------------------------------------------------

    def outgoing(self, line: bytes) -> None:
        b = self.breaks
        try:
            message = json.loads(line)
        except ValueError:
            self.write(line)
            return
        if not isinstance(message, dict):
            self.write(line)
            return
        if "method" not in message:
            method, params = self.asked.pop(json.dumps(message.get("id")), (None, {}))
            result = message.get("result")
            if isinstance(result, dict):
                self.answered(method, params, result)
            if "jsonrpc.ids-echoed" in b and isinstance(message.get("id"), int):
                message["id"] = str(message["id"])
            if method == "session/load" and "session-load.replay-first" in b:
                late = self.last_update.get(params.get("sessionId"))
                self.write(message)
                if late is not None:
                    self.write(late)  # a replayed update after the answer
                return
            if method == "session/load" and "demanding" in b and isinstance(result, dict):
                self.write(message)  # then what says what the session is, no entry of its conversation
                for update in ({"sessionUpdate": "available_commands_update", "availableCommands": []},
                               {"sessionUpdate": "session_info_update", "title": "demanding"}):
                    self.write({"jsonrpc": "2.0", "method": "session/update",
                                "params": {"sessionId": params.get("sessionId"), "update": update}})
                return
            late = (method == "session/prompt" and isinstance(result, dict)
                    and result.get("stopReason") == "cancelled" and "prompt.no-update-after-cancel" in b)
            if late:
                self.write(message)
                self.write({"jsonrpc": "2.0", "method": "session/update", "params": {
                    "sessionId": params.get("sessionId"),
                    "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "late"}}}})
                return
        elif message.get("method") == "session/update" and (
                ((message.get("params") or {}).get("update") or {}).get("sessionUpdate") not in STATE_UPDATES):
            self.last_update[(message.get("params") or {}).get("sessionId")] = message  # of its conversation
        if message.get("method") == "session/update" and ("prompt.stop-reason" in b or "demanding" in b):
            update = (message.get("params") or {}).get("update") or {}
            session = (message.get("params") or {}).get("sessionId")
            if update.get("sessionUpdate") == "agent_message_chunk" and "prompt.stop-reason" in b:
                other = json.loads(json.dumps(message))
                other["params"]["sessionId"] = "sloppy-other-session"
                self.write(other)
            elif update.get("sessionUpdate") == "agent_message_chunk" and self.sessions[:1] not in ([], [session]):
                self.write({"jsonrpc": "2.0", "method": "session/update", "params": {  # another live session's
                    "sessionId": self.sessions[0],
                    "update": {"sessionUpdate": "available_commands_update", "availableCommands": []}}})
        self.write(message)

    def answered(self, method: str | None, params: dict[str, Any], result: dict[str, Any]) -> None:
        """Change a result the agent gave, as the breaks say."""
        b = self.breaks
        if method == "initialize":
            if "initialization.version-negotiation" in b:
                result["protocolVersion"] = params.get("protocolVersion")
            if "initialization.implementation-info" in b:
                result.pop("agentInfo", None)
                result.pop("info", None)
            for name, paths in UNADVERTISED.items():
                if name in b:
                    for path in paths:
                        _remove(result, path)
        elif method in ("session/new", "session/fork") and isinstance(result.get("sessionId"), str):
            if "session.unique-ids" in b and len(self.sessions) == 1:
                result["sessionId"] = self.sessions[0]
            self.sessions.append(result["sessionId"])
        elif method == "session/prompt":
            self.turned.add(params.get("sessionId"))
        elif method == "session/set_config_option" and "demanding" in b and isinstance(result.get("configOptions"), list):
            result["configOptions"].append(EFFORT)
        if method == "session/list" and "demanding" in b and isinstance(result.get("sessions"), list):
            result["sessions"] = [s for s in result["sessions"] if s.get("sessionId") in self.turned]
        if method == "session/list":
            if result.get("nextCursor") is not None:
                self.cursors.add(result["nextCursor"])
            if "capabilities.list" in b:
                result.pop("nextCursor", None)

    # -- the pumps -------------------------------------------------------------------------------

    def run(self) -> int:
        threading.Thread(target=self.pump_out, daemon=True).start()
        if "transports.stdout-hygiene" in self.breaks:
            self.write(b"sloppy agent starting up")
        assert self.child.stdin is not None
        for line in sys.stdin.buffer:
            if self.incoming(line):
                self.forward(line)
        if "transports.shutdown" in self.breaks:
            time.sleep(3600)
        self.child.stdin.close()
        return self.child.wait()


def _image(block: Any) -> bool:
    """Not an image block, or one whose data is a PNG (its signature, a header, an end)."""
    if not isinstance(block, dict) or block.get("type") != "image":
        return True
    try:
        data = base64.b64decode(block.get("data", ""), validate=True)
    except ValueError:
        return False
    return data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR" and data.endswith(b"IEND\xaeB`\x82")


def _remove(result: dict[str, Any], path: tuple[str, ...]) -> None:
    holder: Any = result
    for key in path[:-1]:
        holder = holder.get(key) if isinstance(holder, dict) else None
    if isinstance(holder, dict):
        holder.pop(path[-1], None)


def main(argv: list[str]) -> int:
    def start(spec: str, command: list[str]) -> int:
        return Sloppy(set(filter(None, spec.split(","))), command).run()

    return wire_filter.main(argv, "sloppy_agent.py", "BREAK", {*BREAKS, *QUIRKS}, start)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
