"""What generation gives the inspector: its modules, and the capability table read from the schema."""

from __future__ import annotations

import copy
import json

import pytest
from support import CORPUS, bundled_document, mini_schema

from acpgen.pipeline import Options, build_spec, generate
from acpgen.render.environment import runtime_source
from acpgen.render.modules import BY_NAME

PKG = "acp_bindings"

BUNDLED_CAPABILITIES = {
    "document/didChange": "/result/agentCapabilities/nes/events/document/didChange",
    "document/didClose": "/result/agentCapabilities/nes/events/document/didClose",
    "document/didFocus": "/result/agentCapabilities/nes/events/document/didFocus",
    "document/didOpen": "/result/agentCapabilities/nes/events/document/didOpen",
    "document/didSave": "/result/agentCapabilities/nes/events/document/didSave",
    "fs/read_text_file": "/params/clientCapabilities/fs/readTextFile",
    "fs/write_text_file": "/params/clientCapabilities/fs/writeTextFile",
    "logout": "/result/agentCapabilities/auth/logout",
    "session/close": "/result/agentCapabilities/sessionCapabilities/close",
    "session/fork": "/result/agentCapabilities/sessionCapabilities/fork",
    "session/list": "/result/agentCapabilities/sessionCapabilities/list",
    "session/load": "/result/agentCapabilities/loadSession",
    "session/resume": "/result/agentCapabilities/sessionCapabilities/resume",
    "terminal/create": "/params/clientCapabilities/terminal",
    "terminal/kill": "/params/clientCapabilities/terminal",
    "terminal/output": "/params/clientCapabilities/terminal",
    "terminal/release": "/params/clientCapabilities/terminal",
    "terminal/wait_for_exit": "/params/clientCapabilities/terminal",
}


def capabilities(path=None) -> dict[str, str]:
    spec, _ = build_spec(Options(schema=path))
    return dict(spec.capabilities)


def test_the_inspector_is_generated_only_into_packages_with_both_sides():
    both = generate(Options()).files
    header = both[f"{PKG}/methods.py"].split("\n", 2)[:2]
    for name in ("inspect.py", "_checks.py"):
        path = BY_NAME[name].path
        assert both[f"{PKG}/{path}"] == "\n".join(header) + "\n" + runtime_source(path)
    for side in ("agent", "client"):
        files = generate(Options(side=side)).files
        assert f"{PKG}/inspect.py" not in files and f"{PKG}/_runtime/inspector/_checks.py" not in files


def test_the_bundled_schemas_capabilities():
    assert capabilities() == BUNDLED_CAPABILITIES
    methods = generate(Options(), only={"methods.py"}).files[f"{PKG}/methods.py"]
    namespace: dict = {}
    exec(compile(methods, "methods.py", "exec"), namespace)  # noqa: S102 - the generated module, run as it is
    assert namespace["CAPABILITIES"] == BUNDLED_CAPABILITIES


def _with_capabilities(doc: dict, properties: dict) -> dict:
    defs = doc["$defs"]
    defs["InitializeRequest"] = {
        "type": "object",
        "properties": {"clientCapabilities": {"$ref": "#/$defs/ClientCapabilities"}},
        "x-method": "initialize",
        "x-side": "agent",
    }
    defs["InitializeResponse"] = {"type": "object", "properties": {}, "x-method": "initialize", "x-side": "agent"}
    defs["ClientCapabilities"] = {"type": "object", "properties": properties}
    return doc


def test_capabilities_come_from_the_names_of_capabilities_and_methods(write_schema):
    """log/line is handled by the client (mini_schema): its gate is in clientCapabilities."""
    logging = {"type": "object", "properties": {"line": {"type": "boolean"}}}
    doc = _with_capabilities(mini_schema(), {"logging": logging})
    assert capabilities(write_schema(doc)) == {}  # log/line is not logging.line
    doc = _with_capabilities(mini_schema(), {"log": {"type": "object", "properties": {"line": {"type": "boolean"}}}})
    assert capabilities(write_schema(doc)) == {"log/line": "/params/clientCapabilities/log/line"}
    # a marker object (present: supported) in a ...Capabilities group, the words in another order
    marker = {"anyOf": [{"type": "object", "properties": {"_meta": {"type": "object"}}}, {"type": "null"}]}
    doc = _with_capabilities(mini_schema(), {"lineLog": marker})
    assert capabilities(write_schema(doc)) == {"log/line": "/params/clientCapabilities/lineLog"}
    doc = _with_capabilities(mini_schema(), {"logCapabilities": {"type": "object", "properties": {"line": marker}}})
    assert capabilities(write_schema(doc)) == {"log/line": "/params/clientCapabilities/logCapabilities/line"}
    # a top-level boolean named like the namespace gates it; the agent's ping is not the client's to gate
    doc = _with_capabilities(mini_schema(), {"log": {"type": "boolean"}, "ping": {"type": "boolean"}})
    assert capabilities(write_schema(doc)) == {"log/line": "/params/clientCapabilities/log"}
    # two gates of one rank for one method: neither is guessed
    doc = _with_capabilities(mini_schema(), {"logLine": {"type": "boolean"}, "lineLog": {"type": "boolean"}})
    assert capabilities(write_schema(doc)) == {}


def _reworded(node):
    """Every description replaced: what a release that rewords its prose gives."""
    if isinstance(node, dict):
        return {k: "Reworded." if k == "description" and isinstance(v, str) else _reworded(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_reworded(v) for v in node]
    return node


@pytest.mark.parametrize("release", ["v0.12.2--schema.unstable.json", "v1.7.0--v1-schema.unstable.json"])
def test_a_release_that_rewords_its_descriptions_keeps_its_capabilities(write_schema, release):
    original = capabilities(CORPUS / release)
    assert len(original) >= 18 and {"logout", "session/close", "terminal/kill", "document/didChange"} <= set(original)
    document = json.loads((CORPUS / release).read_text())
    assert capabilities(write_schema(_reworded(document))) == original


def test_a_capability_the_schema_lacks_gates_nothing(write_schema):
    doc = copy.deepcopy(bundled_document())
    del doc["$defs"]["AgentCapabilities"]["properties"]["auth"]
    found = capabilities(write_schema(doc))
    assert found == {k: v for k, v in BUNDLED_CAPABILITIES.items() if k != "logout"}


def test_an_initialize_without_capabilities_is_said(write_schema):
    doc = copy.deepcopy(bundled_document())
    del doc["$defs"]["InitializeResponse"]["properties"]["agentCapabilities"]
    schema = write_schema(doc)
    spec, warnings = build_spec(Options(schema=schema))
    assert [w.format() for w in warnings] == [
        (
            f"{schema}: warning: #/$defs/InitializeRequest: initialize's response (InitializeResponse) has no"
            " property of type AgentCapabilities: no method is checked against the agent's capabilities"
        )
    ]
    assert dict(spec.capabilities) == {k: v for k, v in BUNDLED_CAPABILITIES.items() if v.startswith("/params/")}


@pytest.mark.parametrize(
    "release",
    ["v0.0.33--schema.json", "v0.4.7--schema.json", "v0.11.0--schema.unstable.json", "v1.6.0--v2-schema.json",
     "v1.7.0--v1-schema.unstable.json"],
)
def test_every_capability_of_a_release_is_a_method_it_has_and_a_property_it_defines(release):
    document = json.loads((CORPUS / release).read_text())
    spec, _ = build_spec(Options(schema=CORPUS / release))
    found = dict(spec.capabilities)
    assert "fs/read_text_file" in found or not any(m.wire_name == "fs/read_text_file" for m in spec.methods)
    initialize = next(m for m in spec.methods if m.wire_name == "initialize")
    for wire_name, pointer in found.items():
        (method,) = {m for m in spec.methods if m.wire_name == wire_name}
        half, *path = pointer.split("/")[1:]
        assert (half, method.side) in {("params", "client"), ("result", "agent")}
        node = document["$defs"][initialize.params_type if half == "params" else initialize.result_type]
        for name in path:
            node = _resolve(document, node)["properties"][name]
    assert found


def _resolve(document, node):
    while True:
        if "$ref" in node:
            node = document["$defs"][node["$ref"].split("/")[-1]]
        elif len(node.get("allOf", ())) == 1:
            node = node["allOf"][0]
        elif "anyOf" in node:
            node = next(o for o in node["anyOf"] if o.get("type") != "null")
        else:
            return node
