// Decode values with the official TypeScript SDK's own schemas (zod, with its x-deserialize-*
// leniency), for the tests that hold acpgen's decoders to the same behaviour.
// stdin: one JSON array [typeName, value] a line; stdout: one JSON line each,
// {"ok": value} with what the SDK parsed, or {"error": message}.
import * as readline from "node:readline";
import * as schema from "./node_modules/@agentclientprotocol/sdk/dist/v1/unstable/schema/zod.gen.js";

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  const [typeName, value] = JSON.parse(line);
  const result = schema[`z${typeName}`].safeParse(value);
  process.stdout.write(JSON.stringify(result.success ? { ok: result.data } : { error: result.error.message }) + "\n");
}
