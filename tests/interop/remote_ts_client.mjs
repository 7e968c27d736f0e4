// The remote interop scenario's client (see remote_client.py), written with the official
// TypeScript SDK (experimental/ws-client, experimental/http-client).
//
// Usage: node remote_ts_client.mjs URL CWD
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import WebSocket from "ws";
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const [url, cwd] = process.argv.slice(2);
const token = process.env.ACP_TOKEN;
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const texts = [];
const reads = [];
let ticked;
const tick = new Promise((resolve) => (ticked = resolve));

const app = acp
  .client({ name: "remote-ts-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    texts.push(params.update.content.text);
    if (params.update.content.text.startsWith("tick")) ticked();
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
    outcome: { outcome: "selected", optionId: params.options.at(-1).optionId },
  }))
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
    reads.push(params.path);
    if (path.dirname(params.path) !== cwd) throw acp.RequestError.invalidParams({ path: params.path });
    return { content: await readFile(params.path, "utf8") };
  });

const stream = url.startsWith("ws")
  ? createWebSocketStream(url, { headers, WebSocket })
  : createHttpStream(url, { headers });
const summary = {};
const timeout = (ms) => new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), ms));
await app.connectWith(stream, async (agent) => {
  await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
  });
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const done = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "hello remote" }],
  });
  Object.assign(summary, { texts: texts.splice(0), stopReason: done.stopReason, reads });
  const turn = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "cancel" }] });
  await Promise.race([tick, timeout(10000)]);
  await agent.notify(acp.methods.agent.session.cancel, { sessionId });
  // the agent answers within 30 s even if the cancel is lost; the updates seen say where it stopped
  const late = timeout(30000).catch(() => {
    throw new Error(`no answer to the cancelled turn in 30 s; ${texts.length} updates seen, the last ${texts.slice(-1)}`);
  });
  summary.cancelStopReason = (await Promise.race([turn, late])).stopReason;
  summary.ticked = texts.length > 0 && texts.every((t) => t.startsWith("tick"));
});
process.stdout.write(JSON.stringify(summary) + "\n");
process.exit(0);
