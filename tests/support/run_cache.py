"""Packages a test only reads, generated once per test run and shared by the pytest-xdist workers.

The bundled schema's package in either flavour is what dozens of tests import, run or type-check;
each worker generated it again (the pydantic flavour takes seconds: datamodel-code-generator).
:func:`generated_files` keeps each output in the run's folder (``tests/conftest.py`` makes it and
removes it at exit), keyed by everything the output depends on: acpgen's own files (source,
templates, runtime, bundled schema), the options with the bytes of every file they name (and of
a schema's ``meta.json``), and whether black can be imported. A key that matches is the same
output, so a test reads what ``generate`` would have given it.

Only for packages a test uses to check something else: a test of generation itself (the same
bytes twice, an error, a warning) calls :func:`acpgen.pipeline.generate`. Outside a test run
(``make corpus`` and the other scripts) nothing is kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import sys
from collections.abc import Collection, Iterator
from pathlib import Path

import acpgen
from acpgen.pipeline import Options, generate
from acpgen.schema.protocol import meta_path

#: The environment variable naming the run's folder of outputs (``tests/conftest.py`` sets it).
FOLDER = "ACPGEN_TESTS_OUTPUTS"


def generated_files(options: Options, *, only: Collection[str] | None = None) -> dict[str, str]:
    """``generate(options, only=only).files``, generated once per test run."""
    folder = os.environ.get(FOLDER)
    if not folder:
        return generate(options, only=only).files
    stored = Path(folder) / f"{_key(options, only)}.json"
    with _locked(stored.with_suffix(".lock")):  # a worker that wants it meanwhile waits for it
        if stored.is_file():
            files: dict[str, str] = json.loads(stored.read_text(encoding="utf-8"))
            return files
        files = generate(options, only=only).files
        partial = stored.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(files), encoding="utf-8")
        partial.replace(stored)
        return files


def _key(options: Options, only: Collection[str] | None) -> str:
    parts = {"acpgen": _acpgen_digest(), "only": sorted(only) if only is not None else None,
             "black": sys.modules.get("black", True) is not None}
    for item in dataclasses.fields(options):
        value = getattr(options, item.name)
        if item.name == "origins":
            value = dict(value)
        elif isinstance(value, Path):
            value = _schema_digest(value) if item.name == "schema" else _digest(value)
        elif isinstance(value, tuple):
            value = [_schema_digest(v) if isinstance(v, Path) else v for v in value]
        parts[item.name] = value
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _digest(path: Path) -> str:
    """A file's bytes or a folder's files (a user's templates), as one digest."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.relative_to(path).parts)
    else:
        files = [path]
    digest = hashlib.sha256(str(path).encode())
    for file in files:
        digest.update(f"\0{file.relative_to(path) if path.is_dir() else ''}\0".encode() + file.read_bytes())
    return digest.hexdigest()


def _schema_digest(path: Path) -> list[str | None]:
    """A schema's digest and its release's ``meta.json``'s, which may give its protocol version."""
    meta = meta_path(path)
    return [_digest(path), _digest(meta) if meta.is_file() else None]


@functools.cache
def _acpgen_digest() -> str:
    """Every file of the acpgen this process imports (its source, templates and runtime)."""
    return _digest(Path(acpgen.__file__).parent)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no advisory locks here: workers may both generate, and write the same
        yield
        return
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
