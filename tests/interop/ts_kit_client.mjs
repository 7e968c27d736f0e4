// An ACP client written with the official TypeScript SDK that does what a client must: the client
// kit's tests run it against the stub agent's checking mode (`stub_agent --check`).
//
// Usage: node ts_kit_client.mjs AGENT_CMD [ARGS...]
// Spawns the agent, runs initialize (advertising file reads and writes) -> session/new (in the
// current folder) -> one session/prompt, answers each permission request with the first option
// offered, serves fs/write_text_file and fs/read_text_file from memory, and prints the stop reason.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [command, ...args] = process.argv.slice(2);
const agentProcess = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const files = new Map();

const app = acp
  .client({ name: "ts-kit-client" })
  .onNotification(acp.methods.client.session.update, () => {})
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => ({
    outcome: { outcome: "selected", optionId: params.options[0].optionId },
  }))
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
    files.set(params.path, params.content);
    return {};
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
    if (!files.has(params.path)) throw acp.RequestError.resourceNotFound(params.path);
    return { content: files.get(params.path) };
  });

const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));
let stopReason = null;
await app.connectWith(stream, async (agent) => {
  await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "ts-kit-client", version: "1.0.0" },
  });
  const session = await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
  const response = await agent.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Hello from the TypeScript kit client" }],
  });
  stopReason = response.stopReason;
});
agentProcess.stdin.end();
process.stdout.write(JSON.stringify({ stopReason }) + "\n");
const code = await new Promise((resolve) => agentProcess.on("exit", resolve));
process.exitCode = code ?? 3;
