"""The "Use in CI" guide's recipes work: the pre-commit configuration and the GitHub Actions step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from support import ROOT, docs, mini_schema

#: The guide's two YAML blocks: the pre-commit configuration, then the GitHub Actions step.
CONFIG, STEP = (block.text for block in docs.blocks("guides/ci.md", "yaml"))


def test_the_hook_manifest_offers_acpgen_check():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["pass_filenames"], hook["always_run"]) == (
        "acpgen-check", "acpgen check", False, True
    )
    subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                   check=True, capture_output=True)


def test_the_readme_pre_commit_configuration_catches_drift(tmp_path):
    config = CONFIG
    assert "repos:" in config
    project = tmp_path / "project"
    project.mkdir()
    (project / "acp.json").write_text(json.dumps(mini_schema()))
    (project / "pyproject.toml").write_text('[tool.acpgen]\nschema = "acp.json"\nout = "src"\npackage = "demo.acp"\n')
    (project / ".pre-commit-config.yaml").write_text(config)
    (project / ".venv" / "bin").mkdir(parents=True)  # where the project's environment has acpgen
    (project / ".venv" / "bin" / "acpgen").symlink_to(Path(sys.executable).parent / "acpgen")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, check=False)

    assert run(".venv/bin/acpgen", "generate").returncode == 0
    run("git", "init", "-q")
    run("git", "add", "-A")
    hook = [sys.executable, "-m", "pre_commit", "run", "acpgen-check", "--all-files"]
    passed = run(*hook)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    methods = project / "src" / "demo" / "acp" / "methods.py"
    methods.write_text(methods.read_text() + "# edited by hand\n")
    failed = run(*hook)
    assert failed.returncode == 1
    assert "-# edited by hand" in failed.stdout and "changed: src/demo/acp/methods.py" in failed.stdout


def test_the_actions_step_installs_acpgen_and_runs_the_check(tmp_path):
    """The step's script, run as the runner would: pip installs acpgen from the requirement in
    ACPGEN (this checkout, here) into a fresh environment, and acpgen check fails on drift."""
    (parsed,) = yaml.safe_load(STEP)
    assert parsed["env"] == {"ACPGEN": "${{ vars.ACPGEN }}"}
    assert parsed["run"].strip().splitlines()[-1] == "acpgen check"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    # the new environment sees this one's packages, so pip installs acpgen alone (no downloads)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "test-env.pth").write_text(next(p for p in sys.path if p.endswith("site-packages")) + "\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "acp.json").write_text(json.dumps(mini_schema()))
    (project / "pyproject.toml").write_text('[tool.acpgen]\nschema = "acp.json"\nout = "src"\n')
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": "",
           "ACPGEN": f"acpgen @ {ROOT.as_uri()}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("VIRTUAL_ENV", None)
    step = ["bash", "-e", "-c", parsed["run"]]
    first = subprocess.run(step, cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert first.returncode == 1, first.stdout + first.stderr  # nothing generated yet: drift
    assert (venv / "bin" / "acpgen").exists()
    subprocess.run([str(venv / "bin" / "acpgen"), "generate"], cwd=project, env=env, check=True, capture_output=True)
    again = subprocess.run(step, cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "up to date" in again.stdout + again.stderr
