// An ACP client written with the official TypeScript SDK, speaking protocol version 1 or 2.
//
// Usage: node ts_versions_client.mjs v1|v2 VERSION CWD AGENT_CMD [ARGS...]
//        node ts_versions_client.mjs v1|v2 VERSION CWD URL
// Spawns the agent (or connects to URL, ws:// or http://, with the SDK's
// experimental WebSocket and Streamable HTTP clients; ACP_TOKEN is the bearer
// token) and asks `initialize` for VERSION with the app of protocol version 1
// or 2, then runs `session/new` -> `session/prompt`, answering permission
// requests with the first allow option. A v1 turn ends with the prompt's
// response; a v2 turn with an idle `state_update` once the prompt is taken.
// VERSION may list several, comma-separated: each but the last is expected to
// be refused, and is recorded in `refused` with the error of a `session/new`
// sent next on the same connection; an empty last one stops there. If a v2
// `session/new` answers -32000 (authentication required), it logs in with the
// first advertised auth method of type `agent` (`auth/login`) and tries once
// more, recording the error as `authRequired` and the method id in `logins`.
// Prints one JSON summary line; an error is reported in it as `error`.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import WebSocket from "ws";
import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const [mode, version, cwd, command, ...args] = process.argv.slice(2);
const remote = /^(ws|http)s?:\/\//.test(command);
const agentProcess = remote ? null : spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const summary = { updates: [], permissions: [], stopReason: null, refused: [], logins: [] };
const asks = version.split(",");
const errorOf = (error) => ({ code: error.code ?? null, message: String(error.message ?? error), data: error.data ?? null });
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

const headers = process.env.ACP_TOKEN ? { Authorization: `Bearer ${process.env.ACP_TOKEN}` } : {};
const stream = !remote
  ? sdk.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout))
  : command.startsWith("ws")
    ? createWebSocketStream(command, { headers, WebSocket })
    : createHttpStream(command, { headers });
const initialize = (asked) =>
  mode === "v1"
    ? {
        protocolVersion: Number(asked),
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "interop-ts-client-v1", version: "1.0.0" },
      }
    : { protocolVersion: Number(asked), info: { name: "interop-ts-client-v2", version: "2.0.0" }, capabilities: {} };
const newSession = mode === "v1" ? { cwd, mcpServers: [] } : { cwd };
const startSession = (agent) =>
  agent.request(sdk.methods.agent.session.new, newSession).catch(async (error) => {
    const method = (summary.initialize.authMethods ?? []).find((m) => m.type === "agent");
    if (mode !== "v2" || error.code !== -32000 || !method) throw error;
    summary.authRequired = errorOf(error);
    summary.logins.push(method.methodId);
    await agent.request(sdk.methods.agent.auth.login, { methodId: method.methodId });
    return agent.request(sdk.methods.agent.session.new, newSession);
  });
try {
  await app.connectWith(stream, async (agent) => {
    for (const asked of asks.slice(0, -1)) {
      const refusal = await agent.request(sdk.methods.agent.initialize, initialize(asked)).then(
        (answer) => ({ answer }),
        errorOf,
      );
      refusal.next = await agent.request(sdk.methods.agent.session.new, newSession).then((answer) => ({ answer }), errorOf);
      summary.refused.push(refusal);
    }
    if (asks.at(-1) === "") return;
    summary.initialize = await agent.request(sdk.methods.agent.initialize, initialize(asks.at(-1)));
    const session = await startSession(agent);
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
  summary.error = errorOf(error);
}
process.stdout.write(JSON.stringify(summary) + "\n");
if (remote) process.exit(0);
agentProcess.stdin.end();
const code = await new Promise((resolve) => agentProcess.on("exit", resolve));
process.exitCode = code === 0 ? 0 : 3;
