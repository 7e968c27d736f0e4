"""Every method of every side is served and callable.

* A method one side handles both as a request and as a notification (``mcp/message``, from
  v0.13.0's unstable schema on) gets two handlers and two proxy methods, ``mcp_message`` and
  ``mcp_message_notification``, typed by their own params and result; both forms travel over
  real pipes, into a user's handlers and back.
* A side beyond agent and client (``x-side: "proxy"`` in the schemas the TypeScript SDK 2.4.0
  bundles) gets a handler base, a typed proxy, routes and a connection, and ``--side proxy``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support import CORPUS, DATA, mini_schema, write_package
from support.runtime import run_async_tests

from acpgen.diagnostics import DiagnosticError
from acpgen.model.method_table import build_method_table
from acpgen.model.roles import FIXED_MODULES
from acpgen.pipeline import Options, generate
from acpgen.render.modules import BY_NAME, MODULES, Layer, module_names, room_inits
from acpgen.schema.loader import load_schema

MCP_RELEASE = CORPUS / "v1.7.0--v1-schema.unstable.json"
PROXY_SCHEMA = DATA / "sdk-schemas" / "v1-schema.unstable.json"


def _package(schema: Path, package: str, out: Path, **options: Any) -> Any:
    write_package(generate(Options(schema=schema, package=package, **options)).files, out)
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(out))


def test_a_request_and_a_notification_of_one_name_share_the_id_and_get_their_own_python_names():
    methods, _ = build_method_table(load_schema(MCP_RELEASE))
    mcp = sorted(
        (m.side, m.id, m.py_name, m.kind.value, m.params_type, m.returns) for m in methods if m.wire_name == "mcp/message"
    )
    assert mcp == [
        ("agent", "mcp_message", "mcp_message", "request", "MessageMcpRequest", "MessageMcpResponse"),
        ("agent", "mcp_message", "mcp_message_notification", "notification", "MessageMcpNotification", "None"),
        ("client", "mcp_message", "mcp_message", "request", "MessageMcpRequest", "MessageMcpResponse"),
        ("client", "mcp_message", "mcp_message_notification", "notification", "MessageMcpNotification", "None"),
    ]


def test_methods_json_gives_the_upstream_id_and_the_python_name_apart(cli):
    result = cli("methods", "--format", "json", "--schema", MCP_RELEASE)
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {tuple(row) for row in rows} == {("method", "id", "py_name", "side", "kind", "params", "result", "unstable")}
    mcp = [(r["side"], r["kind"], r["id"], r["py_name"]) for r in rows if r["method"] == "mcp/message"]
    assert mcp == [
        ("agent", "notification", "mcp_message", "mcp_message_notification"),
        ("agent", "request", "mcp_message", "mcp_message"),
        ("client", "notification", "mcp_message", "mcp_message_notification"),
        ("client", "request", "mcp_message", "mcp_message"),
    ]


def test_two_methods_that_would_share_an_id_are_an_error(write_schema):
    doc = mini_schema()
    doc["$defs"]["PingAgainRequest"] = {**doc["$defs"]["PingRequest"], "x-method": "Ping"}
    path = write_schema(doc)
    try:
        build_method_table(load_schema(path))
    except DiagnosticError as exc:
        assert str(exc) == (
            f"{path}: error: #/$defs/PingRequest/x-method: methods 'Ping' (request) and 'ping' (request) of side"
            " 'agent' would both have the Python name 'ping'"
        )
    else:
        raise AssertionError("no error")


AGENT = '''
import asyncio, sys
import {package} as acp
from {package} import models


class McpAgent(acp.Agent):
    async def mcp_message(self, params: models.MessageMcpRequest) -> models.MessageMcpResponse:
        return {{"answered": params.method, "params": params.params}}

    async def mcp_message_notification(self, params: models.MessageMcpNotification) -> None:
        # call the client's request form, then its notification form with what came back
        result = await self.client.mcp_message(
            models.MessageMcpRequest(connection_id=params.connection_id, method="ping"))
        await self.client.mcp_message_notification(models.MessageMcpNotification(
            connection_id=params.connection_id, method="pong", params={{"heard": params.method, "result": result}}))


asyncio.run(acp.run_agent(McpAgent()))
'''


async def test_mcp_message_as_request_and_as_notification_over_real_pipes(tmp_path):
    acp = _package(MCP_RELEASE, "mcp_both_forms", tmp_path / "out")
    models = acp.models
    script = tmp_path / "mcp_agent.py"
    script.write_text(textwrap.dedent(AGENT.format(package="mcp_both_forms")))
    heard: asyncio.Queue[Any] = asyncio.Queue()

    class McpClient(acp.Client):
        async def mcp_message(self, params):
            return {"pinged": params.method}

        async def mcp_message_notification(self, params):
            heard.put_nowait(params)

    env = {**os.environ, "PYTHONPATH": str(tmp_path / "out")}
    async with acp.spawn_agent(McpClient(), sys.executable, str(script), env=env) as conn:
        request = models.MessageMcpRequest(connection_id="c1", method="tools/list", params={"cursor": "x"})
        assert await conn.agent.mcp_message(request) == {"answered": "tools/list", "params": {"cursor": "x"}}
        note = models.MessageMcpNotification(connection_id="c1", method="notifications/initialized")
        assert await conn.agent.mcp_message_notification(note) is None
        back = await asyncio.wait_for(heard.get(), 30)
    assert isinstance(back, models.MessageMcpNotification)
    assert (back.connection_id, back.method) == ("c1", "pong")
    assert back.params == {"heard": "notifications/initialized", "result": {"pinged": "ping"}}


async def test_the_proxy_side_is_served_and_called_both_ways(tmp_path):
    acp = _package(PROXY_SCHEMA, "acp_with_proxy", tmp_path / "out")
    assert {"Proxy", "ProxyPeer", "ProxySideConnection"} <= set(acp.__all__)
    proxy_methods = [m for m in acp.METHODS if m.side == "proxy"]
    assert sorted((m.method, m.id, m.py_name, m.kind) for m in proxy_methods) == [
        ("proxy/initialize", "proxy_initialize", "proxy_initialize", "request"),
        ("proxy/successor", "proxy_successor", "proxy_successor", "request"),
        ("proxy/successor", "proxy_successor", "proxy_successor_notification", "notification"),
    ]
    for m in proxy_methods:
        for owner in (acp.Proxy, acp.ProxyPeer):
            assert inspect.iscoroutinefunction(getattr(owner, m.py_name)) and m.method in getattr(owner, m.py_name).__doc__
    calls: list[tuple[str, str, Any]] = []
    done = asyncio.Event()

    class Recorder(acp.Proxy):
        def __init__(self, name: str) -> None:
            self.name = name

        async def proxy_initialize(self, params):
            calls.append((self.name, "proxy/initialize", acp.encode(params)))
            return acp.decode(acp.models.InitializeProxyResponse, {"protocolVersion": params.protocol_version})

        async def proxy_successor(self, params):
            calls.append((self.name, "proxy/successor", acp.encode(params)))
            return {"forwarded": params.method}

        async def proxy_successor_notification(self, params):
            calls.append((self.name, "proxy/successor notification", acp.encode(params)))
            done.set()

    (a_in, a_out), (b_in, b_out) = acp._rpc.memory_pipe()
    conductor, component = Recorder("conductor"), Recorder("component")
    async with acp.ProxySideConnection(conductor, a_in, a_out) as left, \
            acp.ProxySideConnection(component, b_in, b_out) as right:
        initialized = await left.peer.proxy_initialize(acp.models.InitializeProxyRequest(protocol_version=1))
        assert acp.encode(initialized) == {"protocolVersion": 1}
        successor = {"method": "session/new", "params": {"cwd": "/"}}
        # the component forwards to its successor through the conductor, and back
        assert await right.peer.proxy_successor(acp.decode(acp.models.ProxySuccessorRequest, successor)) == {
            "forwarded": "session/new"}
        await left.peer.proxy_successor_notification(
            acp.decode(acp.models.ProxySuccessorNotification, {"method": "session/update"}))
        await asyncio.wait_for(done.wait(), 30)
    assert calls == [
        ("component", "proxy/initialize", {"protocolVersion": 1}),
        ("conductor", "proxy/successor", successor),
        ("component", "proxy/successor notification", {"method": "session/update"}),
    ]


def test_side_proxy_emits_only_the_proxy_runtime(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("generate", "--schema", PROXY_SCHEMA, "--out", out, "--side", "proxy", "--package", "proxy_only")
    assert result.exit_code == 0, result.stderr
    package = out / "proxy_only"
    names = {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()}
    runtime = {*module_names(layer=Layer.CODEC), *module_names(layer=Layer.CONNECTION), "_session_state.py"}
    paths = {BY_NAME[name].path for name in runtime}
    assert names - set(room_inits(paths)) == {
        "__init__.py", *paths, "methods.py", "models.py", "_models_codec.py", "proxy.py", "py.typed", "builders.py",
        "session.py", "_session_data.py", "_stub_data.py", "acpgen-manifest.json", "acpgen-schema.json"}
    sys.path.insert(0, str(out))
    try:
        module = importlib.import_module("proxy_only")
    finally:
        sys.path.remove(str(out))
    assert hasattr(module, "ProxySideConnection") and not hasattr(module, "Agent") and not hasattr(module, "Client")


def test_a_side_the_schema_does_not_declare_is_refused(cli, tmp_path):
    result = cli("generate", "--schema", CORPUS / "v0.13.0--schema.unstable.json", "--out", tmp_path, "--side",
                 "proxy")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["error: --side 'proxy' is not one of agent, client, both"]
    assert list(tmp_path.iterdir()) == []


def test_a_side_acpgen_does_not_know_is_served_too(tmp_path, write_schema):
    doc = mini_schema()
    doc["$defs"]["LogNotification"]["x-side"] = "editor"
    acp = _package(write_schema(doc), "acp_with_editor", tmp_path / "out")
    assert {"Editor", "EditorPeer", "EditorSideConnection"} <= set(acp.__all__)
    assert [(r.method, r.handler) for r in acp.editor.EDITOR_ROUTES] == [("log/line", "log_line")]
    assert inspect.iscoroutinefunction(acp.EditorPeer.log_line)


@pytest.mark.parametrize("side", ["models", "inspect"])
def test_a_side_named_like_a_module_is_an_error(write_schema, side):
    doc = mini_schema()
    doc["$defs"]["LogNotification"]["x-side"] = side
    try:
        generate(Options(schema=write_schema(doc)))
    except DiagnosticError as exc:
        assert str(exc) == f"error: #: x-side {side!r} cannot be served: its module {side}.py is one acpgen writes"
    else:
        raise AssertionError("no error")


def test_every_module_of_the_table_is_a_name_no_side_takes():
    """A side's module may take no name of the table of modules (those starting with ``_`` no
    side's module has)."""
    assert sorted(m.stem for m in MODULES if m.stem not in FIXED_MODULES and not m.stem.startswith("_")) == []


def test_a_side_whose_class_would_be_a_types_name_is_an_error(write_schema):
    doc = mini_schema()
    doc["$defs"]["LogNotification"]["x-side"] = "editor"
    doc["$defs"]["EditorPeer"] = {"type": "object", "properties": {}}
    try:
        generate(Options(schema=write_schema(doc)))
    except DiagnosticError as exc:
        assert str(exc) == "error: #: x-side 'editor' cannot be served: EditorPeer would be a type's name too"
    else:
        raise AssertionError("no error")


run_async_tests(globals())


def test_the_proxy_sides_classes_have_names_a_user_can_say_and_the_names_lock_keeps_them():
    """The typed proxy a proxy side calls its peer with is ``ProxyPeer`` (its peer is a proxy too);
    the manifest's names lock records the side's classes, and a regeneration keeps the names it
    records (a package made when it was ``ProxyProxy`` keeps that)."""
    first = generate(Options(schema=PROXY_SCHEMA, side="proxy"), only={"proxy.py"})
    assert {k: v for k, v in first.names.items() if k.startswith("sides/proxy")} == {
        "sides/proxy#handler": "Proxy", "sides/proxy#connection": "ProxySideConnection", "sides/proxy#peer": "ProxyPeer"}
    assert "class ProxyPeer(" in first.files["acp_bindings/proxy.py"] and "ProxyProxy" not in first.files["acp_bindings/proxy.py"]
    kept = generate(Options(schema=PROXY_SCHEMA, side="proxy"), only={"proxy.py"},
                    locked={**first.names, "sides/proxy#peer": "ProxyProxy"})
    assert "class ProxyProxy(" in kept.files["acp_bindings/proxy.py"] and kept.names["sides/proxy#peer"] == "ProxyProxy"
    older = {k: v for k, v in first.names.items() if not k.startswith("sides/")}  # a lock from before sides' names
    again = generate(Options(schema=PROXY_SCHEMA, side="proxy"), only={"proxy.py"}, locked=older)
    assert again.names["sides/proxy#peer"] == "ProxyProxy" and "class ProxyProxy(" in again.files["acp_bindings/proxy.py"]
