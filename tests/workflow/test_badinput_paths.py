"""A path in an error is the path as the user gave it: a flag's as typed, a ``[tool.acpgen]`` key's
as the file writes it; one line, exit 2, nothing written."""

from __future__ import annotations

import json

import pytest
from support import mini_schema, tree


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schema.json").write_text(json.dumps(mini_schema()))
    return tmp_path


def refused(result, root, before) -> str:
    """The one line the run refused with (exit 2, no traceback, nothing written)."""
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert tree(root) == before, "nothing may be written"
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_missing_names_file_keeps_its_folder(cli, here):
    before = tree(here)
    line = refused(cli("generate", "--schema", "schema.json", "--names", "conf/names.json"), here, before)
    assert line == "conf/names.json: error: cannot read names file: No such file or directory"


def test_a_names_file_that_is_not_json_keeps_its_folder(cli, here):
    (here / "conf").mkdir()
    (here / "conf" / "names.json").write_text("{")
    before = tree(here)
    line = refused(cli("generate", "--schema", "schema.json", "--names", "conf/names.json"), here, before)
    assert line.startswith("conf/names.json:1:2: error: names file is not valid JSON: ")


def test_an_unknown_names_file_key_is_pointed_at(cli, here):
    (here / "names.json").write_text('{"Nothing/here": "Name"}')
    before = tree(here)
    line = refused(cli("generate", "--schema", "schema.json", "--names", "names.json"), here, before)
    assert line == ("names.json: error: #/Nothing~1here: names file: 'Nothing/here' names no generated class"
                    " (keys look like 'SessionUpdate/tool_call')")


def test_a_schema_error_names_the_schema_as_given(cli, here):
    (here / "schemas").mkdir()
    (here / "schemas" / "acp.json").write_text(json.dumps({**mini_schema(), "$defs": {**mini_schema()["$defs"], "A": {"$ref": "#/$defs/B"}}}))
    before = tree(here)
    line = refused(cli("generate", "--schema", "schemas/acp.json"), here, before)
    assert line == "schemas/acp.json: error: #/$defs/A/$ref: unresolvable $ref '#/$defs/B'"


def test_a_parent_of_out_that_is_a_file(cli, here):
    (here / "build").write_text("a file\n")
    before = tree(here)
    line = refused(cli("generate", "--schema", "schema.json", "--out", "build/src"), here, before)
    assert line == "error: a parent of --out, build, is not a folder"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('out = "build"', "[tool.acpgen] out build is not a folder"),
        ('templates = "mine"', "[tool.acpgen] templates 'mine' is not a folder"),
        ('schema = "schemas/acp.json"', "[tool.acpgen] schema 'schemas/acp.json' is not a file"),
    ],
)
def test_a_config_path_is_shown_as_the_file_writes_it(cli, here, monkeypatch, table, message):
    (here / "build").write_text("a file\n")
    (here / "pyproject.toml").write_text(f"[tool.acpgen]\n{table}\n")
    (here / "sub").mkdir()
    monkeypatch.chdir(here / "sub")
    before = tree(here)
    for command in ("generate", "check"):
        assert refused(cli(command), here, before) == f"error: ../pyproject.toml: {message}"


def test_a_broken_schema_from_the_config_is_named_from_the_working_folder(cli, here, monkeypatch):
    (here / "schemas").mkdir()
    (here / "schemas" / "acp.json").write_text("{")
    (here / "pyproject.toml").write_text('[tool.acpgen]\nschema = "schemas/acp.json"\n')
    (here / "sub").mkdir()
    monkeypatch.chdir(here / "sub")
    before = tree(here)
    line = refused(cli("generate"), here, before)
    assert line.startswith("../schemas/acp.json:1:2: error: not valid JSON: ")
