"""Our client and our stub agent, each recording its spans with OpenTelemetry's SDK and its
in-memory exporter, for the tracing tests (tests/runtime/test_tracing.py).

* ``python traced.py agent OUT``: the stub agent on stdio; its spans go to OUT as they end.
* ``traced:app`` (for uvicorn): the stub agent's ASGI app; its spans go to ``$TRACE_OUT`` as they
  end (``$ACP_STUB_DELAY`` as for the stub agent).
* ``python traced.py client TARGET CWD [AGENT_OUT]``: a client that reads files, connected to
  ``traced.py agent AGENT_OUT`` spawned as its child (TARGET ``stdio``) or to a URL (WebSocket or
  Streamable HTTP);
  it prompts once with a text and a link to ``CWD/hello.txt``, calls ``_nope`` (-32601) and
  cancels a second prompt, then prints its spans as one JSON line each.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EXPORTER = InMemorySpanExporter()


class Dump(SpanProcessor):
    """Writes every span recorded so far to a file each time one ends (a server is stopped by a
    signal: nothing is left to write then)."""

    def __init__(self, out: str) -> None:
        self.out = out

    def on_end(self, span: ReadableSpan) -> None:
        dump(self.out)


def record(service: str, out: str | None = None) -> None:
    """Record this process's spans in memory (and write them to ``out`` as they end)."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    if out is not None:
        provider.add_span_processor(Dump(out))
    trace.set_tracer_provider(provider)


def rows() -> list[dict[str, Any]]:
    """The spans recorded so far, as JSON values."""
    return [
        {
            "service": span.resource.attributes["service.name"],
            "name": span.name,
            "kind": span.kind.name,
            "trace": f"{span.context.trace_id:032x}",
            "span": f"{span.context.span_id:016x}",
            "parent": f"{span.parent.span_id:016x}" if span.parent is not None else None,
            "attributes": dict(span.attributes or {}),
            "status": span.status.status_code.name,
            "description": span.status.description,
            "start": span.start_time,
        }
        for span in EXPORTER.get_finished_spans()
    ]


def dump(out: str) -> None:
    with open(out, "w") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows())


def __getattr__(name: str) -> Any:
    if name != "app":
        raise AttributeError(name)
    record("agent", os.environ["TRACE_OUT"])
    from acp_bindings.stub_agent import app

    globals()["app"] = app  # recorded once, however often the server asks
    return app


async def drive(target: str, cwd: str, agent_out: str | None) -> None:
    import acp_bindings as acp
    from acp_bindings import builders, models
    from acp_bindings._runtime.wire._codec import decode
    from acp_bindings.client import connect_agent

    updated = asyncio.Event()

    class Reader(acp.Client):
        async def fs_read_text_file(self, params: models.ReadTextFileRequest) -> models.ReadTextFileResponse:
            return models.ReadTextFileResponse(content="from the client")

        async def session_update(self, params: models.SessionNotification) -> None:
            updated.set()

    if target == "stdio":
        command = (sys.executable, __file__, "agent", str(agent_out))
        connecting = acp.spawn_agent(Reader(), *command)
    else:
        connecting = connect_agent(Reader(), target)
    async with connecting as client:
        capabilities = {"fs": {"readTextFile": True}}
        await client.agent.initialize(decode(models.InitializeRequest, {"protocolVersion": 1, "clientCapabilities": capabilities}))
        session = await client.agent.session_new(models.NewSessionRequest(cwd=cwd, mcp_servers=[]))
        link = builders.content_block.resource_link(name="hello", uri=f"file://{cwd}/hello.txt")
        prompt = models.PromptRequest(session_id=session.session_id, prompt=[builders.content_block.text("one two"), link])
        await client.agent.session_prompt(prompt)
        try:
            await client.agent.ext_method("_nope", {})
        except acp.RequestError:
            pass
        slow = models.PromptRequest(session_id=session.session_id, prompt=[builders.content_block.text("a b c d e f")])
        updated.clear()
        call = asyncio.ensure_future(client.agent.session_prompt(slow))
        await asyncio.wait_for(updated.wait(), 30)  # its handler runs: cancel it mid-way
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        await asyncio.sleep(0.2)  # the agent answers the cancelled prompt -32800


def main(argv: list[str]) -> None:
    if argv[0] == "agent":
        record("agent", argv[1])
        from acp_bindings.stub_agent import main as stub_agent

        stub_agent(["--delay", "0.1"])
        return
    record("client")
    asyncio.run(drive(argv[1], argv[2], argv[3] if len(argv) > 3 else None))
    for row in rows():
        print(json.dumps(row))


if __name__ == "__main__":
    main(sys.argv[1:])
