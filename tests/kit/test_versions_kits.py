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

import pytest
from support.kit_versions import agent_kit, client_kit


@pytest.mark.parametrize(
    ("release", "kit", "transport"),
    [("v1.7.0", "v1", "stdio"), ("sdk unstable", "root:1", "http"), ("sdk unstable", "v2", "ws")],
)
def test_the_agent_kit_holds_the_stub_router_to_each_version(release, kit, transport, monkeypatch):
    report = agent_kit(release, "both", kit, transport, monkeypatch)
    if release == "sdk unstable":  # the methods it does not serve: refused -32601, as not advertised
        assert {"capabilities.session/archive", "capabilities.session/set_title",
                "capabilities.session/status"} <= {r["id"] for r in report["requirements"] if r["outcome"] == "passed"}


@pytest.mark.parametrize(
    ("release", "client", "transport"),
    [("v1.7.0", "root:2", "stdio"), ("sdk unstable", "v1", "http")],
)
def test_the_client_kit_holds_each_versions_stub_client_through_the_stub_router(release, client, transport,
                                                                                tmp_path):
    client_kit(release, "both", client, transport, tmp_path)
