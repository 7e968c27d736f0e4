"""``--models pydantic`` on the command line and in ``[tool.acpgen]``: the same bytes twice, the
regenerate command in the header, mypy --strict with pydantic's plugin, and a one-line error
when datamodel-code-generator is missing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from support import DATA, ROOT, docs, one_error_line
from support.flavours import PYDANTIC_PACKAGE, pydantic_folder
from support.run_cache import generated_files

from acpgen import pipeline
from acpgen.pipeline import Options, generate
from acpgen.render import pydantic_job

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

USER_CODE = f'''
from {PYDANTIC_PACKAGE} import AgentMessageChunk, ContentBlock, DecodeError, SessionNotification, Text, decode


def build() -> SessionNotification:
    return SessionNotification(session_id="s", update=AgentMessageChunk(content=Text(text="hi")))


def read(data: object) -> str:
    note: SessionNotification = decode(SessionNotification, data)
    if isinstance(note.update, AgentMessageChunk) and isinstance(note.update.content, Text):
        return note.update.content.text
    return note.session_id


def blocks(data: list[object]) -> list[ContentBlock]:
    try:
        return [decode(ContentBlock, d) for d in data]
    except DecodeError as error:
        raise ValueError(error.path) from error


wire: dict[str, object] = build().to_json()
text: Text = Text.from_json({{"type": "text", "text": "hi"}})
schema: dict[str, object] = SessionNotification.model_json_schema()
'''


def test_same_bytes_twice(monkeypatch):
    folder = pydantic_folder()
    monkeypatch.setattr(pipeline, "_MADE_MODELS", {})  # datamodel-code-generator runs again
    again = generate(Options(package=PYDANTIC_PACKAGE, models="pydantic")).files
    for rel, text in again.items():
        assert (folder / rel).read_text() == text, rel
    assert "acpgen generate --package acp_pydantic --models pydantic" in again[f"{PYDANTIC_PACKAGE}/models.py"]
    assert f"{PYDANTIC_PACKAGE}/_runtime/wire/_pydantic.py" in again


def test_mypy_strict_with_the_pydantic_plugin(tmp_path):
    folder = pydantic_folder()
    (tmp_path / "use_pydantic.py").write_text(USER_CODE)
    (tmp_path / "mypy.ini").write_text("[mypy]\nplugins = pydantic.mypy\n")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", "--config-file", str(tmp_path / "mypy.ini"),
         "--cache-dir", str(tmp_path / "cache"), PYDANTIC_PACKAGE, str(tmp_path / "use_pydantic.py")],
        capture_output=True, text=True, cwd=folder, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_config_selects_the_flavour(cli, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\nmodels = "pydantic"\nout = "gen"\n')
    monkeypatch.chdir(tmp_path)
    result = cli("generate")
    assert result.exit_code == 0, result.stderr
    assert "class SessionNotification(AcpModel, BaseModel):" in (tmp_path / "gen/acp_bindings/models.py").read_text()
    assert cli("check").exit_code == 0
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\nmodels = "attrs"\n')
    assert "models must be one of dataclasses, pydantic" in one_error_line(cli("generate"))


BLOCKED = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "datamodel_code_generator":
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Missing())
from acpgen.cli import main
main(["generate", "--models", "pydantic", "--out", "out"])
"""


def test_without_datamodel_code_generator_one_line_says_how_to_install(tmp_path):
    """The line (a snapshot: ``ACPGEN_UPDATE_SNAPSHOTS=1`` accepts a change) names commands that
    work where acpgen is installed from a clone: the requirement as the ``pydantic`` extra pins it,
    or that extra installed from the clone. No package index serves ``acpgen[pydantic]``."""
    result = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert result.returncode == 2
    snapshot = DATA / "snapshots" / "error-models-pydantic-missing.txt"
    if os.environ.get("ACPGEN_UPDATE_SNAPSHOTS"):
        snapshot.write_text(result.stderr)
    assert result.stderr == snapshot.read_text()
    requirement, extra = re.findall(r"python -m pip install '([^']+)'", result.stderr)
    assert [requirement] == PYPROJECT["project"]["optional-dependencies"]["pydantic"]
    assert extra == ".[pydantic]" and "acpgen[" not in result.stderr
    assert not (tmp_path / "out").exists()


(FLAVOUR_EXAMPLE,) = docs.blocks("reference/models.md", "python", "Choosing a flavour: dataclasses or pydantic")


def test_the_documented_example_runs_on_a_pydantic_package(tmp_path):

    from support import write_package

    code = FLAVOUR_EXAMPLE
    assert "--models pydantic" in code.text
    write_package(generated_files(Options(models="pydantic")), tmp_path)
    (tmp_path / "example.py").write_text(code.text)
    result = subprocess.run([sys.executable, "example.py"], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr


def test_side_stable_only_names_and_check(cli, tmp_path):
    import json

    names = tmp_path / "names.json"
    names.write_text(json.dumps({"ContentBlock/text": "TextBlock"}))
    args = ["--models", "pydantic", "--side", "agent", "--stable-only", "--names", str(names), "--out", str(tmp_path / "gen")]
    assert cli("generate", *args).exit_code == 0
    package = tmp_path / "gen" / "acp_bindings"
    models = (package / "models.py").read_text()
    assert "class TextBlock(AcpModel, BaseModel):" in models and "class Text(" not in models
    assert (package / "agent.py").exists()  # and the client module, as the agent's test peer only:
    assert "from .client import" not in (package / "__init__.py").read_text()
    plain = generate(Options(side="agent", stable_only=True, names=names), only={"models.py"}).files["acp_bindings/models.py"]
    import re

    pattern = re.compile(r"^class (\w+)\(", re.MULTILINE)
    assert set(pattern.findall(models)) == set(pattern.findall(plain)) - {"Model"}
    manifest = json.loads((package / "acpgen-manifest.json").read_text())
    assert "acp_bindings/_runtime/wire/_pydantic.py" in json.dumps(manifest)
    assert cli("check", *args).exit_code == 0
    (package / "models.py").write_text(models.replace("class TextBlock(", "class TextBlok("))
    assert cli("check", *args).exit_code == 1


def test_datamodel_code_generator_runs_only_for_a_job_no_run_has_made(cli, tmp_path, monkeypatch):
    """The module a job made (see ``acpgen.render.pydantic_job``) is reused by ``check`` and
    ``generate`` through the manifest, and by the process that made it: datamodel-code-generator
    runs again only for a new job, and an edited ``models.py`` is still drift."""
    jobs: list[str] = []
    run = pydantic_job.run_models_job
    monkeypatch.setattr(pydantic_job, "run_models_job", lambda job: jobs.append(job.header) or run(job))
    monkeypatch.setattr(pipeline, "_MADE_MODELS", {})
    schema = tmp_path / "schema.json"
    schema.write_text((DATA / "corpus" / "v0.0.33--schema.json").read_text())
    args = ["--models", "pydantic", "--schema", str(schema), "--out", str(tmp_path / "gen")]
    assert cli("generate", *args).exit_code == 0 and len(jobs) == 1
    monkeypatch.setattr(pipeline, "_MADE_MODELS", {})  # as in a new process: only the manifest knows the module
    assert cli("check", *args).exit_code == 0 and cli("generate", *args).exit_code == 0 and len(jobs) == 1
    again = [*args[:-1], str(tmp_path / "again")]  # another --out: another header, another job
    assert cli("generate", *again).exit_code == 0 and len(jobs) == 2
    made = (tmp_path / "again" / "acp_bindings" / "models.py").read_text()
    shutil.rmtree(tmp_path / "again")  # no manifest: the process's own memory
    assert cli("generate", *again).exit_code == 0 and len(jobs) == 2
    assert (tmp_path / "again" / "acp_bindings" / "models.py").read_text() == made
    models = tmp_path / "gen" / "acp_bindings" / "models.py"
    models.write_text(models.read_text().replace("class ", "class  ", 1))
    result = cli("check", *args)
    assert result.exit_code == 1 and "models.py" in result.output and len(jobs) == 2
    schema.write_text(schema.read_text().replace('"description": "', '"description": "Now: ', 1))
    assert cli("check", *args).exit_code == 1 and len(jobs) == 3
