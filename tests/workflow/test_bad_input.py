"""Bad schemas: a one-line diagnostic with a JSON pointer, exit status 2, nothing written."""

from __future__ import annotations

import copy

import pytest
from support import mini_schema


def generate_into(cli, tmp_path, schema_path):
    out = tmp_path / "out"
    result = cli("generate", "--schema", schema_path, "--out", out)
    return result, out


def assert_refused(result, out, expected_line: str):
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert expected_line in lines
    assert not out.exists(), "nothing may be written for a broken schema"


def test_not_json(cli, tmp_path, write_schema):
    path = write_schema('{"$defs": {\n  "A": {"type": "string",}\n}}')
    result, out = generate_into(cli, tmp_path, path)
    assert_refused(
        result, out, "schema.json: error: #: not valid JSON: Expecting property name enclosed in double quotes"
        " at line 2 column 26"
    )


def test_not_an_object(cli, tmp_path, write_schema):
    result, out = generate_into(cli, tmp_path, write_schema([1, 2]))
    assert_refused(result, out, "schema.json: error: #: a schema must be a JSON object, found an array")


def test_meta_schema_rejects(cli, tmp_path, write_schema):
    doc = mini_schema()
    doc["$defs"]["LogNotification"]["properties"]["line"]["type"] = "text"
    doc["$defs"]["PingRequest"]["required"] = "sessionId"
    result, out = generate_into(cli, tmp_path, write_schema(doc))
    assert result.exit_code == 2 and not out.exists()
    lines = result.stderr.strip().splitlines()
    # Both problems are reported in one run, each on its own line with its pointer.
    assert any(line.startswith("schema.json: error: #/$defs/LogNotification/properties/line/type: meta-schema:")
               for line in lines)
    assert any(line.startswith("schema.json: error: #/$defs/PingRequest/required: meta-schema: 'sessionId'")
               for line in lines)


def test_missing_ref(cli, tmp_path, write_schema):
    doc = mini_schema()
    doc["$defs"]["PingRequest"]["properties"]["sessionId"]["$ref"] = "#/$defs/SessionID"
    result, out = generate_into(cli, tmp_path, write_schema(doc))
    assert_refused(
        result, out,
        "schema.json: error: #/$defs/PingRequest/properties/sessionId/$ref: unresolvable $ref '#/$defs/SessionID'",
    )


def test_two_params_types_for_one_method_and_side(cli, tmp_path, write_schema):
    doc = mini_schema()
    doc["$defs"]["PingAgainRequest"] = copy.deepcopy(doc["$defs"]["PingRequest"])
    result, out = generate_into(cli, tmp_path, write_schema(doc))
    assert_refused(
        result, out,
        "schema.json: error: #/$defs/PingRequest/x-method: conflicting params types for request 'ping' on side"
        " 'agent': PingAgainRequest, PingRequest",
    )


def test_unknown_side_is_a_warning(cli, tmp_path, write_schema):
    doc = mini_schema()
    doc["$defs"]["LogNotification"]["x-side"] = "editor"
    doc["$defs"]["LogNotification"]["x-future-key"] = {"anything": 1}  # unknown x-* keys are ignored
    path = write_schema(doc)
    result = cli("methods", "--schema", path, "--format", "json")
    assert result.exit_code == 0
    assert result.stderr.strip().splitlines() == [
        "schema.json: warning: #/$defs/LogNotification/x-side: unknown x-side 'editor'; method 'log/line' is"
        " listed with side 'editor'"
    ]
    import json

    table = json.loads(result.stdout)
    assert {"method": "log/line", "id": "log_line", "side": "editor", "kind": "notification",
            "params": "LogNotification", "result": None, "unstable": False} in table


def test_missing_file(cli, tmp_path):
    result, out = generate_into(cli, tmp_path, tmp_path / "nope.json")
    assert_refused(result, out, "nope.json: error: #: cannot read schema: No such file or directory")


@pytest.mark.parametrize("package", ["1abc", "a..b", "a-b", ""])
def test_bad_package_name(cli, tmp_path, package):
    out = tmp_path / "out"
    result = cli("generate", "--package", package, "--out", out)
    assert result.exit_code == 2 and not out.exists()
    assert f"error: --package {package!r} is not a dotted Python name" in result.stderr
