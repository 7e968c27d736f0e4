"""Headless Chromium, driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
open a page, collect what its console reports, read its DOM, take a screenshot.

Chromium reads commands from its file descriptor 3 and writes answers and events to 4, each a JSON
object ended by a NUL byte. The browser is Debian's ``chromium``, which ``make test`` installs
(``make browser``).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

#: Where the tests keep what they saw (screenshots), for a person to look at; not committed.
ARTIFACTS = Path(__file__).resolve().parents[2] / "tests" / "artifacts"
_TIMEOUT = 30.0


class BrowserError(Exception):
    pass


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise BrowserError("chromium is not installed: run `make browser` (make test does)")
    return found


class Browser:
    """One headless Chromium with one page."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="acpgen-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        keep = (to_browser_r, from_browser_w)

        def as_fds_3_and_4() -> None:  # in the child, before exec
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in keep]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.process = subprocess.Popen(
            [
                chromium(),
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",  # the tests run as root
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=as_fds_3_and_4,  # noqa: PLW1509 (it only duplicates descriptors: no lock)
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next_id = 0
        self._answers: dict[int, Any] = {}
        self._inbox: queue.Queue[Any] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )

    # -- the protocol ------------------------------------------------------------------------

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                data = os.read(self._from_browser, 1 << 16)
            except OSError:
                data = b""
            if not data:
                self._inbox.put(None)
                return
            buffer += data
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                self._inbox.put(json.loads(message))

    def _take(self, deadline: float) -> Any:
        try:
            message = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise BrowserError("chromium did not answer in time") from None
        if message is None:
            raise BrowserError("chromium closed the pipe")
        if "id" in message:
            self._answers[message["id"]] = message
        else:
            self.events.append(message)
        return message

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: bool = False) -> Any:
        self._next_id += 1
        ident = self._next_id
        command: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + _TIMEOUT
        while ident not in self._answers:
            self._take(deadline)
        answer = self._answers.pop(ident)
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error'].get('message')}")
        return answer.get("result", {})

    def wait_for(self, event: str) -> dict[str, Any]:
        deadline = time.monotonic() + _TIMEOUT
        seen = len(self.events)
        while True:
            for message in self.events[seen:]:
                if message.get("method") == event:
                    return message
            seen = len(self.events)
            self._take(deadline)

    # -- what the tests use ------------------------------------------------------------------

    def open(self, path: Path) -> None:
        """Load ``path`` and wait until its load event."""
        self.events.clear()
        self.call("Page.navigate", {"url": path.resolve().as_uri()}, session=True)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able values only)."""
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in answer:
            raise BrowserError(f"{expression}: {answer['exceptionDetails'].get('text')}")
        return answer["result"].get("value")

    def console_errors(self) -> list[str]:
        """Everything the page reported as an error or warning: console calls, uncaught
        exceptions, and the browser's own log (a script or a load the page's policy refused)."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append(str(details.get("exception", {}).get("description") or details.get("text")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                found.append(str(params["entry"].get("text")))
        return found

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page (beyond the window) at ``path``."""
        answer = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(answer["data"]))
        return path

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except BrowserError:
            pass
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._profile.cleanup()

    def __enter__(self) -> Browser:  # noqa: PYI034 (Browser is final)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
