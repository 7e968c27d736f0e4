"""The generated ``Agent`` base's defaults for what the spec asks of every agent (initialize names
it, session/new answers fresh ids, a request naming a session that is not open is -32002), each
holding and each replaced by an override: on the bundled schema's package in both flavours and on
a v2 draft's (v1.7.0's) dataclass package; its pydantic package is held to the same in
``tests/workflow/test_pydantic_v2.py``, which generates it."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

import pytest
from support import bindings
from support.agent_defaults import (
    check_an_override_replaces_each,
    check_the_defaults_hold,
)
from support.flavours import pydantic_bindings
from support.runtime import run_async_tests
from support.versions import v2_package


def _v2() -> ModuleType:
    folder, name = v2_package("v1.7.0")
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)


PACKAGES = {"v1-dataclasses": bindings, "v1-pydantic": pydantic_bindings, "v2-dataclasses": _v2}


@pytest.mark.parametrize("package", PACKAGES)
async def test_the_defaults_hold(package: str) -> None:
    await check_the_defaults_hold(PACKAGES[package]())


@pytest.mark.parametrize("package", PACKAGES)
async def test_an_override_replaces_each_default(package: str) -> None:
    await check_an_override_replaces_each(PACKAGES[package]())


run_async_tests(globals())
