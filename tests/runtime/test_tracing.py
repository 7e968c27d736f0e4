"""Trace context over the wire (``params._meta``: ``traceparent``, ``tracestate``, ``baggage``) and
OpenTelemetry spans around calls and handlers.

In this process only OpenTelemetry's API is used (no SDK is configured, so nothing records and a
context passes through unchanged): propagation both ways, a user's own ``_meta`` kept, nothing
added without a context, the switch. The spans are recorded with the SDK's in-memory exporter in
child processes (``tests/interop/traced.py``: our client and our stub agent as its child over
pipes, or behind uvicorn over WebSocket and Streamable HTTP), joined into one tree per trace. Without the API, in a
child process that cannot import it, nothing of OpenTelemetry is imported and nothing is added.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp_bindings as acp
import pytest
from acp_bindings import builders, models
from acp_bindings._runtime.connection import _rpc
from acp_bindings._runtime.tracing import _tracing
from opentelemetry import baggage, context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState
from support.remote import environment, running
from support.runtime import INTEROP, child_env, make_workspace, run_async_tests

TRACE_ID, SPAN_ID = 0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
CARRIED = {"traceparent": TRACEPARENT, "tracestate": "vendor=x", "baggage": "user=alice"}


def _attach() -> object:
    """Make a sampled remote context with trace state and baggage the current one."""
    state = TraceState([("vendor", "x")])
    span = NonRecordingSpan(SpanContext(TRACE_ID, SPAN_ID, is_remote=True, trace_flags=TraceFlags(1), trace_state=state))
    return context.attach(baggage.set_baggage("user", "alice", trace.set_span_in_context(span)))


def _here() -> tuple[str, str, Any]:
    """The current span's trace and span ids, and the current baggage."""
    span = trace.get_current_span().get_span_context()
    return f"{span.trace_id:032x}", f"{span.span_id:016x}", dict(baggage.get_all())


class Agent(acp.Agent):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any, tuple[str, str, Any]]] = []

    def session_known(self, session_id: str) -> bool:
        return True  # prompts a session it never opened: no session/new among the messages counted

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        self.seen.append(("initialize", params.meta, _here()))
        return models.InitializeResponse(protocol_version=params.protocol_version)

    async def session_prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        self.seen.append(("session/prompt", params.meta, _here()))
        update = builders.session_update.agent_message_chunk(builders.content_block.text("hi"))
        await self.client.session_update(session_id=params.session_id, update=update)
        return models.PromptResponse(stop_reason="end_turn")

    async def ext_method(self, method: str, params: Any) -> Any:
        self.seen.append((method, params.get("_meta") if isinstance(params, dict) else params, _here()))
        return {}


class Client(acp.Client):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any, tuple[str, str, Any]]] = []

    async def session_update(self, params: models.SessionNotification) -> None:
        self.seen.append(("session/update", params.meta, _here()))


def _prompt(meta: dict[str, Any] | None = None) -> models.PromptRequest:
    return models.PromptRequest(session_id="s-1", prompt=[builders.content_block.text("a")], meta=meta)


ORIGIN = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", {"user": "alice"})


async def test_a_context_goes_out_in_meta_and_handlers_on_both_sides_run_inside_it():
    agent, client = Agent(), Client()
    async with acp.in_memory_pair(agent, client) as (_, connection):
        token = _attach()
        try:
            await connection.agent.session_prompt(_prompt())
            await connection.agent.ext_method("_vendor/thing", {"a": 1})
        finally:
            context.detach(token)
    assert agent.seen == [("session/prompt", CARRIED, ORIGIN), ("_vendor/thing", CARRIED, ORIGIN)]
    # the agent's notification, sent from inside its handler, carries the context on
    assert client.seen == [("session/update", CARRIED, ORIGIN)]


async def test_a_users_own_meta_keys_are_kept_and_the_missing_ones_added():
    agent = Agent()
    async with acp.in_memory_pair(agent, Client()) as (_, connection):
        token = _attach()
        try:
            await connection.agent.session_prompt(_prompt({"traceparent": "mine", "vendor": {"n": 1}}))
            await connection.agent.session_prompt(_prompt({"vendor": None}))
            await connection.agent.ext_method("_x", {"_meta": {"baggage": "k=v"}, "b": [1]})
            await connection.agent.ext_method("_x", ["an array has no _meta"])
        finally:
            context.detach(token)
    assert [meta for _, meta, _ in agent.seen] == [
        {"traceparent": "mine", "vendor": {"n": 1}, "tracestate": "vendor=x", "baggage": "user=alice"},
        {"vendor": None, **CARRIED},
        {"baggage": "k=v", "traceparent": TRACEPARENT, "tracestate": "vendor=x"},
        ["an array has no _meta"],
    ]


async def test_without_a_context_nothing_is_added_and_handlers_run_in_none():
    agent, client, sent = Agent(), Client(), []
    async with acp.in_memory_pair(agent, client) as (agent_connection, connection):
        connection.observe(lambda direction, message, _: sent.append(message))
        agent_connection.observe(lambda direction, message, _: sent.append(message) if direction == "sent" else None)
        await connection.agent.session_prompt(_prompt())
    assert [(name, meta) for name, meta, _ in agent.seen + client.seen] == [("session/prompt", None), ("session/update", None)]
    assert all("_meta" not in (m.get("params") or {}) for m in sent) and len(sent) == 5
    assert [here for _, _, here in agent.seen + client.seen] == [("0" * 32, "0" * 16, {})] * 2


async def test_turned_off_a_connection_carries_nothing():
    agent = Agent()
    async with acp.in_memory_pair(agent, Client()) as (agent_connection, connection):
        assert connection.rpc.tracing and agent_connection.rpc.tracing
        connection.rpc.tracing = False
        token = _attach()
        try:
            await connection.agent.session_prompt(_prompt())
        finally:
            context.detach(token)
    assert agent.seen == [("session/prompt", None, ("0" * 32, "0" * 16, {}))]


def test_meta_is_merged_into_params_of_every_form():
    carrier = {"traceparent": TRACEPARENT}
    text = _rpc.JsonText
    assert _tracing.with_meta(text("{}"), carrier).text == '{"_meta":{"traceparent":"' + TRACEPARENT + '"}}'
    assert _tracing.with_meta(text('{"a":1}'), carrier).text == '{"_meta":{"traceparent":"' + TRACEPARENT + '"},"a":1}'
    nested = _tracing.with_meta(text('{"a":{"_meta":{"x":1}}}'), carrier)
    assert nested == {"a": {"_meta": {"x": 1}}, "_meta": carrier}
    assert _tracing.with_meta(text('{"_meta":null}'), carrier) == {"_meta": None}  # an explicit null stays
    assert _tracing.with_meta(text("[1]"), carrier).text == "[1]"
    assert _tracing.with_meta(None, carrier) is None
    kept = {"_meta": {"traceparent": "mine"}}
    assert _tracing.with_meta(kept, carrier) is kept


def test_a_client_s_context_reaches_an_official_python_sdk_agent_s_meta_unchanged(tmp_path):
    import asyncio

    updates: list[str] = []

    class Collect(acp.Client):
        async def session_update(self, params: models.SessionNotification) -> None:
            updates.append(params.update.content.text)

    async def main() -> None:
        command = (sys.executable, str(INTEROP / "meta_sdk_agent.py"))
        async with acp.spawn_agent(Collect(), *command, env=child_env()) as connection:
            await connection.agent.initialize(models.InitializeRequest(protocol_version=1))
            session = await connection.agent.session_new(models.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[]))
            prompt = models.PromptRequest(session_id=session.session_id, prompt=[builders.content_block.text("a")], meta={"vendor": "v"})
            token = _attach()
            try:
                await connection.agent.session_prompt(prompt)
            finally:
                context.detach(token)

    asyncio.run(asyncio.wait_for(main(), 60))
    assert [json.loads(text) for text in updates] == [{**CARRIED, "vendor": "v"}]


# -- without OpenTelemetry's API, or turned off: nothing imported, nothing added -------------------

NO_API = """
import asyncio, importlib.abc, json, sys

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "opentelemetry":
            raise ImportError(f"no module named {name!r}")

if sys.argv[1] == "blocked":
    sys.meta_path.insert(0, Blocker())
import acp_bindings as acp
from acp_bindings import builders, models

class Agent(acp.Agent):
    def session_known(self, session_id):
        return True

    async def session_prompt(self, params):
        update = builders.session_update.agent_message_chunk(builders.content_block.text("hi"))
        await self.client.session_update(session_id=params.session_id, update=update)
        return models.PromptResponse(stop_reason="end_turn")

async def main():
    sent = []
    async with acp.in_memory_pair(Agent(), acp.Client()) as (agent, client):
        for end in (agent, client):
            end.observe(lambda direction, message, _: sent.append(message) if direction == "sent" else None)
        prompt = models.PromptRequest(session_id="s", prompt=[builders.content_block.text("a")])
        await client.agent.session_prompt(prompt)
        if sys.argv[1] == "blocked":
            try:
                acp._rpc.Connection(*acp._rpc.memory_pipe()[0], None, tracing=True)
            except ImportError as exc:
                print(exc)
    print(json.dumps({
        "imported": sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"),
        "tracing": [agent.rpc.tracing, client.rpc.tracing],
        "meta": [m for m in sent if "_meta" in (m.get("params") or {})],
        "sent": len(sent),
    }))

asyncio.run(main())
"""


@pytest.mark.parametrize(
    "how, env",
    [("blocked", {}), ("installed", {"ACP_TRACING": "off"}), ("installed", {"ACP_TRACING": "0"})],
    ids=["api-not-importable", "turned-off", "turned-off-0"],
)
def test_without_the_api_or_turned_off_nothing_is_imported_and_nothing_added(tmp_path, how, env):
    script = tmp_path / "no_api.py"
    script.write_text(NO_API)
    done = subprocess.run([sys.executable, str(script), how], env={**child_env(), **env}, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    *notes, summary = done.stdout.splitlines()
    assert json.loads(summary) == {"imported": [], "tracing": [False, False], "meta": [], "sent": 3}
    if how == "blocked":
        assert notes == ["tracing=True needs OpenTelemetry's API: pip install opentelemetry-api"]


# -- spans, recorded by the SDK in child processes ---------------------------------------------------


def _tree(rows: list[dict[str, Any]], root: dict[str, Any], by: str = "start") -> list[str]:
    """The spans below ``root`` as lines of text, children ordered by ``by``."""
    children: dict[str | None, list[dict[str, Any]]] = {}
    for row in rows:
        children.setdefault(row["parent"], []).append(row)

    def line(row: dict[str, Any]) -> str:
        shown = [f"{k}={row['attributes'][k]}" for k in ("rpc.jsonrpc.request_id", "acp.session.id", "rpc.jsonrpc.error_code") if k in row["attributes"]]
        status = f" {row['status']}" + (f" ({row['description']})" if row["description"] else "") if row["status"] != "UNSET" else ""
        return f"{row['name']} [{row['service']} {row['kind'].lower()}]" + "".join(" " + s for s in shown) + status

    def walk(row: dict[str, Any], prefix: str, last: bool, out: list[str]) -> None:
        out.append(prefix + ("└── " if last else "├── ") + line(row))
        kids = sorted(children.get(row["span"], []), key=lambda r: (r[by], r["start"]) if by != "start" else r["start"])
        for index, kid in enumerate(kids):
            walk(kid, prefix + ("    " if last else "│   "), index == len(kids) - 1, out)

    out: list[str] = []
    walk(root, "", True, out)
    return out


#: The first prompt's trace, children in a fixed order (by name): the same over every transport.
PROMPT_TRACE = """\
└── session/prompt [client client] rpc.jsonrpc.request_id=2 acp.session.id=S
    └── session/prompt [agent server] rpc.jsonrpc.request_id=2 acp.session.id=S
        ├── fs/read_text_file [agent client] rpc.jsonrpc.request_id=0 acp.session.id=S
        │   └── fs/read_text_file [client server] rpc.jsonrpc.request_id=0 acp.session.id=S
        ├── session/update [client consumer] acp.session.id=S
        ├── session/update [client consumer] acp.session.id=S
        ├── session/update [client consumer] acp.session.id=S
        ├── session/update [client consumer] acp.session.id=S
        └── session/update [client consumer] acp.session.id=S"""


def _check_traces(rows: list[dict[str, Any]]) -> None:
    requests = [r for r in rows if r["service"] == "client" and r["kind"] == "CLIENT"]
    assert [r["name"] for r in requests] == ["initialize", "session/new", "session/prompt", "_nope", "session/prompt"]
    for row in rows:
        attributes = row["attributes"]
        assert (attributes["rpc.system"], attributes["rpc.method"], attributes["rpc.jsonrpc.version"]) == ("jsonrpc", row["name"], "2.0")
    session = requests[2]["attributes"]["acp.session.id"]
    prompt, nope, cancelled = (_tree([r for r in rows if r["trace"] == q["trace"]], q, "name") for q in requests[2:])
    assert "\n".join(prompt).replace(session, "S") == PROMPT_TRACE
    assert nope == [
        "└── _nope [client client] rpc.jsonrpc.request_id=3 rpc.jsonrpc.error_code=-32601 ERROR (Method not found)",
        "    └── _nope [agent server] rpc.jsonrpc.request_id=3 rpc.jsonrpc.error_code=-32601 ERROR (Method not found)",
    ]
    assert cancelled[:2] == [
        f"└── session/prompt [client client] rpc.jsonrpc.request_id=4 acp.session.id={session} ERROR (cancelled)",
        f"    └── session/prompt [agent server] rpc.jsonrpc.request_id=4 acp.session.id={session} rpc.jsonrpc.error_code=-32800 ERROR (cancelled)",
    ]
    print("\n".join(_tree(rows, requests[2])))  # the picture of one trace, in time order (pytest -s)


def _rows(*texts: str) -> list[dict[str, Any]]:
    return [json.loads(line) for text in texts for line in text.splitlines()]


def _client(target: str, cwd: Path, *extra: str) -> str:
    command = [sys.executable, str(INTEROP / "traced.py"), "client", target, str(cwd), *extra]
    done = subprocess.run(command, env=environment(), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_one_trace_from_a_prompt_through_the_agent_and_back_over_pipes(tmp_path):
    cwd = make_workspace(tmp_path)
    agent_out = tmp_path / "agent.jsonl"
    client = _client("stdio", cwd, str(agent_out))
    _check_traces(_rows(client, agent_out.read_text()))


@pytest.mark.parametrize("scheme", ["ws", "http"], ids=["websocket", "streamable-http"])
def test_one_trace_from_a_prompt_through_the_agent_and_back_over_the_network(tmp_path, scheme):
    cwd = make_workspace(tmp_path)
    agent_out = tmp_path / "agent.jsonl"
    env = environment(TRACE_OUT=str(agent_out), ACP_STUB_DELAY="0.1")
    with running("uvicorn", "traced:app", env=env) as port:
        client = _client(f"{scheme}://127.0.0.1:{port}/acp", cwd)
    _check_traces(_rows(client, agent_out.read_text()))


run_async_tests(globals())
