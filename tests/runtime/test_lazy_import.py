"""Importing the package or its models imports no asyncio and no runtime until a runtime name is
used; the root's runtime names still import, type-check and name the same objects."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import BINDINGS

from acpgen.render.modules import BY_NAME

RPC = f"acp_bindings.{BY_NAME['_rpc.py'].dotted}"  # where the runtime's facade is
RUNTIME_MODULES = ("asyncio", RPC, "acp_bindings.agent", "acp_bindings.client")
#: Nor logging (imported at the first repair the codec logs) nor threading: importing the
#: package stays within 0.1 of the official SDK's import (make bench-codec).
HEAVIER = ("logging", "threading")


def run(code: str) -> str:
    """Run ``code`` in a fresh interpreter without site (nothing imported but what it imports)."""
    result = subprocess.run(
        [sys.executable, "-S", "-c", f"import sys; sys.path.insert(0, {str(BINDINGS)!r})\n{code}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("statement", ["import acp_bindings", "import acp_bindings.models", "from acp_bindings import models, decode, encode, SessionNotification"])
def test_models_import_no_asyncio(statement: str) -> None:
    out = run(f"{statement}\nprint(sorted(m for m in {RUNTIME_MODULES + HEAVIER!r} if m in sys.modules))")
    assert out.strip() == "[]"


def test_runtime_names_import_on_first_use() -> None:
    out = run(
        "import acp_bindings\n"
        "from acp_bindings import Agent, RequestError, spawn_agent, in_memory_pair\n"
        "from acp_bindings.agent import Agent as A\n"
        f"from {RPC} import RequestError as R\n"
        "print(Agent is A, RequestError is R, 'asyncio' in sys.modules)\n"
        "print(sorted(set(acp_bindings.__all__) - set(dir(acp_bindings))))\n"
        "from acp_bindings import *\n"
        "print(run_agent.__module__)"
    )
    assert out.split("\n")[:3] == ["True True True", "[]", "acp_bindings.agent"]


def test_the_remote_entry_points_come_from_the_root_without_their_libraries() -> None:
    """``connect_agent`` and ``asgi_app`` are root names; neither imports websockets or httpx."""
    out = run(
        "from acp_bindings import asgi_app, connect_agent\n"
        "from acp_bindings.agent import asgi_app as A\n"
        "from acp_bindings.client import connect_agent as C\n"
        "import acp_bindings\n"
        "print(asgi_app is A, connect_agent is C, {'asgi_app', 'connect_agent'} <= set(acp_bindings.__all__))\n"
        "print(sorted(m for m in ('websockets', 'httpx', 'uvicorn') if m in sys.modules))"
    )
    assert out.split("\n")[:2] == ["True True True", "[]"]


def test_unknown_name_is_an_attribute_error() -> None:
    out = run(
        "import acp_bindings\n"
        "try:\n    acp_bindings.no_such_name\n"
        "except AttributeError as exc:\n    print(exc)\n"
        "print('asyncio' in sys.modules)"
    )
    assert out.split("\n")[:2] == ["module 'acp_bindings' has no attribute 'no_such_name'", "False"]


def test_runtime_modules_are_attributes_of_the_package_on_first_use() -> None:
    out = run(
        "import acp_bindings\n"
        "print('acp_bindings.agent' in sys.modules)\n"
        "print(acp_bindings.agent.Agent is acp_bindings.Agent, acp_bindings._rpc.RequestError.__name__)"
    )
    assert out.split("\n")[:2] == ["False", "True RequestError"]
