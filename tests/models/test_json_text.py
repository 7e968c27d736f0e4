"""``encode_text``: the wire's compact JSON text of a value, written by the classes themselves.

It must be exactly ``json.dumps(encode(value), separators=(",", ":"))`` (ASCII only, no NaN) for
every value, including the ones a class's writer hands to the general way: kept unknown
properties, remembered nulls, and fields a user set to a value of another type.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from support import bindings

acp = bindings()


def compact(value: Any) -> str:
    return json.dumps(acp.encode(value), separators=(",", ":"), allow_nan=False)


def test_a_class_writes_its_tags_required_and_present_optional_fields():
    block = acp.Text(text="héllo \"quoted\" \u2028", annotations=acp.Annotations(priority=0.5, audience=["user"]))
    text = block._json_text()
    assert text == compact(block)
    assert text == '{"type":"text","text":"h\\u00e9llo \\"quoted\\" \\u2028","annotations":{"audience":["user"],"priority":0.5}}'


def test_a_class_with_only_optional_fields_writes_braces_with_or_without_them():
    assert acp.Annotations()._json_text() == "{}"
    assert acp.Annotations(priority=1.0)._json_text() == '{"priority":1.0}'
    assert acp.Annotations(meta={"a": [1, None]}, priority=1.0)._json_text() == '{"_meta":{"a":[1,null]},"priority":1.0}'


def test_lists_of_classes_and_nested_classes():
    prompt = acp.PromptRequest(
        session_id="s",
        prompt=[acp.Text(text="a"), acp.ResourceLinkContentBlock(name="n", uri="file:///a", size=3)],
        message_id="m",
    )
    assert prompt._json_text() == compact(prompt)
    assert json.loads(prompt._json_text())["prompt"][1] == {"type": "resource_link", "name": "n", "uri": "file:///a", "size": 3}
    assert acp.PromptRequest(session_id="s", prompt=[])._json_text() == '{"prompt":[],"sessionId":"s"}'


@pytest.mark.parametrize(
    "data",
    [
        {"type": "text", "text": "a", "unknown": {"x": 1}},  # kept unknown properties come first
        {"type": "text", "text": "a", "annotations": None},  # a remembered null is sent back
        {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a", "_meta": None}}},
    ],
)
def test_what_the_writers_hand_to_the_general_way_is_the_same_text(data):
    tp = acp.ContentBlock if "type" in data else acp.SessionNotification
    value = acp.decode(tp, data)
    assert acp.encode_text(value) == compact(value)
    assert json.loads(acp.encode_text(value)) == data


def test_a_field_holding_another_type_is_written_as_encode_would():
    block = acp.Text(text="a")
    block.text = 5  # type: ignore[assignment]  # what a careless user might do
    assert acp.encode_text(block) == '{"type":"text","text":5}' == compact(block)


def test_nan_is_refused_as_on_the_general_way():
    value = acp.Annotations(priority=math.nan)
    with pytest.raises(ValueError):
        acp.encode_text(value)
    with pytest.raises(ValueError):
        compact(value)


def test_values_that_are_not_classes_go_the_general_way():
    assert acp.encode_text([acp.Text(text="a"), None, 1, "x"]) == '[{"type":"text","text":"a"},null,1,"x"]'
    assert acp.encode_text({"k": acp.Annotations(priority=2.0)}) == '{"k":{"priority":2.0}}'
