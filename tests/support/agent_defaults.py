"""What the generated ``Agent`` base does by default for the spec's duties of every agent, held
on one package: each default holds, and an override replaces it. Over the wire (raw JSON through
the client's connection), so one check serves v1 and v2 packages of either flavour."""

from __future__ import annotations

from types import ModuleType
from typing import Any

RESOURCE_NOT_FOUND, METHOD_NOT_FOUND = -32002, -32601


def _hello(package: ModuleType) -> dict[str, Any]:
    """``initialize``'s params in the package's version's shape (v2 names the client ``info``)."""
    client = {"name": "test-client", "version": "1"}
    info = "info" if package.PROTOCOL_VERSION >= 2 else "clientInfo"
    return {"protocolVersion": package.PROTOCOL_VERSION, info: client}


def _info(answer: dict[str, Any]) -> Any:
    return answer.get("agentInfo", answer.get("info"))


async def _code(call: Any, package: ModuleType) -> tuple[int, Any]:
    try:
        await call
    except package.RequestError as exc:
        return exc.code, exc.data
    raise AssertionError("answered, not refused")


def _prompt(session_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}


async def check_the_defaults_hold(package: ModuleType) -> None:
    """A bare subclass that says only its name: initialize names it, session/new gives fresh ids,
    a prompt naming an open session reaches its handler (the base's: -32601), another is -32002."""

    class Named(package.Agent):  # type: ignore[misc,name-defined]
        name = "named-agent"

    new = {"cwd": "/", "mcpServers": []}
    async with package.in_memory_pair(Named(), package.Client()) as (_, client):
        rpc = client.rpc
        hello = await rpc.request("initialize", _hello(package))
        assert hello["protocolVersion"] == package.PROTOCOL_VERSION
        assert _info(hello) == {"name": "named-agent", "version": "0.0.0"}, hello
        first, second = [(await rpc.request("session/new", new))["sessionId"] for _ in range(2)]
        assert isinstance(first, str) and first and first != second
        assert await _code(rpc.request("session/prompt", _prompt(first)), package) == (
            METHOD_NOT_FOUND, {"method": "session/prompt"})  # the check let it through to the handler
        assert await _code(rpc.request("session/prompt", _prompt("nobody")), package) == (
            RESOURCE_NOT_FOUND, {"sessionId": "nobody"})
        assert (await rpc.request("session/new", new))["sessionId"] not in (first, second)
    async with package.in_memory_pair(package.Agent(), package.Client()) as (_, client):
        assert _info(await client.rpc.request("initialize", _hello(package)))["name"] == "Agent"


async def check_an_override_replaces_each(package: ModuleType) -> None:
    """``initialize``, ``session_new`` and ``session_known`` overridden: each answers as written;
    the id an overridden ``session/new`` answers is open, ``session/close`` closes it, a resumed
    session is open and a deleted one is not."""
    decode, models = package.decode, package.models

    class Own(package.Agent):  # type: ignore[misc,name-defined]
        version = "2.0"

        async def initialize(self, params: Any) -> Any:
            info = {"name": "own", "version": self.version, "title": "Own"}
            key = "info" if package.PROTOCOL_VERSION >= 2 else "agentInfo"
            return decode(models.InitializeResponse, {"protocolVersion": package.PROTOCOL_VERSION, key: info})

        async def session_new(self, params: Any) -> Any:
            return decode(models.NewSessionResponse, {"sessionId": f"mine-{len(self.open_sessions)}"})

        async def session_close(self, params: Any) -> Any:
            return decode(models.CloseSessionResponse, {})

        async def session_resume(self, params: Any) -> Any:
            return decode(models.ResumeSessionResponse, {})

        async def session_delete(self, params: Any) -> Any:  # where the draft has session/delete
            return decode(models.DeleteSessionResponse, {})

        async def session_prompt(self, params: Any) -> Any:
            raise package.RequestError(1, "reached", params.session_id)

        def session_known(self, session_id: str) -> bool:
            return session_id in self.open_sessions or session_id.startswith("shared-")

    async with package.in_memory_pair(Own(), package.Client()) as (_, client):
        rpc = client.rpc
        assert _info(await rpc.request("initialize", _hello(package))) == {"name": "own", "version": "2.0",
                                                                             "title": "Own"}
        mine = (await rpc.request("session/new", {"cwd": "/", "mcpServers": []}))["sessionId"]
        assert mine == "mine-0"
        assert await _code(rpc.request("session/prompt", _prompt(mine)), package) == (1, mine)
        assert await _code(rpc.request("session/prompt", _prompt("shared-7")), package) == (1, "shared-7")
        assert await rpc.request("session/close", {"sessionId": mine}) == {}
        assert await _code(rpc.request("session/prompt", _prompt(mine)), package) == (
            RESOURCE_NOT_FOUND, {"sessionId": mine})
        assert await _code(rpc.request("session/close", {"sessionId": mine}), package) == (
            RESOURCE_NOT_FOUND, {"sessionId": mine})
        await rpc.request("session/resume", {"sessionId": "stored", "cwd": "/"})  # a stored session, open now
        assert await _code(rpc.request("session/prompt", _prompt("stored")), package) == (1, "stored")
        if hasattr(models, "DeleteSessionRequest"):
            assert await rpc.request("session/delete", {"sessionId": "stored"}) == {}
            assert (await _code(rpc.request("session/prompt", _prompt("stored")), package))[0] == RESOURCE_NOT_FOUND
