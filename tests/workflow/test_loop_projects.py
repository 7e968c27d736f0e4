"""The update loop where users put it, played as a user plays it in a project of their own.

Each scenario is a small case of :data:`SCENARIOS`: a project (schema files copied from an older
release of the corpus, maybe a ``[tool.acpgen]``), the commands that generate its packages, and a
module to edit. :func:`play` then runs acpgen as a separate process in the project folder, the way
a user does: generate -> check passes -> edit a module -> check fails naming it -> replace every
schema with a newer release -> check fails, and every command it suggests is run verbatim, in a
shell, from the project folder (``diff``, then ``generate``) -> check passes. A package added to a
scenario, or a scenario added to the list, is all a new case needs.
"""

# No "from __future__ import annotations": the docs guard imports this module under another name,
# where a dataclass could not look its string annotations up.
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import CORPUS, DATA, docs, tree

ACPGEN = f"{shlex.quote(sys.executable)} -m acpgen"
#: The update guide's loops: a vendored package; a configured one (its pyproject.toml, its commands).
(VENDORED,) = docs.blocks("guides/updating.md", "sh", "A vendored package")
(CONFIGURED_TOML,) = docs.blocks("guides/updating.md", "toml", "A configured package")
(CONFIGURED,) = docs.blocks("guides/updating.md", "sh", "A configured package")
OLD, NEW = CORPUS / "v0.11.1--schema.json", CORPUS / "v0.12.2--schema.json"  # stable releases
#: A package of two protocol versions: the spec's v1.7.0 pair, then the TypeScript SDK 2.4.0's
#: (which has no meta.json: each schema's version is given after it, and replayed from the manifest).
PAIR = {"schema/v1.json": (CORPUS / "v1.7.0--v1-schema.json", DATA / "sdk-schemas" / "v1-schema.json"),
        "schema/v2.json": (CORPUS / "v1.7.0--v2-schema.json", DATA / "sdk-schemas" / "v2-schema.json")}


@dataclass(frozen=True)
class Scenario:
    name: str
    generate: tuple[str, ...]  # the arguments of each generate that makes the project's packages
    packages: tuple[str, ...]  # each package's folder, relative to the project
    edit: str  # the module edited by hand, relative to the project
    schemas: dict[str, tuple[Path, Path]] = field(default_factory=lambda: {"schema/acp.json": (OLD, NEW)})
    pyproject: str = ""  # the project's [tool.acpgen], if any
    untouched: tuple[str, ...] = ()  # folders the loop must leave as they are


SCENARIOS = [
    Scenario(
        "vendored-beside-a-stray-generated",
        generate=("--schema schema/acp.json --out src --package myapp._acp --side agent",
                  ""),  # a bare generate once: generated/acp_bindings from the bundled schema
        packages=("src/myapp/_acp", "generated/acp_bindings"),
        edit="src/myapp/_acp/models.py",
        untouched=("generated",),
    ),
    Scenario(
        "two-packages",
        generate=("--schema schema/acp.json --out src --package myapp.agent_acp --side agent --stable-only",
                  "--schema schema/acp.json --out tools/client --package client_acp --side client"),
        packages=("src/myapp/agent_acp", "tools/client/client_acp"),
        edit="tools/client/client_acp/client.py",
    ),
    Scenario(
        "pydantic-configured",
        generate=("",),  # all from [tool.acpgen]
        packages=("src/myapp/_acp",),
        edit="src/myapp/_acp/models.py",
        pyproject='[tool.acpgen]\nschema = "schema/acp.json"\nout = "src"\npackage = "myapp._acp"\nmodels = "pydantic"\n',
    ),
    Scenario(
        "two-versions-from-the-sdk-pair",
        generate=(("--schema schema/v1.json --protocol-version 1 --schema schema/v2.json --protocol-version 2"
                  " --out src --package myapp._acp"),),
        packages=("src/myapp/_acp",),
        edit="src/myapp/_acp/v2/client.py",
        schemas=PAIR,
    ),
]


def acpgen(project: Path, args: str, status: int = 0) -> str:
    """Run ``acpgen ARGS`` in ``project``; its standard error, once its exit status is ``status``."""
    result = subprocess.run(f"{ACPGEN} {args}", shell=True, cwd=project, capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == status, (args, result.stdout, result.stderr)
    return result.stderr


def suggested(said: str) -> list[str]:
    """The commands in backticks of ``said``'s lines that tell what to run."""
    commands = [command for line in said.splitlines() for command in re.findall(r"`([^`]+)`", line)]
    assert commands, said
    return commands


def play(project: Path, scenario: Scenario) -> None:
    for path, (old, _) in scenario.schemas.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(old, project / path)
    if scenario.pyproject:
        (project / "pyproject.toml").write_text(scenario.pyproject)
    for args in scenario.generate:
        acpgen(project, f"generate {args}")
    untouched = {folder: tree(project / folder) for folder in scenario.untouched}

    edited = project / scenario.edit
    edited.write_text(edited.read_text() + "# edited by hand\n")
    said = acpgen(project, "check --summary", status=1)
    assert f"  changed: {scenario.edit}\n" in said
    owner = next(p for p in scenario.packages if scenario.edit.startswith(p + "/"))
    if len(scenario.packages) > 1 and not scenario.pyproject:
        assert said.splitlines()[-1] == f"acpgen check: 1 of {len(scenario.packages)} packages differ: {owner}"

    for path, (_, new) in scenario.schemas.items():
        shutil.copyfile(new, project / path)
    said = acpgen(project, "check --summary", status=1)
    commands = suggested(said)
    # diff --out PACKAGE --schema ..., or a bare diff where [tool.acpgen] gives the schemas
    assert any(re.search(r" diff( --out |$)", c) for c in commands) and any(" generate" in c for c in commands), said
    for command in commands:  # verbatim, from the project folder: diff first, then generate
        result = subprocess.run(command, shell=True, cwd=project, capture_output=True, text=True, timeout=300,
                                check=False)
        assert result.returncode == 0, (command, result.stderr)
        if re.search(r" diff( --out |$)", command):
            assert "change(s)" in result.stderr and "from " in result.stderr, result.stderr

    said = acpgen(project, "check")
    assert "differ" not in said and said.count(" is up to date") == len(scenario.packages), said
    assert "# edited by hand" not in edited.read_text()
    for folder, before in untouched.items():
        assert tree(project / folder) == before, f"{folder} was written"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_the_loop(tmp_path, scenario):
    play(tmp_path / "project", scenario)


@pytest.mark.parametrize(("commands", "pyproject"), [(VENDORED, ""), (CONFIGURED, CONFIGURED_TOML.text)],
                         ids=["vendored", "configured"])
def test_the_update_guide_plays_the_loop(tmp_path, commands, pyproject):
    """The guide's commands as written, with ``.venv/bin/acpgen`` this environment's acpgen: from an
    older release to a newer one, and nothing written to generated/."""
    project = tmp_path / "project"
    (project / "schema").mkdir(parents=True)
    (project / "path" / "to" / "new").mkdir(parents=True)
    shutil.copyfile(OLD, project / "schema" / "acp.json")
    shutil.copyfile(NEW, project / "path" / "to" / "new" / "schema.json")
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "acpgen").symlink_to(Path(sys.executable).parent / "acpgen")
    if pyproject:
        (project / "pyproject.toml").write_text(pyproject)
    done = subprocess.run(["bash", "-e", "-c", commands.text], cwd=project, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "method-added" in done.stdout  # the diff: v0.12.2 adds methods
    assert done.stderr.splitlines()[-1] == "acpgen check: src/myapp/_acp is up to date"
    assert not (project / "generated").exists()
