"""What generation gives the inspector: its modules, and the capability table read from the schema."""

from __future__ import annotations

import copy
import json

import pytest
from acpgen.render.environment import runtime_source
from support import CORPUS, bundled_document, mini_schema

from acpgen.pipeline import Options, build_spec, generate
from acpgen.model.capabilities import KNOWN

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
        assert both[f"{PKG}/{name}"] == "\n".join(header) + "\n" + runtime_source(name)
    for side in ("agent", "client"):
        files = generate(Options(side=side)).files
        assert f"{PKG}/inspect.py" not in files and f"{PKG}/_checks.py" not in files


def test_the_bundled_schemas_capabilities():
    assert capabilities() == BUNDLED_CAPABILITIES
    methods = generate(Options(), only={"methods.py"}).files[f"{PKG}/methods.py"]
    namespace: dict = {}
    exec(compile(methods, "methods.py", "exec"), namespace)
    assert namespace["CAPABILITIES"] == BUNDLED_CAPABILITIES


def test_capabilities_come_from_the_schemas_descriptions(write_schema):
    doc = mini_schema()
    defs = doc["$defs"]
    defs["InitializeRequest"] = {
        "type": "object",
        "properties": {"clientCapabilities": {"$ref": "#/$defs/ClientCapabilities"}},
        "x-method": "initialize",
        "x-side": "agent",
    }
    defs["InitializeResponse"] = {"type": "object", "properties": {}, "x-method": "initialize", "x-side": "agent"}
    defs["ClientCapabilities"] = {
        "type": "object",
        "properties": {
            "logging": {
                "type": "object",
                "properties": {"lines": {"type": "boolean", "description": "Whether the Client takes `log/line`."}},
            },
        },
    }
    assert capabilities(write_schema(doc)) == {"log/line": "/params/clientCapabilities/logging/lines"}
    # a "Whether" sentence about something else that mentions the method later does not count
    defs["ClientCapabilities"]["properties"]["logging"]["properties"]["lines"]["description"] = (
        "Whether the Client supports `colour` in `log/line`."
    )
    assert capabilities(write_schema(doc)) == {}
    # the params type's "Only available if ..." names the capability by its dotted path
    defs["LogNotification"]["description"] = "Log a line.\n\nOnly available if the Client supports the `logging.lines` capability."
    assert capabilities(write_schema(doc)) == {"log/line": "/params/clientCapabilities/logging/lines"}
    # a path that is not in the capabilities type is left out
    defs["LogNotification"]["description"] = "Only available if the Client supports the `logging.colour` capability."
    assert capabilities(write_schema(doc)) == {}


def test_a_table_entry_whose_capability_the_schema_lacks_is_left_out(write_schema):
    assert set(KNOWN) == {"logout"}
    doc = copy.deepcopy(bundled_document())
    del doc["$defs"]["AgentCapabilities"]["properties"]["auth"]
    found = capabilities(write_schema(doc))
    assert "logout" not in found
    assert found == {k: v for k, v in BUNDLED_CAPABILITIES.items() if k != "logout"}


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
