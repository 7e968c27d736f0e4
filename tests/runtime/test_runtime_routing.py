"""Every method of the table is routed: called through a proxy, it reaches its handler.

For each side, a recorder overrides every handler of the generated base class; each method of
``METHODS`` is called through the peer's typed proxy with minimal valid params (built from the
schema, checked by jsonschema), and the handler must receive exactly those params and its
minimal valid result must come back exactly.
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp_bindings as acp
import pytest
from acp_bindings import models
from acp_bindings._runtime.wire._codec import decode, encode
from support.runtime import run_async_tests
from support.schema_instances import minimal as _minimal


def minimal(name: str) -> Any:
    """A minimal valid instance of the type ``name``; an initialize asks for (and is answered
    with) the version the package speaks, as the connection negotiates it before its handler."""
    value = _minimal(name)
    if isinstance(value, dict) and "protocolVersion" in value:
        value = {**value, "protocolVersion": acp.PROTOCOL_VERSION}
    return value


def _methods(side: str) -> list[Any]:
    return [m for m in acp.METHODS if m.side == side]


def _recorder(base: type, side: str, calls: list[tuple[str, Any]]) -> Any:
    """A subclass of ``base`` whose every handler records its params and answers minimally."""

    def handler(method: Any) -> Any:
        async def handle(self: Any, params: Any) -> Any:
            calls.append((method.method, encode(params)))
            if method.result is None:
                return None
            return decode(getattr(models, method.result), minimal(method.result))

        return handle

    namespace = {m.py_name: handler(m) for m in _methods(side)}
    namespace["session_known"] = lambda self, session_id: True  # minimal params name sessions never opened
    return type(f"Recording{base.__name__}", (base,), namespace)()


@pytest.mark.parametrize("side", ["agent", "client"])
async def test_every_method_is_routed_through_a_proxy_into_its_handler(side):
    calls: list[tuple[str, Any]] = []
    methods = _methods(side)
    assert methods, f"no {side} methods in the table"
    if side == "agent":
        agent, client = _recorder(acp.Agent, side, calls), acp.Client()
    else:
        agent, client = acp.Agent(), _recorder(acp.Client, side, calls)
    async with acp.in_memory_pair(agent, client) as (agent_side, client_side):
        proxy = client_side.agent if side == "agent" else agent_side.client
        for method in methods:
            params = minimal(method.params)
            result = await getattr(proxy, method.py_name)(decode(getattr(models, method.params), params))
            if method.kind == "request":
                assert encode(result) == minimal(method.result), method.method
            else:
                assert result is None
                for _ in range(100):  # a notification is handled in the background
                    if calls and calls[-1][0] == method.method:
                        break
                    await asyncio.sleep(0.001)
            assert calls[-1] == (method.method, params), method.method
    assert [c[0] for c in calls] == [m.method for m in methods]


@pytest.mark.parametrize("side", ["agent", "client"])
def test_handler_bases_and_proxies_have_one_documented_method_per_method(side):
    base, proxy = (acp.Agent, acp.AgentProxy) if side == "agent" else (acp.Client, acp.ClientProxy)
    for method in _methods(side):
        for owner in (base, proxy):
            function = getattr(owner, method.py_name)
            assert asyncio.iscoroutinefunction(function), (owner, method.id)
            assert method.method in (function.__doc__ or ""), (owner, method.id)


run_async_tests(globals())
