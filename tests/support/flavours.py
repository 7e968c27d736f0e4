"""The pydantic flavour's packages, generated afresh from the source like :data:`support.BINDINGS`.

``acp_pydantic`` is the bundled schema's package with ``--models pydantic``; it has another name
than ``acp_bindings`` so both flavours can be imported by one test session side by side.
:func:`flavour_package` gives either flavour's package by the flavour's name, for tests that run
the same code on both, and :func:`flavour_env` a child process's environment in which
``acp_bindings`` is either flavour's package (for the examples and the docs' blocks, which import
it by that name).
"""

from __future__ import annotations

import atexit
import functools
import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from acpgen.pipeline import Options
from support import BINDINGS, bindings, write_package
from support.run_cache import generated_files

PYDANTIC_PACKAGE = "acp_pydantic"
#: The flavours of the models (``--models``).
FLAVOURS = ("dataclasses", "pydantic")


@functools.cache
def pydantic_folder() -> Path:
    """The folder holding the freshly generated ``acp_pydantic`` package; on ``sys.path``."""
    folder = Path(tempfile.mkdtemp(prefix="acpgen-pydantic-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    write_package(generated_files(Options(package=PYDANTIC_PACKAGE, models="pydantic")), folder)
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


@functools.cache
def pydantic_as_bindings() -> Path:
    """A folder holding the bundled schema's package in the pydantic flavour under the name
    ``acp_bindings`` (not on this process's ``sys.path``: the dataclass one is)."""
    folder = Path(tempfile.mkdtemp(prefix="acpgen-pydantic-bindings-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    write_package(generated_files(Options(models="pydantic")), folder)
    return folder


def flavour_env(flavour: str) -> dict[str, str]:
    """This environment, with ``acp_bindings`` the package of ``flavour`` (one of :data:`FLAVOURS`)."""
    folder = pydantic_as_bindings() if flavour == "pydantic" else BINDINGS
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])}
