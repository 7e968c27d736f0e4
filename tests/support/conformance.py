"""A raw test client for the stub agents' tests (``tests/runtime/test_stub_capabilities.py``, the
v2 stub's sessions), written from the spec's text; the agent kit has its own (``_kit_peer``).

:class:`Peer` starts an agent process and speaks raw JSON-RPC to it over its stdin and stdout, as a
client does over the stdio transport: it sends what a check asks (bytes that are not JSON
included), answers the agent's own requests (permission, as the check decides; anything else
-32601), and keeps every line the agent wrote, so a check can hold the whole transcript to the
spec: each line one JSON-RPC message, each response the answer to one request of ours.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: How long a check waits for an answer before it calls the agent stuck (a hang guard, not a
#: timing the checks assert).
PATIENCE = 30.0


@dataclass(frozen=True)
class AgentUnderTest:
    name: str
    launch: Callable[[], tuple[list[str], dict[str, str]]]  # its command and environment
    version: int = 1  # the protocol version it speaks
    hold: str | None = None  # how a turn is held open to cancel: "updates" (slow) or "permission"


class Peer:
    """A client on the pipes of one agent process."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: str) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.hello: dict[str, Any] = {}  # the result of the connection's initialize
        self.lines: list[bytes] = []  # every line the agent wrote on stdout
        self.sent_ids: list[Any] = []  # the id of every request we sent
        self.requested: list[Any] = []  # the method of every request we sent
        self.notifications: list[dict[str, Any]] = []  # every notification the agent sent
        self.permission = "allow"  # or "cancel": the user cancels the turn when asked
        self.asked: list[dict[str, Any]] = []  # the agent's requests, as they came
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self._responses: dict[Any, queue.Queue[dict[str, Any]]] = {}
        self._events: queue.Queue[dict[str, Any]] = queue.Queue()  # requests and notifications
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # -- sending --------------------------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        with self._writing:
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def start(self, method: str, params: Any = None, message: dict[str, Any] | None = None) -> Any:
        """Send a request (``message`` as it is, when given); returns its id."""
        request_id = message["id"] if message is not None else f"c-{next(self._ids)}"
        with self._lock:
            self.sent_ids.append(request_id)
            self._responses.setdefault(request_id, queue.Queue())
        if message is None:
            message = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if params is not None:
                message["params"] = params
        self.requested.append(message.get("method"))
        self.send(message)
        return request_id

    def response(self, request_id: Any) -> dict[str, Any]:
        with self._lock:
            waiting = self._responses.setdefault(request_id, queue.Queue())
        try:
            return waiting.get(timeout=PATIENCE)
        except queue.Empty:
            raise AssertionError(f"no answer to request {request_id!r} in {PATIENCE:.0f} s; stderr:\n"
                                 + self.stderr()[-2000:]) from None

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request and wait for its response (the error or result object, whole)."""
        return self.response(self.start(method, params))

    def result(self, method: str, params: Any = None) -> Any:
        answer = self.request(method, params)
        assert "result" in answer, f"{method} answered an error: {answer.get('error')}"
        return answer["result"]

    # -- what came back -------------------------------------------------------------------------

    def wait_for(self, method: str, session_id: str | None = None) -> dict[str, Any]:
        """The next request or notification of ``method`` from the agent (for ``session_id``)."""
        while True:
            try:
                message = self._events.get(timeout=PATIENCE)
            except queue.Empty:
                raise AssertionError(f"the agent sent no {method} in {PATIENCE:.0f} s") from None
            params = message.get("params") or {}
            if message.get("method") == method and session_id in (None, params.get("sessionId")):
                return message

    def updates(self, session_id: str) -> list[dict[str, Any]]:
        return [n["params"] for n in self.notifications
                if n.get("method") == "session/update" and (n.get("params") or {}).get("sessionId") == session_id]

    def unexpected_responses(self) -> list[dict[str, Any]]:
        """Responses that answer no request of ours, or answer one a second time."""
        seen: list[Any] = []
        wrong = []
        for line in self.lines:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict) or "method" in message:
                continue
            known = message.get("id") in self.sent_ids or message.get("id") is None and "error" in message
            if not known or message.get("id") is not None and message.get("id") in seen:
                wrong.append(message)
            seen.append(message.get("id"))
        return wrong

    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    # -- the end ----------------------------------------------------------------------------------

    def close(self) -> int | None:
        """Close the agent's stdin and wait for it to exit: its exit status, or None if it did not."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        try:
            return self.process.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None

    @property
    def closed(self) -> bool:
        return self.process.stdin is None or self.process.stdin.closed

    # -- the reader -------------------------------------------------------------------------------

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" in message:
                self.asked.append(message)
                self._events.put(message)
                self._answer(message)
            elif "method" in message:
                self.notifications.append(message)
                self._events.put(message)
            else:
                with self._lock:
                    waiting = self._responses.setdefault(message.get("id"), queue.Queue())
                waiting.put(message)

    def _answer(self, request: dict[str, Any]) -> None:
        """A client's answer to the agent's request: permission as :attr:`permission` says (to
        cancel, ``session/cancel`` first, then the pending request answered ``cancelled``, as the
        spec's prompt-turn page, "Cancellation", asks of a client)."""
        if request["method"] != "session/request_permission":
            error = {"code": -32601, "message": "Method not found"}
            self._reply({"jsonrpc": "2.0", "id": request["id"], "error": error})
            return
        options = request["params"]["options"]
        if self.permission == "cancel":
            self._reply({"jsonrpc": "2.0", "method": "session/cancel",
                         "params": {"sessionId": request["params"]["sessionId"]}})
            outcome = {"outcome": "cancelled"}
        else:
            allow = next(o for o in options if o["kind"].startswith("allow"))
            outcome = {"outcome": "selected", "optionId": allow["optionId"]}
        self._reply({"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": outcome}})

    def _reply(self, message: dict[str, Any]) -> None:
        try:
            self.send(message)
        except (BrokenPipeError, ValueError):
            pass

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)
