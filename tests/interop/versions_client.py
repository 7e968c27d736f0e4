"""A client speaking protocol versions 1 and 2 with ``versions.connect_versions``, for the
negotiation tests: it asks for VERSION, binds the version the agent answers, opens a session in
that version's models and prints one JSON line (the version, whether it is lower, the note and
the session id), or ``{"error": ...}``.

Usage: python versions_client.py V1_PACKAGE V2_PACKAGE VERSION -- AGENT_CMD [ARGS...]
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from typing import Any


def main() -> None:
    v1, v2, asked = sys.argv[1], sys.argv[2], int(sys.argv[3])
    command = sys.argv[sys.argv.index("--") + 1 :]
    packages = {1: v1, 2: v2}
    client = {n: importlib.import_module(f"{p}.client") for n, p in packages.items()}
    models = {n: importlib.import_module(f"{p}.models") for n, p in packages.items()}
    versions = importlib.import_module(f"{v1}.versions")
    rpc = importlib.import_module(f"{v1}._runtime.connection._rpc")

    def shape(version: int) -> dict[str, Any]:
        if version == 1:
            return {"clientCapabilities": {}, "clientInfo": {"name": "versions-client", "version": "1"}}
        return {"capabilities": {}, "info": {"name": "versions-client", "version": "2"}}

    def connector(n: int):
        return lambda reader, writer: client[n].ClientSideConnection(client[n].Client(), reader, writer)

    async def run() -> dict[str, Any]:
        process, reader, writer = await rpc.spawn(command[0], *command[1:])
        try:
            bound = await versions.connect_versions({1: connector(1), 2: connector(2)}, reader, writer, shape,
                                                    ask=asked)
        except (versions.UnsupportedVersion, rpc.RequestError, rpc.ConnectionClosed) as exc:
            writer.close()
            await process.wait()
            return {"error": str(exc)}
        params = {"cwd": os.getcwd(), "mcpServers": []}
        session = await bound.connection.agent.session_new(models[bound.version].NewSessionRequest.from_json(params))
        await bound.connection.close()
        await process.wait()
        return {"version": bound.version, "lower": bound.lower, "note": bound.note,
                "sessionId": session.session_id}

    print(json.dumps(asyncio.run(run())))


if __name__ == "__main__":
    main()
