"""The interop tests of :mod:`runtime.test_runtime_interop` (TypeScript SDK and official Python
SDK peers, both directions, over real pipes) with a package of the pydantic flavour: the same
runtime over the other models."""

from __future__ import annotations

import os
import sys

import pytest
from runtime import test_runtime_interop as interop
from support.flavours import PYDANTIC_PACKAGE, pydantic_folder


@pytest.fixture(autouse=True)
def pydantic_stubs(monkeypatch):
    folder = pydantic_folder()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])}
    monkeypatch.setattr(interop, "STUB_AGENT", (sys.executable, "-m", f"{PYDANTIC_PACKAGE}.stub_agent"))
    monkeypatch.setattr(interop, "STUB_CLIENT", (sys.executable, "-m", f"{PYDANTIC_PACKAGE}.stub_client"))
    monkeypatch.setattr(interop, "child_env", lambda: env)


@pytest.mark.parametrize("agent", [interop.TS_AGENT, interop.SDK_AGENT], ids=["typescript-sdk-agent", "python-sdk-agent"])
def test_pydantic_stub_client_drives_an_official_sdk_agent(tmp_path, agent):
    interop.test_stub_client_drives_an_official_sdk_agent(tmp_path, agent)


@pytest.mark.parametrize("client", [interop.TS_CLIENT, interop.SDK_CLIENT], ids=["typescript-sdk-client", "python-sdk-client"])
def test_official_sdk_client_drives_the_pydantic_stub_agent(tmp_path, client):
    interop.test_official_sdk_client_drives_the_stub_agent(tmp_path, client)


def test_the_stubs_run_on_the_pydantic_package():
    """The monkeypatched commands really name the pydantic package (so the tests above test it)."""
    assert interop.STUB_AGENT[-1] == f"{PYDANTIC_PACKAGE}.stub_agent"
    assert str(pydantic_folder()) in interop.child_env()["PYTHONPATH"]
