"""A user's project moving along protocol versions with ``[tool.acpgen]``: the bundled schema, then
a v1 file, then v1 + v2, then v2 alone. At each step ``check`` fails, names the schemas as they
were written and ends with commands that run as printed (each is run here); ``diff`` compares
what is configured with what is on disk and says what moves for the code that imports the package.

The words depend on the versions the manifest records (``versions``, ``root_version``), not on
which files exist; a manifest that records none is an earlier acpgen's (see
:func:`_as_recorded_now`).

After an intended change of a report: `ACPGEN_UPDATE_SNAPSHOTS=1 make test`, then review and commit
the diff under tests/data/snapshots/.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
from support import DATA, docs, mini_schema

PACKAGE = "src/myagent/acp"

(CHECK_SAYS,) = docs.blocks("reference/cli.md", "", "A change of schemas")
(DIFF_SAYS,) = docs.blocks("reference/cli.md", "", "When the protocol versions change")


def _snapshot(name: str, text: str) -> None:
    snapshot = DATA / "snapshots" / name
    if os.environ.get("ACPGEN_UPDATE_SNAPSHOTS"):
        snapshot.write_text(text)
    assert text == snapshot.read_text()


def _v2() -> dict:
    doc = mini_schema()
    doc["$defs"]["ProtocolVersion"] = {"type": "integer", "const": 2}  # the version it states
    doc["$defs"]["PingRequest"]["properties"]["note"] = {"type": "string"}
    return doc


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "acp.json").write_text(json.dumps(mini_schema()))
    (tmp_path / "schema" / "acp-v2.json").write_text(json.dumps(_v2()))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _configure(project: Path, schema: str) -> None:
    (project / "pyproject.toml").write_text(
        f'[tool.acpgen]\nout = "src"\npackage = "myagent.acp"\nside = "agent"\n{schema}\n')


def _hints(line: str) -> list[str]:
    """The commands the last line of check's message ends with."""
    return re.findall(r"`([^`]*)`", line.split(" to keep those, or ", 1)[1])


def _run_verbatim(cli, command: str):
    words = shlex.split(command)
    assert words[0] == "acpgen" and "&&" not in words, command
    return cli(*words[1:])


def _as_recorded_now(project: Path, versions: list[int], root: int) -> None:
    """What every generation records once the layout of several versions does (the versions and
    the root's): added where this acpgen's manifest lacks them."""
    manifest = project / PACKAGE / "acpgen-manifest.json"
    data = json.loads(manifest.read_text())
    data.setdefault("versions", versions)
    data.setdefault("root_version", root)
    manifest.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def _step(cli, project: Path, schema: str, said: str) -> tuple[str, str]:
    """Configure ``schema``: check fails with ``said`` first, and its hints (diff, then generate)
    run as printed; check passes after. Returns diff's output and count."""
    _configure(project, schema)
    checked = cli("check")
    assert checked.exit_code == 1
    lines = checked.stderr.splitlines()
    assert lines[0] == f"acpgen check: {said}"
    assert lines[-1].endswith(
        "or run `acpgen diff` to see what regenerating with these changes, then `acpgen generate`")
    diff, generate = _hints(lines[-1])
    diffed = _run_verbatim(cli, diff)
    assert diffed.exit_code == 0, diffed.stderr
    assert _run_verbatim(cli, generate).exit_code == 0
    assert cli("check").exit_code == 0
    return diffed.stdout, diffed.stderr


def test_bundled_then_v1_then_v1_and_v2_then_v2(cli, project):
    _configure(project, "")
    assert cli("generate").exit_code == 0
    # the bundled schema -> a v1 file: one version both sides, one comparison, named as written
    out, err = _step(cli, project, 'schema = "schema/acp.json"',
                     "--schema is 'schema/acp.json' here (pyproject.toml: [tool.acpgen] schema) but the package"
                     " was generated with the bundled schema")
    assert err.startswith("acpgen diff: ") and err.endswith(f" from {PACKAGE} (acpgen-schema.json) to schema/acp.json\n")
    assert "layout" not in out
    _as_recorded_now(project, [1], 1)

    # v1 -> v1 + v2: v2 is new under its subpackage, the root keeps v1's API: no import changes
    _configure(project, 'schema = ["schema/acp.json", "schema/acp-v2.json"]')
    assert cli("check").stderr == CHECK_SAYS.text  # as documented
    out, err = _step(cli, project, 'schema = ["schema/acp.json", "schema/acp-v2.json"]',
                     '--schema is ["schema/acp.json", "schema/acp-v2.json"] here (pyproject.toml: [tool.acpgen]'
                     " schema) but the package was generated with --schema schema/acp.json")
    assert out.splitlines() == [
        "layout:",
        "  compatible (2):",
        ("    subpackage-added [stable] myagent.acp.v1: v1's API also under myagent.acp.v1 (breaks nobody);"
         " python: myagent.acp.v1 holds the API the root myagent.acp holds; no import changes"),
        ("    version-added [stable] v2: protocol version 2 added (schema/acp-v2.json) (breaks nobody); python: new subpackage"
         " myagent.acp.v2 holds v2's API; the root myagent.acp keeps v1's API; no import changes"),
        "v1:",
    ]
    assert err.splitlines() == [
        f"acpgen diff: layout: 2 change(s) (2 compatible) from {PACKAGE} (v1) to v1 and v2, root v1",
        f"acpgen diff: v1: 0 change(s) from {PACKAGE} (acpgen-schema.json) to schema/acp.json",
    ]
    _as_recorded_now(project, [1, 2], 1)

    # v1 + v2 -> v2 alone: a break diff reports, with the edits to make
    _configure(project, 'schema = "schema/acp-v2.json"')
    report = cli("diff", "--format", "json")
    assert list(json.loads(report.stdout)) == ["layout", "v2"]
    _snapshot("diff-layout.json", report.stdout)
    _snapshot("diff-layout.md", cli("diff", "--format", "markdown").stdout)
    assert cli("diff", "--fail-on", "breaking").exit_code == 1
    out, err = _step(cli, project, 'schema = "schema/acp-v2.json"',
                     "--schema is 'schema/acp-v2.json' here (pyproject.toml: [tool.acpgen] schema) but the package"
                     " was generated with --schema schema/acp.json --schema schema/acp-v2.json")
    assert out == DIFF_SAYS.text  # as documented
    assert err.splitlines()[-1] == (
        f"acpgen diff: v2: 0 change(s) from {PACKAGE}/v2 (acpgen-schema.json) to schema/acp-v2.json")


def test_flags_get_a_diff_and_a_generate_with_the_flags(cli, project):
    """No [tool.acpgen]: the hints give every flag, the schemas as --schema each."""
    flags = ["--out", "src", "--package", "myagent.acp", "--side", "agent"]
    assert cli("generate", "--schema", "schema/acp.json", *flags).exit_code == 0
    several = ["--schema", "schema/acp.json", "--schema", "schema/acp-v2.json"]
    checked = cli("check", *several, "--out", "src")
    assert checked.exit_code == 1
    lines = checked.stderr.splitlines()
    assert lines[0] == ("acpgen check: --schema schema/acp.json --schema schema/acp-v2.json is given here but the"
                        " package was generated with --schema schema/acp.json")
    diff, generate = _hints(lines[-1])
    assert diff == f"acpgen diff --out {PACKAGE} --schema schema/acp.json --schema schema/acp-v2.json"
    diffed = _run_verbatim(cli, diff)
    assert diffed.exit_code == 0 and "version-added [stable] v2" in diffed.stdout
    assert _run_verbatim(cli, generate).exit_code == 0
    assert cli("check", *several, "--out", "src").exit_code == 0
