"""Generated names: stable under reordering, overridable with a names file, bad files rejected."""

from __future__ import annotations

import json

import pytest

from acpgen.diagnostics import DiagnosticError
from acpgen.generate import Options, build_spec, generate
from acpgen.loader import LoadedSchema
from acpgen.typebuild import build_types
from conftest import bundled_document
from modelkit import generate_and_import, schema_with


def _names(document: dict) -> dict[str, object]:
    model = build_types(LoadedSchema("schema.json", "0" * 64, document))
    classes = {c.name: (c.union, c.labels, tuple(sorted((f.wire_name, f.py_name) for f in c.fields)),
                        tuple((t.wire_name, t.py_name) for t in c.tags)) for t in model.types for c in t.classes}
    return {"types": sorted(t.name for t in model.types), "classes": classes}


def _reordered(document: dict) -> dict:
    """The same schema with $defs, properties and union variants in reverse order."""

    def flip(node):
        if isinstance(node, dict):
            items = [(k, flip(v)) for k, v in node.items()]
            return {k: (list(reversed(v)) if k in ("oneOf", "anyOf") and isinstance(v, list) else v)
                    for k, v in reversed(items)}
        if isinstance(node, list):
            return [flip(v) for v in node]
        return node

    return flip(document)


def test_reordering_defs_and_variants_changes_no_name():
    document = bundled_document()
    reordered = _reordered(document)
    assert list(reordered["$defs"]) == list(reversed(document["$defs"]))
    assert reordered["$defs"]["SessionUpdate"]["oneOf"][0] == _reordered(document["$defs"]["SessionUpdate"]["oneOf"][-1])
    assert _names(reordered) == _names(document)


def test_names_of_the_common_variants():
    spec, _ = build_spec(Options())
    by_label = {(c.union, c.labels): c.name for c in spec.classes if c.union}
    assert by_label[("SessionUpdate", ("agent_message_chunk",))] == "AgentMessageChunk"
    assert by_label[("SessionUpdate", ("tool_call",))] == "ToolCallSessionUpdate"
    assert by_label[("ContentBlock", ("text",))] == "Text"
    assert by_label[("ContentBlock", ("resource_link",))] == "ResourceLinkContentBlock"
    assert by_label[("RequestPermissionOutcome", ("cancelled",))] == "Cancelled"
    assert by_label[("RequestPermissionOutcome", ("selected",))] == "Selected"
    assert by_label[("CreateElicitationRequest", ("form", "Session"))] == "FormSession"
    assert not any(name[-1].isdigit() for name in spec.type_names)


def _tagged_schema() -> dict:
    return schema_with({
        "Ping": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        "Event": {"discriminator": {"propertyName": "kind"}, "oneOf": [
            {"allOf": [{"$ref": "#/$defs/Ping"}], "properties": {"kind": {"const": "ping", "type": "string"}},
             "required": ["kind"], "type": "object"},
            {"properties": {"kind": {"const": "pong", "type": "string"}}, "required": ["kind"], "type": "object"},
        ]},
    })


def test_a_names_file_overrides_variant_names(tmp_path):
    module = generate_and_import(_tagged_schema(), tmp_path, names={"Event/ping": "PingEvent"})
    assert module.decode(module.Event, {"kind": "ping", "n": 1}) == module.PingEvent(n=1)
    assert module.Pong().to_json() == {"kind": "pong"}
    assert not hasattr(module, "PingEvent_") and "PingEvent" in module.__all__


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "names file is not valid JSON"),
        ("[1, 2]", "names file must be a JSON object"),
        ('{"Event/pang": "Pang"}', "'Event/pang' names no generated class"),
        ('{"Event/ping": "not a name"}', "'not a name', which is not a usable class name"),
        ('{"Event/ping": "Ping"}', "two types would be named 'Ping'"),
        ('{"Event/ping": "Same", "Event/pong": "Same"}', "two types would be named 'Same'"),
    ],
)
def test_a_bad_names_file_is_one_clear_line(tmp_path, content, message):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(_tagged_schema()))
    names = tmp_path / "names.json"
    names.write_text(content)
    with pytest.raises(DiagnosticError) as caught:
        generate(Options(schema=schema, names=names))
    lines = str(caught.value).splitlines()
    assert len(lines) == 1
    assert message in lines[0]
    assert lines[0].startswith("names.json: error:")


def test_colliding_variant_names_get_the_union_name(tmp_path):
    variant = {"properties": {"type": {"const": "text", "type": "string"}, "s": {"type": "string"}},
               "required": ["type"], "type": "object"}
    document = schema_with({
        "A": {"oneOf": [variant, {**variant, "properties": {"type": {"const": "b", "type": "string"}}}]},
        "B": {"oneOf": [variant]},
        "Text": {"type": "string"},
    })
    module = generate_and_import(document, tmp_path)
    assert type(module.decode(module.A, {"type": "text", "s": "x"})).__name__ == "TextA"
    assert type(module.decode(module.B, {"type": "text"})).__name__ == "TextB"
    assert module.decode(module.Text, "t") == "t"
