"""The inspector against misbehaving agents: each fault reported once, every byte forwarded.

The test is the client: it writes its lines to the inspector's stdin and reads the agent's lines
from its stdout, comparing bytes. The agent (tests/interop/scripted_agent.py) writes exactly what
the script says, right or wrong, and logs every byte it received. Lines carry spaces, key
orders and escapes no encoder would produce, so a re-encoded message would show. The same
transcript then goes through ``acpgen validate``, which must find the same problems.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys

import pytest
from support.runtime import INTEROP, child_env

INSPECT = (sys.executable, "-m", "acp_bindings.inspect")
SCRIPTED_AGENT = (sys.executable, str(INTEROP / "scripted_agent.py"))
C, A = "client-to-agent", "agent-to-client"
PROBLEM = re.compile(r"^inspect: (error|warning): (\S+) (\S+) id=(\S+) #(\S*): (.+)$")

INIT = (
    '{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1,'
    ' "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": false}, "terminal": false},'
    ' "clientInfo": {"name": "caf\\u00e9", "version": "1"}}}'
)
INIT_OK = '{"id":0,"jsonrpc":"2.0","result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false},"authMethods":[]}}'
NEW = '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}'
NEW_OK = '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}'
PROMPT = '{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"hi"}]}}'
PROMPT_OK = '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}'


def update(session: str = "s-1", tag: str = '"sessionUpdate":"agent_message_chunk",') -> str:
    return (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + session + '","update":{'
        + tag + '"content":{"type":"text","text":"héllo  "}}}}'
    )


READ = '{"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{"sessionId":"s-1","path":"/tmp/a.txt"}}'
READ_OK = '{"jsonrpc":"2.0","id":5,"result":{"content":"a\\n"}}'
REFUSED = '{"jsonrpc":"2.0","id":%d,"error":{"code":%d,"message":"no"}}'


def session(*middle: tuple[str, str], init_ok: str = INIT_OK, prompt_ok: str = PROMPT_OK) -> list[tuple[str, str]]:
    return [(C, INIT), (A, init_ok), (C, NEW), (A, NEW_OK), (C, PROMPT), *middle, (A, prompt_ok)]


#: name -> (the conversation, the problems: (direction, method, id, pointer))
CASES = {
    "clean": (session((A, update()), (A, READ), (C, READ_OK), (A, update())), set()),
    "a-line-separator-inside-a-string": (session((A, update().replace("héllo  ", "a\u2028b"))), set()),
    "a-large-update": (session((A, update().replace("héllo  ", "x" * (3 << 20)))), set()),
    "update-missing-its-tag": (
        session((A, update(tag=""))),
        {(A, "session/update", "-", "/params/update/sessionUpdate")},
    ),
    "wrong-result-type": (
        session(prompt_ok='{"jsonrpc":"2.0","id":2,"result":{"stopReason":"bored"}}'),
        {(A, "session/prompt", "2", "/result/stopReason")},
    ),
    "malformed-error": (
        session(prompt_ok='{"jsonrpc":"2.0","id":2,"error":{"code":"-32603","message":"oops"}}'),
        {(A, "session/prompt", "2", "/error/code")},
    ),
    "response-to-unknown-id": (session((A, '{"jsonrpc":"2.0","id":77,"result":{}}')), {(A, "?", "77", "/id")}),
    "reused-id": (
        session((A, READ), (A, READ), (C, REFUSED % (5, -32600)), (C, READ_OK)),
        {(A, "fs/read_text_file", "5", "/id")},
    ),
    "capability-not-advertised": (
        session(
            (A, '{"jsonrpc":"2.0","id":6,"method":"terminal/create","params":{"sessionId":"s-1","command":"ls"}}'),
            (C, REFUSED % (6, -32601)),
        ),
        {(A, "terminal/create", "6", "/method")},
    ),
    "update-for-a-session-never-created": (
        session((A, update(session="s-9"))),
        {(A, "session/update", "-", "/params/sessionId")},
    ),
    "response-to-a-notification": (
        session(
            (C, '{"jsonrpc":"2.0","id":3,"method":"session/cancel","params":{"sessionId":"s-1"}}'),
            (A, '{"jsonrpc":"2.0","id":3,"result":{}}'),
        ),
        {(C, "session/cancel", "3", "/id"), (A, "session/cancel", "3", "/id")},
    ),
    "another-protocol-version": (
        session(init_ok=INIT_OK.replace('"protocolVersion":1', '"protocolVersion":2')),
        {(A, "initialize", "0", "/result/protocolVersion")},
    ),
    "request-the-agent-may-not-send": (
        session((A, PROMPT.replace('"id":2', '"id":9')), (C, REFUSED % (9, -32601))),
        {(A, "session/prompt", "9", "/method")},
    ),
    "not-json": (session((A, "{this is not json")), {(A, "?", "-", "")}),
    "nan-is-not-json": (session((A, '{"jsonrpc":"2.0","id":2,"result":{"stopReason":NaN}}')), {(A, "?", "-", "")}),
}


class Lines:
    """Reads lines from a pipe, failing after a timeout instead of hanging."""

    def __init__(self, stream, timeout: float = 20.0) -> None:
        self.fd, self.timeout, self.buffer = stream.fileno(), timeout, b""

    def read(self) -> bytes:
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.fd], [], [], self.timeout)
            assert ready, f"no line from the inspector within {self.timeout}s; got {self.buffer!r}"
            chunk = os.read(self.fd, 1 << 16)
            assert chunk, f"the inspector closed its output; got {self.buffer!r}"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line + b"\n"


def converse(tmp_path, steps, *options: str):
    """Run ``steps`` through the inspector; returns (problems, transcript lines, agent's log)."""
    script, log, transcript = tmp_path / "script.json", tmp_path / "agent.log", tmp_path / "transcript.ndjson"
    script.write_text(json.dumps([{"read": True} if d == C else {"write": text} for d, text in steps]))
    process = subprocess.Popen(
        [*INSPECT, *options, "--transcript", str(transcript), "--", *SCRIPTED_AGENT, str(script), str(log)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(),
    )
    lines = Lines(process.stdout)
    try:
        for direction, text in steps:
            if direction == C:
                process.stdin.write(text.encode() + b"\n")
                process.stdin.flush()
            else:  # what the agent wrote reaches the client byte for byte
                assert lines.read() == text.encode() + b"\n"
        process.stdin.close()
        assert process.stdout.read() == lines.buffer == b""
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
    stderr = process.stderr.read().decode()
    problems = []
    for line in stderr.splitlines():
        match = PROBLEM.match(line)
        assert match, f"not a problem line: {line!r}"
        problems.append(match.groups())
    return problems, transcript.read_bytes().splitlines(), log.read_bytes()


@pytest.mark.parametrize("name", list(CASES))
def test_each_fault_is_reported_once_and_the_traffic_passes_unchanged(tmp_path, cli, name):
    steps, expected = CASES[name]
    problems, transcript, received = converse(tmp_path, steps)
    assert received == b"".join(text.encode() + b"\n" for d, text in steps if d == C)
    found = [(direction, method, ident, pointer) for _, direction, method, ident, pointer, _ in problems]
    assert sorted(found) == sorted(expected)  # each exactly once
    assert all(severity == "error" for severity, *_ in problems)
    # the transcript: every message, in order, with its direction and its bytes as they were
    assert len(transcript) == len(steps)
    times = []
    for record, (direction, text) in zip(transcript, steps):
        entry = json.loads(record)
        assert entry["direction"] == direction
        times.append(entry["time"])
        if "message" in entry:
            assert record.endswith(b'"message":' + text.encode() + b"}")
        else:
            assert entry["raw"] == text
    assert times == sorted(times)
    # acpgen validate finds the same problems in the transcript
    (tmp_path / "t.ndjson").write_bytes(b"\n".join(transcript) + b"\n")
    result = cli("validate", "--format", "json", tmp_path / "t.ndjson")
    report = json.loads(result.stdout)
    assert result.exit_code == (1 if expected else 0)
    offline = {
        (p["direction"], p["method"] or "?", json.dumps(p["id"]) if "id" in p else "-", p["pointer"])
        for p in report["problems"]
        if p["source"] == "model"
    }
    assert offline == expected
    assert report["messages"] == len(steps)


def test_a_request_never_answered_is_a_warning_and_strict_makes_it_an_error(tmp_path, cli):
    steps = session((A, READ))  # the client never answers fs/read_text_file
    for options, severity in (((), "warning"), (("--strict",), "error")):
        problems, transcript, _ = converse(tmp_path, steps, *options)
        assert [p[:5] for p in problems] == [(severity, A, "fs/read_text_file", "5", "")]
        assert "no response before the connection ended" in problems[0][5]
    (tmp_path / "t.ndjson").write_bytes(b"\n".join(transcript) + b"\n")
    line = 1 + steps.index((A, READ))
    for options, status in (((), 0), (("--strict",), 1)):
        result = cli("validate", *options, tmp_path / "t.ndjson")
        assert result.exit_code == status
        assert result.stdout.startswith(f"t.ndjson:{line}: {'error' if status else 'warning'}: {A} fs/read_text_file id=5 #: ")


def test_a_signal_to_the_inspector_reaches_the_agent(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text("import sys, time\nprint('ready', file=sys.stderr, flush=True)\ntime.sleep(60)\n")
    process = subprocess.Popen(
        [*INSPECT, "--", sys.executable, str(agent)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=child_env(),
    )
    try:
        assert Lines(process.stderr).read() == b"ready\n"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 128 + signal.SIGTERM  # the agent's status, as a shell gives it
    finally:
        if process.poll() is None:
            process.kill()


def test_a_bad_command_line_or_a_missing_agent_is_one_line_and_status_2(tmp_path):
    done = subprocess.run(
        [*INSPECT, "--", str(tmp_path / "no-such-agent")], check=False, capture_output=True, text=True, env=child_env(), timeout=30
    )
    assert done.returncode == 2
    assert done.stderr.startswith("inspect: cannot start the agent:") and done.stderr.count("\n") == 1
    done = subprocess.run(
        [*INSPECT, "--transcript", str(tmp_path / "missing" / "t.ndjson"), "--", "true"],
        check=False, capture_output=True, text=True, env=child_env(), timeout=30,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("inspect: cannot write") and done.stderr.count("\n") == 1
