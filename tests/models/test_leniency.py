"""The schema's own leniency annotations, as the official SDKs honour them.

``x-deserialize-default-on-error`` replaces a bad value by the field's default (absent for an
optional field), ``x-deserialize-skip-invalid-items`` drops bad array items and
``x-deserialize-default-on-null`` reads ``null`` as the empty value. Each repair is logged with
its JSON pointer and reported by ``decode_salvaging``; ``strict=True`` refuses it. The same bad
inputs go through the official TypeScript SDK's decoders (its zod schemas, run with node) and
must come out the same.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
from support import INTEROP, write_package
from support.leniency import CASES, LOCATION, SCHEMA

from acpgen.pipeline import Options, generate


@pytest.fixture(scope="module")
def acp(tmp_path_factory):
    out = tmp_path_factory.mktemp("lenient")
    write_package(generate(Options(schema=SCHEMA, package="lenient_acp")).files, out)
    sys.path.insert(0, str(out))
    try:
        import lenient_acp

        yield lenient_acp
    finally:
        sys.path.remove(str(out))


@pytest.mark.parametrize(("type_name", "bad", "repaired", "pointers"), CASES)
def test_a_repair_is_reported_with_its_pointer_and_refused_when_strict(acp, type_name, bad, repaired, pointers, caplog):
    tp = getattr(acp, type_name)
    value, salvages = acp.decode_salvaging(tp, bad)
    assert acp.encode(value) == repaired
    assert sorted(s.path for s in salvages) == pointers
    with caplog.at_level(logging.WARNING, logger="lenient_acp._codec"):
        assert acp.encode(acp.decode(tp, bad)) == repaired
    logged = [r.getMessage() for r in caplog.records if r.name == "lenient_acp._codec"]
    assert len(logged) == len(pointers) and all(f"at {p}:" in m for p, m in zip(sorted(pointers), sorted(logged)))
    with pytest.raises(acp.DecodeError) as refused:
        acp.decode(tp, bad, strict=True)
    assert refused.value.path in pointers


def test_valid_input_round_trips_exactly_and_repairs_nothing(acp):
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": None, "title": None,
              "locations": [LOCATION], "_meta": None, "rawInput": {"a": [1]}}
    note = {"sessionId": "s", "update": update}
    value, salvages = acp.decode_salvaging(acp.SessionNotification, note)
    assert salvages == () and acp.encode(value) == note
    assert acp.encode(acp.decode(acp.SessionNotification, note, strict=True)) == note
    request = {"cwd": "/work", "mcpServers": []}
    assert acp.encode(acp.NewSessionRequest.from_json(request)) == request


def test_a_missing_required_field_is_still_an_error(acp):
    with pytest.raises(acp.DecodeError) as missing:
        acp.decode(acp.NewSessionRequest, {"cwd": "/work"})
    assert missing.value.path == "/mcpServers"


def test_the_typescript_sdk_decodes_the_same_bad_inputs_the_same_way(acp):
    lines = "".join(json.dumps([type_name, bad]) + "\n" for type_name, bad, _, _ in CASES)
    done = subprocess.run(["node", "ts_decode.mjs"], input=lines, capture_output=True, text=True, cwd=INTEROP,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(CASES)
    for (type_name, bad, repaired, _), result in zip(CASES, results):
        assert result == {"ok": repaired}, (type_name, bad)
        assert acp.encode(acp.decode(getattr(acp, type_name), bad)) == result["ok"]


def test_the_repairs_of_a_union_option_that_fails_are_taken_back(tmp_path):
    """An untagged union tries its options: one that repairs a field and then fails anyway leaves
    no repair behind once another option decodes the value."""
    from support import generate_and_import, schema_with

    acp = generate_and_import(schema_with({
        "Status": {"type": "string", "enum": ["on", "off"]},
        "Long": {"type": "object", "required": ["z", "q"], "properties": {
            "status": {"$ref": "#/$defs/Status", "x-deserialize-default-on-error": True},
            "z": {"type": "string"}, "q": {"type": "integer"}}},
        "Short": {"type": "object", "required": ["w"], "properties": {"w": {"type": "integer"}}},
        "Either": {"anyOf": [{"$ref": "#/$defs/Long"}, {"$ref": "#/$defs/Short"}]},
    }), tmp_path)
    data = {"status": "bogus", "z": 5, "q": 1, "w": 1}
    value, salvages = acp.decode_salvaging(acp.Either, data)
    assert type(value).__name__ == "Short" and salvages == ()
    value, salvages = acp.decode_salvaging(acp.Either, {"status": "bogus", "z": "s", "q": 1})
    assert type(value).__name__ == "Long" and [s.path for s in salvages] == ["/status"]
