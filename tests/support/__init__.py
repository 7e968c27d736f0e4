"""What the tests share: where things are, small schemas, and generated packages to import.

The tests never import the committed ``generated/`` folder: :data:`BINDINGS` is the bundled
schema's package generated afresh from the source templates and runtime modules, once per test
run (its workers share it: :mod:`support.run_cache`), so an edit to acpgen is seen by every test
at once. (``make check`` and ``tests/workflow/test_generate.py`` hold ``generated/`` to the same
bytes.)

Submodules: :mod:`support.runtime` (processes, raw peers, async tests), :mod:`support.model_instances`
(hypothesis strategies from the type model), :mod:`support.schema_instances` (instances from the
schema itself, with jsonschema as the oracle).
"""

from __future__ import annotations

import atexit
import csv
import functools
import importlib
import itertools
import json
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from acpgen.pipeline import Options, generate
from acpgen.schema.loader import LoadedSchema, load_schema

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
DATA = TESTS / "data"
CORPUS = DATA / "corpus"
INTEROP = TESTS / "interop"
BUNDLED = ROOT / "acpgen" / "schema" / "schema.unstable.json"


def write_package(files: dict[str, str], out: Path) -> None:
    for rel, text in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def _fresh_bindings() -> Path:
    """The bundled schema's package (``acp_bindings``, both sides), generated from source into a
    temporary folder that lives as long as the test session."""
    folder = Path(tempfile.mkdtemp(prefix="acpgen-tests-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    from .run_cache import generated_files

    write_package(generated_files(Options()), folder)
    return folder


#: The folder that holds the freshly generated ``acp_bindings`` package; on ``sys.path``.
BINDINGS = _fresh_bindings()
if str(BINDINGS) not in sys.path:
    sys.path.insert(0, str(BINDINGS))


def bindings() -> ModuleType:
    """The freshly generated ``acp_bindings`` package."""
    return importlib.import_module("acp_bindings")


# -- schemas ------------------------------------------------------------------------------------


def corpus_index() -> list[dict[str, str]]:
    with open(CORPUS / "INDEX.tsv", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@functools.cache
def load_corpus(file: str) -> LoadedSchema:
    """Load a corpus schema once per test session (meta-schema validation is the slow part)."""
    return load_schema(CORPUS / file)


def bundled_document() -> dict[str, Any]:
    return json.loads(BUNDLED.read_text())


def schema_with(defs: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def mini_schema() -> dict[str, Any]:
    """A small hand-made ACP-like schema: one agent request, one client notification."""
    return schema_with(
        {
            "PingRequest": {
                "type": "object",
                "description": "Ping the agent.",
                "properties": {"sessionId": {"$ref": "#/$defs/SessionId"}},
                "required": ["sessionId"],
                "x-method": "ping",
                "x-side": "agent",
            },
            "PingResponse": {"type": "object", "properties": {}, "x-method": "ping", "x-side": "agent"},
            "LogNotification": {
                "type": "object",
                "description": "Log a line.",
                "properties": {"line": {"type": "string"}},
                "required": ["line"],
                "x-method": "log/line",
                "x-side": "client",
            },
            "SessionId": {"type": "string"},
        }
    )


# -- generating and importing -------------------------------------------------------------------

_counter = itertools.count()


def generate_and_import(document: dict[str, Any], tmp_path: Path, names: dict[str, str] | None = None) -> ModuleType:
    """Generate bindings for a hand-made schema into ``tmp_path`` and import them (a fresh name)."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(document))
    names_file = None
    if names is not None:
        names_file = tmp_path / "names.json"
        names_file.write_text(json.dumps(names))
    package = f"acp_test_pkg_{next(_counter)}"
    out = tmp_path / "out"
    write_package(generate(Options(schema=schema, package=package, names=names_file)).files, out)
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(out))


# -- what a run left behind ---------------------------------------------------------------------


def tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (hidden ones too) with its bytes: compare before and after a run."""
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def one_error_line(result: Any) -> str:
    """The run failed with exit status 2 and said so on exactly one line, with no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in result.stderr + result.stdout
    return lines[0]
