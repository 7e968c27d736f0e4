"""Helpers for the models tests: import the committed bindings, or generate and import fresh ones."""

from __future__ import annotations

import importlib
import itertools
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from conftest import ROOT

from acpgen.generate import Options, generate

_counter = itertools.count()


def bindings() -> ModuleType:
    """The committed ``generated/acp_bindings`` package (a test checks it is current)."""
    path = str(ROOT / "generated")
    if path not in sys.path:
        sys.path.insert(0, path)
    return importlib.import_module("acp_bindings")


def write_package(files: dict[str, str], out: Path) -> None:
    for rel, text in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


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


def schema_with(defs: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}
