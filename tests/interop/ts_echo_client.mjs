// An ACP client written with the official TypeScript SDK, for the examples' tests.
//
// Usage: node ts_echo_client.mjs [--cancel] TEXT AGENT_CMD [ARGS...]
// Spawns the agent, runs initialize -> session/new -> session/prompt with TEXT, answers a
// permission request with its first allow option (with --cancel: sends session/cancel and
// answers "cancelled"), and prints one JSON line: the stop reason and every session update.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

let argv = process.argv.slice(2);
const cancel = argv[0] === "--cancel";
if (cancel) argv = argv.slice(1);
const [text, command, ...args] = argv;
const agentProcess = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const summary = { updates: [], permissions: 0, stopReason: null };
let sessionId = null;
let agentRef = null;

const app = acp
  .client({ name: "interop-ts-echo-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    summary.updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    summary.permissions += 1;
    if (cancel) {
      await agentRef.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    const allow = params.options.find((option) => option.kind.startsWith("allow"));
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));
await app.connectWith(stream, async (agent) => {
  agentRef = agent;
  await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const session = await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
  sessionId = session.sessionId;
  const response = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  });
  summary.stopReason = response.stopReason;
});
agentProcess.stdin.end();
process.stdout.write(JSON.stringify(summary) + "\n");
const code = await new Promise((resolve) => agentProcess.on("exit", resolve));
process.exitCode = code === 0 ? 0 : 3;
