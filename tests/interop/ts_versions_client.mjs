// An ACP client written with the official TypeScript SDK, speaking protocol version 1 or 2.
//
// Usage: node ts_versions_client.mjs v1|v2 VERSION CWD AGENT_CMD [ARGS...]
// Spawns the agent and asks `initialize` for VERSION with the app of protocol
// version 1 or 2, then runs `session/new` -> `session/prompt`, answering
// permission requests with the first allow option. A v1 turn ends with the
// prompt's response; a v2 turn with an idle `state_update` once the prompt is
// taken. Prints one JSON summary line; an error is reported in it as `error`.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const [mode, version, cwd, command, ...args] = process.argv.slice(2);
const agentProcess = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const summary = { updates: [], permissions: [], stopReason: null };
const sdk = mode === "v1" ? v1 : v2;
let idle = () => {};
const ended = new Promise((resolve) => {
  idle = resolve;
});
let taken = false;
let running = false;

const app = sdk
  .client({ name: `interop-ts-client-${mode}` })
  .onNotification(sdk.methods.client.session.update, ({ params }) => {
    summary.updates.push(params);
    const update = params.update;
    if (update.sessionUpdate === "state_update") {
      if (update.state === "running") running = true;
      if (update.state === "idle" && (taken || running)) idle(update.stopReason ?? null);
    }
  })
  .onRequest(sdk.methods.client.session.requestPermission, ({ params }) => {
    summary.permissions.push(params);
    const option = params.options.find((o) => o.kind.startsWith("allow"));
    return { outcome: option ? { outcome: "selected", optionId: option.optionId } : { outcome: "cancelled" } };
  });

const stream = sdk.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));
try {
  await app.connectWith(stream, async (agent) => {
    const initialize =
      mode === "v1"
        ? {
            protocolVersion: Number(version),
            clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
            clientInfo: { name: "interop-ts-client-v1", version: "1.0.0" },
          }
        : { protocolVersion: Number(version), info: { name: "interop-ts-client-v2", version: "2.0.0" }, capabilities: {} };
    summary.initialize = await agent.request(sdk.methods.agent.initialize, initialize);
    const session = await agent.request(sdk.methods.agent.session.new, mode === "v1" ? { cwd, mcpServers: [] } : { cwd });
    summary.sessionId = session.sessionId;
    const response = await agent.request(sdk.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "Hello from the TypeScript client" }],
    });
    summary.response = response;
    taken = true;
    summary.stopReason = mode === "v1" ? response.stopReason : await ended;
  });
} catch (error) {
  summary.error = { code: error.code ?? null, message: String(error.message ?? error), data: error.data ?? null };
}
agentProcess.stdin.end();
process.stdout.write(JSON.stringify(summary) + "\n");
const code = await new Promise((resolve) => agentProcess.on("exit", resolve));
process.exitCode = code === 0 ? 0 : 3;
