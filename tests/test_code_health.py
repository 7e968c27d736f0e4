"""acpgen's own code held to what it holds its output to: ``make lint`` (ruff over acpgen/ and
tests/, ``mypy --strict`` over acpgen/) finds nothing, and no module of acpgen/ is over 450 lines.

The runtime (acpgen/runtime/, copied into every generated package) is left out of the line limit:
its modules have a limit of their own, about 500 lines, while ``_rpc.py`` is being split.
"""

from __future__ import annotations

import subprocess
import sys

from support import ROOT

MAX_LINES = 450
NOT_LIMITED = ROOT / "acpgen" / "runtime"


def test_ruff_finds_nothing_in_acpgen_and_the_tests():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "acpgen", "tests"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing_in_acpgen(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path), "acpgen"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_module_of_acpgen_is_over_450_lines():
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted((ROOT / "acpgen").rglob("*.py"))
        if NOT_LIMITED not in path.parents
    }
    assert len(sizes) > 50  # the walk found the package
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}
