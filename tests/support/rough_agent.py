"""A rough agent: a good one (``AGENT_CMD``, a stub agent) made to behave as real agents do on
the wire, slow, broken or oddly started, to hold the agent kit's timeouts and diagnoses.

``python rough_agent.py MODE[,MODE...] -- AGENT_CMD [ARGS...]``

It runs the agent as a child on pipes and passes every line both ways, but for what each mode
(a key of :data:`MODES`) changes. Standard library only, so that it starts in milliseconds; it
writes the process ids it starts to the file ``ROUGH_PIDS`` names, one a line, when set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import wire_filter
from wire_filter import WireFilter

MODES = {
    "stream": "stream=SECONDS:INTERVAL:TURNS: before a prompt reaches the agent, an update every "
              "INTERVAL seconds for SECONDS (the first TURNS prompts; 0: every one); a cancel "
              "stops it and follows the prompt",
    "silent": "never answers a prompt, and sends nothing of its session",
    "instant": "answers every prompt end_turn at once, before it reads on",
    "die-after-initialize": "exits (status 3) right after its answer to initialize",
    "wrong-id": "answers every request with the id 'zzz'",
    "refuse": "answers every request but initialize -32601",
    "deaf-login": "never answers authenticate (a login that waits for a browser)",
    "garbage": "writes lines that are not JSON on stdout, never an answer",
    "launcher": "leaves a process of its group behind that holds stdout and stderr open and "
                "ignores SIGTERM (as a launcher's child does)",
}


class Rough(WireFilter):
    NAME = "rough"

    def __init__(self, modes: dict[str, str], command: list[str]) -> None:
        super().__init__(command)
        self.modes = modes
        self.asked: dict[str, str] = {}  # request id -> method
        self.streams: dict[str, tuple[threading.Event, list[bytes]]] = {}  # session -> cancel, held
        self.turns = 0
        self.sessions: set[str] = set()  # the sessions the agent opened
        self.pids = [self.child.pid]
        if "launcher" in modes:
            hold = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
            holder = subprocess.Popen([sys.executable, "-c", hold])
            self.pids.append(holder.pid)
        if os.environ.get("ROUGH_PIDS"):
            with open(os.environ["ROUGH_PIDS"], "w") as out:
                out.write("".join(f"{pid}\n" for pid in [os.getpid(), *self.pids]))

    # -- client to agent ------------------------------------------------------------------------

    def incoming(self, line: bytes) -> None:
        m = self.modes
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if "garbage" in m:
            self.write(b"Loading the model... please wait\n")
            return
        if not isinstance(message, dict):
            self.forward(line)
            return
        method, params = message.get("method"), message.get("params")
        params = params if isinstance(params, dict) else {}
        request = "id" in message and isinstance(method, str)
        if request:
            self.asked[json.dumps(message["id"])] = method
        if "deaf-login" in m and method == "authenticate":
            return
        if "refuse" in m and request and method != "initialize":
            self.reply(message, error=-32601)
            return
        if method == "session/prompt" and request:
            if "silent" in m:
                return
            if "instant" in m:
                self.reply(message, {"stopReason": "end_turn"})
                return
            streams = "stream" in m and str(params.get("sessionId")) in self.sessions
            self.turns += streams
            if streams and (self.stream_turns == 0 or self.turns <= self.stream_turns):
                self.stream(str(params.get("sessionId")), line)
                return
        if method == "session/cancel" and str(params.get("sessionId")) in self.streams:
            cancel, held = self.streams[str(params["sessionId"])]
            held.append(line)
            cancel.set()
            return
        self.forward(line)

    @property
    def stream_turns(self) -> int:
        return int(self.modes["stream"].split(":")[2])

    def stream(self, session: str, prompt: bytes) -> None:
        seconds, interval, _ = (float(x) for x in self.modes["stream"].split(":"))
        cancel, held = threading.Event(), [prompt]
        self.streams[session] = (cancel, held)

        def run() -> None:
            deadline = time.monotonic() + seconds
            count = 0
            while time.monotonic() < deadline and not cancel.is_set():
                count += 1
                self.write({"jsonrpc": "2.0", "method": "session/update", "params": {
                    "sessionId": session,
                    "update": {"sessionUpdate": "agent_thought_chunk",
                               "content": {"type": "text", "text": f"thinking {count}"}}}})
                cancel.wait(interval)
            with self.to_child:  # the prompt, and a cancel that came meanwhile, in that order
                del self.streams[session]
            for line in held:
                self.forward(line)

        threading.Thread(target=run, daemon=True).start()

    # -- agent to client ------------------------------------------------------------------------

    def outgoing(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.write(line)
            return
        if not isinstance(message, dict) or "method" in message:
            self.write(line)
            return
        method = self.asked.pop(json.dumps(message.get("id")), None)
        result = message.get("result")
        if method == "session/new" and isinstance(result, dict):
            self.sessions.add(str(result.get("sessionId")))
        if "wrong-id" in self.modes:
            message["id"] = "zzz"
        self.write(message)
        if method == "initialize" and "die-after-initialize" in self.modes:
            sys.stderr.write("rough agent: giving up after initialize\n")
            sys.stderr.flush()
            os._exit(3)

    # -- the pumps -------------------------------------------------------------------------------

    def run(self) -> int:
        threading.Thread(target=self.pump_out, daemon=True).start()
        if "garbage" in self.modes:
            threading.Thread(target=self.babble, daemon=True).start()
        assert self.child.stdin is not None
        for line in sys.stdin.buffer:
            self.incoming(line)
        self.child.stdin.close()
        return self.child.wait()

    def babble(self) -> None:
        while True:
            time.sleep(0.3)
            self.write(b"Loading the model... still loading\n")


def main(argv: list[str]) -> int:
    def start(spec: str, command: list[str]) -> int:
        return Rough(dict(m.partition("=")[::2] for m in spec.split(",") if m), command).run()

    return wire_filter.main(argv, "rough_agent.py", "MODE", MODES, start)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
