"""An agent serving protocol versions 1 and 2 on one connection with the generated router, for
the negotiation tests: each version is served by its own package's stub agent.

Usage: python versions_router_agent.py V1_PACKAGE V2_PACKAGE [router|router-v1|router-v2]
(both packages importable; the router is V1_PACKAGE's ``_versions``).
"""

from __future__ import annotations

import asyncio
import importlib
import sys


def connector(package: str):
    agent = importlib.import_module(f"{package}.agent")
    stub = importlib.import_module(f"{package}.stub_agent")
    return lambda reader, writer: agent.AgentSideConnection(stub.StubAgent(), reader, writer)


def main() -> None:
    v1, v2, mode = sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else "router")
    versions = {"router": {1: connector(v1), 2: connector(v2)}, "router-v1": {1: connector(v1)},
                "router-v2": {2: connector(v2)}}[mode]
    router = importlib.import_module(f"{v1}._runtime.versions._versions")
    asyncio.run(router.serve_versions(versions))


if __name__ == "__main__":
    main()
