"""The agent kit's whole matrix, for ``make conformance`` (``ACPGEN_CONFORMANCE=1``; not collected
otherwise: the default suite runs a combination-covering subset in ``test_agent_kit.py`` and
``test_agent_kit_sloppy.py``).

- every break of the sloppy agent alone, on the stub agent of a package whose schema has what it
  breaks: the kit fails that requirement and no other (or, of the level ADVICE, advises on it);
- the stub agent of every kind of package (the bundled schema's in both flavours, the spec's
  v1.7.0 v1 and v2, the TypeScript SDK's v2, the root of the SDK's two versions) over every
  transport (stdio, WebSocket, Streamable HTTP): nothing fails.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from support import BINDINGS, CORPUS, write_package
from support.flavours import pydantic_folder
from support.kit import (
    V2_DELAY,
    agents_import,
    details,
    kit_module,
    listening,
    outcomes,
    run_kit,
    sloppy_breaks,
    sloppy_command,
)
from support.run_cache import generated_files
from support.versions import several_versions_package, v2_package

from acpgen.pipeline import Options

# The whole matrix runs with make conformance (ACPGEN_CONFORMANCE=1) alone: tests/conftest.py does not
# collect this module otherwise, so the default run neither runs nor skips it.

#: The breaks only a package with session/delete has: run on the spec's v2 draft's stub.
ON_V2 = {"capabilities.delete", "capabilities.delete.unadvertised", "session-delete.unknown-session"}


@functools.cache
def _v1_spec() -> tuple[Path, str]:
    """The spec's v1.7.0 v1 schema's package (session/delete among its methods)."""
    folder = Path(tempfile.mkdtemp(prefix="acpgen-kit-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    write_package(generated_files(Options(schema=CORPUS / "v1.7.0--v1-schema.json", package="v1_spec")), folder)
    return folder, "v1_spec"


def _package(kind: str) -> tuple[Path, str, str, tuple[str, ...]]:
    """(folder, the package whose kit runs, the stub agent's module, its arguments)."""
    if kind == "v1":
        return BINDINGS, "acp_bindings", "acp_bindings.stub_agent", ()
    if kind == "v1-pydantic":
        return pydantic_folder(), "acp_pydantic", "acp_pydantic.stub_agent", ()
    if kind == "v1.7.0-v1":
        folder, package = _v1_spec()
        return folder, package, f"{package}.stub_agent", ()
    if kind == "root":
        return several_versions_package(), "both", "both.stub_agent", V2_DELAY
    folder, package = v2_package({"v1.7.0-v2": "v1.7.0", "sdk-v2": "sdk"}[kind])
    return folder, package, f"{package}.stub_agent", V2_DELAY


@pytest.mark.parametrize("broken", sorted(sloppy_breaks()))
def test_each_break_alone_fails_just_its_requirement(broken, monkeypatch):
    folder, package, stub, extra = _package("v1.7.0-v2" if broken in ON_V2 else "v1")
    agents_import(monkeypatch, folder)
    module = kit_module(package, folder)
    status, report = run_kit(module, "--timeout", "3", "--",
                             *sloppy_command([broken], [sys.executable, "-m", stub, *extra]))
    level = next(r["level"] for r in report["requirements"] if r["id"] == broken)
    advice = level == "ADVICE"
    assert outcomes(report, "failed") == (set() if advice else {broken}), details(report)
    assert outcomes(report, "advised") == ({broken} if advice else set()), details(report)
    assert status == (1 if level == "MUST" else 0)


KINDS = ("v1", "v1-pydantic", "v1.7.0-v1", "v1.7.0-v2", "sdk-v2", "root")


@pytest.mark.parametrize("transport", ["stdio", "ws", "http"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_stub_agent_over_every_transport_meets_every_requirement(kind, transport, monkeypatch):
    folder, package, stub, extra = _package(kind)
    module = kit_module(package, folder)
    remote = {"jsonrpc.parse-error"} if transport == "http" else set()
    if transport == "stdio":
        agents_import(monkeypatch, folder)
        _, report = run_kit(module, "--", sys.executable, "-m", stub, *extra)
        remote = set()
    else:
        with listening(stub.rpartition(".")[0], folder, *extra) as port:
            _, report = run_kit(module, "--url", f"{transport}://127.0.0.1:{port}/acp", "--token", "s3cret")
        remote |= {"transports.stdout-hygiene", "transports.shutdown"}
    assert outcomes(report, "failed") == outcomes(report, "advised") == set(), details(report)
    advertised = {r["id"] for r in report["requirements"] if r["id"].endswith(".unadvertised")}
    assert outcomes(report, "not applicable") == remote | advertised, details(report)
