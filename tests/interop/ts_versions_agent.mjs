// An ACP agent written with the official TypeScript SDK, speaking protocol version 1, 2 or both.
//
// Usage: node ts_versions_agent.mjs v1|v2|router|router-v1|router-v2
// `v1` and `v2` serve one version's app; `router` serves both through the SDK's
// `agentProtocolRouter()`, which picks the version from the first `initialize`;
// `router-v1` and `router-v2` route to one of them only.
// Each app echoes the prompt's text word by word as `agent_message_chunk` updates.
// The v2 app answers `session/prompt` once it has taken the prompt (with the user
// message's id), then reports the turn: `state_update` running, the prompt as a
// `user_message`, a permission request (`title` and a tool-call `subject`; the
// outcome is reported as one chunk, and echoing only follows an allow), the echo,
// and `state_update` idle with `end_turn`.
import { Readable, Writable } from "node:stream";
import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const mode = process.argv[2];
let counter = 0;

function words(prompt) {
  const text = prompt.filter((block) => block.type === "text").map((block) => block.text).join("");
  return text.match(/\S+\s*/g) ?? [];
}

const v1App = v1
  .agent({ name: "interop-ts-agent-v1" })
  .onRequest(v1.methods.agent.initialize, () => ({
    protocolVersion: 1,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "interop-ts-agent-v1", version: "1.0.0" },
    authMethods: [],
  }))
  .onRequest(v1.methods.agent.session.new, () => ({ sessionId: `ts-v1-session-${++counter}` }))
  .onRequest(v1.methods.agent.session.prompt, async ({ params, client }) => {
    for (const word of words(params.prompt)) {
      await client.notify(v1.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: word } },
      });
    }
    return { stopReason: "end_turn" };
  });

async function v2Turn(client, sessionId, messageId, prompt) {
  const update = (u) => client.notify(v2.methods.client.session.update, { sessionId, update: u });
  await update({ sessionUpdate: "state_update", state: "running" });
  await update({ sessionUpdate: "user_message", messageId, content: prompt });
  const reply = `ts-agent-message-${++counter}`;
  const say = (text) =>
    update({ sessionUpdate: "agent_message_chunk", messageId: reply, content: { type: "text", text } });
  const permission = await client.request(v2.methods.client.session.requestPermission, {
    sessionId,
    title: "Echo the prompt",
    subject: { type: "tool_call", toolCall: { toolCallId: "echo-1", title: "Echo", kind: "other" } },
    options: [
      { optionId: "no", name: "Reject", kind: "reject_once" },
      { optionId: "yes", name: "Allow", kind: "allow_once" },
    ],
  });
  await say(`permission: ${JSON.stringify(permission.outcome)}`);
  if (permission.outcome.outcome === "selected" && permission.outcome.optionId === "yes") {
    for (const word of words(prompt)) {
      await say(`echo: ${word}`);
    }
  }
  await update({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
}

const v2App = v2
  .agent({ name: "interop-ts-agent-v2" })
  .onRequest(v2.methods.agent.initialize, ({ params }) => ({
    protocolVersion: 2,
    info: { name: "interop-ts-agent-v2", version: "2.0.0" },
    capabilities: {},
    _meta: { clientVersion: params.protocolVersion },
  }))
  .onRequest(v2.methods.agent.session.new, () => ({ sessionId: `ts-v2-session-${++counter}` }))
  .onRequest(v2.methods.agent.session.prompt, ({ params, client }) => {
    const messageId = `ts-user-message-${++counter}`;
    setTimeout(() => {
      v2Turn(client, params.sessionId, messageId, params.prompt).catch((error) => {
        process.stderr.write(`ts_versions_agent: ${error}\n`);
      });
    }, 0);
    return { messageId };
  });

const stream = v1.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
if (mode === "v1") {
  v1App.connect(stream);
} else if (mode === "v2") {
  v2App.connect(stream);
} else if (mode === "router") {
  v2.agentProtocolRouter().withV1(v1App).withV2(v2App).connect(stream);
} else if (mode === "router-v1") {
  v2.agentProtocolRouter().withV1(v1App).connect(stream);
} else if (mode === "router-v2") {
  v2.agentProtocolRouter().withV2(v2App).connect(stream);
} else {
  process.stderr.write("usage: node ts_versions_agent.mjs v1|v2|router|router-v1|router-v2\n");
  process.exitCode = 2;
}
