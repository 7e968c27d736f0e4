"""The command line: parse options, call the library, report. Only this package writes files.

Each module adds its commands to the group in :mod:`.base`: :mod:`.generating` (``methods``,
``generate``), :mod:`.checking` (``check``), :mod:`.diffing` (``diff``), :mod:`.validating` (``validate``).
"""

from __future__ import annotations

from . import checking, diffing, generating, validating  # noqa: F401  (each registers its commands)
from .base import main

__all__ = ["main"]
