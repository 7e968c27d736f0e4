"""The README's "Use in CI" recipes work: the pre-commit configuration and the GitHub Actions step."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from support import ROOT, mini_schema


def readme_blocks(section: str, language: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", body, flags=re.DOTALL)


def test_the_hook_manifest_offers_acpgen_check():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["pass_filenames"], hook["always_run"]) == (
        "acpgen-check", "acpgen check", False, True
    )
    subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                   check=True, capture_output=True)


def test_the_readme_pre_commit_configuration_catches_drift(tmp_path):
    config, = (block for block in readme_blocks("Use in CI", "yaml") if "repos:" in block)
    project = tmp_path / "project"
    project.mkdir()
    (project / "acp.json").write_text(json.dumps(mini_schema()))
    (project / "pyproject.toml").write_text('[tool.acpgen]\nschema = "acp.json"\nout = "src"\npackage = "demo.acp"\n')
    (project / ".pre-commit-config.yaml").write_text(config)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, check=False)

    assert run("acpgen", "generate").returncode == 0
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


def test_the_readme_actions_step_runs_acpgen_check():
    step, = (block for block in readme_blocks("Use in CI", "yaml") if "repos:" not in block)
    (parsed,) = yaml.safe_load(step)
    assert parsed["run"].strip().splitlines()[-1] == "acpgen check"
