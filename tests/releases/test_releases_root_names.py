"""Names at the package root never shadow each other: a type named like a runtime name (``Agent``,
``RequestError``, ``decode``, ``run_agent``, a submodule, ...) gets a name of its own, by the rule of
docs/reference/models.md, "Generated names", and ``__all__`` lists every name once."""

from __future__ import annotations

import dataclasses
import inspect

from support import generate_and_import, mini_schema

from acpgen.model.names import RUNTIME_NAMES

#: $defs named like what the root and the side modules bind, each used by a method so that the
#: side modules (which import their methods' types) meet them too.
CLASHING = ["Agent", "Client", "RequestError", "decode", "encode", "run_agent", "spawn_agent", "in_memory_pair",
            "DecodeError", "MethodInfo", "METHODS", "ConnectionClosed", "AgentSideConnection", "ClientProxy",
            "models", "agent", "asyncio"]


def _schema():
    doc = mini_schema()
    defs = doc["$defs"]
    for name in CLASHING:
        defs[name] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    defs["PingRequest"]["properties"].update({f"p{i}": {"$ref": f"#/$defs/{n}"} for i, n in enumerate(CLASHING)})
    defs["LogNotification"]["properties"]["who"] = {"$ref": "#/$defs/Who"}
    # a union whose variants are named by their tags: "agent" and "client", as v2's AuthMethod has
    defs["Who"] = {"oneOf": [
        {"type": "object", "properties": {"kind": {"const": tag}, "id": {"type": "string"}}, "required": ["kind"]}
        for tag in ("agent", "client", "request_error")
    ]}
    return doc


def test_types_named_like_runtime_names_keep_a_working_name(tmp_path):
    acp = generate_and_import(_schema(), tmp_path)
    assert len(acp.__all__) == len(set(acp.__all__)), [n for n in acp.__all__ if acp.__all__.count(n) > 1]
    for name in acp.__all__:
        assert hasattr(acp, name), name
    # the runtime keeps its names at the root ...
    assert inspect.isclass(acp.Agent) and hasattr(acp.Agent, "on_connect")
    assert issubclass(acp.RequestError, Exception) and callable(acp.decode) and callable(acp.encode)
    assert inspect.iscoroutinefunction(acp.run_agent) and inspect.ismodule(acp.models)
    assert acp.METHODS[0].method in {"ping", "log/line"}
    # ... and every type gets its name with a `_` suffix, from the root and from models alike
    for name in CLASHING:
        cls = getattr(acp, name + "_")
        assert dataclasses.is_dataclass(cls) and cls is getattr(acp.models, name + "_"), name
        assert name + "_" in acp.__all__
        value = acp.decode(cls, {"n": 1})
        assert acp.encode(value) == {"n": 1}
    # variants named by tags that meet a runtime name append their union's name
    for tag, cls_name in (("agent", "AgentWho"), ("client", "ClientWho"), ("request_error", "RequestErrorWho")):
        value = acp.decode(acp.Who, {"kind": tag})
        assert type(value).__name__ == cls_name and getattr(acp, cls_name) is type(value)
    ping = acp.decode(acp.PingRequest, {"sessionId": "s", "p0": {"n": 2}})
    assert isinstance(ping.p0, acp.Agent_)


def test_the_reserved_names_cover_what_the_root_binds(tmp_path):
    acp = generate_and_import(mini_schema(), tmp_path)
    runtime = set(acp.__all__) - set(acp.models.__all__)
    submodules = {name for name in dir(acp) if inspect.ismodule(getattr(acp, name))}
    assert runtime <= RUNTIME_NAMES | {"DecodeError", "decode", "encode"}
    assert submodules - {"_codec", "_rpc"} <= RUNTIME_NAMES
