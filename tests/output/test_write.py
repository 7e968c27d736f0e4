"""`acpgen generate` writes all or nothing, owns what it wrote, and never touches anyone else's files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import ROOT, mini_schema, one_error_line, tree

from acpgen.pipeline import Options, generate
from acpgen.render.modules import BY_NAME

PKG = "acp_bindings"


@pytest.fixture
def generated(cli, tmp_path, write_schema):
    """An output folder holding a previous generation from the mini schema, and that schema's path."""
    schema, out = write_schema(mini_schema()), tmp_path / "out"
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    return out, schema


def change_schema(write_schema):
    doc = mini_schema()
    doc["$defs"]["PingRequest"]["description"] = "Ping the agent, again."
    return write_schema(doc)


def test_failure_while_renaming_into_place_restores_the_previous_output(cli, generated, write_schema, monkeypatch):
    out, _ = generated
    (out / PKG / "notes.txt").write_text("mine\n")
    before = tree(out)
    schema = change_schema(write_schema)
    calls = []
    real_replace = os.replace

    def replace_failing_on_the_second(src, dst):
        if not Path(dst).is_relative_to(out):  # another writer's (jinja's cache of compiled templates)
            return real_replace(src, dst)
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_failing_on_the_second)
    result = cli("generate", "--schema", schema, "--out", out)
    line = one_error_line(result)
    assert line.startswith("error: cannot write ") and line.endswith(": No space left on device; nothing was changed")
    assert len(calls) == 2, "the first file had already been replaced when the second failed"
    assert tree(out) == before, "every byte of the previous output is back, and no temporary file is left"


def _lock(path) -> bool:
    """Make ``path`` immutable (``chattr +i``); False where this file system or user cannot."""
    try:
        return subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode == 0
    except OSError:
        return False


def test_a_locked_file_leaves_the_folder_as_it_was(cli, generated, write_schema, monkeypatch):
    """The issue's case: one module of the package cannot be replaced. It is locked with
    ``chattr +i`` where the file system and the user allow it (root on ext4); elsewhere replacing it
    is made to fail in-process, with the same error. Every other file was replaced before or after
    it is tried: all are put back, and no staged temporary file is left."""
    out, _ = generated
    locked = out / PKG / "methods.py"
    before = tree(out)
    if not _lock(locked):
        real_replace = os.replace

        def replace(src, dst):
            if Path(dst) == locked:
                raise PermissionError(1, "Operation not permitted", str(src), None, str(dst))
            return real_replace(src, dst)

        monkeypatch.setattr(os, "replace", replace)
    try:
        line = one_error_line(cli("generate", "--schema", change_schema(write_schema), "--out", out))
    finally:
        subprocess.run(["chattr", "-i", str(locked)], capture_output=True, check=False)
    assert line == f"error: cannot write {locked.as_posix()}: Operation not permitted; nothing was changed"
    assert tree(out) == before


def test_a_file_that_cannot_be_put_back_is_named_and_nothing_staged_is_left(cli, generated, write_schema, monkeypatch):
    """Injected in-process: the third replace fails, and putting back the first replaced file fails
    too. The others are put back, every staged file is removed, and the message names that file."""
    out, _ = generated
    before = tree(out)
    replaced: list[Path] = []
    real_replace, real_write_bytes = os.replace, Path.write_bytes

    def replace(src, dst):
        if not Path(dst).is_relative_to(out):  # another writer's (jinja's cache of compiled templates)
            return real_replace(src, dst)
        if len(replaced) == 2:
            raise OSError(28, "No space left on device", str(src), None, str(dst))
        replaced.append(Path(dst))
        return real_replace(src, dst)

    def write_bytes(self, data):
        if self == replaced[0]:
            raise PermissionError(1, "Operation not permitted", str(self))
        return real_write_bytes(self, data)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    line = one_error_line(cli("generate", "--schema", change_schema(write_schema), "--out", out))
    first = replaced[0].relative_to(out).as_posix()
    assert line.startswith("error: cannot write ") and line.endswith(
        f": No space left on device; 1 file(s) could not be put back as they were: {out.as_posix()}/{first};"
        " every other file is as it was: fix the cause and run the same command again")
    after = tree(out)
    assert after[first] != before[first]
    assert {**after, first: before[first]} == before, "no temporary file is left, every other file is back"


def test_a_stray_temporary_file_is_drift_and_the_next_generate_removes_it(cli, generated):
    """A write that was killed leaves its staged file: check calls it drift, generate removes it."""
    out, schema = generated
    stray = out / PKG / ".models.py.k2j4.acpgen-tmp"
    stray.write_text("half a module\n")
    result = cli("check", "--schema", schema, "--out", out, "--summary")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[1:-1] == [f"  stray: {stray.as_posix()}"]
    assert "1 stray" in result.stderr.splitlines()[0] and result.stderr.splitlines()[-1] == result.stderr.splitlines()[0]
    assert cli("generate", "--schema", schema, "--out", out).exit_code == 0
    assert not stray.exists()
    assert cli("check", "--schema", schema, "--out", out).exit_code == 0


def test_a_template_that_raises_on_the_last_file_changes_nothing(cli, generated, write_schema, tmp_path):
    out, schema = generated
    before = tree(out)
    templates = tmp_path / "templates"
    templates.mkdir()
    modules = [rel for rel in generate(Options(schema=schema)).files if rel.endswith(".py")]
    last = f"{modules[-1].rsplit('/', 1)[1]}.jinja"  # the module rendered last
    (templates / last).write_text("{{ spec.no_such_thing }}\n")
    result = cli("generate", "--schema", change_schema(write_schema), "--out", out, "--templates", templates)
    # the user's file and line, not a bare "template:"
    assert one_error_line(result) == (f"error: {templates / last}:1: 'acpgen.model.spec.Spec object' has no attribute"
                                      " 'no_such_thing'")
    assert tree(out) == before

    (templates / last).write_text("{{ 1 // 0 }}\n")
    result = cli("generate", "--schema", change_schema(write_schema), "--out", out, "--templates", templates)
    assert one_error_line(result) == f"error: {templates / last}:1: ZeroDivisionError: integer division or modulo by zero"
    assert tree(out) == before


def test_a_user_template_overrides_one_module_and_the_rest_fall_back(cli, generated, tmp_path, monkeypatch):
    out, schema = generated
    monkeypatch.chdir(tmp_path)  # the project folder: the header's paths are relative to it
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "__init__.py.jinja").write_text(
        '{% from "_macros.jinja" import header as h %}{{ h(header) }}\nSIDE = {{ spec.side | py }}\n'
    )
    assert cli("generate", "--schema", schema, "--out", out, "--templates", templates).exit_code == 0
    init = (out / PKG / "__init__.py").read_text()
    assert init.endswith('\nSIDE = "both"\n')
    assert init.splitlines()[1] == (
        "# Do not edit: regenerate with `acpgen generate --schema schema.json --out out --templates templates`."
    )
    assert "class MethodInfo" in (out / PKG / "methods.py").read_text()


def test_a_user_template_named_like_a_runtime_module_replaces_its_copy(cli, generated, tmp_path):
    out, schema = generated
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "_codec.py.jinja").write_text(
        '{% from "_macros.jinja" import header as h %}{{ h(header) }}\nVARIANT = {{ package | py }}\n'
    )
    assert cli("generate", "--schema", schema, "--out", out, "--templates", templates).exit_code == 0
    assert (out / PKG / BY_NAME["_codec.py"].path).read_text().endswith(f'\nVARIANT = "{PKG}"\n')
    runtime = (ROOT / "acpgen" / "runtime" / "_runtime" / "connection" / "_rpc.py").read_text()
    assert (out / PKG / BY_NAME["_rpc.py"].path).read_text().split("\n", 2)[2] == runtime, "the other runtime modules are copies"


def test_a_user_template_named_like_the_pydantic_runtime_replaces_its_copy(tmp_path, write_schema):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "_pydantic.py.jinja").write_text(
        '{% from "_macros.jinja" import header as h %}{{ h(header) }}\nVARIANT = {{ flavour | py }}\n'
    )
    options = Options(schema=write_schema(mini_schema()), models="pydantic", templates=templates)
    files = generate(options, only={"_pydantic.py", "_pydantic_errors.py"}).files
    assert files[f"{PKG}/_runtime/wire/_pydantic.py"].endswith('\nVARIANT = "pydantic"\n')
    runtime = (ROOT / "acpgen" / "runtime" / "_runtime" / "wire" / "_pydantic_errors.py").read_text()
    assert files[f"{PKG}/_runtime/wire/_pydantic_errors.py"].split("\n", 2)[2] == runtime, "the other is a copy"


def test_a_user_template_replaces_a_stub_entry_module_or_the_runtime_it_runs(tmp_path):
    """The stub client is an entry module (``stub_client.py``) over runtime copies
    (``_stub_client.py``; ``_turns_client.py`` for v2): a template of either name replaces it."""
    templates = tmp_path / "templates"
    templates.mkdir()
    for name in ("stub_client.py", "_stub_client.py"):
        (templates / f"{name}.jinja").write_text(f'{{{{ header.text }}}}\nMINE = {{{{ {name!r} | py }}}}\n')
    files = generate(Options(templates=templates), only={"stub_client.py", "_stub_client.py", "pair.py"}).files
    for name in ("stub_client.py", "_stub_client.py"):
        assert files[f"{PKG}/{BY_NAME[name].path}"].endswith(f'\nMINE = "{name}"\n'), name
    runtime = (ROOT / "acpgen" / "runtime" / "pair.py").read_text()
    assert files[f"{PKG}/pair.py"].split("\n", 2)[2] == runtime, "the other runtime modules are copies"
    v2 = generate(Options(schema=ROOT / "tests/data/sdk-schemas/v2-schema.json", protocol_version=2, templates=templates),
                  only={"stub_client.py", "_turns_client.py"}).files
    assert v2[f"{PKG}/stub_client.py"].endswith('\nMINE = "stub_client.py"\n')
    assert v2[f"{PKG}/_runtime/stubs/_turns_client.py"].split("\n", 2)[2] == (ROOT / "acpgen" / "runtime" / "_runtime" / "stubs" / "_turns_client.py").read_text()


def test_a_user_template_replaces_the_session_entry_module_or_the_runtime_it_runs(tmp_path):
    """The session module is an entry module (``session.py``) over a runtime copy
    (``_session_state.py``) and the values it reads (``_session_data.py``): a template of any of
    the names replaces it."""
    templates = tmp_path / "templates"
    templates.mkdir()
    names = ("session.py", "_session_state.py", "_session_data.py")
    for name in names:
        (templates / f"{name}.jinja").write_text(f'{{{{ header.text }}}}\nMINE = {{{{ {name!r} | py }}}}\n')
    files = generate(Options(templates=templates), only=set(names)).files
    for name in names:
        assert files[f"{PKG}/{BY_NAME[name].path}"].endswith(f'\nMINE = "{name}"\n'), name
    ours = generate(Options(), only=set(names)).files
    assert ours[f"{PKG}/_runtime/session/_session_state.py"].split("\n", 2)[2] == (ROOT / "acpgen/runtime/_runtime/session/_session_state.py").read_text()
    state = BY_NAME["_session_state.py"].dotted
    assert f"from .{state} import MessageState, SessionState, ToolCallTracker" in ours[f"{PKG}/session.py"]


def test_a_foreign_file_in_the_way_is_refused_and_force_takes_it_over(cli, tmp_path, write_schema):
    schema, out = write_schema(mini_schema()), tmp_path / "out"
    (out / PKG).mkdir(parents=True)
    (out / PKG / "methods.py").write_text("# hand-written\n")
    (out / PKG / "extra.py").write_text("# hand-written too\n")
    before = tree(out)
    line = one_error_line(cli("generate", "--schema", schema, "--out", out))
    assert line == (
        f"error: refusing to overwrite 1 file(s) acpgen does not own: {out / PKG / 'methods.py'}"
        " (pass --force to take them over)"
    )
    assert tree(out) == before
    assert cli("generate", "--schema", schema, "--out", out, "--force").exit_code == 0
    assert (out / PKG / "methods.py").read_text().startswith("# Generated by acpgen")
    assert (out / PKG / "extra.py").read_text() == "# hand-written too\n", "a file acpgen does not write stays"
    # Now owned: a later run overwrites it without --force, and the foreign file is still left alone.
    assert cli("generate", "--schema", change_schema(write_schema), "--out", out).exit_code == 0
    assert (out / PKG / "extra.py").read_text() == "# hand-written too\n"


def test_stale_owned_files_go_and_foreign_files_stay(cli, generated, tmp_path):
    out, schema = generated
    templates = tmp_path / "templates"
    templates.mkdir()
    (out / PKG / "mine.py").write_text("# mine\n")
    # Same schema, other package name: the old package's files stay (they are another package's).
    assert cli("generate", "--schema", schema, "--out", out, "--package", "other.acp").exit_code == 0
    assert (out / PKG / "methods.py").is_file() and (out / "other" / "acp" / "methods.py").is_file()
    manifest = out / PKG / "acpgen-manifest.json"
    manifest.write_text(manifest.read_text().replace(f'"{PKG}/methods.py"', f'"{PKG}/gone.py"'))
    (out / PKG / "gone.py").write_text("# acpgen wrote this once\n")
    result = cli("generate", "--schema", schema, "--out", out, "--force")
    total = len(generate(Options(schema=schema)).files) + 1  # and the manifest
    assert result.stderr.splitlines() == [
        f"acpgen: wrote 1 of {total} files, removed 1 stale under {out}",  # the manifest
        (f"acpgen: left {(out / PKG / 'mine.py').as_posix()} alone: acpgen did not write it (the manifest does not"
        " list it)"),
    ]
    assert not (out / PKG / "gone.py").exists()
    assert (out / PKG / "mine.py").read_text() == "# mine\n"


def test_unchanged_files_are_not_rewritten(cli, generated):
    out, schema = generated
    stamps = {p: p.stat().st_mtime_ns for p in (out / PKG).rglob("*") if p.is_file()}
    os.utime(out / PKG / "methods.py", ns=(1, 1))
    result = cli("generate", "--schema", schema, "--out", out)
    assert result.stderr == f"acpgen: {PKG} under {out}: all {len(stamps)} files up to date\n"
    assert (out / PKG / "methods.py").stat().st_mtime_ns == 1
    assert {p: p.stat().st_mtime_ns for p in (out / PKG).rglob("*") if p.is_file() and p.name != "methods.py"} == {
        p: t for p, t in stamps.items() if p.name != "methods.py"
    }


def test_new_files_get_the_usual_permissions(cli, generated):
    out, _ = generated
    files = [p for p in (out / PKG).rglob("*") if p.is_file()]
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {oct(0o666 & ~_umask())}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Bad input: one line, exit 2, nothing on disk changed.

def test_output_path_is_a_file(cli, tmp_path, write_schema):
    target = tmp_path / "out"
    target.write_text("not a folder\n")
    line = one_error_line(cli("generate", "--schema", write_schema(mini_schema()), "--out", target))
    assert line == f"error: --out {target} is not a folder"
    assert target.read_text() == "not a folder\n"


def test_output_folder_not_writable(cli, generated, write_schema):
    # Tests run as root, which chmod does not stop: put a folder where a file must go instead,
    # and a file where the package folder must go.
    out, _ = generated
    (out / PKG / "methods.py").unlink()
    (out / PKG / "methods.py").mkdir()
    before = tree(out)
    line = one_error_line(cli("generate", "--schema", change_schema(write_schema), "--out", out))
    assert line == f"error: {out / PKG / 'methods.py'} is a folder where acpgen must write a file"
    assert tree(out) == before
    blocked = out / "blocked"
    blocked.write_text("")
    line = one_error_line(cli("generate", "--schema", change_schema(write_schema), "--out", out, "--package", "blocked.acp"))
    assert line == f"error: {blocked} is a file where acpgen must make a folder"
    assert tree(out) == {**before, "blocked": b""}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--side", "editor"], "error: --side 'editor' is not one of agent, client, both"),
        (["--sid", "agent"], "error: No such option '--sid'. Did you mean '--side'?"),
        (["--package", "my-pkg"], ("error: --package 'my-pkg' is not a dotted Python name: each part must be a Python"
                                      " identifier (letters, digits, _), joined by dots")),
        (["--templates", "no/such/folder"], "error: --templates 'no/such/folder' is not a folder"),
    ],
)
def test_unknown_option_values_and_a_missing_templates_folder(cli, generated, args, message):
    out, schema = generated
    before = tree(out)
    result = cli("generate", "--schema", schema, "--out", out, *args)
    assert result.exit_code == 2 and result.stderr.splitlines() == [message]
    assert tree(out) == before


def test_a_corrupt_manifest_is_refused_unless_forced(cli, generated):
    out, schema = generated
    manifest = out / PKG / "acpgen-manifest.json"
    manifest.write_text("{")
    before = tree(out)
    line = one_error_line(cli("generate", "--schema", schema, "--out", out))
    assert line == (f"error: {manifest} is not an acpgen manifest (not valid JSON (Expecting property name enclosed"
                    " in double quotes at line 1 column 2)); remove it or pass --force")
    assert tree(out) == before
    assert cli("generate", "--schema", schema, "--out", out, "--force").exit_code == 0
    assert manifest.read_text().startswith("{\n")
