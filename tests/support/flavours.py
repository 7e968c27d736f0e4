"""The pydantic flavour's packages, generated afresh from the source like :data:`support.BINDINGS`.

``acp_pydantic`` is the bundled schema's package with ``--models pydantic``; it has another name
than ``acp_bindings`` so both flavours can be imported by one test session side by side.
:func:`flavour_package` gives either flavour's package by the flavour's name, for tests that run
the same code on both.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from acpgen.pipeline import Options, generate
from support import bindings, write_package

PYDANTIC_PACKAGE = "acp_pydantic"
#: The flavours of the models (``--models``).
FLAVOURS = ("dataclasses", "pydantic")


@functools.cache
def pydantic_folder() -> Path:
    """The folder holding the freshly generated ``acp_pydantic`` package; on ``sys.path``."""
    folder = Path(tempfile.mkdtemp(prefix="acpgen-pydantic-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    write_package(generate(Options(package=PYDANTIC_PACKAGE, models="pydantic")).files, folder)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return folder


def pydantic_bindings() -> ModuleType:
    """The bundled schema's package in the pydantic flavour."""
    pydantic_folder()
    return importlib.import_module(PYDANTIC_PACKAGE)


def flavour_package(flavour: str) -> ModuleType:
    """The bundled schema's package in ``flavour`` (one of :data:`FLAVOURS`)."""
    return pydantic_bindings() if flavour == "pydantic" else bindings()


def submodule(package: ModuleType, name: str) -> ModuleType:
    """``package.name`` (``session``, ``builders``, ...), imported."""
    return importlib.import_module(f"{package.__name__}.{name}")
