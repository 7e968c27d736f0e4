"""Schema text is data, never code: hostile descriptions, names, consts and defaults yield correct
code that runs none of it, or a clear diagnostic."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support import generate_and_import, schema_with

from acpgen.diagnostics import DiagnosticError
from acpgen.pipeline import Options, generate

HOSTILE = 'Ends with a quote" and """triple""" \\ backslash \\""" {{ jinja }} {% if x %} __import__("os").exit(3)'


def test_hostile_descriptions_become_docstrings(tmp_path):
    document = schema_with({
        "Thing": {"type": "object", "description": HOSTILE, "properties": {
            "name": {"type": "string", "description": HOSTILE + '"'},
        }, "required": ["name"]},
        "Alias": {"type": "string", "description": "\\"},
    })
    module = generate_and_import(document, tmp_path)
    assert module.Thing.__doc__ == HOSTILE
    assert module.Thing(name="x").to_json() == {"name": "x"}


@pytest.mark.parametrize("wire", ["class", "self", "__init__", "1st", "extra", "to_json", "str", "a-b", "_meta", "meta"])
def test_awkward_property_names_get_safe_fields(tmp_path, wire):
    document = schema_with({
        "Thing": {"type": "object", "properties": {wire: {"type": "string"}, "other": {"type": "integer"}},
                  "required": [wire]},
    })
    module = generate_and_import(document, tmp_path)
    value = module.decode(module.Thing, {wire: "v", "other": 1})
    assert module.encode(value) == {wire: "v", "other": 1}
    fields = [f.name for f in dataclasses.fields(value) if f.name != "other"]
    assert len(fields) == 1 and fields[0].isidentifier()
    assert module.Thing(**{fields[0]: "v"}).to_json() == {wire: "v"}


def test_properties_that_map_to_one_name_stay_apart(tmp_path):
    document = schema_with({
        "Thing": {"type": "object", "properties": {"_meta": {"type": "string"}, "meta": {"type": "integer"}}},
    })
    module = generate_and_import(document, tmp_path)
    value = module.decode(module.Thing, {"_meta": "a", "meta": 1})
    assert (value.meta, value.meta_) == ("a", 1)
    assert [f.name for f in dataclasses.fields(value)] == ["meta", "meta_"]
    assert module.encode(value) == {"_meta": "a", "meta": 1}


def test_hostile_consts_and_defaults(tmp_path):
    tag = 'it\'s "quoted"\nand {{ templated }}'
    document = schema_with({
        "Kind": {"oneOf": [{"const": tag, "type": "string"}, {"const": "plain", "type": "string"}]},
        "Choice": {"oneOf": [
            {"properties": {"t": {"const": tag, "type": "string"}, "d": {"type": "string", "default": '"""\\'}},
             "required": ["t"], "type": "object"},
            {"properties": {"t": {"const": "other", "type": "string"}}, "required": ["t"], "type": "object"},
        ]},
    })
    module = generate_and_import(document, tmp_path)
    assert module.decode(module.Kind, tag) == tag
    value = module.decode(module.Choice, {"t": tag})
    assert type(value).__name__ == "ItSQuotedAndTemplated"
    assert module.encode(value) == {"t": tag}
    with pytest.raises(module.DecodeError):
        module.decode(module.Kind, "it's")


def test_a_def_name_that_is_not_an_identifier_is_sanitised(tmp_path):
    document = schema_with({"My-Type": {"type": "object", "properties": {"a": {"type": "string"}}},
                            "Any": {"type": "string"}})
    module = generate_and_import(document, tmp_path)
    assert module.My_Type(a="x").to_json() == {"a": "x"}
    assert module.decode(module.Any_, "s") == "s"


def test_unsupported_constructs_are_diagnostics(tmp_path):
    document = schema_with({
        "Inline": {"type": "object", "properties": {"o": {"type": ["string", "integer"]}}},
        "Mixed": {"oneOf": [{"const": "a"}, {"const": 1}]},
    })
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(document))
    with pytest.raises(DiagnosticError) as caught:
        generate(Options(schema=schema))
    lines = str(caught.value).splitlines()
    assert any("#/$defs/Inline/properties/o/type: a type list ['string', 'integer'] is not supported" in line
               for line in lines)
    assert any("#/$defs/Mixed: const values must all be" in line for line in lines)
