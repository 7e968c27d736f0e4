"""The examples (``examples/``), written the way the guides teach, against real peers.

* The echo agent and the same agent written with the official Python SDK
  (``tests/interop/echo_sdk_agent.py``) run against the same client and give the same result;
  ours is no longer (both in black's style, line length 100).
* Both examples against the stub peers and the official TypeScript SDK's peers.
* ``mypy --strict`` passes on the examples and a user module of flat calls and helpers, and
  flags a wrong keyword or type in each place a user can get one wrong.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import black
import pytest
from support.runtime import BINDINGS, INTEROP, ROOT, STUB_AGENT, STUB_CLIENT, child_env
from support.typecheck import mypy_strict

EXAMPLES = ROOT / "examples"
ECHO_AGENT = (sys.executable, str(EXAMPLES / "echo_agent.py"))
SDK_ECHO_AGENT = (sys.executable, str(INTEROP / "echo_sdk_agent.py"))
ECHO_CLIENT = (sys.executable, str(EXAMPLES / "echo_client.py"))
TS_ECHO_CLIENT = ("node", str(INTEROP / "ts_echo_client.mjs"))
TS_AGENT = ("node", str(INTEROP / "ts_agent.mjs"))

ALLOWED = {
    "stopReason": "end_turn",
    "thoughts": ["Echoing 17 chars"],
    "reply": "hello brave world ",
    "toolCalls": {"call-1": "completed"},
}
CANCELLED = {"stopReason": "cancelled", "thoughts": ["Echoing 17 chars"], "reply": "", "toolCalls": {"call-1": "failed"}}


def _run(*args: str, cwd: Path) -> str:
    done = subprocess.run(list(args), cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done.stdout


@pytest.mark.parametrize("agent", [ECHO_AGENT, SDK_ECHO_AGENT], ids=["generated", "official-sdk"])
@pytest.mark.parametrize(("flags", "expected"), [((), ALLOWED), (("--cancel",), CANCELLED)], ids=["allow", "cancel"])
def test_both_echo_agents_give_the_same_session_to_the_example_client(agent, flags, expected, tmp_path):
    out = _run(*ECHO_CLIENT, *flags, "hello brave world", *agent, cwd=tmp_path)
    assert json.loads(out) == expected


def _lines(path: Path) -> int:
    text = path.read_text()
    mode = black.Mode(line_length=100, target_versions={black.TargetVersion.PY310})
    assert black.format_str(text, mode=mode) == text, f"{path.name} is not in black's style"
    return len(text.splitlines())


def test_the_generated_echo_agent_is_no_longer_than_the_official_sdks():
    ours, theirs = _lines(EXAMPLES / "echo_agent.py"), _lines(INTEROP / "echo_sdk_agent.py")
    print(f"echo agent: {ours} lines with the generated package, {theirs} with the official SDK")
    assert ours <= theirs


@pytest.mark.parametrize(("flags", "expected"), [((), "end_turn"), (("--cancel",), "cancelled")], ids=["allow", "cancel"])
def test_the_echo_agent_serves_the_typescript_sdk_client(flags, expected, tmp_path):
    summary = json.loads(_run(*TS_ECHO_CLIENT, *flags, "hello brave world", *ECHO_AGENT, cwd=tmp_path))
    assert summary["stopReason"] == expected and summary["permissions"] == 1
    kinds = [u["sessionUpdate"] for u in summary["updates"]]
    if expected == "end_turn":
        assert kinds == ["agent_thought_chunk", "tool_call", "tool_call_update"] + ["agent_message_chunk"] * 3
        assert "".join(u["content"]["text"] for u in summary["updates"][3:]) == "hello brave world "
    else:
        assert kinds == ["agent_thought_chunk", "tool_call", "tool_call_update"]
        assert summary["updates"][2]["status"] == "failed"


def test_the_echo_agent_serves_the_stub_client(tmp_path):
    out = _run(*STUB_CLIENT, "--prompt", "hi there", "--", *ECHO_AGENT, cwd=tmp_path)
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["update"]["sessionUpdate"] for line in lines[:-1]] == [
        "agent_thought_chunk", "tool_call", "tool_call_update", "agent_message_chunk", "agent_message_chunk"]
    assert lines[-1] == {"stopReason": "end_turn"}


def test_the_example_client_drives_the_stub_agent(tmp_path):
    summary = json.loads(_run(*ECHO_CLIENT, "hello brave world", *STUB_AGENT, cwd=tmp_path))
    assert summary == {"stopReason": "end_turn", "thoughts": [], "reply": "hello brave world", "toolCalls": {}}


def test_the_example_client_drives_the_typescript_sdk_agent(tmp_path):
    summary = json.loads(_run(*ECHO_CLIENT, "hello brave world", *TS_AGENT, cwd=tmp_path))
    assert summary["stopReason"] == "end_turn"
    assert 'permission: {"ok":{"outcome":{"outcome":"selected","optionId":"yes"}}}' in summary["reply"]
    assert summary["reply"].endswith("echo: hello echo: brave echo: world")


USER_MODULE = '''
from acp_bindings import Agent, models
from acp_bindings.builders import content_block as content, mcp_server, session_update as update


class MyAgent(Agent):
    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        sid = params.session_id
        await self.client.session_update(session_id=sid, update=update.agent_message_chunk(content.text("hi")))
        await self.client.session_update(models.SessionNotification(session_id=sid, update=update.plan([])))
        read = await self.client.fs_read_text_file(session_id=sid, path="/a", line=1)
        await self.client.session_update(session_id=sid, update=update.agent_message_chunk(content.text(read.content)))
        return models.PromptResponse(stop_reason="end_turn")


SERVERS = [mcp_server.http(name="h", url="http://x", headers=[]), mcp_server.stdio(name="s", command="c", args=[], env=[])]
'''

#: Each line a user can get wrong, and the mypy error code it must give.
WRONG_LINES = {
    "await self.client.session_update(session_id=sid, updates=update.plan([]))": "call-overload",
    "await self.client.session_update(session_id=1, update=update.plan([]))": "call-overload",
    "await self.client.session_update(session_id=sid, update=models.ToolCall(tool_call_id='t', title='x'))":
        "call-overload",
    "await self.client.fs_read_text_file(session_id=sid)": "call-overload",
    "content.text(3)": "arg-type",
    "update.tool_call(tool_call_id='t', titel='x')": "call-arg",
    "models.SessionNotification(session_id='s', update=models.ToolCall(tool_call_id='t', title='x'))": "arg-type",
    "models.PromptRequest(session_id='s', prompt=[models.TextContent(text='hi')])": "list-item",
}


def test_mypy_strict_passes_the_examples_and_flags_every_wrong_keyword_or_type(tmp_path):
    (tmp_path / "user_flat.py").write_text(USER_MODULE)
    body = "".join(f"        {line}\n" for line in WRONG_LINES)
    wrong = "from acp_bindings import Agent, models\nfrom acp_bindings.builders import content_block as content, "
    wrong += "session_update as update\n\n\nclass Wrong(Agent):\n    async def go(self, sid: str) -> None:\n" + body
    (tmp_path / "user_wrong.py").write_text(wrong)
    files = [str(EXAMPLES / "echo_agent.py"), str(EXAMPLES / "echo_client.py"), "user_flat.py", "user_wrong.py"]
    done = mypy_strict("--hide-error-context", *files, cwd=tmp_path, env={**child_env(), "MYPYPATH": str(BINDINGS)})
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert all(line.startswith("user_wrong.py:") for line in errors), done.stdout
    first = 7  # the line of the first wrong call in user_wrong.py
    found = {int(line.split(":")[1]) - first: line.rsplit("[", 1)[-1].rstrip("]") for line in errors}
    assert found == dict(enumerate(WRONG_LINES.values())), done.stdout
