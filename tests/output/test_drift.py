"""`acpgen check`: exit 0 when the output is current, 1 with a unified diff when it drifted, 2 on errors."""

from __future__ import annotations

import json
from pathlib import Path

from support import DATA, ROOT, mini_schema, one_error_line, tree

from acpgen.output import formatting, inputs
from acpgen.output.reuse import reuse_from_output
from acpgen.pipeline import Options, generate
from acpgen.render.modules import BY_NAME

PKG = "acp_bindings"


def test_drift_is_reported_file_by_file_and_regenerating_clears_it(cli, tmp_path, write_schema, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the project folder: the generate hint's paths are relative to it
    schema, out = write_schema(mini_schema()), tmp_path / "out"
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    clean = cli("check", "--schema", schema, "--out", out)
    assert (clean.exit_code, clean.stdout) == (0, "")
    assert clean.stderr == f"acpgen check: {out}/{PKG} is up to date\n"

    methods = out / PKG / "methods.py"
    data = bytearray(methods.read_bytes())
    at = data.index(b"PROTOCOL_VERSION = 1")
    data[at + len("PROTOCOL_VERSION = ")] = ord("7")  # one byte
    methods.write_bytes(bytes(data))
    (out / PKG / "__init__.py").unlink()
    stale = out / PKG / "old_module.py"
    stale.write_text("# left over from an earlier schema\n")
    # A file the manifest lists but generation no longer writes is stale: record it as owned.
    manifest = out / PKG / "acpgen-manifest.json"
    manifest.write_text(manifest.read_text().replace(
        '"files": {', '"files": {\n    "acp_bindings/old_module.py": {"render_sha256": "", "sha256": ""},', 1))

    result = cli("check", "--schema", schema, "--out", out)
    assert result.exit_code == 1
    diff = result.stdout
    assert f"--- {out.as_posix()}/{PKG}/methods.py (on disk)\n+++ {out.as_posix()}/{PKG}/methods.py (generated)\n" in diff
    assert "\n-PROTOCOL_VERSION = 7\n+PROTOCOL_VERSION = 1\n" in diff
    assert f"--- {out.as_posix()}/{PKG}/__init__.py (missing)\n" in diff
    assert "\n+from .methods import METHODS, PROTOCOL_VERSION, MethodInfo\n" in diff
    assert f"+++ {out.as_posix()}/{PKG}/old_module.py (stale: no longer generated)\n" in diff
    assert "\n-# left over from an earlier schema\n" in diff
    assert f"--- {out.as_posix()}/{PKG}/acpgen-manifest.json (on disk)\n" in diff
    verdict = ("acpgen check: 4 file(s) differ from what acpgen generate would write (2 changed, 1 missing, 1 stale);"
               " run `acpgen generate --schema schema.json --out out`")
    assert result.stderr.splitlines() == [
        verdict,  # first, and again last: a log's tail shows it below the diffs
        f"  missing: {out.as_posix()}/{PKG}/__init__.py",
        f"  changed: {out.as_posix()}/{PKG}/acpgen-manifest.json",
        f"  changed: {out.as_posix()}/{PKG}/methods.py",
        f"  stale: {out.as_posix()}/{PKG}/old_module.py",
        verdict,
    ]

    regenerated = cli("generate", "--schema", schema, "--out", out)
    assert regenerated.exit_code == 0
    total = len(generate(Options(schema=schema)).files) + 1  # and the manifest
    assert regenerated.stderr == f"acpgen: wrote 3 of {total} files, removed 1 stale under {out}\n"
    assert not stale.exists()
    assert cli("check", "--schema", schema, "--out", out).exit_code == 0


def test_a_schema_change_shows_up_in_the_module_it_changes(cli, tmp_path, write_schema):
    doc = mini_schema()
    schema, out = write_schema(doc), tmp_path / "out"
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    doc["$defs"]["LogNotification"]["properties"]["level"] = {"type": "string"}  # a new optional field
    doc["$defs"]["StatusRequest"] = {
        "type": "object", "description": "Report status.", "properties": {}, "x-method": "status", "x-side": "agent",
    }
    write_schema(doc)
    result = cli("check", "--schema", schema, "--out", out)
    assert result.exit_code == 1
    changed = {line.split(": ", 1)[1] for line in result.stderr.splitlines()[1:-1]}  # the verdict first and last
    # Every module's header names the schema's sha256, so every file but py.typed changes.
    assert changed == {p.as_posix() for p in (out / PKG).rglob("*") if p.is_file() and p.name != "py.typed"}
    # Every header names the schema's new sha256; the new method lands in the method table.
    assert "\n+        method=\"status\",\n" in result.stdout


def test_a_file_acpgen_did_not_write_is_named_and_fails_only_a_strict_check(cli, tmp_path, write_schema, monkeypatch):
    """A file in the package folder that the manifest does not list is named on a line of its own
    (exit 0; 1 with --strict or [tool.acpgen] strict); one outside the package folder is none of
    check's business, and neither is the bytecode cache."""
    monkeypatch.chdir(tmp_path)
    schema, out = write_schema(mini_schema()), tmp_path / "out"
    cli("generate", "--schema", schema, "--out", out)
    (out / PKG / "helpers.py").write_text("# mine\n")
    (out / PKG / "__pycache__").mkdir()
    (out / "README.md").write_text("mine\n")
    named = (f"acpgen check: {out.as_posix()}/{PKG}/helpers.py is in the package folder but acpgen did not write it"
             " (its manifest does not list it)")
    result = cli("check", "--schema", schema, "--out", out)
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [f"acpgen check: {out.as_posix()}/{PKG} is up to date",
                                          named + "; --strict fails on it"]
    strict = cli("check", "--schema", schema, "--out", out, "--strict")
    assert strict.exit_code == 1 and strict.stderr.splitlines()[1:] == [
        named, (f"acpgen check: {out.as_posix()}/{PKG}: 1 file(s) acpgen did not write, and --strict fails on them:"
        " remove them, or move them out of the package folder")]
    (tmp_path / "pyproject.toml").write_text("[tool.acpgen]\nstrict = true\n")
    assert cli("check", "--schema", schema, "--out", out).exit_code == 1
    assert cli("check", "--schema", schema, "--out", out, "--no-strict").exit_code == 0
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\nstrict = "yes"\n')
    assert one_error_line(cli("check", "--schema", schema, "--out", out)) == (
        "error: pyproject.toml: [tool.acpgen] strict must be true or false, found 'yes'")


def test_check_tells_from_the_manifest_alone_when_it_need_not_render(cli, tmp_path, write_schema, monkeypatch):
    """Inputs and files as the manifest records them: up to date, nothing rendered. Without the
    renderer (the pydantic flavour without datamodel-code-generator) drift is still named: an
    edited file by its digest, a changed schema or acpgen by the inputs."""
    monkeypatch.chdir(tmp_path)
    doc = mini_schema()
    schema, out = write_schema(doc), Path("out")
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0

    def refuse(run, *args):
        raise AssertionError("rendered")

    monkeypatch.setattr("acpgen.cli.checking.render", refuse)
    assert cli("check", "--schema", schema, "--out", out).stderr == f"acpgen check: out/{PKG} is up to date\n"
    hint = "--models pydantic needs datamodel-code-generator: python -m pip install 'datamodel-code-generator==0.89.*'"
    monkeypatch.setattr("acpgen.cli.checking.missing_tool", lambda options: hint)
    methods = out / PKG / "methods.py"
    edited = methods.read_bytes()
    methods.write_bytes(edited + b"# edited\n")
    result = cli("check", "--schema", schema, "--out", out)
    verdict = ("acpgen check: 1 file(s) differ from what acpgen generate would write (1 changed); showing the diff,"
               " and regenerating, needs datamodel-code-generator: python -m pip install"
               " 'datamodel-code-generator==0.89.*'; then run `acpgen generate --schema schema.json --out out`")
    assert (result.exit_code, result.stderr.splitlines()) == (1, [verdict, f"  changed: out/{PKG}/methods.py", verdict])
    methods.write_bytes(edited)
    said = doc["$defs"]["PingRequest"].get("description")
    doc["$defs"]["PingRequest"]["description"] = "Ping, said otherwise."
    write_schema(doc)
    result = cli("check", "--schema", schema, "--out", out)
    assert (result.exit_code, result.stderr) == (1, (
        f"acpgen check: out/{PKG} is out of date: the schema schema.json changed since it was generated; regenerating"
        " it, and showing what changes, needs datamodel-code-generator: python -m pip install"
        " 'datamodel-code-generator==0.89.*'; then run `acpgen generate --schema schema.json --out out`\n"))
    doc["$defs"]["PingRequest"]["description"] = said
    write_schema(doc if said is not None else mini_schema())
    assert cli("check", "--schema", schema, "--out", out).exit_code == 0
    monkeypatch.setattr(inputs, "acpgen_digest", lambda: "another acpgen")
    assert "is out of date: acpgen's code changed since" in cli("check", "--schema", schema, "--out", out).stderr


def test_an_edited_manifest_or_another_acpgen_makes_check_render(cli, tmp_path, write_schema, monkeypatch):
    """The manifest's seal: a names lock edited by hand is not taken on trust (rendering with it
    shows what regenerating would write). Another acpgen that makes the same files: up to date,
    said once, until generate records it."""
    monkeypatch.chdir(tmp_path)
    schema, out = write_schema(mini_schema()), Path("out")
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    monkeypatch.setattr(inputs, "acpgen_digest", lambda: "another acpgen")
    result = cli("check", "--schema", schema, "--out", out)
    assert result.exit_code == 0 and result.stderr.splitlines()[1] == (
        f"acpgen check: out/{PKG}'s manifest records another acpgen or other inputs, that make the same files:"
        " `acpgen generate --schema schema.json --out out` records these, and checks need not render")
    assert cli("generate", "--schema", schema, "--out", out).stderr.startswith("acpgen: wrote 1 of ")
    assert cli("check", "--schema", schema, "--out", out).stderr == f"acpgen check: out/{PKG} is up to date\n"
    manifest = out / PKG / "acpgen-manifest.json"
    manifest.write_text(manifest.read_text().replace('"PingRequest"', '"PingQuery"'))
    result = cli("check", "--schema", schema, "--out", out)
    assert result.exit_code == 1 and '\n+    "PingQuery",\n' in result.stdout


def test_without_a_manifest_check_compares_every_file_generate_would_write(cli, tmp_path, write_schema):
    """What acpgen owns does not narrow check: with the manifest gone, a changed module is drift
    (and the manifest is missing) while the user's own file is still ignored; generate, owning
    nothing there, refuses to overwrite."""
    schema, out = write_schema(mini_schema()), tmp_path / "out"
    cli("generate", "--schema", schema, "--out", out)
    (out / PKG / "acpgen-manifest.json").unlink()
    (out / PKG / "helpers.py").write_text("# mine\n")
    methods = out / PKG / "methods.py"
    methods.write_text(methods.read_text() + "# edited\n")
    result = cli("check", "--schema", schema, "--out", out, "--summary")
    assert result.exit_code == 1
    summary = result.stderr.splitlines()
    assert any(line.strip().startswith("missing:") and line.endswith("acpgen-manifest.json") for line in summary)
    assert any(line.strip().startswith("changed:") and line.endswith("methods.py") for line in summary)
    assert not any("helpers.py" in line for line in summary)
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 2


def test_missing_output_folder_is_drift_and_a_file_is_an_error(cli, tmp_path, write_schema):
    schema = write_schema(mini_schema())
    result = cli("check", "--schema", schema, "--out", tmp_path / "nowhere")
    total = len(generate(Options(schema=schema)).files) + 1  # and the manifest
    assert result.exit_code == 1 and f"({total} missing)" in result.stderr.splitlines()[0]
    (tmp_path / "file").write_text("x")
    line = one_error_line(cli("check", "--schema", schema, "--out", tmp_path / "file"))
    assert line == f"error: --out {tmp_path / 'file'} is not a folder"


def test_schema_error_exits_2(cli, tmp_path, write_schema):
    schema = write_schema("{")
    result = cli("check", "--schema", schema, "--out", tmp_path / "out")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"{schema}:1:2: error: not valid JSON")


def test_check_on_an_up_to_date_tree_reuses_it_and_still_sees_every_byte(cli, tmp_path, write_schema, monkeypatch):
    schema, out = write_schema(mini_schema()), tmp_path / "out"
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    before = tree(out)

    def no_black(source, filename="<generated>", why=""):
        raise AssertionError(f"black ran on {filename}")

    # Every file on disk is the output for the same render: nothing is laid out, parsed,
    # formatted or validated again.
    monkeypatch.setattr(formatting, "format_python", no_black)
    monkeypatch.setattr("acpgen.output.reuse.format_python", no_black)
    monkeypatch.setattr("acpgen.pipeline.ensure_parses", no_black)
    monkeypatch.setattr("acpgen.render.longlines.relayout", no_black)
    monkeypatch.setattr("acpgen.schema.loader.validate_meta_schema", no_black)
    monkeypatch.setattr(inputs, "acpgen_digest", lambda: "another acpgen")  # the check must render
    assert cli("check", "--schema", schema, "--out", out).exit_code == 0
    # A changed file cannot be reused: it is formatted afresh, and the drift is reported.
    monkeypatch.undo()
    methods = out / PKG / "methods.py"
    methods.write_bytes(methods.read_bytes().replace(b"    unstable: bool\n", b"    unstable: int\n"))
    result = cli("check", "--schema", schema, "--out", out)
    assert result.exit_code == 1 and "\n-    unstable: int\n+    unstable: bool\n" in result.stdout
    assert tree(out) == {**before, f"{PKG}/methods.py": methods.read_bytes()}, "check never writes"


def test_reuse_gives_the_same_bytes_as_a_fresh_run(tmp_path, cli, write_schema):
    schema, out = write_schema(mini_schema()), tmp_path / "out"
    cli("generate", "--schema", schema, "--out", out)
    reused = generate(Options(schema=schema), reuse_from_output(out, PKG))
    assert reused.files == generate(Options(schema=schema)).files and reused.renders


def test_this_repository_generated_folder_is_current(cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = cli("check")
    assert result.exit_code == 0, result.stdout[:2000]


def test_the_bundled_schema_digest_counts_as_validated_because_that_file_is_valid():
    from acpgen.schema.bundled import bundled_schema, bundled_schema_sha256
    from acpgen.schema.loader import load_schema

    assert load_schema(bundled_schema()).sha256 == bundled_schema_sha256()  # full meta-schema validation
    assert bundled_schema_sha256() in reuse_from_output(ROOT / "nowhere", PKG).validated_schemas


def test_a_user_schema_is_validated_even_with_a_manifest_from_another_schema(cli, tmp_path, write_schema):
    doc = mini_schema()
    schema, out = write_schema(doc), tmp_path / "out"
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    doc["$defs"]["PingRequest"]["required"] = "sessionId"  # invalid under the meta-schema
    write_schema(doc)
    result = cli("check", "--schema", schema, "--out", out)
    assert result.exit_code == 2 and "#/$defs/PingRequest/required: meta-schema:" in result.stderr


def test_check_of_a_package_of_several_versions_reuses_each_versions_modules(cli, tmp_path, monkeypatch):
    """Each version's schema, whose copy the package holds, counts as validated, and each module
    made from the same render is reused: neither relocated, laid out, parsed nor validated again.
    An edited module of a version is still drift."""
    schemas = [DATA / "sdk-schemas" / "v1-schema.json", DATA / "sdk-schemas" / "v2-schema.json"]
    args = [a for s in schemas for a in ("--schema", s)] + ["--out", tmp_path / "out"]
    assert cli("generate", *args).exit_code == 0

    def refuse(*args, **kwargs):
        raise AssertionError("done again")

    for done_again in ("acpgen.schema.loader.validate_meta_schema", "acpgen.render.longlines.relayout",
                       "acpgen.pipeline.ensure_parses", "acpgen.render.relocate.import_from_parent"):
        monkeypatch.setattr(done_again, refuse)
    monkeypatch.setattr(inputs, "acpgen_digest", lambda: "another acpgen")  # the check must render
    assert cli("check", *args).exit_code == 0
    monkeypatch.undo()
    agent = tmp_path / "out" / PKG / "v2" / "agent.py"
    rpc = BY_NAME["_rpc.py"].dotted
    agent.write_text(agent.read_text().replace(f"from ..{rpc} import RequestError", f"from .{rpc} import RequestError", 1))
    result = cli("check", *args)
    assert result.exit_code == 1 and f"+from ..{rpc} import RequestError" in result.stdout


def test_a_module_laid_out_by_other_code_is_not_reused(cli, tmp_path, write_schema, monkeypatch):
    """A render names the code that makes a module of what its template wrote: an earlier run's
    module made by other code (a checkout of acpgen that changed, under the same version) is
    made afresh, and its manifest is drift."""
    from acpgen import pipeline
    from acpgen.render import longlines

    schema, out = write_schema(mini_schema()), tmp_path / "out"
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    laid_out: list[str] = []
    relayout = longlines.relayout
    monkeypatch.setattr(longlines, "relayout", lambda text: laid_out.append(text) or relayout(text))
    assert cli("check", "--schema", schema, "--out", out).exit_code == 0 and laid_out == []
    monkeypatch.setattr(pipeline, "_after_the_template", lambda: "other code")
    monkeypatch.setattr(inputs, "acpgen_digest", lambda: "other code")  # what changing acpgen's files does
    result = cli("check", "--schema", schema, "--out", out)
    assert laid_out and result.exit_code == 1 and f"{PKG}/acpgen-manifest.json" in result.stdout + result.stderr


def test_without_the_renderer_an_edited_manifest_is_drift_and_an_old_one_an_error(cli, tmp_path, write_schema,
                                                                                  monkeypatch):
    monkeypatch.chdir(tmp_path)
    schema, out = write_schema(mini_schema()), Path("out")
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    hint = "--models pydantic needs datamodel-code-generator: python -m pip install 'datamodel-code-generator==0.89.*'"
    monkeypatch.setattr("acpgen.cli.checking.missing_tool", lambda options: hint)
    manifest = out / PKG / "acpgen-manifest.json"
    written = manifest.read_text()
    manifest.write_text(written.replace('"PingRequest"', '"PingQuery"'))
    edited = cli("check", "--schema", schema, "--out", out)
    assert (edited.exit_code, edited.stderr) == (1, (
        f"acpgen check: out/{PKG}'s manifest is not as acpgen wrote it (edited by hand?); showing what differs, and"
        " regenerating, needs datamodel-code-generator: python -m pip install 'datamodel-code-generator==0.89.*';"
        " then run `acpgen generate --schema schema.json --out out`\n"))
    document = json.loads(written)
    del document["inputs"]  # as an earlier acpgen wrote it
    manifest.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    assert one_error_line(cli("check", "--schema", schema, "--out", out)).startswith(
        f"error: out/{PKG}'s manifest records no inputs (an earlier acpgen wrote it): checking it means rendering it,"
        " which needs datamodel-code-generator")
    never = cli("check", "--schema", schema, "--out", out, "--package", "never.made")
    assert (never.exit_code, never.stderr) == (1, (
        "acpgen check: out/never/made does not exist; run `acpgen generate --schema schema.json --out out --package"
        " never.made` (it needs datamodel-code-generator: python -m pip install 'datamodel-code-generator==0.89.*')\n"))


def test_a_changed_templates_folder_or_names_file_is_a_changed_input(cli, tmp_path, write_schema, monkeypatch):
    monkeypatch.chdir(tmp_path)
    schema, out = write_schema(mini_schema()), Path("out")
    (tmp_path / "tpl").mkdir()
    (tmp_path / "names.json").write_text("{}\n")
    args = ["--schema", schema, "--out", out, "--templates", "tpl", "--names", "names.json"]
    assert cli("generate", *args).exit_code == 0
    hint = "--models pydantic needs datamodel-code-generator: python -m pip install 'datamodel-code-generator==0.89.*'"
    monkeypatch.setattr("acpgen.cli.checking.missing_tool", lambda options: hint)
    assert cli("check", "--out", out).exit_code == 0
    (tmp_path / "tpl" / "agent.py.jinja").write_text("# mine\n")
    (tmp_path / "names.json").write_text('{"types": {}}\n')
    result = cli("check", "--out", out)
    assert result.exit_code == 1 and result.stderr.startswith(
        f"acpgen check: out/{PKG} is out of date: the templates folder and the names file changed since it was generated;")
