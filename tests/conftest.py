from __future__ import annotations

import csv
import functools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from acpgen.cli import main
from acpgen.schema.loader import LoadedSchema, load_schema

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "corpus"
BUNDLED = ROOT / "acpgen" / "schema" / "schema.unstable.json"


def corpus_index() -> list[dict[str, str]]:
    with open(CORPUS / "INDEX.tsv", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@functools.lru_cache(maxsize=None)
def load_corpus(file: str) -> LoadedSchema:
    """Load a corpus schema once per test session (meta-schema validation is the slow part)."""
    return load_schema(CORPUS / file)


def bundled_document() -> dict[str, Any]:
    return json.loads(BUNDLED.read_text())


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


def mini_schema() -> dict[str, Any]:
    """A small hand-made ACP-like schema: one agent request, one client notification."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
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
        },
    }
