"""Both conformance kits on every version of a package of two: a subset of the matrix of
``support/kit_versions.py`` (``make conformance`` runs it whole) that covers each pair of schemas,
each transport and each version once, beside what ``test_agent_kit.py`` and ``test_client_kit.py``
cover (the bundled schema on stdio, the spec's v2 draft over a WebSocket, the TypeScript SDK's
stable pair's root kit on stdio).

The root stub agent of a package of two versions (a router) is held to version 1 by its v1 kit,
whose ``initialize`` for version 999 in v1's shape gets version 1 (the v2 agent cannot read it),
and by its root kit's ``--protocol-version 1``; to version 2 by its v2 kit; on the TypeScript SDK's
unstable pair, each version's stub refuses the session methods it does not advertise (archive,
title, status, fork) with -32601 whatever their params. The client kit holds each version's stub
client to the version it speaks, through the same router.
"""

from __future__ import annotations

import sys

import pytest
from support import BINDINGS
from support.kit import agents_import, kit_module
from support.kit_versions import agent_kit, client_kit
from support.versions import pair_package, v2_package


@pytest.mark.parametrize(
    ("release", "kit", "transport"),
    [("v1.7.0", "v1", "stdio"), ("sdk unstable", "root:1", "http"), ("sdk unstable", "v2", "ws")],
)
def test_the_agent_kit_holds_the_stub_router_to_each_version(release, kit, transport, monkeypatch):
    report = agent_kit(release, "both", kit, transport, monkeypatch)
    if release == "sdk unstable":  # the methods it does not serve: refused -32601, as not advertised
        assert {"capabilities.session/archive.unadvertised", "capabilities.session/set_title.unadvertised",
                "capabilities.session/status.unadvertised"} <= {r["id"] for r in report["requirements"]
                                                                if r["outcome"] == "passed"}


@pytest.mark.parametrize(
    ("release", "client", "transport"),
    [("v1.7.0", "root:2", "stdio"), ("sdk unstable", "v1", "http")],
)
def test_the_client_kit_holds_each_versions_stub_client_through_the_stub_router(release, client, transport,
                                                                                tmp_path):
    client_kit(release, "both", client, transport, tmp_path)


def test_the_root_kit_holds_an_agent_to_no_version_it_does_not_speak(monkeypatch, capsys):
    """``--protocol-version 1`` against the TypeScript SDK's v2 stub alone: refused (-32022), the
    agent is held to nothing, one line and exit status 1; a version the package has not is a
    usage error; a package of one version has no such option."""
    folder, name = pair_package("sdk unstable")
    v2_folder, v2_name = v2_package("sdk unstable")
    agents_import(monkeypatch, v2_folder)
    kit = kit_module(name, folder)
    assert kit.main(["--protocol-version", "1", "--", sys.executable, "-m", f"{v2_name}.stub_agent"]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("conformance: ") and "--protocol-version 1: asked for version 1, the agent answered " in line
    assert '"code":-32022' in line and line.endswith(": it does not speak it")
    one_version = kit_module("acp_bindings", BINDINGS)
    for module, args in ((kit, ["--protocol-version", "3"]), (one_version, ["--protocol-version", "1"])):
        with pytest.raises(SystemExit) as exited:
            module.main([*args, "--", "agent"])
        assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].endswith("unrecognized arguments: --protocol-version")
    assert any(line.endswith("argument --protocol-version: invalid choice: 3 (choose from 1, 2)") for line in err)
