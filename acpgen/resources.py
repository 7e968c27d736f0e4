"""Where acpgen's own files are: the bundled schema and the built-in templates.

In an installed wheel they live inside the package (``acpgen/schema``, ``acpgen/templates``);
in a source checkout or an editable install they are the repository's top-level folders.
"""

from __future__ import annotations

import json
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_HERE / name, _HERE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"acpgen installation is missing its {name!r} folder")


def bundled_schema() -> Path:
    return _find("schema") / "schema.unstable.json"


def bundled_schema_sha256() -> str:
    """The sha256 that ``schema/SOURCE.json`` records for the bundled schema."""
    source = json.loads((_find("schema") / "SOURCE.json").read_text(encoding="utf-8"))
    return str(source["sha256"])


def templates_dir() -> Path:
    return _find("templates")


def runtime_source(name: str) -> str:
    """The source of a runtime module (``_rpc.py``), copied into every generated package."""
    return (_HERE / "runtime" / name).read_text(encoding="utf-8")
