"""The decoders' fast paths decide exactly as the general ones do.

A class decoder reads an object that carries only the keys every instance has without looking for
its optional fields; a list of a tagged union looks each item's decoder up by its tag. Both must
give the same values for good data and the same errors (message and JSON pointer) for bad data.
An unknown key sends an object down the general path, so each case is decoded both ways.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import bindings, bundled_document
from support.model_instances import InstanceStrategies

acp = bindings()
DOCUMENT = bundled_document()
STRATEGIES = InstanceStrategies(DOCUMENT)
OBJECT_DEFS = sorted(n for n, d in DOCUMENT["$defs"].items() if d.get("type") == "object" and d.get("required"))
UNKNOWN = "zzNotInTheSchema"
#: A value of a JSON kind no required property of the bundled schema accepts.
WRONG = [[["wrong"]]]


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": DOCUMENT["$defs"]})


def outcome(tp: Any, data: Any) -> tuple[str, Any]:
    try:
        return "value", acp.encode(acp.decode(tp, data))
    except acp.DecodeError as error:
        return "error", (error.path, error.message)


def general(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with a key no class knows: its decoder takes the general path."""
    return {**data, UNKNOWN: 1}


def test_the_cases_include_classes_with_optional_fields():
    with_optional = [n for n in OBJECT_DEFS if set(DOCUMENT["$defs"][n].get("properties", {})) - set(DOCUMENT["$defs"][n]["required"])]
    assert len(with_optional) > 40


@pytest.mark.parametrize("name", OBJECT_DEFS)
def test_only_required_keys_decode_as_the_general_path_does(name: str) -> None:
    tp = getattr(acp, name)
    required = DOCUMENT["$defs"][name]["required"]
    check = validator(name)

    @settings(max_examples=5, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(st.data())
    def run(data: st.DataObject) -> None:
        instance = data.draw(STRATEGIES.for_def(name).filter(check.is_valid))
        only = {k: v for k, v in json.loads(json.dumps(instance)).items() if k in required}
        kind, fast = outcome(tp, only)
        assert outcome(tp, general(only)) == (kind, {**fast, UNKNOWN: 1} if kind == "value" else fast)
        if kind == "value":
            assert fast == only
        for key in required:  # a bad required value: the same refusal either way
            bad = {**only, key: WRONG}
            kind, fast = outcome(tp, bad)
            assert outcome(tp, general(bad)) == (kind, {**fast, UNKNOWN: 1} if kind == "value" else fast)

    run()


GOOD = [{"type": "text", "text": "a"}, {"type": "resource_link", "uri": "file:///a", "name": "a"}]


@pytest.mark.parametrize(
    "item",
    [
        "text",
        None,
        3,
        [{"type": "text", "text": "a"}],
        {"text": "no tag"},
        {"type": "video", "text": "unknown tag"},
        {"type": 1, "text": "a number for a tag"},
        {"type": ["text"], "text": "an unhashable tag"},
        {"type": "text", "text": 5},
        {"type": "text"},
        {"type": "image", "data": 1, "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///a"}},
    ],
)
def test_a_bad_item_in_a_tagged_list_is_refused_as_on_its_own(item: Any) -> None:
    alone = outcome(acp.ContentBlock, item)
    assert alone[0] == "error"
    path, message = alone[1]
    assert outcome(acp.PromptRequest, {"sessionId": "s", "prompt": [*GOOD, item, *GOOD]}) == (
        "error",
        (f"/prompt/2{path}", message),
    )


def test_a_good_tagged_list_decodes_to_its_variants():
    value = acp.decode(acp.PromptRequest, {"sessionId": "s", "prompt": [*GOOD, {"type": "text", "text": "b", "x": 1}]})
    assert [type(block).__name__ for block in value.prompt] == ["Text", "ResourceLinkContentBlock", "Text"]
    assert value.prompt[2].extra == {"x": 1}
    assert outcome(acp.PromptRequest, {"sessionId": "s", "prompt": "nope"}) == (
        "error",
        ("/prompt", "expected an array, got the string 'nope'"),
    )
