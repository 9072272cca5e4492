// The package itself as the client under test of @modelcontextprotocol/conformance (client
// scenarios), in Node: the web build initialised from its .wasm bytes, connect() over Node's global
// fetch. The suite appends the mock server's URL; its own checks decide pass or fail, this script
// only exits non-zero when the client cannot finish.
import { readFileSync } from "node:fs";
import init, { connect } from "../../pkg/megane_builder_client.js";

const url = process.argv.at(-1);
await init({ module_or_path: readFileSync(new URL("../../pkg/megane_builder_client_bg.wasm", import.meta.url)) });
const server = await connect(url, { clientInfo: { name: "megane-builder-client-conformance" } });
if (!server.ok) {
  console.error(`connect: ${server.error}`);
  process.exit(1);
}
console.error(`connected: ${server.serverName} ${server.protocolVersion}`);
const tools = [...server.toolbox.buttons, ...server.toolbox.plainTools];
for (const tool of tools) {
  const args = tool.name === "add_numbers" ? { a: 2, b: 3 } : {};
  const outcome = await server.call(tool.name, args, { timeoutMs: 30000 });
  console.error(`${tool.name}: ${outcome.ok ? JSON.stringify(outcome.summary) : outcome.error}`);
}
await server.close();
