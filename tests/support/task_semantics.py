"""Run by tests/runtime/test_wire_task_semantics.py under each Python: what a request handler
sees of asyncio, in memory and over pipes, printed as JSON.

``python task_semantics.py`` prints ``{"memory": {...}, "pipes": {...}}``; with ``agent`` it
serves the agent on its stdio (the pipes case starts it so).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import sys
from typing import Any

import acp_bindings as acp
from acp_bindings import models

_var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")


class Agent(acp.Agent):
    def __init__(self) -> None:
        self.cancelled: list[Any] = []

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_sleep":
            task = asyncio.current_task()
            assert task is not None
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled.append(task.cancelling() if sys.version_info >= (3, 11) else "cancelled")
                raise
        if method == "_cancelled":
            await asyncio.sleep(0.05)  # the cancelled handler's task has finished by now
            return {"cancelled": self.cancelled}
        return await self.observe()

    async def observe(self) -> dict[str, Any]:
        task = asyncio.current_task()
        seen: dict[str, Any] = {
            "task_type": f"{type(task).__module__}.{type(task).__qualname__}",
            "is_task": isinstance(task, asyncio.Task),
            "in_all_tasks": task in asyncio.all_tasks(),
            "context_var": _var.get(),
        }
        _var.set("set by a handler")  # must not leak into the next request's handler
        try:
            await asyncio.wait_for(asyncio.sleep(10), 0.01)
        except asyncio.TimeoutError:
            seen["wait_for"] = "timed out"
        inner = asyncio.ensure_future(asyncio.sleep(10))
        asyncio.get_running_loop().call_soon(inner.cancel)
        try:
            await inner
        except asyncio.CancelledError:
            seen["inner_cancel"] = "cancelled"
        if sys.version_info >= (3, 11):
            try:
                async with asyncio.timeout(0.01):
                    await asyncio.sleep(10)
            except TimeoutError:
                seen["timeout"] = "timed out"
            async with asyncio.TaskGroup() as group:
                parts = [group.create_task(asyncio.sleep(0, word)) for word in ("a", "b")]
            seen["task_group"] = [part.result() for part in parts]
            seen["cancelling"] = asyncio.current_task().cancelling()  # type: ignore[union-attr]
        return seen


async def drive(agent: Any) -> dict[str, Any]:
    """Two observations (the second shows the first's context var did not leak), and a call
    cancelled by the client (its handler sees the cancellation)."""
    first = await agent.ext_method("_observe", {})
    second = await agent.ext_method("_observe", {})
    try:
        await asyncio.wait_for(agent.ext_method("_sleep", {}), 0.2)
    except asyncio.TimeoutError:
        pass
    cancelled = await agent.ext_method("_cancelled", {})
    return {"first": first, "second": second, **cancelled}


async def main() -> None:
    results: dict[str, Any] = {}
    async with acp.in_memory_pair(Agent(), acp.Client()) as (_, client):
        results["memory"] = await drive(client.agent)
    async with acp.spawn_agent(acp.Client(), sys.executable, __file__, "agent") as client:
        results["pipes"] = await drive(client.agent)
    print(json.dumps(results))


if __name__ == "__main__":
    if sys.argv[1:] == ["agent"]:
        asyncio.run(acp.run_agent(Agent()))
    else:
        asyncio.run(main())
    _ = models  # the package's models import with it
