"""An agent and a client connected in memory, for tests and in-process use."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ._runtime.connection import _rpc
from .agent import Agent, AgentSideConnection
from .client import Client, ClientSideConnection

__all__ = ["in_memory_pair"]


@contextlib.asynccontextmanager
async def in_memory_pair(
    agent: Agent, client: Client, *, max_message_size: int = _rpc.DEFAULT_MAX_MESSAGE_SIZE
) -> AsyncIterator[tuple[AgentSideConnection, ClientSideConnection]]:
    """Connect ``agent`` and ``client`` through in-memory pipes; both connections close on exit.

    ``async with in_memory_pair(MyAgent(), MyClient()) as (agent_conn, client_conn): ...``.
    Messages still go through JSON encoding, so this behaves like a real connection.
    """
    (agent_reader, agent_writer), (client_reader, client_writer) = _rpc.memory_pipe()
    agent_side = AgentSideConnection(
        agent, agent_reader, agent_writer, max_message_size=max_message_size
    )
    client_side = ClientSideConnection(
        client, client_reader, client_writer, max_message_size=max_message_size
    )
    try:
        yield agent_side, client_side
    finally:
        await client_side.close()
        await agent_side.close()
