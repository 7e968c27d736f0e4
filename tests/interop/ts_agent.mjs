// An ACP agent written with the official TypeScript SDK, for the interop tests.
//
// On `session/prompt` it calls the client back and reports each outcome as one
// `agent_message_chunk` text update: it reads `hello.txt` in the session's cwd,
// tries to read `../outside.txt` (the client must refuse), asks for permission,
// calls an extension method the client does not have (expects -32601), then
// echoes the prompt's text word by word and ends the turn with `end_turn`.
import { Readable, Writable } from "node:stream";
import * as path from "node:path";
import * as acp from "@agentclientprotocol/sdk";

const sessions = new Map();
let counter = 0;

async function say(client, sessionId, text) {
  await client.notify(acp.methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

async function outcome(promise) {
  try {
    return { ok: await promise };
  } catch (error) {
    return { code: error.code ?? null, message: String(error.message ?? error) };
  }
}

const app = acp
  .agent({ name: "interop-ts-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "interop-ts-agent", version: "1.0.0" },
    authMethods: [],
    _meta: { clientVersion: params.protocolVersion },
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = `ts-session-${++counter}`;
    sessions.set(sessionId, params.cwd);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId } = params;
    const cwd = sessions.get(sessionId);
    const read = await outcome(
      client.request(acp.methods.client.fs.readTextFile, { sessionId, path: path.join(cwd, "hello.txt") }),
    );
    await say(client, sessionId, `read: ${JSON.stringify(read)}`);
    const outside = await outcome(
      client.request(acp.methods.client.fs.readTextFile, {
        sessionId,
        path: path.join(path.dirname(cwd), "outside.txt"),
      }),
    );
    await say(client, sessionId, `outside: ${JSON.stringify(outside)}`);
    const permission = await outcome(
      client.request(acp.methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "call-1", title: "Read hello.txt", kind: "read", status: "pending" },
        options: [
          { optionId: "no", name: "Reject", kind: "reject_once" },
          { optionId: "yes", name: "Allow", kind: "allow_once" },
        ],
      }),
    );
    await say(client, sessionId, `permission: ${JSON.stringify(permission)}`);
    const missing = await outcome(client.request("_interop/missing", { probe: true }));
    await say(client, sessionId, `missing: ${JSON.stringify(missing)}`);
    const text = params.prompt
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("");
    for (const word of text.match(/\S+\s*/g) ?? []) {
      await say(client, sessionId, `echo: ${word}`);
    }
    return { stopReason: "end_turn" };
  });

app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
