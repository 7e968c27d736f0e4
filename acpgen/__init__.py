"""acpgen: generate Python bindings for the Agent Client Protocol from its JSON Schema.

The library in one import: ``from acpgen import generate, Options``. ``import acpgen`` stays
cheap: those names are imported from :mod:`acpgen.pipeline` on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from .version import __version__

__all__ = ["DiagnosticError", "Options", "Output", "__version__", "generate"]

#: Public name -> the module that defines it.
_LAZY = {"generate": "pipeline", "Options": "options", "Output": "pipeline", "DiagnosticError": "diagnostics"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
