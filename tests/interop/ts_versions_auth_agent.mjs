// An ACP agent written with the official TypeScript SDK's v2 side, that requires a login.
//
// Usage: node ts_versions_auth_agent.mjs AUTH_METHODS_JSON
// `initialize` advertises AUTH_METHODS_JSON (a JSON list of v2 auth methods) as `authMethods`.
// `session/new` answers -32000 (authentication required) until `auth/login` has succeeded;
// `auth/login` succeeds only for an advertised method of type `agent` (anything else: -32602).
// A prompt's turn reports the logins as one `agent_message_chunk` (`logins: [...]`, the method
// ids in the order they came), then `state_update` idle with `end_turn`.
import { Readable, Writable } from "node:stream";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const authMethods = JSON.parse(process.argv[2] ?? "[]");
const logins = [];
let loggedIn = false;
let counter = 0;

async function turn(client, sessionId) {
  const update = (u) => client.notify(v2.methods.client.session.update, { sessionId, update: u });
  await update({ sessionUpdate: "state_update", state: "running" });
  await update({
    sessionUpdate: "agent_message_chunk",
    messageId: `ts-auth-message-${++counter}`,
    content: { type: "text", text: `logins: ${JSON.stringify(logins)}` },
  });
  await update({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
}

const app = v2
  .agent({ name: "interop-ts-auth-agent-v2" })
  .onRequest(v2.methods.agent.initialize, () => ({
    protocolVersion: 2,
    info: { name: "interop-ts-auth-agent-v2", version: "2.0.0" },
    capabilities: {},
    authMethods,
  }))
  .onRequest(v2.methods.agent.auth.login, ({ params }) => {
    logins.push(params.methodId);
    const method = authMethods.find((m) => m.methodId === params.methodId);
    if (method?.type !== "agent") {
      throw v2.RequestError.invalidParams({ methodId: params.methodId }, "not an agent auth method");
    }
    loggedIn = true;
    return {};
  })
  .onRequest(v2.methods.agent.auth.logout, () => {
    loggedIn = false;
    return {};
  })
  .onRequest(v2.methods.agent.session.new, () => {
    if (!loggedIn) {
      throw v2.RequestError.authRequired();
    }
    return { sessionId: `ts-auth-session-${++counter}` };
  })
  .onRequest(v2.methods.agent.session.prompt, ({ params, client }) => {
    setTimeout(() => {
      turn(client, params.sessionId).catch((error) => {
        process.stderr.write(`ts_versions_auth_agent: ${error}\n`);
      });
    }, 0);
    return { messageId: `ts-auth-user-message-${++counter}` };
  });

app.connect(v2.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
