"""The installed wheel carries the bundled schema and the templates: `acpgen` works from any directory."""

from __future__ import annotations

import os
import subprocess
import sys

from support import ROOT

from acpgen.pipeline import Options, generate


def test_wheel_generates_from_any_directory(tmp_path):
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(ROOT)], check=True, capture_output=True)
    (wheel,) = wheels.glob("acpgen-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], check=True,
                   capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(target)}
    probe = subprocess.run([sys.executable, "-c", "import acpgen; print(acpgen.__file__)"], cwd=elsewhere, env=env,
                           check=True, capture_output=True, text=True)
    assert probe.stdout.startswith(str(target)), "the test must run the installed copy, not the checkout"
    subprocess.run([sys.executable, "-m", "acpgen", "generate"], cwd=elsewhere, env=env, check=True, capture_output=True)
    expected = generate(Options()).files  # the default --out: the library's header command is the CLI's
    assert expected
    for rel, text in expected.items():
        assert (elsewhere / "generated" / rel).read_text() == text


def test_acpgen_itself_is_ruff_clean():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT / "acpgen")],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
