"""acpgen installs beside other tools: no exact pin the built-in output does not need, a LICENSE,
an sdist whose tests run, a Makefile that installs what each command needs, and a library API
importable from the package root."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile

import pytest
from support import CORPUS, ROOT, docs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

#: Run acpgen in a fresh process in which ``import black`` fails, as where black is not installed.
WITHOUT_BLACK = "import sys; sys.modules['black'] = None; from acpgen.cli import main; main()"


def requirement_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


def test_no_dependency_is_pinned_exactly_and_black_is_not_one():
    dependencies = PYPROJECT["project"]["dependencies"]
    assert not [r for r in dependencies if "==" in r or "===" in r], dependencies
    assert "black" not in {requirement_name(r) for r in dependencies}
    # black stays pinned in its extra: the bytes it writes depend on its version
    assert PYPROJECT["project"]["optional-dependencies"]["black"] == ["black==26.10.1"]
    # and the error without black names that requirement, to install with pip as it is
    from acpgen.output.formatting import BLACK_REQUIREMENT

    assert PYPROJECT["project"]["optional-dependencies"]["black"] == [BLACK_REQUIREMENT]


def test_each_extra_lists_each_package_once():
    for extra, requirements in PYPROJECT["project"]["optional-dependencies"].items():
        names = [requirement_name(r) for r in requirements]
        assert len(names) == len(set(names)), (extra, names)


def test_the_fast_extra_is_what_the_fast_path_reads_with_and_the_tests_run_it():
    fast = PYPROJECT["project"]["optional-dependencies"]["fast"]
    assert {requirement_name(r) for r in fast} == {"msgspec", "orjson"}  # json_backend="auto"'s
    assert set(fast) <= set(PYPROJECT["project"]["optional-dependencies"]["test"])


def test_the_readme_names_every_extra():
    readme = (ROOT / "README.md").read_text()
    for extra in PYPROJECT["project"]["optional-dependencies"]:
        assert f"| `{extra}` |" in readme, extra


def test_the_tests_use_the_black_the_extra_pins():
    test_extra = PYPROJECT["project"]["optional-dependencies"]["test"]
    assert set(PYPROJECT["project"]["optional-dependencies"]["black"]) <= set(test_extra)


@pytest.mark.parametrize("schema", [None, "v0.4.7--schema.json", "v1.7.0--v2-schema.unstable.json"])
def test_the_built_in_output_needs_no_black_and_is_the_same_bytes(tmp_path, schema):
    # each run in its own folder, with the same options (the header gives --out relative to it)
    with_black, without = tmp_path / "with" / "out", tmp_path / "without" / "out"
    with_black.parent.mkdir()
    without.parent.mkdir()
    args = ["generate", "--out", "out"] + (["--schema", str(CORPUS / schema)] if schema else [])
    subprocess.run([sys.executable, "-m", "acpgen", *args], check=True, capture_output=True, cwd=with_black.parent)
    run = subprocess.run([sys.executable, "-c", WITHOUT_BLACK, *args], check=False, capture_output=True, text=True,
                         cwd=without.parent)
    assert run.returncode == 0, run.stderr
    files = sorted(p.relative_to(with_black) for p in with_black.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(without) for p in without.rglob("*") if p.is_file())
    for rel in files:
        assert (with_black / rel).read_bytes() == (without / rel).read_bytes(), rel


def test_the_license_is_the_apache_license_the_metadata_names():
    text = (ROOT / "LICENSE").read_text()
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert text.split()[:5] == ["Apache", "License", "Version", "2.0,", "January"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert len(re.findall(r"^\s+\d+\. [A-Z]", text, re.MULTILINE)) == 9  # the nine sections


def test_the_library_is_importable_from_the_package_root_and_import_acpgen_stays_cheap():
    code = (
        "import sys, acpgen\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('acpgen', 'jinja2', 'click', 'jsonschema'))\n"
        "assert loaded == ['acpgen', 'acpgen.version'], loaded\n"
        "from acpgen import DiagnosticError, Options, Output, generate\n"
        "from acpgen.pipeline import generate as the_function\n"
        "assert generate is the_function, generate\n"
        "assert isinstance(generate(Options(), only={'methods.py'}), Output)\n"
        "try:\n"
        "    generate(Options(package='class.x'))\n"
        "except DiagnosticError as exc:\n"
        "    print(exc.diagnostics[0].format())\n"
    )
    run = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "error: --package 'class.x' is not a dotted Python name: 'class' is a Python keyword\n"


(PYTHON_API_EXAMPLE,) = docs.blocks("reference/python-api.md", "python")


def test_the_python_api_example_runs():
    code = PYTHON_API_EXAMPLE
    assert "from acpgen import" in code.text
    run = subprocess.run([sys.executable, "-c", code.text], check=False, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_the_readme_names_every_prerequisite_of_the_set_up():
    readme = (ROOT / "README.md").read_text()
    setup = readme[readme.index("## Set-up"):readme.index("```sh")]
    for needed in ("Python 3.10+", "`make`", "Node.js 20+", "`npm`"):
        assert needed in setup, needed


def make_dry_run(target: str) -> list[str]:
    """The pip install commands ``make`` would run for ``target`` on a fresh checkout."""
    run = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line for line in run.stdout.splitlines() if "pip install" in line and "--upgrade pip" not in line]


def test_make_generate_installs_acpgen_alone_and_make_test_the_test_and_docs_extras():
    assert make_dry_run("generate") == [".venv/bin/python -m pip install --quiet -e ."]
    test = " ".join(" ".join(make_dry_run("test")).replace("\\", " ").split())  # continued lines joined
    assert ".venv/bin/python -m uv pip install --quiet --python .venv/bin/python -e '.[test,docs]'" in test
    assert ") || .venv/bin/python -m pip install --quiet -e '.[test,docs]'" in test  # pip where uv fails


def test_the_sdist_carries_its_tests_and_they_run(tmp_path):
    dist = tmp_path / "dist"
    # run from tmp_path: a build/ folder in the checkout (setuptools leaves one) would shadow the tool
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(dist), str(ROOT)], check=True,
                   capture_output=True, cwd=tmp_path)
    (sdist,) = dist.glob("acpgen-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = set(archive.getnames())
        archive.extractall(tmp_path / "unpacked", filter="data") if hasattr(tarfile, "data_filter") else \
            archive.extractall(tmp_path / "unpacked")
    (top,) = (tmp_path / "unpacked").iterdir()
    prefix = top.name
    for needed in ("LICENSE", "tests/conftest.py", "tests/support/__init__.py", "tests/data/corpus/INDEX.tsv",
                   "tests/data/snapshots/help-acpgen.txt", "generated/acp_bindings/__init__.py",
                   "tests/interop/package-lock.json", "Makefile", "mkdocs.yml", "docs/index.md"):
        assert f"{prefix}/{needed}" in names, needed
    assert not any("node_modules" in name or "__pycache__" in name for name in names)
    env = {**os.environ, "PYTHONPATH": str(top)}  # the unpacked acpgen, before the installed one
    probe = subprocess.run([sys.executable, "-c", "import acpgen.cli; print(acpgen.cli.__file__)"], cwd=top, env=env,
                           capture_output=True, text=True, check=True)
    assert probe.stdout.startswith(str(top)), "the tests must run the sdist's acpgen"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/workflow/test_bad_input.py",
         "tests/workflow/test_cli_help.py", "tests/workflow/test_workflow_config.py"],
        check=False, cwd=top, env=env, capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert re.search(r"\b\d+ passed\b", run.stdout) and "failed" not in run.stdout
