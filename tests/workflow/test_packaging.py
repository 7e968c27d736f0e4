"""The installed wheel carries the bundled schema and the templates: `acpgen` works from any directory."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from support import ROOT

from acpgen.pipeline import Options, generate


def test_wheel_generates_from_any_directory(tmp_path):
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    build = subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(ROOT)], check=True,
                           capture_output=True, text=True)
    assert "Warning" not in build.stderr, build.stderr  # setuptools' "Package would be ignored", ...
    (wheel,) = wheels.glob("acpgen-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        packaged = {name for name in archive.namelist() if name.startswith("acpgen/")}
    source = {p.relative_to(ROOT).as_posix() for p in (ROOT / "acpgen").rglob("*")
              if p.is_file() and "__pycache__" not in p.parts}
    assert packaged == source
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


def test_an_editable_install_says_nothing(tmp_path):
    """What ``make generate`` runs first: no setuptools warning ("Package would be ignored", ...)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python), "install", "--quiet",
         "--no-deps", "--editable", str(ROOT)],
        check=False, capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stderr
    assert "Warning" not in install.stderr and "would be ignored" not in install.stderr, install.stderr
    probe = subprocess.run([str(python), "-c", "import acpgen.render.templates, acpgen; print(acpgen.__file__)"],
                           check=False, cwd=tmp_path, capture_output=True, text=True)
    assert probe.stdout.strip() == str(ROOT / "acpgen" / "__init__.py"), probe.stderr
