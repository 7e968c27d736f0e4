"""The inspector between real peers: the official SDKs on one side, the generated stubs on the other.

Each session runs twice, without and with the inspector in between: the output must be the same,
the inspector must report nothing, and its transcript must hold every message (each request
answered once, every update the client printed). ``acpgen validate`` finds the transcript clean.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from support.processes import alive
from support.runtime import INTEROP, STUB_AGENT, STUB_CLIENT, child_env, make_workspace

INSPECT = (sys.executable, "-m", "acp_bindings.inspect")
TS_AGENT = ("node", str(INTEROP / "ts_agent.mjs"))
TS_CLIENT = ("node", str(INTEROP / "ts_client.mjs"))
SDK_AGENT = (sys.executable, str(INTEROP / "sdk_agent.py"))
SDK_CLIENT = (sys.executable, str(INTEROP / "sdk_client.py"))


def _run(args, cwd) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done


def _records(path) -> list[dict]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records and all("message" in r for r in records)
    return records


def _assert_every_request_answered_once(records: list[dict]) -> None:
    requests = {(r["direction"], r["message"]["id"]) for r in records if "method" in r["message"] and "id" in r["message"]}
    answered = [(r["direction"], r["message"]["id"]) for r in records if "method" not in r["message"]]
    other = {"client-to-agent": "agent-to-client", "agent-to-client": "client-to-agent"}
    assert sorted((other[d], i) for d, i in answered) == sorted(requests)


def _updates(records: list[dict]) -> list[dict]:
    return [r["message"]["params"] for r in records if r["message"].get("method") == "session/update"]


def _assert_validates_clean(cli, transcript) -> None:
    result = cli("validate", "--format", "json", transcript)
    report = json.loads(result.stdout)
    assert (result.exit_code, report["problems"]) == (0, [])
    assert report["messages"] == len(transcript.read_text().splitlines())


@pytest.mark.parametrize("client", [TS_CLIENT, SDK_CLIENT], ids=["typescript-sdk-client", "python-sdk-client"])
def test_an_official_sdk_client_through_the_inspector_to_the_stub_agent(tmp_path, cli, client):
    cwd = make_workspace(tmp_path)
    transcript = tmp_path / "transcript.ndjson"
    direct = _run([*client, str(cwd), *STUB_AGENT], cwd)
    inspected = _run([*client, str(cwd), *INSPECT, "--transcript", str(transcript), "--", *STUB_AGENT], cwd)
    assert inspected.stdout == direct.stdout
    assert "inspect:" not in inspected.stderr
    summary = json.loads(inspected.stdout)
    records = _records(transcript)
    assert records[0]["message"]["method"] == "initialize"
    assert _updates(records) == summary["updates"] and len(summary["updates"]) > 3
    reads = [r["message"]["params"]["path"] for r in records if r["message"].get("method") == "fs/read_text_file"]
    assert reads == summary["reads"]
    _assert_every_request_answered_once(records)
    _assert_validates_clean(cli, transcript)


@pytest.mark.parametrize("agent", [SDK_AGENT, TS_AGENT], ids=["python-sdk-agent", "typescript-sdk-agent"])
def test_the_stub_client_through_the_inspector_to_an_official_sdk_agent(tmp_path, cli, agent):
    cwd = make_workspace(tmp_path)
    transcript = tmp_path / "transcript.ndjson"
    prompt = ["--prompt", "ping the other side", "--"]
    direct = _run([*STUB_CLIENT, *prompt, *agent], cwd)
    inspected = _run([*STUB_CLIENT, *prompt, *INSPECT, "--transcript", str(transcript), "--", *agent], cwd)
    assert inspected.stdout == direct.stdout
    assert "inspect:" not in inspected.stderr
    printed = [json.loads(line) for line in inspected.stdout.splitlines()]
    records = _records(transcript)
    assert _updates(records) == printed[:-1]
    methods = {r["message"].get("method") for r in records}
    assert {"initialize", "session/new", "session/prompt", "fs/read_text_file", "session/request_permission"} <= methods
    _assert_every_request_answered_once(records)
    _assert_validates_clean(cli, transcript)


def test_the_agents_stderr_passes_through(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text("import sys\nsys.stderr.write('agent says hi\\n')\nsys.stdout.write(sys.stdin.read())\n")
    done = subprocess.run(
        [*INSPECT, "--", sys.executable, str(agent)],
        check=False, input='{"jsonrpc":"2.0","method":"_x/ping","params":{}}\n', capture_output=True, text=True,
        env=child_env(), timeout=30,
    )
    assert (done.returncode, done.stderr) == (0, "agent says hi\n")
    # the agent echoed a client->agent extension notification: agent->client, also an extension
    assert done.stdout == '{"jsonrpc":"2.0","method":"_x/ping","params":{}}\n'


def test_the_exit_status_is_the_agents_and_a_file_on_stdin_is_read_whole(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text("import sys\nsys.stdout.write(sys.stdin.read())\nsys.exit(3)\n")
    lines = '{"jsonrpc":"2.0","method":"_x/a","params":{}}\n' * 3 + '{"jsonrpc":"2.0","method":"_x/b"}'
    (tmp_path / "in.ndjson").write_text(lines)
    with open(tmp_path / "in.ndjson") as stdin:
        done = subprocess.run(
            [*INSPECT, "--transcript", str(tmp_path / "t.ndjson"), "--", sys.executable, str(agent)],
            check=False, stdin=stdin, capture_output=True, text=True, env=child_env(), timeout=30,
        )
    assert (done.returncode, done.stdout, done.stderr) == (3, lines, "")
    # the last line had no newline: it is a message all the same, once in each direction
    assert len((tmp_path / "t.ndjson").read_text().splitlines()) == 8


def test_a_process_the_agent_leaves_behind_does_not_hold_the_inspector(tmp_path):
    """It is in the agent's process group: once the agent exits, the inspector ends it."""
    agent, pid = tmp_path / "agent.py", tmp_path / "left-behind.pid"
    agent.write_text(
        "import subprocess, sys\n"
        "child = subprocess.Popen(['sleep', '120'], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"open({str(pid)!r}, 'w').write(str(child.pid))  # it keeps the agent's stdout open\n"
        "sys.stdout.write(sys.stdin.readline())\n"
    )
    try:
        done = subprocess.run(
            [*INSPECT, "--", sys.executable, str(agent)],
            check=False, input='{"jsonrpc":"2.0","method":"_x/bye"}\n', capture_output=True, text=True, env=child_env(), timeout=60,
        )
        left = int(pid.read_text())
        assert not alive(left), "the process the agent left behind (in its group) was not ended"
    finally:
        if pid.exists() and alive(int(pid.read_text())):
            os.kill(int(pid.read_text()), signal.SIGKILL)
    assert (done.returncode, done.stdout, done.stderr) == (0, '{"jsonrpc":"2.0","method":"_x/bye"}\n', "")
