"""Generated names: stable under reordering, overridable with a names file, bad files rejected."""

from __future__ import annotations

import json

import pytest
from support import CORPUS, bundled_document, generate_and_import, schema_with

from acpgen.diagnostics import DiagnosticError
from acpgen.model.typebuild import build_types
from acpgen.pipeline import Options, build_spec, generate
from acpgen.schema.loader import LoadedSchema


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


@pytest.mark.parametrize("file", ["v0.6.3--schema.json", "v0.7.0--schema.unstable.json", "v0.9.1--schema.json",
                                  "v1.7.0--v1-schema.unstable.json", "v1.7.0--v2-schema.unstable.json"])
def test_reordering_a_release_named_by_the_newer_rules_changes_no_name(file):
    document = json.loads((CORPUS / file).read_text())
    assert _names(_reordered(document)) == _names(document)


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
    # the file as given; one that is not JSON with the line and column where it stops being JSON
    assert lines[0].startswith(f"{names}:1:2: error:" if content == "{not json" else f"{names}: error:")


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


def _obj(**props: dict) -> dict:
    """An object variant requiring every one of ``props``."""
    return {"type": "object", "properties": props, "required": sorted(props)}


_INT = {"type": "integer"}


def _envelopes() -> dict:
    """JSON-RPC envelopes whose variants have no tag and no title (as in releases up to v0.10.6)."""
    return schema_with({
        "Error": _obj(code=_INT),
        "Reply": {"anyOf": [_obj(id=_INT, result={"type": "string"}), _obj(id=_INT, error={"$ref": "#/$defs/Error"})]},
        "Message": {"anyOf": [
            _obj(id=_INT, method={"type": "string"}),
            {**_obj(id=_INT), "oneOf": [_obj(ok=_INT), _obj(failed=_INT)]},
            _obj(method={"type": "string"}),
        ]},
    })


def test_untitled_variants_are_named_by_the_properties_only_they_require(tmp_path):
    classes = _names(_envelopes())["classes"]
    by_label = {(union, labels): name for name, (union, labels, _, _) in classes.items() if union}
    assert by_label == {
        ("Reply", ("result",)): "Result",
        ("Reply", ("error",)): "ErrorReply",  # Error is a $def
        ("Message", ("id+method",)): "IdMethod",
        ("Message", ("id", "ok")): "IdOk",
        ("Message", ("id", "failed")): "IdFailed",
        ("Message", ("method",)): "Method",
    }
    module = generate_and_import(_envelopes(), tmp_path, names={"Message/id+method": "Call"})
    reply = module.decode(module.Reply, {"id": 1, "error": {"code": -1}})
    assert reply == module.ErrorReply(id=1, error=module.Error(code=-1))
    assert module.encode(reply) == {"id": 1, "error": {"code": -1}}
    assert module.decode(module.Reply, {"id": 2, "result": "x"}) == module.Result(id=2, result="x")
    assert module.decode(module.Message, {"id": 3, "method": "m"}) == module.Call(id=3, method="m")
    assert module.decode(module.Message, {"method": "m"}) == module.Method(method="m")
    assert module.decode(module.Message, {"id": 4, "failed": 5}) == module.IdFailed(id=4, failed=5)


def test_names_from_required_properties_do_not_depend_on_order():
    document = _envelopes()
    for node in document["$defs"].values():
        for variant in node.get("anyOf", []):
            variant["required"].reverse()
    assert _names(_reordered(document)) == _names(_envelopes())


@pytest.mark.parametrize(
    ("variants", "pointers"),
    [
        # the first variant requires only what every variant requires
        ([_obj(id=_INT), _obj(id=_INT, error=_INT)], ["/$defs/Reply/anyOf/0"]),
        # the first two require the same properties: nothing tells them apart by name
        ([_obj(a=_INT, b=_INT), _obj(a={"type": "string"}, b=_INT), _obj(c=_INT)],
         ["/$defs/Reply/anyOf/0", "/$defs/Reply/anyOf/1"]),
    ],
)
def test_a_variant_nothing_sets_apart_is_still_an_error(variants, pointers):
    with pytest.raises(DiagnosticError) as caught:
        build_types(LoadedSchema("schema.json", "0" * 64, schema_with({"Reply": {"anyOf": variants}})))
    assert [d.pointer for d in caught.value.errors] == pointers
    assert all(d.message.startswith("cannot name this union variant: give it a tag (const) or a title")
               for d in caught.value.errors)


def test_an_inline_object_is_a_class_named_after_its_owner_and_property(tmp_path):
    call = _obj(toolCallId={"type": "string"})
    document = schema_with({
        "Ask": {**_obj(toolCall=call), "properties": {"toolCall": call, "more": {"type": "array", "items": call}}},
        # the same inline property in two variants of a union is one type
        "Id": {"anyOf": [{**_obj(id={"anyOf": [_INT, {"type": "string"}]}, a=_INT), "title": "A"},
                         {**_obj(id={"anyOf": [_INT, {"type": "string"}], "description": "B's id"}, b=_INT),
                          "title": "B"}]},
    })
    names = _names(document)
    assert {"Ask", "AskToolCall", "AskMoreItem", "IdId"} <= set(names["types"])
    assert names == _names(_reordered(document))
    module = generate_and_import(document, tmp_path)
    ask = module.decode(module.Ask, {"toolCall": {"toolCallId": "t"}, "more": [{"toolCallId": "u"}]})
    assert ask == module.Ask(tool_call=module.AskToolCall(tool_call_id="t"), more=[module.AskMoreItem(tool_call_id="u")])
    assert module.encode(ask) == {"toolCall": {"toolCallId": "t"}, "more": [{"toolCallId": "u"}]}
    assert module.decode(module.Id, {"id": "x", "b": 1}) == module.B(id="x", b=1)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"anyOf": [_INT, {"type": "string"}]}, {"anyOf": [_INT, {"type": "boolean"}]}),
        # only descriptions may differ: a property named "description" is no description
        ({**_obj(x=_INT), "properties": {"x": _INT, "description": {"type": "string"}}},
         {**_obj(x=_INT), "description": "x"}),
    ],
)
def test_two_different_inline_types_wanting_one_name_are_an_error(first, second):
    document = schema_with({"Id": {"anyOf": [
        {**_obj(id=first, a=_INT), "title": "A"},
        {**_obj(id=second, b=_INT), "title": "B"},
    ]}})
    with pytest.raises(DiagnosticError) as caught:
        build_types(LoadedSchema("schema.json", "0" * 64, document))
    assert [(d.pointer, d.message) for d in caught.value.errors] == [
        ("/$defs/Id/anyOf/1/properties/id",
         "the inline type here would be named IdId, like the different one at #/$defs/Id/anyOf/0/properties/id"),
    ]


def _tagged(tag: str, **props: dict) -> dict:
    return _obj(type={"const": tag, "type": "string"}, **props)


def test_a_def_keeps_its_name_and_the_variant_puts_its_union_first(tmp_path):
    document = schema_with({
        "StringItems": _obj(enum={"type": "array", "items": {"type": "string"}}),
        "Items": {"anyOf": [{**_tagged("string"), "allOf": [{"$ref": "#/$defs/StringItems"}]}, _tagged("number")]},
        "Prop": {"oneOf": [_tagged("string", minLength=_INT), _tagged("flag")]},  # also wants "String"
    })
    names = _names(document)
    by_label = {(union, labels): name for name, (union, labels, _, _) in names["classes"].items() if union}
    assert by_label == {
        ("Items", ("string",)): "ItemsString",
        ("Items", ("number",)): "Number",
        ("Prop", ("string",)): "StringProp",
        ("Prop", ("flag",)): "Flag",
    }
    assert names == _names(_reordered(document))
    module = generate_and_import(document, tmp_path)
    items = module.decode(module.Items, {"type": "string", "enum": ["a"]})
    assert items == module.ItemsString(enum=["a"]) and module.encode(items) == {"type": "string", "enum": ["a"]}
    assert module.StringItems(enum=["b"]).to_json() == {"enum": ["b"]}


@pytest.mark.parametrize(
    ("defs", "expected"),
    [
        # two $defs with one Python name
        ({"A-B": _obj(x=_INT), "A_B": _obj(y=_INT)},
         ("/$defs/A_B", "two types would be named 'A_B' (#/$defs/A-B, #/$defs/A_B); rename one")),
        # two derived names that come out alike: "C" + "AB" and "CA" + "B"
        ({"C": _obj(x=_INT), "CA": _obj(x=_INT), "AB": {"oneOf": [_tagged("c"), _tagged("z")]},
          "B": {"oneOf": [_tagged("c_a"), _tagged("y")]}},
         ("/$defs/AB/oneOf/0", ("two types would be named 'CAB' (variant AB/c at #/$defs/AB/oneOf/0, "
                                "variant B/c_a at #/$defs/B/oneOf/0); pin one in a names file"))),
        # the union's name first is a $def's name too
        ({"String": _obj(x=_INT), "StringItems": _obj(x=_INT), "ItemsString": _obj(x=_INT),
          "Items": {"oneOf": [_tagged("string"), _tagged("z")]}},
         ("/$defs/Items/oneOf/0", ("two types would be named 'ItemsString' (variant Items/string at "
                                   "#/$defs/Items/oneOf/0, type at #/$defs/ItemsString); pin one in a names file"))),
        # two variants of one union with one title would be one class
        ({"Twice": {"anyOf": [{**_obj(x=_INT), "title": "Same"}, {**_obj(y=_INT), "title": "Same"}]}},
         ("/$defs/Twice/anyOf/1", ("this variant of Twice is labelled 'Same' like the one at #/$defs/Twice/anyOf/0: "
                                   "give one another tag or title"))),
    ],
)
def test_names_two_types_still_want_are_an_error_at_their_pointers(defs, expected):
    with pytest.raises(DiagnosticError) as caught:
        build_types(LoadedSchema("schema.json", "0" * 64, schema_with(defs)))
    assert [(d.pointer, d.message) for d in caught.value.errors] == [expected]


def test_a_names_file_settles_two_derived_names_that_come_out_alike(tmp_path):
    module = generate_and_import(schema_with({
        "C": _obj(x=_INT), "CA": _obj(x=_INT), "AB": {"oneOf": [_tagged("c"), _tagged("z")]},
        "B": {"oneOf": [_tagged("c_a"), _tagged("y")]},
    }), tmp_path, names={"AB/c": "CInAB"})
    assert module.decode(module.AB, {"type": "c"}) == module.CInAB()
    assert module.decode(module.B, {"type": "c_a"}) == module.CAB()
