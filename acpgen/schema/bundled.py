"""The schema acpgen ships and uses when no ``--schema`` is given (ACP release v0.12.2).

It lives beside this module, with ``SOURCE.json`` recording where it came from and its sha256.
"""

from __future__ import annotations

import json
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def bundled_schema() -> Path:
    return _HERE / "schema.unstable.json"


def bundled_schema_sha256() -> str:
    """The sha256 that ``SOURCE.json`` records for the bundled schema."""
    source = json.loads((_HERE / "SOURCE.json").read_text(encoding="utf-8"))
    return str(source["sha256"])
