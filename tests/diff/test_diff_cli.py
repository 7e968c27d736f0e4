"""``acpgen diff`` from the command line: its three report forms (snapshot-tested), ``--fail-on``,
``--out`` against an output's recorded schema and names, regeneration keeping names, and bad input.

After an intended change of a report: `ACPGEN_UPDATE_SNAPSHOTS=1 make test`, then review and commit
the diff under tests/data/snapshots/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import CORPUS, DATA, docs, tree
from test_diff_kinds import (
    add_enum_value,
    add_required_field,
    add_variant,
    base,
    remove_optional_field,
    rename_def,
)

from acpgen.cli import main

SNAPSHOTS = DATA / "snapshots"
PKG = "acp_bindings"
V2_OLD = CORPUS / "v1.2.0--v2-schema.json"
V2_NEW = CORPUS / "v1.3.0--v2-schema.json"


def _snapshot(name: str, text: str) -> None:
    snapshot = SNAPSHOTS / name
    if os.environ.get("ACPGEN_UPDATE_SNAPSHOTS"):
        snapshot.write_text(text)
    assert text == snapshot.read_text()


@pytest.fixture
def pair(tmp_path, monkeypatch):
    """Two small schemas a few changes apart: a breaking one, a Python-only one, compatible ones;
    named from the working folder, as a user names them (the report names them so)."""
    monkeypatch.chdir(tmp_path)
    old = base()
    new = json.loads(json.dumps(old))
    for mutate in (add_required_field, add_variant, add_enum_value, remove_optional_field, rename_def):
        mutate(new)
    (tmp_path / "old.json").write_text(json.dumps(old, indent=2))
    (tmp_path / "new.json").write_text(json.dumps(new, indent=2))
    return Path("old.json"), Path("new.json")


def _one_error(result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "error: " in lines[0], result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_each_report_form_matches_its_snapshot(cli, pair, fmt):
    result = cli("diff", *pair, "--format", fmt)
    assert result.exit_code == 0, result.stderr
    _snapshot(f"diff-report.{ {'text': 'txt', 'json': 'json', 'markdown': 'md'}[fmt] }", result.stdout)
    assert result.stderr == (
        "acpgen diff: 6 change(s) (3 breaking, 2 python, 1 compatible) from old.json to new.json\n"
    )


def test_the_json_form_is_a_list_of_documented_records(cli, pair):
    records = json.loads(cli("diff", *pair, "--format", "json").stdout)
    assert {tuple(r) for r in records} == {("kind", "subject", "detail", "breaks", "tier", "python", "severity")}
    assert {"kind": "field-added-required", "subject": "PingRequest.cwd", "detail": "new required field: str",
            "breaks": "sender", "tier": "stable", "python": "PingRequest(cwd=...) is a required keyword",
            "severity": "breaking"} in records


def test_fail_on_sets_the_exit_status(cli, pair, tmp_path):
    old, new = pair
    assert cli("diff", old, new, "--fail-on", "breaking").exit_code == 1
    assert cli("diff", old, new, "--fail-on", "any").exit_code == 1
    assert cli("diff", old, old, "--fail-on", "any").exit_code == 0
    # a breaking change only in the unstable tier fails unstable-breaking, not breaking
    doc = base()
    doc["$defs"]["DebugRequest"]["required"] = ["depth"]
    unstable = tmp_path / "unstable.json"
    unstable.write_text(json.dumps(doc))
    assert cli("diff", old, unstable, "--fail-on", "breaking").exit_code == 0
    assert cli("diff", old, unstable, "--fail-on", "unstable-breaking").exit_code == 1
    assert cli("diff", old, unstable).exit_code == 0


def test_diff_out_compares_with_the_schema_the_output_was_generated_from(cli, tmp_path):
    out, schema = tmp_path / "out", tmp_path / "schema.json"
    shutil.copyfile(V2_OLD, schema)
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    assert (out / PKG / "acpgen-schema.json").read_bytes() == V2_OLD.read_bytes()
    shutil.copyfile(V2_NEW, schema)  # a new release replaces the file
    via_out = cli("diff", "--out", out, schema, "--format", "json")
    assert via_out.exit_code == 0, via_out.stderr
    assert json.loads(via_out.stdout) == json.loads(cli("diff", V2_OLD, V2_NEW, "--format", "json").stdout)
    # regenerating keeps ContentBlock's text variant as Text; only --renew-names would rename it
    assert {"kind": "name-renewable", "subject": "variants/ContentBlock/text",
            "detail": "recorded name Text, the rules give TextContentBlock", "breaks": "nobody", "tier": "stable",
            "python": "Text would be renamed to TextContentBlock by `acpgen generate --renew-names`",
            "severity": "info"} in json.loads(via_out.stdout)


def test_check_points_to_diff_when_the_schema_changed(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the project folder: the generate hint's paths are relative to it
    out, schema = tmp_path / "out", tmp_path / "schema.json"
    shutil.copyfile(V2_OLD, schema)
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    shutil.copyfile(V2_NEW, schema)
    result = cli("check", "--schema", schema, "--out", out)
    assert result.exit_code == 1
    summary = next(line for line in result.stderr.splitlines() if line.startswith("acpgen check: "))
    assert summary.endswith(
        f"; the schema is not the one {out.as_posix()}/{PKG} was generated from: run `acpgen diff --out"
        f" {out.as_posix()}/{PKG} --schema {schema.as_posix()}` to see what regenerating changes, then run"
        " `acpgen generate --schema schema.json --out out`"  # what was checked, not generated/
    )


def test_regenerating_keeps_names_and_renew_names_gives_the_rules_names(cli, tmp_path, monkeypatch):
    # fresh: the same options (a project of the same layout), where no names are recorded
    project, other = tmp_path / "project", tmp_path / "fresh"
    project.mkdir()
    other.mkdir()
    monkeypatch.chdir(project)  # the project folder: the headers' paths are relative to it
    out, schema = Path("out"), Path("schema.json")
    shutil.copyfile(V2_OLD, schema)
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    assert "\nclass Text(Model):" in (out / PKG / "models.py").read_text()
    shutil.copyfile(V2_NEW, schema)
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    kept = (out / PKG / "models.py").read_text()
    assert "\nclass Text(Model):" in kept and "class TextContentBlock" not in kept
    assert cli("check", "--schema", schema, "--out", out).exit_code == 0  # check keeps the names too
    monkeypatch.chdir(other)
    shutil.copyfile(V2_NEW, schema)
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    fresh = other / out
    monkeypatch.chdir(project)
    assert tree(out) != tree(fresh)
    assert cli("generate", "--schema", schema, "--out", out, "--renew-names").exit_code == 0
    assert "\nclass TextContentBlock(Model):" in (out / PKG / "models.py").read_text()
    assert tree(out) == tree(fresh)


def test_the_bundled_output_records_its_names_and_keeps_them():
    manifest = json.loads((DATA.parent.parent / "generated" / PKG / "acpgen-manifest.json").read_text())
    names = manifest["names"]
    assert names["variants/AuthMethod/terminal"] == "TerminalAuthMethod"
    assert names["defs/SessionNotification"] == "SessionNotification"
    assert names["fields/defs/SessionNotification#sessionId"] == "session_id"
    assert names["inline/AgentRequest/params"] == "AgentRequestParams"


def test_bad_input_is_one_line_and_exit_2(cli, pair, tmp_path):
    old, new = pair
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    missing = tmp_path / "missing.json"
    assert _one_error(cli("diff", missing, new)) == f"{missing}: error: cannot read schema: No such file or directory"
    assert _one_error(cli("diff", old, missing)) == f"{missing}: error: cannot read schema: No such file or directory"
    assert "not valid JSON" in _one_error(cli("diff", broken, new))
    assert "not valid JSON" in _one_error(cli("diff", old, broken))
    assert _one_error(cli("diff", old)) == "error: give two schema files (acpgen diff OLD NEW), or --out OUT [NEW]"
    assert "'--format'" in _one_error(cli("diff", old, new, "--format", "xml"))
    assert "'--fail-on'" in _one_error(cli("diff", old, new, "--fail-on", "never"))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _one_error(cli("diff", "--out", empty, new)) == (
        f"error: {empty.as_posix()}/{PKG}/acpgen-manifest.json: no acpgen manifest to take the old schema from; "
        "give OLD and NEW")
    assert "at most one schema" in _one_error(cli("diff", "--out", empty, old, new))
    # --schema, once per version as generate takes it: for a package (--out, or [tool.acpgen]'s)
    assert _one_error(cli("diff", "--schema", old, "--schema", new)) == (
        "error: --schema: with --out OUT, or in a project with [tool.acpgen]")
    assert _one_error(cli("diff", "--out", empty, "--schema", old, "--protocol-version", "1", "--schema", new)) == (
        "error: --protocol-version: give one per --schema, in order, or one for NEW")
    assert _one_error(cli("diff", "--out", empty, "--schema", old, new)) == "error: give NEW or --schema, not both"


def test_an_output_from_before_the_schema_copy_needs_old_and_new(cli, tmp_path, pair):
    old, new = pair
    out = tmp_path / "out"
    assert cli("generate", "--schema", old, "--out", out).exit_code == 0
    (out / PKG / "acpgen-schema.json").unlink()
    assert "no copy of the schema" in _one_error(cli("diff", "--out", out, new))
    (out / PKG / "acpgen-schema.json").write_text("{}")
    assert "is not the schema the manifest records" in _one_error(cli("diff", "--out", out, new))


def test_help_matches_snapshot():
    result = CliRunner().invoke(main, ["diff", "--help"], prog_name="acpgen", terminal_width=100)
    assert result.exit_code == 0
    _snapshot("help-diff.txt", result.output)


DIFF_EXAMPLE, ENVELOPE_EXAMPLE = docs.blocks("reference/cli.md", "", "`acpgen diff`")


def test_the_documented_example_is_what_diff_prints(cli):
    section = docs.section("reference/cli.md", "`acpgen diff`")
    example = DIFF_EXAMPLE.text
    command = re.search(r"\(`acpgen diff ([^`]+)`\.\)", section)
    assert command is not None
    args = [DATA.parent.parent / arg for arg in command.group(1).split()]
    result = cli("diff", *args)
    assert (result.exit_code, result.stdout) == (0, example)


def test_the_documented_envelope_line_is_what_diff_prints(cli):
    assert "covered by method-added" in ENVELOPE_EXAMPLE.text
    result = cli("diff", CORPUS / "v0.13.0--schema.json", CORPUS / "v0.13.3--schema.json", "--fail-on", "breaking")
    assert result.exit_code == 0
    assert ENVELOPE_EXAMPLE.text in result.stdout
