"""Golden pairs: one tiny schema per feature, each beside the modules acpgen makes of it.

``cases/<feature>/schema.json`` is the input; ``cases/<feature>/expected/`` holds its
``models.py`` and its codec ``_models_codec.py`` and, for a schema with methods, every other module rendered from a template (the
runtime modules, copied verbatim, are left out); ``examples.json``
maps type names to wire instances that must round-trip exactly through the generated package.
Each package is also imported and type-checked with ``mypy --strict``.

To accept a change in the output, regenerate the expected files and review their diff:

    ACPGEN_UPDATE_GOLDEN=1 make test
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import pytest
from support import write_package
from support.typecheck import mypy_strict

from acpgen.pipeline import Options, generate
from acpgen.render.modules import Source, module_names

CASES = Path(__file__).resolve().parent / "cases"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "schema.json").is_file())
PACKAGE = "golden"
MODELS = ("models.py", "_models_codec.py")  # the declarations and their codec
UPDATE = os.environ.get("ACPGEN_UPDATE_GOLDEN") == "1"


def rendered(case: str) -> dict[str, str]:
    """The case's modules as generation renders them, by module name: ``models.py`` and
    ``_models_codec.py``, and for a case whose schema has methods every other module rendered
    from a template."""
    schema = CASES / case / "schema.json"
    files = generate(Options(schema=schema, package=PACKAGE)).files
    modules = {rel.split("/", 1)[1]: text for rel, text in files.items()}
    has_methods = '"x-method"' in schema.read_text()
    return {
        name: text
        for name, text in modules.items()
        if name.endswith(".py")
        and "/" not in name  # the private runtime's rooms (``_runtime/``): copied, not rendered
        and name not in module_names(source=Source.RUNTIME)
        and (has_methods or name in MODELS)
    }


def test_there_is_a_case_per_feature():
    assert len(NAMES) >= 10


@pytest.mark.parametrize("case", NAMES)
def test_output_matches_the_expected_modules(case):
    expected_dir = CASES / case / "expected"
    modules = rendered(case)
    if UPDATE:
        expected_dir.mkdir(exist_ok=True)
        for stale in {p.name for p in expected_dir.iterdir()} - set(modules):
            (expected_dir / stale).unlink()
        for name, text in modules.items():
            (expected_dir / name).write_text(text, encoding="utf-8")
    expected = {p.name: p.read_text(encoding="utf-8") for p in sorted(expected_dir.iterdir())}
    assert sorted(modules) == sorted(expected), "modules added or removed: ACPGEN_UPDATE_GOLDEN=1 make test"
    for name, text in modules.items():
        assert text == expected[name], f"{case}/expected/{name} differs: review, then ACPGEN_UPDATE_GOLDEN=1 make test"


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """Every case's whole package, generated under the name ``golden_<case>``."""
    root = tmp_path_factory.mktemp("golden")
    for case in NAMES:
        files = generate(Options(schema=CASES / case / "schema.json", package=f"golden_{case}")).files
        write_package(files, root)
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))


@pytest.mark.parametrize("case", NAMES)
def test_every_example_round_trips_exactly(case, packages):
    package = importlib.import_module(f"golden_{case}")
    examples = json.loads((CASES / case / "examples.json").read_text())
    assert examples
    for type_name, instances in examples.items():
        tp = getattr(package, type_name)
        for instance in instances:
            value = package.decode(tp, instance)
            assert package.encode(value) == instance, (type_name, instance)
            assert package.encode_text(value) == json.dumps(package.encode(value), separators=(",", ":")), type_name


def test_every_golden_package_passes_mypy_strict(packages, tmp_path):
    result = mypy_strict(*(packages / f"golden_{case}" for case in NAMES), cwd=packages)
    assert result.returncode == 0, result.stdout + result.stderr
