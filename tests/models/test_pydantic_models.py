"""The pydantic flavour (``--models pydantic``): the corpus' lineage set round-trips exactly, bad
data is refused with a JSON pointer, and the classes have the names of the dataclass flavour.
(Every ``$def`` of the bundled schema round-trips in tests/models/test_models_roundtrip.py, in
both flavours.)

``ACPGEN_EXHAUSTIVE=1`` (``make test-exhaustive``) draws ten times more examples."""

from __future__ import annotations

import copy
import functools
import importlib
import json
import os
import re
import sys
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from models.test_corpus_models import ROUND_TRIPS, VALIDATED
from support import CORPUS, bindings, bundled_document, write_package
from support.flavours import pydantic_bindings
from support.model_instances import InstanceStrategies

from acpgen.pipeline import Options, generate
from acpgen.render.modules import Layer, module_names

DOCUMENT = bundled_document()
DEF_NAMES = sorted(DOCUMENT["$defs"])
EXAMPLES_PER_TYPE = 100 if os.environ.get("ACPGEN_EXHAUSTIVE") else 10
STRATEGIES = InstanceStrategies(DOCUMENT)
_CLASS = re.compile(r"^class (\w+)\(", re.MULTILINE)


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": DOCUMENT["$defs"]})


def test_every_def_is_a_pydantic_type():
    acp = pydantic_bindings()
    import pydantic

    missing = [name for name in DEF_NAMES if not hasattr(acp, name)]
    assert missing == []
    assert issubclass(acp.SessionNotification, pydantic.BaseModel)
    assert "pydantic" in acp.models.__doc__


# Every $def's round trip in this flavour is checked beside the dataclass flavour's, on the same
# drawn instances: tests/models/test_models_roundtrip.py.


NOTE = {
    "sessionId": "s",
    "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
}


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        (lambda m: m.pop("sessionId"), "/sessionId", "required property 'sessionId' is missing"),
        (lambda m: m["update"]["content"].pop("text"), "/update/content/text", "is missing"),
        (lambda m: m.__setitem__("sessionId", 7), "/sessionId", "got the number 7"),
        (lambda m: m["update"]["content"].__setitem__("text", None), "/update/content/text", "got null"),
        (lambda m: m["update"]["content"].__setitem__("type", "txt"), "/update/content/type", "'txt'"),
        (lambda m: m["update"].pop("sessionUpdate"), "/update/sessionUpdate", "tag 'sessionUpdate' is missing"),
        (lambda m: m.__setitem__("update", "nope"), "/update", "the string 'nope'"),
        (lambda m: m["update"]["content"].__setitem__("annotations", {"priority": "high"}),
         "/update/content/annotations/priority", "got the string 'high'"),
        (lambda m: m.__setitem__("_meta", []), "/_meta", "got an array"),
    ],
)
def test_bad_data_is_refused_with_its_path(change, path, words):
    acp = pydantic_bindings()
    message = copy.deepcopy(NOTE)
    change(message)
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode(acp.SessionNotification, message)
    assert caught.value.path == path
    assert words in caught.value.message
    assert str(caught.value) == f"at {path}: {caught.value.message}"


def test_null_is_refused_where_the_schema_refuses_it():
    """``additionalDirectories`` is optional, but not nullable: absent is fine, null is not."""
    acp = pydantic_bindings()
    assert acp.decode(acp.NewSessionRequest, {"cwd": "/", "mcpServers": []}).additional_directories is None
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode(acp.NewSessionRequest, {"cwd": "/", "mcpServers": [], "additionalDirectories": None})
    assert caught.value.path == "/additionalDirectories"
    assert "got null" in caught.value.message
    # a constructor's None means absent, as in the dataclass flavour
    assert acp.NewSessionRequest(cwd="/", mcp_servers=[], additional_directories=None).to_json() == {
        "cwd": "/", "mcpServers": []}


def test_paths_inside_lists():
    acp = pydantic_bindings()
    prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}, {"type": "image", "data": 1, "mimeType": "x"}]}
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode(acp.PromptRequest, prompt)
    assert caught.value.path == "/prompt/1/data"
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode(list[acp.ContentBlock], [{"type": "text", "text": "a"}, {"type": "text", "text": 2}])
    assert caught.value.path == "/1/text"


def test_nulls_extras_and_constructors():
    acp = pydantic_bindings()
    wire = {"sessionId": "s", "_meta": None, "x-new": [1], "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi", "_meta": None}}}
    note = acp.decode(acp.SessionNotification, wire)
    assert note.meta is None and note.extra == {"x-new": [1]}
    assert acp.encode(note) == wire  # the explicit nulls and the unknown property go back out
    built = acp.SessionNotification(session_id="s", meta=None, update=acp.AgentMessageChunk(content=acp.Text(text="hi")))
    assert built.to_json() == {"sessionId": "s", "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}}
    assert acp.decode(acp.SessionNotification, built.to_json()) == built
    assert acp.Text.from_json({"type": "text", "text": "a"}) == acp.Text(text="a")
    # no null in a field (the fast encoding) but one in an unknown property, and a nested one
    for wire in ({**NOTE, "x-null": None}, {**NOTE, "update": {**NOTE["update"], "messageId": None}}):
        assert acp.encode(acp.decode(acp.SessionNotification, wire)) == wire
    # a decoded value changed afterwards: None still means absent
    note = acp.decode(acp.SessionNotification, NOTE)
    note.update.content.annotations = acp.Annotations(priority=1.0)
    assert acp.encode(note)["update"]["content"]["annotations"] == {"priority": 1.0}


@pytest.mark.parametrize("name", ["SessionNotification", "PromptRequest", "InitializeResponse", "RequestPermissionRequest"])
def test_values_rebuilt_with_constructors_are_equal_and_valid(name: str) -> None:
    acp = pydantic_bindings()

    @settings(max_examples=10, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(STRATEGIES.for_def(name).filter(validator(name).is_valid))
    def run(instance: Any) -> None:
        value = acp.decode(getattr(acp, name), instance)
        rebuilt = _rebuild(value)
        assert rebuilt == value
        validator(name).validate(acp.encode(rebuilt))

    run()


def _rebuild(value: Any) -> Any:
    import pydantic

    if isinstance(value, pydantic.BaseModel):
        fields = {name: _rebuild(getattr(value, name)) for name in type(value).model_fields}
        return type(value)(**fields, **(value.model_extra or {}))
    if isinstance(value, list):
        return [_rebuild(v) for v in value]
    if isinstance(value, dict):
        return {k: _rebuild(v) for k, v in value.items()}
    return value


def test_class_names_are_those_of_the_dataclass_flavour():
    acp, dataclass_acp = pydantic_bindings(), bindings()
    assert set(_CLASS.findall(pydantic_bindings_file("models.py"))) == {
        c for c in _CLASS.findall(importlib.import_module("acp_bindings.models").__loader__.get_source(
            "acp_bindings.models")) if c != "Model"}
    assert sorted(acp.models.__all__) == sorted(dataclass_acp.models.__all__)


def pydantic_bindings_file(name: str) -> str:
    from support.flavours import PYDANTIC_PACKAGE, pydantic_folder

    return (pydantic_folder() / PYDANTIC_PACKAGE / name).read_text()


def test_models_module_is_what_black_makes_of_it():
    """black formats only the statements datamodel-code-generator lays out otherwise, which is
    the same as black formatting the whole module."""
    from acpgen.output.formatting import format_python

    text = pydantic_bindings_file("models.py")
    assert format_python(text) == text


@pytest.mark.parametrize("file", sorted(ROUND_TRIPS))
def test_lineage_set_names_and_round_trips(file: str, tmp_path) -> None:
    defs = json.loads((CORPUS / file).read_text())["$defs"]
    package = "pyd_corpus_" + re.sub(r"\W", "_", file.removesuffix(".json"))
    only = {"models.py", *module_names(layer=Layer.CODEC), *module_names(layer=Layer.PYDANTIC)}
    files = generate(Options(schema=CORPUS / file, package=package, models="pydantic"), VALIDATED, only=only).files
    plain = generate(Options(schema=CORPUS / file, package=package), VALIDATED, only={"models.py"}).files
    names = set(_CLASS.findall(files[f"{package}/models.py"]))
    if file in ("v0.6.3--schema.json", "v1.7.0--v2-schema.json"):  # an old and a new release in black's style too
        from acpgen.output.formatting import format_python

        assert format_python(files[f"{package}/models.py"]) == files[f"{package}/models.py"]
    assert names == set(_CLASS.findall(plain[f"{package}/models.py"]))
    assert not [n for n in names if re.search(r"\d$", n) and n not in defs]  # nothing numbered
    write_package({**files, f"{package}/__init__.py": ""}, tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        models = importlib.import_module(f"{package}.models")
        codec = importlib.import_module(f"{package}._runtime.wire._codec")
    finally:
        sys.path.remove(str(tmp_path))
    for type_, value, class_name, field in ROUND_TRIPS[file]:
        decoded = codec.decode(getattr(models, type_), value)
        assert type(decoded).__name__ == class_name
        if field is not None:
            assert type(getattr(decoded, field[0])).__name__ == field[1]
        assert codec.encode(decoded) == value
    strategies = InstanceStrategies({"$defs": defs})
    for name in sorted(defs):
        _round_trips(strategies.for_def(name), jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs}),
                     codec, getattr(models, name))


def _round_trips(strategy: Any, check: Any, codec: Any, tp: Any) -> None:
    @settings(max_examples=3, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy.filter(check.is_valid))
    def run(instance: Any) -> None:
        wire = json.loads(json.dumps(instance))
        assert codec.encode(codec.decode(tp, wire)) == wire

    run()
