"""acpgen's own code held to what it holds its output to: ``make lint`` (ruff over acpgen/ and
tests/, ``mypy --strict`` over acpgen/) finds nothing, no module of acpgen/ is over 450 lines, and
no template (``acpgen/render/templates/``, its ``.jinja`` files and the Python files beside them) is
over 250 lines but those of :data:`OVER_TEMPLATE_LIMIT`.

The runtime (acpgen/runtime/, copied into every generated package) is left out of the line limit:
its modules have a limit of their own, about 500 lines, while ``_rpc.py`` is being split.
"""

from __future__ import annotations

import subprocess
import sys

from support import ROOT

MAX_LINES = 450
NOT_LIMITED = ROOT / "acpgen" / "runtime"
TEMPLATES = ROOT / "acpgen" / "render" / "templates"
#: A template renders one concept in at most this many lines.
TEMPLATE_MAX_LINES = 250
#: The templates over the limit, with their line counts: a list that only shrinks. A template that
#: grows, or shrinks without leaving the list, fails the test until its count here is made true;
#: one that gets under the limit leaves the list.
OVER_TEMPLATE_LIMIT: dict[str, int] = {}


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


def test_no_template_is_over_250_lines_but_the_listed_ones_at_their_counts():
    sizes = {
        path.relative_to(TEMPLATES).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(TEMPLATES.rglob("*"))
        if path.suffix in (".jinja", ".py")
    }
    assert len(sizes) > 10  # the walk found the templates
    over = {name: n for name, n in sizes.items() if n > TEMPLATE_MAX_LINES}
    assert over == OVER_TEMPLATE_LIMIT, f"templates over {TEMPLATE_MAX_LINES} lines: {over}; listed: {OVER_TEMPLATE_LIMIT}"
