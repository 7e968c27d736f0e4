"""acpgen: generate Python bindings for the Agent Client Protocol from its JSON Schema.

The library in one import: ``from acpgen import generate, Options``. ``import acpgen`` stays
cheap: those names are imported on first use.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["DiagnosticError", "Options", "Output", "__version__", "generate"]

if TYPE_CHECKING:
    from .diagnostics import DiagnosticError
    from .generate import Options, Output, generate

#: Public name -> the module that defines it.
_LAZY = {"Options": "generate", "Output": "generate", "DiagnosticError": "diagnostics"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    """``acpgen.generate`` is the function, although a submodule has that name too.

    Importing the submodule ``acpgen.generate`` would otherwise replace the attribute with the
    module; ``from acpgen.generate import ...`` still reaches the module through the import system.
    """

    @property
    def generate(self) -> Any:
        return importlib.import_module(f"{__name__}.generate").generate

    @generate.setter
    def generate(self, module: Any) -> None:
        pass  # the import system recording the submodule: it stays in sys.modules only


sys.modules[__name__].__class__ = _Package
