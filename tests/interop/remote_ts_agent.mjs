// The remote interop scenario's agent (see remote_agent.py), written with the official
// TypeScript SDK and served by its Node adapter (experimental/server, experimental/node) over
// Streamable HTTP and WebSocket at http://127.0.0.1:PORT/acp.
//
// Usage: node remote_ts_agent.mjs PORT
import * as http from "node:http";
import * as path from "node:path";
import { WebSocketServer } from "ws";
import * as acp from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";

const port = Number(process.argv[2]);
const sessions = new Map();
const cancelled = new Map();
let counter = 0;

async function say(client, sessionId, text) {
  await client.notify(acp.methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function createAgent() {
  return acp
    .agent({ name: "remote-ts-agent" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, ({ params }) => {
      const sessionId = `ts-${++counter}-${process.pid}`;
      sessions.set(sessionId, params.cwd);
      return { sessionId };
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      cancelled.set(params.sessionId, true);
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const { sessionId } = params;
      const text = params.prompt.filter((b) => b.type === "text").map((b) => b.text).join("");
      if (text === "cancel") {
        cancelled.set(sessionId, false);
        for (let tick = 0; tick < 1500; tick++) {
          await say(client, sessionId, `tick ${tick}`);
          await sleep(20);
          if (cancelled.get(sessionId)) {
            return { stopReason: "cancelled" };
          }
        }
        return { stopReason: "end_turn" };
      }
      await say(client, sessionId, "start");
      const answer = await client.request(acp.methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "call-1", title: "Read hello.txt", kind: "read", status: "pending" },
        options: [
          { optionId: "no", name: "Reject", kind: "reject_once" },
          { optionId: "yes", name: "Allow", kind: "allow_once" },
        ],
      });
      await say(client, sessionId, `permission: ${answer.outcome.optionId ?? answer.outcome.outcome}`);
      const read = await client.request(acp.methods.client.fs.readTextFile, {
        sessionId,
        path: path.join(sessions.get(sessionId), "hello.txt"),
      });
      await say(client, sessionId, `read: ${read.content}`);
      for (const word of text.match(/\S+\s*/g) ?? []) {
        await say(client, sessionId, `echo: ${word}`);
      }
      return { stopReason: "end_turn" };
    });
}

const server = new AcpServer({ createAgent });
const httpServer = http.createServer(createNodeHttpHandler(server));
const webSocketServer = new WebSocketServer({ noServer: true });
httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, webSocketServer));
httpServer.listen(port, "127.0.0.1", () => process.stdout.write(`listening ${port}\n`));
process.on("SIGTERM", () => process.exit(0));
