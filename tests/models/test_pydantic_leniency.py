"""The pydantic flavour makes the repairs the schema's ``x-deserialize-*`` annotations allow as the
dataclass flavour does: the same bad inputs (the leniency tests' cases) decode to the same JSON
with the same repairs, each logged with its JSON pointer, and a strict decode refuses them; for
the bundled schema (which has no such annotations: both refuse), the schema the leniency tests
use, and a v2 draft."""

from __future__ import annotations

import importlib
import json
import logging
import sys
from types import ModuleType
from typing import Any

import pytest
from support import DATA, bindings, schema_with, write_package
from support.flavours import pydantic_bindings
from support.leniency import CASES, LOCATION, SCHEMA

from acpgen.pipeline import Options, generate

#: name -> (schema, protocol version); None: the bundled schema.
SCHEMAS = {
    "bundled": (None, None),
    "v1_unstable": (SCHEMA, None),
    "v2_draft": (DATA / "sdk-schemas" / "v2-schema.json", 2),
}
#: The leniency tests' type names that a schema names otherwise.
RENAMED = {"v2_draft": {"SessionNotification": "UpdateSessionNotification"}}
#: More bad inputs: a repair beside an explicit null that stays, and a bad item after which a
#: kept item is repaired too (its pointer is its place in the array as it came).
MORE = [
    ("SessionNotification", {"sessionId": "s", "update": {
        "sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "bogus", "title": None}}),
    ("SessionNotification", {"sessionId": "s", "update": {
        "sessionUpdate": "tool_call_update", "toolCallId": "t", "locations": [{"path": 7}, {**LOCATION, "_meta": 1}]}}),
    ("NewSessionRequest", {"cwd": "/work", "mcpServers": [{"name": "x", "command": "/bin/c", "args": None, "env": []}]}),
]
INPUTS = [(type_name, bad) for type_name, bad, _, _ in CASES] + MORE


@pytest.fixture(scope="module")
def flavours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[ModuleType, ModuleType]]:
    """Per schema: its package in the dataclass flavour, and in the pydantic flavour."""
    out = tmp_path_factory.mktemp("pydantic-lenient")
    for name, (schema, version) in SCHEMAS.items():
        if schema is not None:
            for models in ("dataclasses", "pydantic"):
                options = Options(schema=schema, package=f"lenient_{name}_{models}", models=models, protocol_version=version)
                write_package(generate(options).files, out)
    sys.path.insert(0, str(out))
    try:
        found = {"bundled": (bindings(), pydantic_bindings())}
        for name, (schema, _) in SCHEMAS.items():
            if schema is not None:
                found[name] = tuple(importlib.import_module(f"lenient_{name}_{m}") for m in ("dataclasses", "pydantic"))
        yield found
    finally:
        sys.path.remove(str(out))


def type_of(acp: ModuleType, schema: str, type_name: str) -> Any:
    return getattr(acp, RENAMED.get(schema, {}).get(type_name, type_name))


def outcome(acp: ModuleType, tp: Any, data: Any) -> tuple[Any, list[str]]:
    """What a lenient decode makes of ``data``: its JSON and the pointers repaired, or the pointer
    of the refusal."""
    try:
        value, salvages = acp.decode_salvaging(tp, data)
    except acp.DecodeError as error:
        return "refused", [error.path]
    return acp.encode(value), sorted(s.path for s in salvages)


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize(("type_name", "bad"), INPUTS)
def test_both_flavours_repair_a_bad_input_alike(flavours, schema, type_name, bad, caplog):
    dataclasses, pydantic = flavours[schema]
    expected = outcome(dataclasses, type_of(dataclasses, schema, type_name), bad)
    tp = type_of(pydantic, schema, type_name)
    assert outcome(pydantic, tp, bad) == expected
    if expected[0] == "refused":
        return
    logger = f"{pydantic.__name__}._codec"
    with caplog.at_level(logging.WARNING, logger=logger):
        value = tp.from_json(bad)
    assert pydantic.encode(value) == json.loads(pydantic.encode_text(value)) == expected[0]
    logged = sorted(r.getMessage() for r in caplog.records if r.name == logger)
    assert len(logged) == len(expected[1]) and all(f"at {p}:" in m for p, m in zip(expected[1], logged))
    refusals = []
    for acp in (dataclasses, pydantic):
        if not expected[1]:
            assert acp.encode(acp.decode(type_of(acp, schema, type_name), bad, strict=True)) == expected[0]
            continue
        with pytest.raises(acp.DecodeError) as refused:
            acp.decode(type_of(acp, schema, type_name), bad, strict=True)
        refusals.append(refused.value.path)
    # each refuses at a value it would repair (pydantic names the deepest of several, as it does
    # for any bad input; the dataclass flavour the first it reads)
    assert all(path in expected[1] for path in refusals) and (len(expected[1]) > 1 or len(set(refusals)) <= 1)


@pytest.mark.parametrize(("schema", "cases"), [("v1_unstable", CASES), ("v2_draft", CASES[1:3])])
def test_the_cases_are_repaired_as_the_leniency_tests_say(flavours, schema, cases):
    """Not two refusals compared: the pydantic flavour repairs. (In v2 a tool call's status is an
    open set, a plan has no ``entries`` and a permission request needs a title.)"""
    _, pydantic = flavours[schema]
    for type_name, bad, repaired, pointers in cases:
        assert outcome(pydantic, type_of(pydantic, schema, type_name), bad) == (repaired, pointers), type_name


def test_constructors_and_plain_validation_repair_nothing(flavours):
    _, pydantic = flavours["v1_unstable"]
    note = CASES[0][1]
    with pytest.raises(ValueError, match="status"):
        pydantic.SessionNotification.model_validate(note)
    with pytest.raises(ValueError, match="status"):
        pydantic.ToolCallUpdateSessionUpdate(tool_call_id="t", status="bogus")


def test_the_repairs_of_a_union_member_that_fails_are_taken_back(tmp_path):
    """As in the dataclass flavour: a member tried in turn that repairs a field and then fails
    leaves no repair behind once another member decodes the value."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(schema_with({
        "Status": {"type": "string", "enum": ["on", "off"]},
        "Long": {"type": "object", "required": ["z", "q"], "properties": {
            "status": {"$ref": "#/$defs/Status", "x-deserialize-default-on-error": True},
            "z": {"type": "string"}, "q": {"type": "integer"}}},
        "Short": {"type": "object", "required": ["w"], "properties": {"w": {"type": "integer"}}},
        "Either": {"anyOf": [{"$ref": "#/$defs/Long"}, {"$ref": "#/$defs/Short"}]},
    })))
    write_package(generate(Options(schema=schema, package="lenient_union_pydantic", models="pydantic")).files, tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        acp = importlib.import_module("lenient_union_pydantic")
    finally:
        sys.path.remove(str(tmp_path))
    value, salvages = acp.decode_salvaging(acp.Either, {"status": "bogus", "z": 5, "q": 1, "w": 1})
    assert type(value).__name__ == "Short" and salvages == ()
    value, salvages = acp.decode_salvaging(acp.Either, {"status": "bogus", "z": "s", "q": 1})
    assert type(value).__name__ == "Long" and [s.path for s in salvages] == ["/status"]
    assert value.to_json() == {"z": "s", "q": 1}
