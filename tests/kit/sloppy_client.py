"""A raw ACP client (protocol version 1) for the client kit's tests, that keeps every requirement
of the kit but the one it is told to break.

Usage: python sloppy_client.py MODE -- AGENT_CMD [ARGS...]

It runs ``initialize`` (advertising file reads and writes and terminals) -> ``session/new`` ->
one ``session/prompt``, answers the agent's permission requests with the first option offered,
serves ``fs/*`` from memory and ``terminal/*`` as if it ran the command, then closes the agent's
stdin and waits for it. MODE is ``keep`` (break nothing), ``cancel`` (keep everything, and cancel
the turn while its permission request is pending, then answer it ``cancelled``), or the id of the
one requirement it breaks (``permission.offered-option``, ...).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
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
            text = "not what was written" if MODE == "fs.read" else self.files.get(params["path"], "")
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
        capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
        await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities,
                                          "clientInfo": {"name": "sloppy-client", "version": "1"}})
        if MODE == "capabilities.agent-advertised":
            await self.request("session/no_such_method", {})
        created = await self.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        session_id = created["result"]["sessionId"]
        if MODE == "prompt.known-session":
            await self.request("session/prompt", {"sessionId": "never-created", "prompt": PROMPT})
        turns = 2 if MODE == "prompt.one-at-a-time" else 1
        await asyncio.gather(*(self.request("session/prompt", {"sessionId": session_id, "prompt": PROMPT})
                               for _ in range(turns)))
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()
        reading.cancel()


async def main() -> None:
    process = await asyncio.create_subprocess_exec(*AGENT, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE)
    await Sloppy(process).run()
    sys.exit(process.returncode)


if __name__ == "__main__":
    asyncio.run(main())
