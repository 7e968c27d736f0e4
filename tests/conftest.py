"""Fixtures for every test; shared helpers are in ``support`` (``tests/support/``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import support  # noqa: F401  (generates the fresh bindings and puts them on sys.path before collection)
from click.testing import CliRunner

from acpgen.cli import main


@pytest.fixture
def cli():
    """Run the acpgen CLI in-process; returns click's Result (stdout and stderr kept apart)."""
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return run


@pytest.fixture
def write_schema(tmp_path):
    """Write a schema document (a dict, or raw text) to a file and return its path."""

    def write(doc: Any, name: str = "schema.json") -> Path:
        path = tmp_path / name
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
        return path

    return write
