"""`[tool.acpgen]` in the nearest pyproject.toml supplies the options; flags override it."""

from __future__ import annotations

import json

import pytest
from support import mini_schema, one_error_line, tree


def schema_with_an_unstable_method():
    doc = mini_schema()
    doc["$defs"]["ForkRequest"] = {
        "type": "object", "description": "**UNSTABLE**\n\nFork a session.", "properties": {},
        "x-method": "session/fork", "x-side": "agent",
    }
    return doc


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A user's project: pyproject.toml with [tool.acpgen], a schema, and the working folder deep inside it."""
    root = tmp_path / "project"
    (root / "schemas").mkdir(parents=True)
    (root / "schemas" / "acp.json").write_text(json.dumps(schema_with_an_unstable_method()))
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n\n'
        "[tool.acpgen]\n"
        'schema = "schemas/acp.json"\n'
        'out = "src"\n'
        'package = "demo._vendor.acp"\n'
        'side = "agent"\n'
        "stable-only = true\n"
    )
    cwd = root / "src" / "demo"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    return root


def methods_of(package_dir):
    text = (package_dir / "methods.py").read_text()
    return [line.split('"')[1] for line in text.splitlines() if line.strip().startswith("method=")]


def test_settings_come_from_the_nearest_pyproject(cli, project):
    result = cli("generate")
    assert result.exit_code == 0, result.stderr
    package = project / "src" / "demo" / "_vendor" / "acp"
    assert methods_of(package) == ["ping", "log/line"]  # session/fork is unstable
    # run from the project's folder (pyproject.toml's), with paths relative to it
    command = "acpgen generate --schema schemas/acp.json --out src --package demo._vendor.acp --side agent --stable-only"
    assert f"regenerate with `{command}`" in (package / "__init__.py").read_text()
    assert cli("check").exit_code == 0


def test_flags_win_over_the_file(cli, project):
    result = cli("generate", "--all-methods", "--package", "other", "--side", "both")
    assert result.exit_code == 0, result.stderr
    package = project / "src" / "other"
    assert methods_of(package) == ["ping", "session/fork", "log/line"]
    assert not (project / "src" / "demo" / "_vendor").exists()
    assert cli("check", "--all-methods", "--package", "other", "--side", "both").exit_code == 0
    assert cli("check", "--all-methods", "--package", "other").exit_code == 1  # side from the file: agent


def test_no_table_means_the_defaults(cli, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / "schema.json").write_text(json.dumps(mini_schema()))
    monkeypatch.chdir(tmp_path)
    assert cli("generate", "--schema", "schema.json").exit_code == 0
    assert (tmp_path / "generated" / "acp_bindings" / "methods.py").is_file()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('sid = "agent"', ("error: pyproject.toml: [tool.acpgen] has unknown key 'sid' (known: schema, out,"
                           " templates, names, package, side, models, stable-only, protocol-version, strict)")),
        ('stable-only = "yes"', "error: pyproject.toml: [tool.acpgen] stable-only must be true or false, found 'yes'"),
        ("out = 3", "error: pyproject.toml: [tool.acpgen] out must be a non-empty string, found 3"),
        # the schema says which sides there are: checked once it is read
        ('side = "editor"', "error: pyproject.toml: [tool.acpgen] side 'editor' is not one of agent, client, both"),
        ("out = [", "error: pyproject.toml: not valid TOML: "),
    ],
)
def test_bad_settings_are_one_line_errors(cli, tmp_path, monkeypatch, table, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.acpgen]\n{table}\n")
    monkeypatch.chdir(tmp_path)
    before = tree(tmp_path)
    line = one_error_line(cli("generate"))
    assert line.startswith(message) if message.endswith(": ") else line == message
    assert tree(tmp_path) == before
