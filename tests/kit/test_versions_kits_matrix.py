"""Both conformance kits on every version of our own stubs, the whole matrix of
``support/kit_versions.py``, for ``make conformance`` (``ACPGEN_CONFORMANCE=1``; not collected
otherwise: ``test_versions_kits.py`` runs a subset covering each pair, transport and version once).

For the bundled schema and each pair of schemas of versions 1 and 2 (the spec's v1.7.0, the
TypeScript SDK 2.4.0's stable and unstable), over stdio, a WebSocket and Streamable HTTP:

- the agent kit: each version's package alone, its stub agent held to its version by its own kit
  and by the root kit of the package of both (which finds the version it answers); the root stub
  agent of the package of both (a router) held to version 1 and to 2 by each version's kit and by
  the root kit's ``--protocol-version``, and to 2 by the root kit alone;
- the client kit: each version's stub client against its stub agent in checking mode, and the
  package of both's stub clients (each version's, and the root's asking for each) against its
  root stub agent in checking mode.
"""

from __future__ import annotations

import pytest
from support.kit_versions import agent_kit, client_kit

RELEASES = ("v1.7.0", "sdk", "sdk unstable")
TRANSPORTS = ("stdio", "ws", "http")
AGENT_CASES = [
    ("bundled", "v1", "own"),
    *((release, agent, kit) for release in RELEASES for agent, kit in (
        ("v1", "own"), ("v2", "own"), ("v1", "root"), ("v2", "root"),
        ("both", "v1"), ("both", "v2"), ("both", "root"), ("both", "root:1"), ("both", "root:2"))),
]
CLIENT_CASES = [
    ("bundled", "v1", "own"),
    *((release, agent, client) for release in RELEASES for agent, client in (
        ("v1", "own"), ("v2", "own"), ("both", "v1"), ("both", "v2"), ("both", "root:1"), ("both", "root"))),
]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("release", "agent", "kit"), AGENT_CASES, ids=["-".join(case) for case in AGENT_CASES])
def test_the_agent_kit_passes_every_stub_agent_in_every_version(release, agent, kit, transport, monkeypatch):
    agent_kit(release, agent, kit, transport, monkeypatch)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("release", "agent", "client"), CLIENT_CASES, ids=["-".join(case) for case in CLIENT_CASES])
def test_the_client_kit_passes_every_stub_client_in_every_version(release, agent, client, transport, tmp_path):
    client_kit(release, agent, client, transport, tmp_path)
