"""Vendoring: generate into a user's project under a dotted package name, import it there, use it."""

from __future__ import annotations

import ast
import importlib
import sys

import pytest

from acpgen.generate import Options, build_spec

PACKAGE = "myproject._vendor.acp"


@pytest.fixture(scope="module")
def vendored(tmp_path_factory):
    """A project with src/myproject/, and the agent side's stable bindings generated into it."""
    from click.testing import CliRunner

    from acpgen.cli import main

    project = tmp_path_factory.mktemp("project")
    (project / "src" / "myproject").mkdir(parents=True)
    (project / "src" / "myproject" / "__init__.py").write_text("")
    result = CliRunner().invoke(
        main, ["generate", "--out", str(project / "src"), "--package", PACKAGE, "--side", "agent", "--stable-only"]
    )
    assert result.exit_code == 0, result.stderr
    sys.path.insert(0, str(project / "src"))
    try:
        yield project / "src" / "myproject" / "_vendor" / "acp"
    finally:
        sys.path.remove(str(project / "src"))
        for name in [m for m in sys.modules if m == "myproject" or m.startswith("myproject.")]:
            del sys.modules[name]


def test_the_package_imports_only_itself_and_the_standard_library(vendored):
    modules = sorted(vendored.glob("*.py"))
    assert [m.name for m in modules][:1] == ["__init__.py"]
    for module in modules:
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                continue  # relative: works wherever the package is placed
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top == "__future__", f"{module.name} imports {name}"


def test_stable_only_leaves_out_every_unstable_method(vendored):
    package = importlib.import_module(PACKAGE)
    assert package.__name__ == PACKAGE and package.__file__.startswith(str(vendored))
    full, _ = build_spec(Options())
    stable = [m for m in full.methods if not m.unstable]
    assert [m.method for m in package.METHODS] == [m.wire_name for m in stable]
    assert not any(m.unstable for m in package.METHODS)
    unstable_names = {m.wire_name for m in full.methods if m.unstable}
    assert unstable_names and not unstable_names & {m.method for m in package.METHODS}
    text = "".join(p.read_text() for p in vendored.glob("*.py"))
    for m in full.methods:
        if m.unstable:
            assert f'"{m.wire_name}"' not in text, f"unstable method {m.wire_name} still appears"
