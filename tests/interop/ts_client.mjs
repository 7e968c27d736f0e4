// An ACP client written with the official TypeScript SDK, for the interop tests.
//
// Usage: node ts_client.mjs CWD AGENT_CMD [ARGS...]
// Spawns the agent, runs initialize -> session/new -> session/prompt (text plus a
// resource_link to CWD/hello.txt), serves fs/read_text_file for CWD, calls an
// extension method the agent does not have, and prints one JSON summary line.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [cwd, command, ...args] = process.argv.slice(2);
const agentProcess = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const summary = { updates: [], reads: [], stopReason: null };

async function outcome(promise) {
  try {
    return { ok: await promise };
  } catch (error) {
    return { code: error.code ?? null, message: String(error.message ?? error) };
  }
}

const app = acp
  .client({ name: "interop-ts-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    summary.updates.push(params);
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
    summary.reads.push(params.path);
    if (path.dirname(params.path) !== cwd) {
      throw acp.RequestError.invalidParams({ path: params.path });
    }
    return { content: await readFile(params.path, "utf8") };
  });

const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));
await app.connectWith(stream, async (agent) => {
  const init = await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
    clientInfo: { name: "interop-ts-client", version: "1.0.0" },
  });
  summary.initialize = init;
  const session = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  summary.sessionId = session.sessionId;
  const response = await agent.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [
      { type: "text", text: "Hello from the TypeScript client" },
      { type: "resource_link", uri: `file://${path.join(cwd, "hello.txt")}`, name: "hello.txt" },
    ],
  });
  summary.stopReason = response.stopReason;
  summary.updatesBeforeStop = summary.updates.length;
  summary.missing = await outcome(agent.request("_interop/missing", { probe: true }));
});
agentProcess.stdin.end();
process.stdout.write(JSON.stringify(summary) + "\n");
const code = await new Promise((resolve) => agentProcess.on("exit", resolve));
process.exitCode = code === 0 ? 0 : 3;
