"""A vendored package knows how it was made: its manifest records the options, its header's command
regenerates exactly it from the project folder, and ``acpgen check`` uses the recorded options or
names the one that differs."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from support import docs, mini_schema, one_error_line, tree

from acpgen.output.manifest import ManifestError, parse_manifest
from acpgen.output.recipe import Recipe, project_path

COMMAND = "acpgen generate --schema schema/acp.json --out src --package myapp._acp --side agent"


@pytest.fixture
def project(tmp_path, monkeypatch, cli):
    """A project without [tool.acpgen], its agent package generated into src/ from its folder."""
    root = tmp_path / "project"
    (root / "schema").mkdir(parents=True)
    (root / "schema" / "acp.json").write_text(json.dumps(mini_schema(), indent=2))
    monkeypatch.chdir(root)
    result = cli(*shlex.split(COMMAND)[1:])
    assert result.exit_code == 0, result.stderr
    return root


def package_dir(root):
    return root / "src" / "myapp" / "_acp"


def header_command(root) -> str:
    line = (package_dir(root) / "__init__.py").read_text().splitlines()[1]
    return line.split("`")[1]


def test_the_header_gives_every_option_out_included(project):
    assert header_command(project) == COMMAND


def test_the_manifest_records_the_options(project):
    manifest = json.loads((package_dir(project) / "acpgen-manifest.json").read_text())
    assert manifest["options"] == {
        "schema": "schema/acp.json", "out": "src", "package": "myapp._acp", "side": "agent",
        "stable-only": False, "templates": None, "names": None, "models": "dataclasses", "protocol-version": None,
    }


def test_the_header_command_run_verbatim_regenerates_that_package(cli, project):
    before = tree(project)
    (package_dir(project) / "methods.py").write_text("# edited\n")
    result = cli(*shlex.split(header_command(project))[1:])
    assert result.exit_code == 0, result.stderr
    assert "wrote 1 of" in result.stderr
    assert tree(project) == before  # put back, and no second copy in generated/
    assert not (project / "generated").exists()


def test_the_bytes_do_not_depend_on_where_the_project_is(cli, project, tmp_path, monkeypatch):
    elsewhere = tmp_path / "deeper" / "copy"
    elsewhere.mkdir(parents=True)
    (elsewhere / "schema").mkdir()
    shutil.copy(project / "schema" / "acp.json", elsewhere / "schema" / "acp.json")
    monkeypatch.chdir(elsewhere)
    assert cli(*shlex.split(COMMAND)[1:]).exit_code == 0
    assert tree(elsewhere / "src") == tree(project / "src")
    for text in tree(project / "src").values():
        assert str(tmp_path).encode() not in text


def test_a_path_outside_the_project_is_relative_to_it(cli, project, tmp_path):
    shared = tmp_path / "shared.json"
    shutil.copy(project / "schema" / "acp.json", shared)
    assert cli("generate", "--schema", shared, "--out", "src", "--package", "myapp._acp").exit_code == 0
    assert header_command(project) == "acpgen generate --schema ../shared.json --out src --package myapp._acp"
    assert cli(*shlex.split(header_command(project))[1:]).stderr.endswith(" files up to date\n")


def test_a_path_sharing_only_the_root_with_the_project_is_shown_by_its_name():
    assert project_path(Path("/tmp/specs/acp.json"), Path("/home/me/project")) == "acp.json"
    assert project_path(Path("/home/me/specs/acp.json"), Path("/home/me/project")) == "../specs/acp.json"
    assert project_path(Path("/home/me/project/src"), Path("/home/me/project")) == "src"


@pytest.mark.parametrize(
    "args",
    [
        (),  # from the project: the package found below the working folder
        ("--out", "src/myapp/_acp"),  # the package's own folder
        ("--out", "src", "--package", "myapp._acp"),
        shlex.split(COMMAND)[2:],  # every option, as the header gives them
    ],
    ids=["nothing", "package-folder", "out-and-package", "every-option"],
)
def test_check_uses_the_recorded_options(cli, project, args):
    result = cli("check", *args)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "acpgen check: src/myapp/_acp is up to date\n"


def test_check_from_another_folder_finds_the_project_through_the_package(cli, project, monkeypatch):
    monkeypatch.chdir(project / "src")
    result = cli("check", "--out", "myapp/_acp")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "acpgen check: myapp/_acp is up to date\n"  # seen from src


def test_check_names_each_option_that_differs(cli, project):
    result = cli("check", "--out", "src/myapp/_acp", "--side", "client", "--stable-only", "--models", "dataclasses")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "acpgen check: --side is 'client' here but the package was generated with --side agent",
        "acpgen check: --stable-only is given here but the package was generated with --all-methods",
        (f"acpgen check: src/myapp/_acp was generated with other options (`{COMMAND}`): check it without the"
         " ones above to keep those, or regenerate it with these: `acpgen generate --schema schema/acp.json"
         " --out src --package myapp._acp --side client --stable-only`"),
    ]


def test_check_names_a_schema_that_is_not_the_recorded_one(cli, project):
    shutil.copy(project / "schema" / "acp.json", project / "other.json")
    result = cli("check", "--out", "src", "--package", "myapp._acp", "--schema", "other.json")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "acpgen check: --schema is 'other.json' here but the package was generated with --schema schema/acp.json"
    )


def test_check_names_a_config_key_that_differs(cli, project):
    (project / "pyproject.toml").write_text('[tool.acpgen]\nout = "src"\npackage = "myapp._acp"\nside = "client"\n')
    result = cli("check")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "acpgen check: --side is 'client' here (pyproject.toml: [tool.acpgen] side) but the package was generated"
        " with --side agent"
    )


def test_check_says_when_the_package_was_moved(cli, project):
    shutil.move(project / "src", project / "lib")
    result = cli("check", "--out", "lib/myapp/_acp")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "acpgen check: --out names the package folder lib/myapp/_acp but the package was generated with"
        " --out src --package myapp._acp"
    )


def test_check_with_nothing_checks_every_package_below(cli, project):
    assert cli("generate", "--schema", "schema/acp.json", "--out", "other", "--side", "client").exit_code == 0
    (project / "other" / "acp_bindings" / "client.py").write_text("# edited\n")
    result = cli("check", "--summary")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("acpgen check: 1 file(s) differ") and lines[1] == "  changed: other/acp_bindings/client.py"
    assert lines[2] == lines[0]  # the verdict again, after the files
    assert lines[3:] == ["acpgen check: src/myapp/_acp is up to date", "acpgen check: 1 of 2 packages differ: other/acp_bindings"]


def test_a_stray_generated_folder_does_not_hide_the_vendored_package(cli, project):
    """The issue's case: a bare generate left generated/ beside the vendored package, whose
    models.py was then edited. A bare check checks both and fails naming the vendored one."""
    assert cli("generate", "--schema", "schema/acp.json").exit_code == 0
    models = package_dir(project) / "models.py"
    models.write_text(models.read_text() + "# edited\n")
    result = cli("check", "--summary")
    assert result.exit_code == 1
    verdict = f"acpgen check: 1 file(s) differ from what acpgen generate would write (1 changed); run `{COMMAND}`"
    assert result.stderr.splitlines() == [
        "acpgen check: generated/acp_bindings is up to date",
        verdict,
        "  changed: src/myapp/_acp/models.py",
        verdict,
        "acpgen check: 1 of 2 packages differ: src/myapp/_acp",
    ]


def test_check_skips_what_is_not_the_projects_own(cli, project):
    """Copies of the package (edited) in .git, a virtual environment (pyvenv.cfg, .venv, venv) and
    node_modules are not checked; nothing found at all is an error, not "up to date"."""
    models = package_dir(project) / "models.py"
    for where in (".git/x", ".venv/lib", "venv/lib", "env/lib", "node_modules/x"):
        copy = project / where / "src"
        shutil.copytree(project / "src", copy)
        (copy / "myapp" / "_acp" / "models.py").write_text("# edited\n")
    (project / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    result = cli("check")
    assert (result.exit_code, result.stderr) == (0, "acpgen check: src/myapp/_acp is up to date\n")
    shutil.rmtree(project / "src")
    line = one_error_line(cli("check"))
    assert line.startswith("error: no acpgen package below this folder") and line.endswith(
        "give --out, or generate one with `acpgen generate`")
    assert models.parent.exists() is False


def test_check_with_tool_acpgen_names_the_packages_it_does_not_configure(cli, project):
    assert cli("generate", "--schema", "schema/acp.json", "--out", "other", "--side", "client").exit_code == 0
    (project / "pyproject.toml").write_text(
        '[tool.acpgen]\nschema = "schema/acp.json"\nout = "src"\npackage = "myapp._acp"\nside = "agent"\n')
    result = cli("check")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        ("acpgen check: other/acp_bindings is an acpgen package [tool.acpgen] does not configure (src/myapp/_acp);"
         " not checked"),
        "acpgen check: src/myapp/_acp is up to date",
    ]


@pytest.mark.parametrize("out", ["src", "src/myapp/_acp"], ids=["holding-folder", "package-folder"])
def test_check_and_diff_take_the_package_folder_or_the_folder_holding_it(cli, project, out):
    """--out as check and diff take it: the recorded --package is used, and diff's NEW is the
    schema file the package records (here replaced by a newer one)."""
    assert cli("check", "--out", out).stderr == "acpgen check: src/myapp/_acp is up to date\n"
    doc = json.loads((project / "schema" / "acp.json").read_text())
    doc["$defs"]["Extra"] = {"type": "object", "properties": {"note": {"type": "string"}}}
    (project / "schema" / "acp.json").write_text(json.dumps(doc, indent=2))
    result = cli("diff", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "acpgen diff: 1 change(s) (1 compatible) from src/myapp/_acp (acpgen-schema.json) to schema/acp.json\n"
    assert cli("diff", "--out", out, "schema/acp.json").stdout == result.stdout


def test_hints_name_acpgen_as_it_was_run_and_change_to_the_project_folder(cli, project, monkeypatch):
    """Checked from the folder above the project, with acpgen run by a path that is not on PATH
    (as ``.venv/bin/acpgen`` is): the diff runs from here, the generate in the project folder."""
    monkeypatch.chdir(project.parent)
    monkeypatch.setattr(sys, "argv", [str(project.parent / "env" / "bin" / "acpgen")])
    doc = json.loads((project / "schema" / "acp.json").read_text())
    (project / "schema" / "acp.json").write_text(json.dumps({**doc, "description": "a newer release"}))
    result = cli("check", "--summary")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0].endswith(
        "; the schema is not the one project/src/myapp/_acp was generated from: run `env/bin/acpgen diff --out"
        " project/src/myapp/_acp --schema project/schema/acp.json` to see what regenerating changes, then run `cd project"
        " && ../env/bin/acpgen generate --schema schema/acp.json --out src --package myapp._acp --side agent`")


def test_the_generate_hint_gives_what_tool_acpgen_does_not(cli, project):
    """With [tool.acpgen] naming a schema that is gone, check --schema still checks, and its hint
    gives the flag the table lacks (rather than failing on the table while writing the hint)."""
    (project / "pyproject.toml").write_text(
        '[tool.acpgen]\nschema = "schema/gone.json"\nout = "src"\npackage = "myapp._acp"\nside = "agent"\n')
    models = package_dir(project) / "models.py"
    models.write_text(models.read_text() + "# edited\n")
    result = cli("check", "--summary", "--schema", "schema/acp.json")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0].endswith("; run `acpgen generate --schema schema/acp.json`")


(GENERATE_EXAMPLE,) = docs.blocks("reference/cli.md", "sh", "`acpgen generate`")
(OPTIONS_RECORD,) = docs.blocks("reference/cli.md", "json", "`acpgen generate`")
(CHECK_EXAMPLES,) = docs.blocks("reference/cli.md", "sh", "`acpgen check`")
(CHECK_SAYS,) = docs.blocks("reference/cli.md", "", "`acpgen check`")


def test_the_documented_generate_example_is_this_project(project):
    block = GENERATE_EXAMPLE.text
    assert block.splitlines()[0] == COMMAND
    assert f"`{header_command(project)}`" in block
    manifest = json.loads((package_dir(project) / "acpgen-manifest.json").read_text())
    assert json.loads("{" + OPTIONS_RECORD.text + "}")["options"] == manifest["options"]


def test_the_documented_check_examples_work_as_written(cli, project):
    lines = [line.split("#")[0].strip() for line in CHECK_EXAMPLES.text.splitlines()]
    assert len(lines) == 5
    for line in lines:
        result = cli(*shlex.split(line)[1:])
        assert result.exit_code == 0, (line, result.stderr)
    said = CHECK_SAYS.text
    assert said.startswith("acpgen check: ")
    result = cli("check", "--out", "src/myapp/_acp", "--side", "client", "--stable-only")
    assert result.exit_code == 1 and result.stderr == said


def test_check_of_a_package_folder_beside_the_project(cli, project, tmp_path):
    assert cli("generate", "--schema", "schema/acp.json", "--out", "../vendor", "--package", "beside").exit_code == 0
    assert (tmp_path / "vendor" / "beside" / "__init__.py").read_text().splitlines()[1] == (
        "# Do not edit: regenerate with `acpgen generate --schema schema/acp.json --out ../vendor --package beside`."
    )
    result = cli("check", "--out", "../vendor/beside")
    assert result.exit_code == 0, result.stderr


def test_every_path_option_is_recorded_relative_to_the_project(cli, project, monkeypatch):
    (project / "conf").mkdir()
    (project / "conf" / "names.json").write_text("{}")
    (project / "conf" / "templates").mkdir()
    args = ["--schema", "schema/acp.json", "--out", "src", "--package", "myapp._acp", "--stable-only",
            "--templates", "conf/templates", "--names", "conf/names.json"]
    assert cli("generate", *args).exit_code == 0
    command = "acpgen generate " + " ".join(args)
    assert header_command(project) == command
    manifest = parse_manifest((package_dir(project) / "acpgen-manifest.json").read_text())
    assert manifest.options is not None and manifest.options.command == command
    assert parse_manifest(manifest.to_text()) == manifest
    before = tree(project)
    monkeypatch.chdir(project / "conf")  # check finds the recorded paths from the package folder
    result = cli("check", "--out", "../src/myapp/_acp")
    assert result.exit_code == 0, result.stderr
    monkeypatch.chdir(project)
    assert cli(*shlex.split(command)[1:]).stderr.endswith(" files up to date\n")
    assert tree(project) == before


@pytest.mark.parametrize(
    "options",
    [{"schema": None}, {**Recipe().to_json(), "side": 3}, {**Recipe().to_json(), "stable-only": "yes"},
     {**Recipe().to_json(), "package": ""}],
)
def test_a_manifest_with_options_acpgen_did_not_write_is_refused(options):
    text = json.dumps({"format": 1, "generator": "acpgen 0.1.0", "schema_sha256": "0", "files": {},
                       "options": options})
    with pytest.raises(ManifestError):
        parse_manifest(text)


def test_check_with_nothing_says_when_a_package_found_was_moved(cli, project):
    shutil.move(project / "src", project / "lib")
    result = cli("check")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "acpgen check: found the package folder lib/myapp/_acp but the package was generated with"
        " --out src --package myapp._acp"
    )


def test_check_says_when_a_recorded_path_is_gone(cli, project):
    (project / "schema" / "acp.json").rename(project / "schema" / "v2.json")
    result = cli("check")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: src/myapp/_acp/acpgen-manifest.json: the package was generated with --schema schema/acp.json,"
        " and schema/acp.json is not a file here; give --schema\n"
    )
    result = cli("check", "--schema", "schema/v2.json")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "acpgen check: --schema is 'schema/v2.json' here but the package was generated with --schema schema/acp.json"
    )


def test_a_manifest_without_options_is_checked_with_the_options_given(cli, project):
    path = package_dir(project) / "acpgen-manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["options"]
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    args = ["--out", "src", "--package", "myapp._acp"]
    assert cli("check", "--summary", *args, "--schema", "schema/acp.json", "--side", "client").exit_code == 1
    result = cli("check", "--summary", *args, "--schema", "schema/acp.json", "--side", "agent")
    assert result.exit_code == 1 and "1 changed" in result.stderr  # only the manifest: it gains the options
    assert "  changed: src/myapp/_acp/acpgen-manifest.json" in result.stderr.splitlines()


def test_a_path_with_a_space_is_quoted_so_the_command_runs_verbatim(cli, project):
    (project / "my specs").mkdir()
    shutil.copy(project / "schema" / "acp.json", project / "my specs" / "acp.json")
    assert cli("generate", "--schema", "my specs/acp.json", "--out", "src", "--package", "myapp._acp").exit_code == 0
    command = header_command(project)
    assert command == "acpgen generate --schema 'my specs/acp.json' --out src --package myapp._acp"
    assert cli(*shlex.split(command)[1:]).stderr.endswith(" files up to date\n")
    assert cli("check").exit_code == 0
