"""Property-based round trips: for every ``$def`` of the bundled schema, generated instances that
``jsonschema`` accepts decode and encode back to exactly the same JSON, in both flavours of the
models (each instance is drawn once and checked in both: drawing is most of the time).

``ACPGEN_EXHAUSTIVE=1`` (``make test-exhaustive``) draws five times more examples."""

from __future__ import annotations

import functools
import json
import os
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import bindings, bundled_document
from support.flavours import pydantic_bindings
from support.model_instances import InstanceStrategies

DOCUMENT = bundled_document()
DEF_NAMES = sorted(DOCUMENT["$defs"])
EXAMPLES_PER_TYPE = 100 if os.environ.get("ACPGEN_EXHAUSTIVE") else 20


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": DOCUMENT["$defs"]})


STRATEGIES = InstanceStrategies(DOCUMENT)


def test_every_def_is_covered():
    acp = bindings()
    assert len(DEF_NAMES) == 239
    missing = [name for name in DEF_NAMES if not hasattr(acp, name)]
    assert missing == []


@pytest.mark.parametrize("name", DEF_NAMES)
def test_round_trip_is_exact(name: str) -> None:
    acp, pydantic_acp = bindings(), pydantic_bindings()
    tp, pydantic_tp = getattr(acp, name), getattr(pydantic_acp, name)
    check = validator(name)

    @settings(
        max_examples=EXAMPLES_PER_TYPE,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )
    @given(st.data())
    def run(data: st.DataObject) -> None:
        instance = data.draw(STRATEGIES.for_def(name).filter(check.is_valid))
        wire = json.loads(json.dumps(instance))  # what a peer's json.loads gives
        value = acp.decode(tp, wire)
        assert acp.encode(value) == wire
        # and the value re-encodes through JSON text to the same bytes a peer would send
        assert json.loads(json.dumps(acp.encode(value))) == wire
        # the classes' own writers give exactly the compact text of what encode gives
        text = json.dumps(acp.encode(value), separators=(",", ":"))
        assert acp.encode_text(value) == text
        if hasattr(value, "_json_text"):  # a class instance: its writer, not the general way
            assert value._json_text() == text
        _pydantic_round_trip(pydantic_acp, pydantic_tp, wire, type(value).__name__)

    run()


def _pydantic_round_trip(acp: Any, tp: Any, wire: Any, dataclass_name: str) -> None:
    """The pydantic flavour's round trip of ``wire``, to the variant the dataclass flavour picked."""
    value = acp.decode(tp, wire)
    assert acp.encode(value) == wire
    assert json.loads(json.dumps(acp.encode(value))) == wire
    # the text pydantic-core writes is the JSON of encode's dict, compact and ASCII only
    text = acp.encode_text(value)
    assert text.isascii() and json.loads(text) == wire
    if hasattr(value, "_json_text"):  # a class instance: pydantic-core wrote it, in encode's order
        assert value._json_text() == text
        assert list(json.loads(text)) == list(acp.encode(value))
    assert type(value).__name__ == dataclass_name


def _samples(name: str, count: int) -> list[Any]:
    found: list[Any] = []

    @settings(max_examples=count, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(STRATEGIES.for_def(name).filter(validator(name).is_valid))
    def collect(instance: Any) -> None:
        found.append(instance)

    collect()
    return found


@pytest.mark.parametrize("name", ["SessionNotification", "PromptRequest", "NewSessionRequest", "InitializeResponse",
                                  "RequestPermissionRequest", "CreateElicitationRequest", "SessionConfigOption"])
def test_values_rebuilt_with_constructors_encode_to_valid_json(name: str) -> None:
    """Every value built in Python with the constructors encodes to JSON the schema accepts."""
    acp = bindings()
    for instance in _samples(name, 15):
        value = acp.decode(getattr(acp, name), instance)
        rebuilt = _rebuild(value)
        assert rebuilt == value
        validator(name).validate(acp.encode(rebuilt))


def _rebuild(value: Any) -> Any:
    """The same value, built again through the public keyword constructors."""
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kwargs = {f.name: _rebuild(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return type(value)(**kwargs, extra=_rebuild(value.extra))
    if isinstance(value, list):
        return [_rebuild(v) for v in value]
    if isinstance(value, dict):
        return {k: _rebuild(v) for k, v in value.items()}
    return value
