"""Bad data raises DecodeError, with the JSON pointer of the offending value, and nothing else."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import bindings, bundled_document
from support.model_instances import InstanceStrategies, any_json

acp = bindings()
STRATEGIES = InstanceStrategies(bundled_document())

NOTE = {
    "sessionId": "s",
    "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
}


def _error(tp: Any, data: Any) -> Any:
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode(tp, data)
    assert isinstance(caught.value, ValueError)
    return caught.value


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        (lambda m: m.pop("sessionId"), "/sessionId", "required property 'sessionId' is missing"),
        (lambda m: m["update"]["content"].pop("text"), "/update/content/text", "is missing"),
        (lambda m: m.__setitem__("sessionId", 7), "/sessionId", "expected a string, got the number 7"),
        (lambda m: m["update"]["content"].__setitem__("text", None), "/update/content/text", "got null"),
        (lambda m: m["update"]["content"].__setitem__("type", "txt"), "/update/content/type", "'txt'"),
        (lambda m: m["update"].pop("sessionUpdate"), "/update/sessionUpdate", "tag 'sessionUpdate' is missing"),
        (lambda m: m["update"].__setitem__("sessionUpdate", ["x"]), "/update/sessionUpdate", "got an array"),
        (lambda m: m.__setitem__("update", "nope"), "/update", "expected an object"),
        (lambda m: m["update"]["content"].__setitem__("annotations", {"priority": "high"}),
         "/update/content/annotations/priority", "expected a number"),
        (lambda m: m.__setitem__("_meta", []), "/_meta", "expected an object"),
    ],
)
def test_bad_session_notification(change, path, words):
    message = copy.deepcopy(NOTE)
    change(message)
    error = _error(acp.SessionNotification, message)
    assert error.path == path
    assert words in error.message
    assert str(error) == f"at {path}: {error.message}"


def test_paths_inside_lists_and_maps():
    prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}, {"type": "image", "data": 1, "mimeType": "x"}]}
    assert _error(acp.PromptRequest, prompt).path == "/prompt/1/data"
    schema = {"properties": {"a": {"type": "string"}, "b/c~": {"type": "wat"}}}
    error = _error(acp.ElicitationSchema, schema)
    assert error.path == "/properties/b~1c~0/type"


def test_a_field_of_tagged_union_values_takes_no_value_of_another_shape():
    # one variant where an array of them is expected, an array where one is
    block = {"type": "text", "text": "a"}
    error = _error(acp.PromptRequest, {"sessionId": "s", "prompt": block})
    assert (error.path, error.message[:18]) == ("/prompt", "expected an array,")
    error = _error(acp.SessionNotification, {**NOTE, "update": [NOTE["update"]]})
    assert (error.path, error.message[:19]) == ("/update", "expected an object,")
    assert acp.decode(acp.PromptRequest, {"sessionId": "s", "prompt": [block]}).prompt[0].text == "a"


def test_out_of_range_integers_and_wrong_scalars():
    assert _error(acp.InitializeRequest, {"protocolVersion": 70000}).path == "/protocolVersion"
    assert _error(acp.InitializeRequest, {"protocolVersion": True}).path == "/protocolVersion"
    assert _error(acp.InitializeRequest, {"protocolVersion": 1.5}).path == "/protocolVersion"
    assert _error(acp.Error, {"code": 2**31, "message": "x"}).path == "/code"
    assert _error(acp.RequestId, 2**63).path == ""


def test_untagged_union_reports_the_deepest_problem():
    error = _error(acp.EmbeddedResourceResource, {"uri": "file:///a"})
    assert error.path in ("/text", "/blob")
    error = _error(acp.RequestId, [1])
    assert error.path == "" and "a string or an integer or null" in error.message


def test_unknown_tag_in_a_closed_union():
    error = _error(acp.RequestPermissionOutcome, {"outcome": "maybe"})
    assert error.path == "/outcome"
    assert "'cancelled', 'selected'" in error.message


def test_not_json_at_all():
    assert _error(acp.SessionNotification, object()).path == ""
    assert _error(acp.SessionNotification, {"sessionId": b"s", "update": {}}).path == "/sessionId"


MUTATED_TYPES = ["SessionNotification", "PromptRequest", "InitializeResponse", "NewSessionRequest",
                 "RequestPermissionRequest", "CreateElicitationRequest", "SetSessionConfigOptionRequest",
                 "AgentRequest", "ClientResponse", "ElicitationSchema"]


def _mutate(value: Any, path: list[int], replacement: Any) -> Any:
    """Replace one value inside ``value`` (chosen by ``path``) or drop one key of an object."""
    if not path or not isinstance(value, (dict, list)) or not value:
        return replacement
    index = path[0] % len(value)
    if isinstance(value, list):
        return [(_mutate(v, path[1:], replacement) if i == index else v) for i, v in enumerate(value)]
    key = sorted(value)[index]
    if replacement == "<drop>":
        return {k: v for k, v in value.items() if k != key}
    return {k: (_mutate(v, path[1:], replacement) if k == key else v) for k, v in value.items()}


@pytest.mark.parametrize("name", MUTATED_TYPES)
def test_nothing_but_decode_error_escapes(name):
    tp = getattr(acp, name)

    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(STRATEGIES.for_def(name), st.lists(st.integers(0, 50), max_size=5), any_json | st.just("<drop>"))
    def run(instance: Any, path: list[int], replacement: Any) -> None:
        broken = _mutate(instance, path, replacement)
        try:
            value = acp.decode(tp, broken)
        except acp.DecodeError as error:
            assert error.path == "" or error.path.startswith("/")
            return
        assert acp.encode(value) == broken

    run()
