"""A raw ACP client (protocol version 1) for the client kit's tests, that keeps every requirement
of the kit but the one it is told to break.

Usage: python sloppy_client.py MODE -- AGENT_CMD [ARGS...]

It runs ``initialize`` (advertising file reads and writes and terminals) -> ``session/new`` ->
one ``session/prompt``, answers the agent's permission requests with the first option offered,
serves ``fs/*`` (a file it wrote from memory, another from the disk) and ``terminal/*`` as if it
ran the command, then closes the agent's stdin and waits for it. MODE is ``keep`` (break
nothing), ``cancel`` (keep everything: first send a prompt the agent refuses, -32602, then cancel
the turn while its permission request is pending, and answer it ``cancelled``), ``read-only``
(keep everything, advertising file reads but no writes), or the id of the one requirement it
breaks (``permission.offered-option``, ...), with ``+`` and how where there are several ways
(``initialization.first+refused``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

MODE = sys.argv[1]
AGENT = sys.argv[sys.argv.index("--") + 1:]
PROMPT = [{"type": "text", "text": "hello kit"}]


class Sloppy:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = itertools.count(1)
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.files: dict[str, str] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def send(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((message if isinstance(message, str) else json.dumps(message)).encode() + b"\n")

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        request_id = next(self.ids)
        self.pending[request_id] = asyncio.get_running_loop().create_future()
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await self.pending[request_id]

    async def read(self) -> None:
        assert self.process.stdout is not None
        async for line in self.process.stdout:
            message = json.loads(line)
            if "method" in message and "id" in message:
                task = asyncio.ensure_future(self.answer(message))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
            elif "method" not in message and message.get("id") in self.pending:
                self.pending.pop(message["id"]).set_result(message)
        for waiting in self.pending.values():  # the agent went away
            waiting.set_exception(ConnectionError("the agent closed its stdout"))

    def result(self, request_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def answer(self, message: dict[str, Any]) -> None:
        method, params, request_id = message["method"], message.get("params") or {}, message["id"]
        if method == "session/request_permission":
            if MODE in ("cancel", "permission.cancelled-after-cancel"):
                self.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": params["sessionId"]}})
                await asyncio.sleep(0.05)
            offered = params["options"][0]["optionId"]
            outcome = ({"outcome": "cancelled"} if MODE == "cancel" else
                       {"outcome": "selected",
                        "optionId": "not-offered" if MODE == "permission.offered-option" else offered})
            self.result(request_id, {"outcome": outcome})
            if MODE == "jsonrpc.ids":
                self.result("an-id-never-sent", {})
        elif method == "fs/write_text_file":
            if MODE == "fs.write":
                self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "Internal error"}})
                return
            self.files[params["path"]] = params["content"]
            self.result(request_id, {})
        elif method == "fs/read_text_file":
            if MODE == "fs.read":
                text = "not what was written"
            elif params["path"] in self.files:
                text = self.files[params["path"]]
            else:  # a file the agent put there
                text = Path(params["path"]).read_text(encoding="utf-8")
            self.result(request_id, {"content": text})
        elif method == "terminal/create":
            self.result(request_id, {"terminalId": "sloppy-terminal"})
        elif method == "terminal/wait_for_exit":
            self.result(request_id, {"exitCode": 0})
        elif method == "terminal/output":
            output = "" if MODE == "terminal.run" else "acp-client-check\n"
            self.result(request_id, {"output": output, "truncated": False, "exitStatus": {"exitCode": 0}})
        elif method == "terminal/release":
            self.result(request_id, {})
        else:
            self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})

    async def run(self) -> None:
        reading = asyncio.ensure_future(self.read())
        if MODE == "initialization.first":
            await self.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        if MODE == "jsonrpc.envelope":
            self.send('{"jsonrpc": "2.0", "id": 99, "method": ')  # cut short: not JSON
        capabilities = {"fs": {"readTextFile": True, "writeTextFile": MODE != "read-only"}, "terminal": True}
        hello = {"protocolVersion": 1, "clientCapabilities": capabilities,
                 "clientInfo": {"name": "sloppy-client", "version": "1"}}
        if MODE == "initialization.first+refused":  # a version that is no number: -32602
            hello["protocolVersion"] = "one"
        await self.request("initialize", hello)
        if MODE == "capabilities.agent-advertised":  # the agent advertises no nes: nothing answers it
            self.send({"jsonrpc": "2.0", "method": "document/didOpen",
                       "params": {"sessionId": "any", "uri": "file:///a.py", "languageId": "python",
                                  "version": 1, "text": ""}})
        if MODE == "capabilities.known-method":
            await self.request("session/no_such_method", {})
        created = await self.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        if MODE == "session.additional-directories":  # run against an agent that does not advertise them
            await self.request("session/new", {"cwd": os.getcwd(), "mcpServers": [], "additionalDirectories": [os.getcwd()]})
        if "result" in created:
            await self.turns(created["result"]["sessionId"])
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()
        reading.cancel()

    async def turns(self, session_id: str) -> None:
        if MODE == "prompt.known-session":
            await self.request("session/prompt", {"sessionId": "never-created", "prompt": PROMPT})
        if MODE == "cancel":  # a prompt refused (-32602) ends its turn: the next is no second one
            refused = await self.request("session/prompt", {"sessionId": session_id, "prompt": "not a list"})
            assert refused["error"]["code"] == -32602, refused
        turns = 2 if MODE == "prompt.one-at-a-time" else 1
        await asyncio.gather(*(self.request("session/prompt", {"sessionId": session_id, "prompt": PROMPT})
                               for _ in range(turns)))


async def main() -> None:
    process = await asyncio.create_subprocess_exec(*AGENT, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE)
    await Sloppy(process).run()
    sys.exit(process.returncode)


if __name__ == "__main__":
    asyncio.run(main())
