"""Fuzz both sides of the generated runtime over real pipes, and count what goes wrong.

    python tests/support/wire_fuzz.py [--lines 100000] [--seed 1] [--side agent|client|both]

The agent side writes seeded lines into fresh stub agents (``per_process`` lines each, the first
ones before the agent has started); the client side runs the stub client against this file as
its agent, which sends the lines to the client while a prompt runs. Lines: random bytes and
invalid UTF-8, JSON-RPC with wrong types, every method's params mutated (keys dropped, types
changed, huge strings, deep nesting, NaN/Infinity, 1e400, duplicate keys, lone surrogates),
responses to ids never sent, batches, notifications, now and then a message above the size limit
with its id last. The expected answer of each line follows the rules docs/reference/runtime.md documents.

Counted, all to be 0: crashes (an exit status other than 0, or a traceback), hangs (no answer to
a valid ``initialize`` sent last, or no exit once stdin closed), lost answers (a request id not
answered, a null-id error not sent), duplicated answers (an id answered twice, or never sent),
wrong codes (an answer whose code the rules do not give), internal errors (-32603, a handler
that failed), escapes (a file outside the stub client's cwd read or written).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for ``support`` when run as a script

import acp_bindings as acp

from support.runtime import STUB_AGENT, STUB_CLIENT, child_env
from support.schema_instances import minimal

RESULT = 0  # stands for "a result" among the allowed outcomes of a request
HANDLED = frozenset({RESULT, -32600, -32601, -32602, -32002, -32000, -32800})  # by the handlers
INTERNAL = -32603
MAX_MESSAGE = 32 * 1024 * 1024
SECRET = "SECRET-OUTSIDE"
HANG_AFTER = 120.0  # seconds: a side that has not finished by then hangs


@dataclass(frozen=True)
class Expect:
    """What a line must bring: one answer with ``id`` (``null``: an error with id null) and a code
    in ``codes``, or nothing."""

    answered: bool
    id: Any = None
    codes: frozenset[int] = frozenset()
    internal_allowed: bool = False


NOTHING = Expect(False)


def _null(code: int) -> Expect:
    return Expect(True, None, frozenset({code}))


def _answer(request_id: Any, codes: frozenset[int], internal_allowed: bool = False) -> Expect:
    return Expect(True, request_id, codes, internal_allowed)


def _valid_id(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class _NotJson(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotJson(name)


def oracle(line: bytes) -> Expect:
    """The answer the documented rules give to ``line`` (one that parses, or that is not JSON)."""
    if not line.strip():
        return NOTHING
    try:
        value = json.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        return _null(-32700)
    except (_NotJson, json.JSONDecodeError):  # text: a broken message, or a stray print
        return NOTHING if line.lstrip()[:1] not in (b"{", b"[", b'"') else _null(-32700)
    except ValueError:  # a number beyond the float range, or too many digits: JSON all the same
        return _refused(json.loads(line, parse_float=float, parse_int=_int_or_inf), -32700)
    if any(isinstance(v, float) and v in (float("inf"), float("-inf")) for v in _numbers(value)):
        return _refused(value, -32700)
    return _by_rules(value)


def _int_or_inf(text: str) -> float | int:
    return float(text) if len(text.lstrip("-")) > 4000 else int(text)


def _numbers(value: Any) -> list[float]:
    stack, found = [value], []
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float):
            found.append(item)
    return found


def _refused(value: Any, code: int) -> Expect:
    """A message the runtime cannot take in: answered with its id if it has one, else id null;
    a response (an id, no method) fails the call it answers, or is dropped."""
    if not isinstance(value, dict):
        return _null(code)
    request_id = value.get("id")
    request_id = request_id if _valid_id(request_id) else None
    method = value.get("method", _ABSENT)
    has_method = method is not _ABSENT and not isinstance(method, (dict, list))
    if has_method or request_id is None:
        return _answer(request_id, frozenset({code}))
    return NOTHING


_ABSENT = object()


def _by_rules(value: Any) -> Expect:
    if not isinstance(value, dict):
        return _null(-32600)
    has_id = "id" in value
    request_id = value.get("id")
    method = value.get("method")
    if has_id and not _valid_id(request_id):
        return _null(-32600)
    if value.get("jsonrpc") != "2.0":
        if method is not None or not has_id:
            return _answer(request_id, frozenset({-32600}))
        return NOTHING
    if method is None:
        if has_id and ("result" in value or "error" in value):
            return NOTHING
        return _answer(request_id, frozenset({-32600}))
    params = value.get("params")
    if not isinstance(method, str) or not (params is None or isinstance(params, (dict, list))):
        return _answer(request_id, frozenset({-32600}))
    if not has_id:
        return NOTHING
    if method == "initialize" and _another_version(params):
        return _answer(request_id, HANDLED | {-32022})  # may not decode, as another version's shape
    return _answer(request_id, HANDLED)


def _another_version(params: Any) -> bool:
    """An ``initialize`` asking for a protocol version the package does not speak."""
    requested = params.get("protocolVersion") if isinstance(params, dict) else None
    return isinstance(requested, int) and not isinstance(requested, bool) and requested != acp.PROTOCOL_VERSION


# -- the lines ------------------------------------------------------------------------------------


class Lines:
    """Seeded fuzz lines for one side (``agent``: what a client sends; ``client``: what an
    agent sends), each with its expected answer."""

    def __init__(self, rng: random.Random, side: str, paths: list[str] | None = None) -> None:
        self.rng = rng
        self.side = side
        self.paths = paths or ["/tmp/x"]
        self.count = 0
        methods = [m for m in acp.METHODS if m.side == side]
        self.requests = [m for m in methods if m.kind == "request"]
        self.notifications = [m for m in methods if m.kind == "notification"]
        self.seeds = {m.method: minimal(m.params) for m in methods}
        self.huge = True

    def new_id(self) -> Any:
        self.count += 1
        n = self.count + 100  # the stubs' own request ids stay far below
        form = self.rng.random()
        if form < 0.6:
            return n
        if form < 0.8:
            return f"id-{n}"
        if form < 0.9:
            return n + 0.5
        return 10**20 + n

    def params(self, method: str) -> Any:
        seed = json.loads(json.dumps(self.seeds[method]))
        rng = self.rng
        if method == "initialize":
            seed["clientCapabilities"] = {"fs": {"readTextFile": rng.random() < 0.5}}
        elif method in ("session/new", "session/load"):
            seed["cwd"] = rng.choice(["/", "/tmp", "relative/dir", ""])
        elif method == "session/prompt":
            seed["sessionId"] = rng.choice(["stub-session-1", "stub-session-2", "nope"])
            seed["prompt"] = [
                rng.choice(
                    [
                        {"type": "text", "text": " ".join(f"w{i}" for i in range(rng.randrange(1, 30)))},
                        {"type": "resource_link", "uri": "file:///etc/hostname", "name": "h"},
                        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                    ]
                )
                for _ in range(rng.randrange(1, 3))
            ]
        elif method in ("fs/read_text_file", "fs/write_text_file"):
            seed["path"] = rng.choice(self.paths)
            if method == "fs/write_text_file":
                seed["content"] = rng.choice(["FUZZ-WRITE\n", "FUZZ-WRITE \ud800\n", "FUZZ-WRITE" * 100])
            elif rng.random() < 0.3:
                seed["line"], seed["limit"] = rng.choice([1, 2, 1.0, 0]), rng.choice([1, 5, 1e1])
        return seed

    def mutate(self, value: Any) -> Any:
        """``value`` with one random change somewhere inside."""
        rng = self.rng
        if isinstance(value, dict) and value and rng.random() < 0.7:
            key = rng.choice(list(value))
            choice = rng.random()
            if choice < 0.25:
                del value[key]
            elif choice < 0.5:
                value[key] = self.scalar()
            else:
                value[key] = self.mutate(value[key])
            return value
        if isinstance(value, list) and value and rng.random() < 0.7:
            index = rng.randrange(len(value))
            value[index] = self.mutate(value[index])
            return value
        return self.scalar()

    def scalar(self) -> Any:
        rng = self.rng
        return rng.choice(
            [
                None, True, False, 0, -1, 2**63, 1.5, 1.0, "", "x", "\ud800", "\udcff\u0000", [], {}, [1, "a"],
                {"type": "text"}, {"sessionUpdate": "agent_message_chunk"}, "/etc/passwd", "../..",
                "x" * rng.choice([10, 1000, 20_000]), self.nest(rng.randrange(2, 300)),
            ]
        )

    def nest(self, depth: int) -> Any:
        value: Any = 1
        for _ in range(depth):
            value = [value] if self.rng.random() < 0.5 else {"a": value}
        return value

    def envelope(self, message: dict[str, Any]) -> bytes:
        """``message`` as one line, its members in a random order."""
        keys = list(message)
        self.rng.shuffle(keys)
        return ("{" + ",".join(f"{json.dumps(k)}:{json.dumps(message[k])}" for k in keys) + "}").encode()

    def next(self) -> tuple[bytes, Expect]:
        rng = self.rng
        kind = rng.random()
        if kind < 0.30:
            return self.request(mutated=False)
        if kind < 0.62:
            return self.request(mutated=True)
        if kind < 0.68:
            return self.raw_text()
        if kind < 0.72:
            return self.random_bytes()
        if kind < 0.78:
            return self.wrong_types()
        if kind < 0.82:
            return self.response()
        if kind < 0.85:
            return self.batch()
        if kind < 0.93:
            return self.notification()
        if kind < 0.94:
            return rng.choice([b"", b"  ", b"\r", b"\t \x0b"]), NOTHING
        if kind < 0.946:
            return self.deep()
        if self.huge and kind > 0.99997:
            return self.oversized()
        return self.request(mutated=True)

    def request(self, mutated: bool) -> tuple[bytes, Expect]:
        method = self.rng.choice(self.requests).method
        params = self.params(method)
        if mutated:
            params = self.mutate(params)
        line = self.envelope({"jsonrpc": "2.0", "id": self.new_id(), "method": method, "params": params})
        return line, oracle(line)

    def raw_text(self) -> tuple[bytes, Expect]:
        """A request whose text JSON does not allow, or allows but Python cannot hold as is."""
        rng = self.rng
        request_id = self.new_id()
        method = rng.choice(self.requests).method
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": self.params(method)}
        line = self.envelope(message)
        at = line.rindex(b"}")  # inside the params object, or the message itself
        choice = rng.random()
        if choice < 0.3:
            insert = rng.choice([b"NaN", b"Infinity", b"-Infinity"])
        elif choice < 0.55:
            insert = rng.choice([b"1e400", b"-1E999", b"1" + b"0" * 5000])
        elif choice < 0.8:  # a duplicate key: the last one wins
            insert = None
            line = line[:-1] + b',"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b"}"
        else:  # escapes of lone surrogates and control characters
            insert = rng.choice([b'"\\ud800"', b'"\\udfff\\u0000"', b'"\\uDBFF\\u0041"'])
        if insert is not None:
            start = line.find(b'"params":{')
            if start >= 0:
                head = start + len(b'"params":{')
                line = line[:head] + b'"_fuzz":' + insert + (b"," if line[head : head + 1] != b"}" else b"") + line[head:]
            else:
                line = line[:at] + b',"_fuzz":' + insert + line[at:]
        return line, oracle(line)

    def random_bytes(self) -> tuple[bytes, Expect]:
        rng = self.rng
        choice = rng.random()
        if choice < 0.4:
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))).replace(b"\n", b"")
        elif choice < 0.7:
            line = rng.choice([b"\xed\xa0\x80", b'"\xed\xa0\x80"', b"\xff\xfe", b'{"a":"\xc3"}', b"\xef\xbb\xbf{}"])
        else:
            good, _ = self.request(mutated=False)
            cut = rng.randrange(1, len(good))
            line = good[:cut] if rng.random() < 0.5 else good[:cut] + b"\xff" + good[cut:]
        return line, oracle(line)

    def wrong_types(self) -> tuple[bytes, Expect]:
        rng = self.rng
        message: dict[str, Any] = {}
        if rng.random() < 0.8:
            message["jsonrpc"] = rng.choice(["2.0", "2.0", "1.0", 2, None])
        if rng.random() < 0.8:
            message["id"] = rng.choice([self.new_id(), True, [1], {"a": 1}, None, f"w-{self.new_id()}"])
        if rng.random() < 0.8:
            message["method"] = rng.choice([1, None, ["x"], {"m": 1}, "", "initialize", "_vendor/x"])
        if rng.random() < 0.6:
            message["params"] = rng.choice(["text", 5, None, True, [], {}])
        if "id" in message and message["id"] is None and isinstance(message.get("method"), str):
            message["method"] = 5  # a null-id request would have an unpredictable answer
        line = self.envelope(message)
        return line, oracle(line)

    def response(self) -> tuple[bytes, Expect]:
        rng = self.rng
        request_id = rng.choice([10**6 + self.count, f"never-{self.count}", 10**6 + 0.5])
        body = rng.choice([{"result": {}}, {"result": None}, {"error": {"code": -1, "message": "m"}}, {"error": "bad"}])
        line = self.envelope({"jsonrpc": "2.0", "id": request_id, **body})
        return line, oracle(line)

    def batch(self) -> tuple[bytes, Expect]:
        items = [json.loads(self.request(mutated=False)[0]) for _ in range(self.rng.randrange(0, 3))]
        return json.dumps(items).encode(), _null(-32600)

    def notification(self) -> tuple[bytes, Expect]:
        rng = self.rng
        choice = rng.random()
        if choice < 0.3:
            message = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rng.choice([self.count + 100, "id-1", 5])}}
        elif choice < 0.5:
            message = {"jsonrpc": "2.0", "method": rng.choice(["no/such", "_vendor/note", "session/update"]), "params": {}}
        else:
            method = rng.choice(self.notifications).method
            params = self.params(method)
            message = {"jsonrpc": "2.0", "method": method, "params": self.mutate(params) if rng.random() < 0.5 else params}
        line = self.envelope(message)
        return line, oracle(line)

    def deep(self) -> tuple[bytes, Expect]:
        """A request nested far beyond what a parser takes (or maybe beyond): its id comes first,
        last, or deep inside too."""
        rng = self.rng
        request_id = self.new_id()
        surely = rng.random() < 0.5
        depth = rng.choice([20_000, 30_000]) if surely else rng.randrange(900, 3000)
        opening, closing = ("[" * depth, "]" * depth) if rng.random() < 0.5 else ('{"a":' * depth, "}" * depth)
        members = ['"jsonrpc":"2.0"', f'"method":"{rng.choice(self.requests).method}"', f'"params":{{"x":{opening}1{closing}}}']
        members.insert(rng.randrange(len(members) + 1), f'"id":{json.dumps(request_id)}')
        line = ("{" + ",".join(members) + "}").encode()
        if surely:
            return line, _answer(request_id, frozenset({-32700}))
        return line, _answer(request_id, HANDLED | {-32700}, internal_allowed=True)

    def oversized(self) -> tuple[bytes, Expect]:
        request_id = self.new_id()
        method = self.rng.choice(self.requests).method
        blob = "x" * (MAX_MESSAGE + 10)
        line = f'{{"jsonrpc":"2.0","method":"{method}","params":{{"id":1,"blob":"{blob}"}},"id":{json.dumps(request_id)}}}'.encode()
        return line, _answer(request_id, frozenset({-32600}))


# -- checking the answers ------------------------------------------------------------------------


@dataclass
class Counts:
    lines: int = 0
    requests: int = 0
    answers: int = 0
    crashes: int = 0
    hangs: int = 0
    lost: int = 0
    duplicated: int = 0
    wrong_codes: int = 0
    internal_errors: int = 0
    escapes: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    def add(self, other: Counts) -> None:
        for name in ("lines", "requests", "answers", "crashes", "hangs", "lost", "duplicated", "wrong_codes", "internal_errors", "escapes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for example in other.examples:
            self.note(example)

    def note(self, text: str) -> None:
        kind = text.split(" ", 1)[0]
        if sum(e.split(" ", 1)[0] == kind for e in self.examples) < 3:
            self.examples.append(text[:400])

    @property
    def failures(self) -> int:
        return self.crashes + self.hangs + self.lost + self.duplicated + self.wrong_codes + self.internal_errors + self.escapes


def _key(request_id: Any) -> Any:
    return (type(request_id).__name__, request_id)


def check(expected: list[tuple[bytes, Expect]], answers: list[dict[str, Any]], counts: Counts) -> None:
    """Match the answers against what the lines must bring (the last line being a valid
    ``initialize``, whose answer shows the side still serves)."""
    by_id: dict[Any, list[tuple[bytes, Expect]]] = collections.defaultdict(list)
    null_codes: collections.Counter[int] = collections.Counter()
    for line, expect in expected:
        if not expect.answered:
            continue
        counts.requests += 1
        if expect.id is None:
            null_codes.update(expect.codes)
        else:
            by_id[_key(expect.id)].append((line, expect))
    got_null: collections.Counter[int] = collections.Counter()
    seen: collections.Counter[Any] = collections.Counter()
    for answer in answers:
        counts.answers += 1
        request_id = answer.get("id")
        code = answer["error"]["code"] if "error" in answer else RESULT
        if request_id is None:
            got_null[code] += 1
            continue
        key = _key(request_id)
        seen[key] += 1
        if key not in by_id or seen[key] > 1:
            counts.duplicated += 1
            counts.note(f"unexpected or repeated answer {answer}")
            continue
        line, expect = by_id[key][0]
        if code == INTERNAL and not expect.internal_allowed:
            counts.internal_errors += 1
            counts.note(f"internal error {answer} for {line[:200]!r}")
        elif code not in expect.codes and code != INTERNAL:
            counts.wrong_codes += 1
            counts.note(f"code {code} not in {sorted(expect.codes)} for {line[:200]!r}: {answer}")
    for key in by_id:
        if seen[key] == 0:
            counts.lost += 1
            counts.note(f"no answer to {by_id[key][0][0][:200]!r}")
    for code in set(null_codes) | set(got_null):
        if got_null[code] < null_codes[code]:
            counts.lost += null_codes[code] - got_null[code]
            counts.note(f"{null_codes[code] - got_null[code]} null-id {code} answers missing")
        elif got_null[code] > null_codes[code]:
            counts.duplicated += got_null[code] - null_codes[code]
            counts.note(f"{got_null[code] - null_codes[code]} null-id {code} answers too many")


class Pump:
    """Writes lines to a process and reads its answers, each in its own thread (the process may
    stop reading while its output waits: back pressure), and answers the requests the process
    makes itself (-32601) without ever blocking the reading."""

    def __init__(self, write_fd: Any, read_fd: Any, lines: list[bytes], final_id: Any) -> None:
        self.out = write_fd
        self.inp = read_fd
        self.answers: list[dict[str, Any]] = []
        self.final_id = final_id
        self.final = threading.Event()
        self.stop = threading.Event()
        self.replies: list[bytes] = []
        self.wake = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.writer = threading.Thread(target=self._write, args=(lines,), daemon=True)
        self.reader.start()
        self.writer.start()

    def _read(self) -> None:
        for line in self.inp:
            try:
                message = json.loads(line, parse_constant=_refuse_constant)
            except ValueError:
                self.answers.append({"id": "<not strict JSON>", "raw": line[:200].decode("latin-1")})
                continue
            if "method" in message:
                if "id" in message:  # a request of the process's own: refuse it
                    reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}
                    with self.wake:
                        self.replies.append(json.dumps(reply).encode() + b"\n")
                        self.wake.notify()
                continue
            self.answers.append(message)
            if message.get("id") == self.final_id:
                self.final.set()

    def _send(self, data: bytes) -> bool:
        try:
            self.out.write(data)
            self.out.flush()
            return True
        except (BrokenPipeError, ValueError):
            return False

    def _replies(self) -> bytes:
        with self.wake:
            replies, self.replies = self.replies, []
        return b"".join(replies)

    def _write(self, lines: list[bytes]) -> None:
        for start in range(0, len(lines), 50):  # several lines per write: many reads hold many lines
            if not self._send(self._replies() + b"".join(line + b"\n" for line in lines[start : start + 50])):
                return
        while not self.stop.is_set():
            with self.wake:
                self.wake.wait_for(lambda: self.replies or self.stop.is_set(), timeout=1.0)
            if not self._send(self._replies()):
                return

    def settle(self, due: int) -> None:
        """Wait for the final answer, then for ``due`` answers in all (or give up after a while:
        what is missing is counted)."""
        if self.final.wait(HANG_AFTER):
            deadline = time.monotonic() + HANG_AFTER
            while len(self.answers) < due and time.monotonic() < deadline:
                time.sleep(0.05)
        with self.wake:
            self.stop.set()
            self.wake.notify()
        self.writer.join(HANG_AFTER)


def _final_initialize(request_id: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {"protocolVersion": 1}}).encode()


def fuzz_agent(lines: int, seed: int, per_process: int = 5000, huge: bool = True) -> Counts:
    """Fuzz fresh stub agents with ``lines`` lines in all."""
    total = Counts()
    rng = random.Random(seed)
    generator = Lines(rng, "agent")
    generator.huge = huge
    started = time.monotonic()
    done = 0
    while done < lines:
        batch = [generator.next() for _ in range(min(per_process, lines - done))]
        done += len(batch)
        counts = Counts(lines=len(batch))
        _one_agent(batch, counts)
        total.add(counts)
    total.seconds = time.monotonic() - started
    return total


def _one_agent(batch: list[tuple[bytes, Expect]], counts: Counts) -> None:
    process = subprocess.Popen(  # turns at full speed: the fuzz times the wire, not the echo
        [*STUB_AGENT, "--delay", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env()
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    errors: list[bytes] = []
    stderr_reader = threading.Thread(target=lambda: errors.append(process.stderr.read()), daemon=True)  # type: ignore[union-attr]
    stderr_reader.start()
    final = ("final-initialize", _answer("final-initialize", frozenset({RESULT})))
    lines = [line for line, _ in batch] + [_final_initialize(final[0])]
    pump = Pump(process.stdin, process.stdout, lines, final[0])
    pump.settle(1 + sum(e.answered for _, e in batch))
    if not pump.final.is_set():
        counts.hangs += 1
        counts.note("no answer to the final initialize")
        process.kill()
    try:
        process.stdin.close()
    except BrokenPipeError:
        pass
    try:
        process.wait(HANG_AFTER)
    except subprocess.TimeoutExpired:
        counts.hangs += 1
        counts.note("the agent did not exit once its stdin closed")
        process.kill()
        process.wait()
    pump.reader.join(10)
    stderr_reader.join(10)
    stderr = b"".join(errors)
    if process.returncode != 0 or b"Traceback" in stderr:
        counts.crashes += 1
        counts.note(f"exit status {process.returncode}: {stderr[-500:].decode(errors='replace')}")
    check([*batch, (final[0].encode(), final[1])], pump.answers, counts)


# -- the client side: this file, run as the stub client's agent --------------------------------------


def fuzz_client(lines: int, seed: int, per_process: int = 10_000, huge: bool = True) -> Counts:
    total = Counts()
    started = time.monotonic()
    done = 0
    round_seed = seed
    while done < lines:
        count = min(per_process, lines - done)
        done += count
        counts = Counts(lines=count)
        _one_client(count, round_seed, huge, counts)
        round_seed += 1
        total.add(counts)
    total.seconds = time.monotonic() - started
    return total


def _workspace(root: Path) -> tuple[Path, list[str]]:
    """A cwd for the stub client, files and links outside it, and the paths the fuzz asks for."""
    cwd = root / "cwd"
    outside = root / "outside"
    (cwd / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "cwd-sibling").mkdir()
    for folder in (outside, root / "cwd-sibling", root):
        (folder / "secret.txt").write_text(SECRET + "\n")
    (cwd / "hello.txt").write_text("hello\n")
    (cwd / "sub" / "inner.txt").write_text("inner\n")
    (cwd / "link-out").symlink_to(outside / "secret.txt")
    (cwd / "dir-out").symlink_to(outside)
    (cwd / "link-in").symlink_to("hello.txt")
    (cwd / "swap").mkdir()
    (cwd / "swap" / "secret.txt").write_text("inside\n")
    (cwd / "swap.link").symlink_to(outside)
    os.mkfifo(cwd / "fifo")
    return _workspace_paths(root)


def _snapshot(root: Path, cwd: Path) -> dict[str, str]:
    """Every file outside ``cwd`` under ``root``, by path, with a hash of its bytes."""
    found = {}
    for folder, dirs, files in os.walk(root):
        if Path(folder) == cwd or cwd in Path(folder).parents:
            continue
        for name in files + dirs:
            path = Path(folder) / name
            if path == cwd:
                continue
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else "dir"
    return found


def _one_client(count: int, seed: int, huge: bool, counts: Counts) -> None:
    root = Path(tempfile.mkdtemp(prefix="acp-fuzz-"))
    try:
        cwd, _ = _workspace(root)
        before = _snapshot(root, cwd)
        report = root / "report.json"
        env = {**child_env(), "WIRE_FUZZ_REPORT": str(report), "WIRE_FUZZ_SEED": str(seed),
               "WIRE_FUZZ_LINES": str(count), "WIRE_FUZZ_ROOT": str(root), "WIRE_FUZZ_HUGE": "1" if huge else ""}
        try:
            done = subprocess.run(
                [*STUB_CLIENT, "--", sys.executable, str(Path(__file__).resolve()), "--as-agent"],
                cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=HANG_AFTER * 2, check=False,
            )
        except subprocess.TimeoutExpired:
            counts.hangs += 1
            counts.note("the stub client did not finish")
            return
        if done.returncode != 0 or b"Traceback" in done.stderr:
            counts.crashes += 1
            counts.note(f"stub client exit status {done.returncode}: {done.stderr[-500:].decode(errors='replace')}")
        if not report.exists():
            counts.hangs += 1
            counts.note("the fuzzing agent wrote no report")
            return
        found = json.loads(report.read_text())
        for name in ("requests", "answers", "hangs", "lost", "duplicated", "wrong_codes", "internal_errors", "escapes"):
            setattr(counts, name, getattr(counts, name) + found[name])
        counts.examples.extend(found["examples"])
        after = _snapshot(root, cwd)
        after.pop(str(report), None)
        changed = [p for p in set(before) | set(after) if before.get(p) != after.get(p)]
        if changed:
            counts.escapes += len(changed)
            counts.note(f"changed outside the cwd: {sorted(changed)[:5]}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def serve_as_agent() -> None:
    """Be the stub client's agent: answer initialize and session/new, and while its prompt runs
    send the fuzz lines to the client; write what was found to ``WIRE_FUZZ_REPORT``."""
    root = Path(os.environ["WIRE_FUZZ_ROOT"])
    cwd = root / "cwd"
    _, paths = _workspace_paths(root)
    rng = random.Random(int(os.environ["WIRE_FUZZ_SEED"]))
    generator = Lines(rng, "client", paths)
    generator.huge = bool(os.environ.get("WIRE_FUZZ_HUGE"))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    counts = Counts()
    # the stub client's three requests: initialize, session/new, session/prompt
    prompt_id = None
    while prompt_id is None:
        message = json.loads(stdin.readline())
        method = message.get("method")
        if method == "initialize":
            result: Any = {"protocolVersion": 1, "agentCapabilities": {}}
        elif method == "session/new":
            result = {"sessionId": "fuzz-session"}
        else:
            prompt_id = message["id"]
            break
        stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
        stdout.flush()
    batch = [generator.next() for _ in range(int(os.environ["WIRE_FUZZ_LINES"]))]
    final_id = "final-permission"
    final = json.dumps({"jsonrpc": "2.0", "id": final_id, "method": "session/request_permission", "params": minimal("RequestPermissionRequest")}).encode()
    stop = threading.Event()
    swapper = threading.Thread(target=_swap, args=(cwd, stop), daemon=True)
    swapper.start()
    pump = Pump(stdout, stdin, [line for line, _ in batch] + [final], final_id)
    pump.settle(1 + sum(e.answered for _, e in batch))
    if not pump.final.is_set():
        counts.hangs += 1
        counts.note("no answer to the final session/request_permission")
    stop.set()
    swapper.join()
    check([*batch, (final, _answer(final_id, frozenset({RESULT})))], pump.answers, counts)
    for answer in pump.answers:
        if SECRET in json.dumps(answer):
            counts.escapes += 1
            counts.note(f"read outside the cwd: {answer}")
    Path(os.environ["WIRE_FUZZ_REPORT"]).write_text(json.dumps(counts.__dict__ | {"seconds": 0}))
    stdout.write(json.dumps({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}}).encode() + b"\n")
    stdout.flush()


def _workspace_paths(root: Path) -> tuple[Path, list[str]]:
    c = str(root / "cwd")
    paths = [
        f"{c}/hello.txt", f"{c}/sub/inner.txt", f"{c}/new.txt", f"{c}/sub/new.txt", f"{c}/link-in",
        f"{c}/link-out", f"{c}/dir-out/secret.txt", f"{c}/../outside/secret.txt", f"{c}/sub/../../secret.txt",
        f"{root}/secret.txt", f"{root}/cwd-sibling/secret.txt", f"{c}-sibling/secret.txt", f"{c}/swap/secret.txt",
        f"{c}/fifo", f"{c}/a\0b", f"{c}/\ud800", f"{c}/" + "d/" * 2000 + "f", f"{c}/" + "n" * 300, "relative.txt",
        "", c, f"{c}/", f"{c}/sub", "/dev/null", "/etc/passwd", f"{c}/nope/x.txt",
    ]
    return Path(c), paths


def _swap(cwd: Path, stop: threading.Event) -> None:
    """Swap the folder ``swap`` for a link to the outside folder and back, again and again."""
    while not stop.is_set():
        try:
            os.rename(cwd / "swap", cwd / "swap.real")
            os.rename(cwd / "swap.link", cwd / "swap")
            time.sleep(0.0005)
            os.rename(cwd / "swap", cwd / "swap.link")
            os.rename(cwd / "swap.real", cwd / "swap")
            time.sleep(0.0005)
        except OSError:
            return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000, help="lines per side")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--side", choices=["agent", "client", "both"], default="both")
    parser.add_argument("--as-agent", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.as_agent:
        serve_as_agent()
        return 0
    failed = 0
    for side, run in (("agent", fuzz_agent), ("client", fuzz_client)):
        if args.side not in (side, "both"):
            continue
        counts = run(args.lines, args.seed)
        print(
            f"{side} side: {counts.lines} lines, {counts.requests} answers due, {counts.answers} received in"
            f" {counts.seconds:.1f} s: {counts.crashes} crashes, {counts.hangs} hangs, {counts.lost} lost answers,"
            f" {counts.duplicated} duplicated answers, {counts.wrong_codes} wrong codes,"
            f" {counts.internal_errors} internal errors, {counts.escapes} escapes"
        )
        for example in counts.examples:
            print("   ", example)
        failed += counts.failures
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
