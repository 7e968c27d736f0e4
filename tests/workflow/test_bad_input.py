"""Bad schemas: a one-line diagnostic with a JSON pointer, exit status 2, nothing written. The
schema file is named as it was given (here: relative to the working folder, tmp_path)."""

from __future__ import annotations

import copy
import os

import pytest
from support import DATA, docs, mini_schema


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def generate_into(cli, tmp_path, schema_path):
    out = tmp_path / "out"
    result = cli("generate", "--schema", os.path.relpath(schema_path), "--out", out)
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
    # the same words on every Python: 3.13's json names the trailing comma, earlier ones do not
    assert_refused(result, out, "schema.json:2:25: error: not valid JSON: a trailing comma before '}'")


def test_a_truncated_release_names_its_line_and_column(cli, tmp_path):
    """A release cut short inside a string: file:line:column, as compilers say it, and Python's
    words without their trailing "at" (they once read "starting at at line 128")."""
    lines = (DATA / "corpus" / "v0.11.1--schema.json").read_text().splitlines(keepends=True)
    (tmp_path / "truncated.json").write_text("".join(lines[:127]) + lines[127][:lines[127].index("Requests") + 4])
    result, out = generate_into(cli, tmp_path, tmp_path / "truncated.json")
    assert_refused(result, out, result.stderr.strip())
    snapshot = DATA / "snapshots" / "error-truncated-schema.txt"
    if os.environ.get("ACPGEN_UPDATE_SNAPSHOTS"):
        snapshot.write_text(result.stderr)
    assert result.stderr == snapshot.read_text()


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
    result = cli("methods", "--schema", path.name, "--format", "json")
    assert result.exit_code == 0
    assert result.stderr.strip().splitlines() == [
        ("schema.json: warning: #/$defs/LogNotification/x-side: unknown x-side 'editor'; method 'log/line' is"
         " listed with side 'editor'")
    ]
    import json

    table = json.loads(result.stdout)
    assert {"method": "log/line", "id": "log_line", "py_name": "log_line", "side": "editor", "kind": "notification",
            "params": "LogNotification", "result": None, "unstable": False} in table


def test_missing_file(cli, tmp_path):
    result, out = generate_into(cli, tmp_path, tmp_path / "nope" / "schema.json")
    # the path as given, folder and all; no JSON pointer: the problem is the file, not a place in it
    assert result.stderr == "nope/schema.json: error: cannot read schema: No such file or directory\n"
    assert_refused(result, out, "nope/schema.json: error: cannot read schema: No such file or directory")


def test_a_file_that_is_not_text_is_named_as_given(cli, tmp_path):
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "acp.json").write_bytes(b"\xff\xfe{}")
    result, out = generate_into(cli, tmp_path, tmp_path / "schemas" / "acp.json")
    assert_refused(result, out, "schemas/acp.json: error: not UTF-8 text (byte 0)")


def test_an_absolute_path_is_shown_absolute(cli, tmp_path):
    result = cli("generate", "--schema", tmp_path / "nope.json", "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path / 'nope.json'}: error: cannot read schema: No such file or directory\n"


@pytest.mark.parametrize("package", ["1abc", "a..b", "a-b", ""])
def test_bad_package_name(cli, tmp_path, package):
    out = tmp_path / "out"
    result = cli("generate", "--package", package, "--out", out)
    assert result.exit_code == 2 and not out.exists()
    assert f"error: --package {package!r} is not a dotted Python name" in result.stderr


(DIAGNOSTICS_EXAMPLE,) = docs.blocks("reference/cli.md", "", "Diagnostics and exit status")


def test_the_documented_diagnostics_are_what_acpgen_prints(cli, tmp_path, write_schema):
    """The reference's example: both problems of one schema, reported together, each on its line."""
    doc = mini_schema()
    doc["$defs"]["PingAgainRequest"] = copy.deepcopy(doc["$defs"]["PingRequest"])
    doc["$defs"]["LogNotification"]["x-side"] = "editor"
    result, out = generate_into(cli, tmp_path, write_schema(doc))
    assert result.exit_code == 2 and not out.exists()
    assert sorted(result.stderr.splitlines()) == sorted(DIAGNOSTICS_EXAMPLE.text.splitlines())
