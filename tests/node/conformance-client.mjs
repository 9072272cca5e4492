// The package as the client under test of @modelcontextprotocol/conformance (client scenarios), in Node:
// the web build initialised from its .wasm bytes, connect() over Node's global fetch. A thin host, like
// Builder: it reads the scenario (MCP_CONFORMANCE_SCENARIO) and its context (MCP_CONFORMANCE_CONTEXT),
// picks the tools and arguments a user would, answers elicitations like a user who accepts the form as
// shown, signs in like a user who agrees at once (its `redirect` hook follows the mock authorization
// server's redirect as the browser would and hands back the callback URL), and nothing else; every
// protocol and authorization behaviour is the package's. The protocol mode comes from
// MBC_CONFORMANCE_PROTOCOL (legacy | auto | modern; set by tests/peers/run_conformance_suite.sh).
// The suite appends the mock server's URL; its checks decide pass or fail. Exit 1 when the host could
// not finish its script (the suite reports it).
import { readFileSync } from "node:fs";
import init, { connect } from "../../pkg/megane_builder_client.js";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const protocol = process.env.MBC_CONFORMANCE_PROTOCOL || undefined;
const log = (...a) => console.error(`[${scenario}]`, ...a);

await init({ module_or_path: readFileSync(new URL("../../pkg/megane_builder_client_bg.wasm", import.meta.url)) });
// Sign-in settings of the host: the scenario's pre-registered client when it gives one, a client ID
// metadata document URL (used where the server supports them), dynamic registration otherwise; tokens
// kept in a storage of the host's (as a page would in sessionStorage), to check reuse below.
const stored = new Map();
/** The scenario's PKCS#8 PEM as a non-extractable WebCrypto ECDSA P-256 signing key (private_key_jwt). */
async function importClientKey(pem) {
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, ""), "base64");
  return crypto.subtle.importKey("pkcs8", der, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
}
let redirects = 0;
const auth = {
  redirectUri: "http://localhost:3000/callback",
  clientId: context.client_id,
  clientSecret: context.client_secret,
  clientIssuer: context.issuer,
  assertion: context.valid_jwt,
  enterprise: context.idp_id_token
    ? { tokenEndpoint: context.idp_token_endpoint, idToken: context.idp_id_token, clientId: context.idp_client_id }
    : undefined,
  clientKey: context.private_key_pem ? await importClientKey(context.private_key_pem) : undefined,
  clientMetadataUrl: "https://conformance-test.local/client-metadata.json",
  clientMetadata: { client_name: "megane-builder-client-conformance" },
  tokens: { get: async (key) => stored.get(key), set: async (key, value) => void stored.set(key, value) },
  redirect: async (authorizationUrl) => {
    redirects++;
    // Like a browser, one more try when a kept-alive connection was being closed under it.
    const answer = await fetch(authorizationUrl, { redirect: "manual" })
      .catch(() => fetch(authorizationUrl, { redirect: "manual" }));
    const location = answer.headers.get("location");
    if (!location) throw new Error(`the authorization endpoint answered HTTP ${answer.status} without a redirect`);
    return new URL(location, authorizationUrl).href;
  },
};
const server = await connect(url, {
  protocol,
  clientInfo: { name: "megane-builder-client-conformance" },
  auth,
  // A user who accepts the form with what it shows (the server's defaults).
  onElicitation: async (request) => {
    log(`elicitation (${request.mode}): ${request.message}`);
    return { action: "accept", content: request.content };
  },
});
if (!server.ok) {
  log(`connect: ${server.error}`);
  // A refused sign-in ends the host's script as it should (the scenario checks the refusal).
  if (server.error.startsWith("Sign-in failed:")) console.log("mbc-conformance-driver: finished");
  process.exit(server.error.startsWith("Sign-in failed:") ? 0 : 1);
}
log(`connected: ${server.serverName} ${server.protocolVersion}; notices: ${JSON.stringify(server.notices)}`);
const tools = [...server.toolbox.buttons, ...server.toolbox.plainTools];
const byName = new Map(tools.map((t) => [t.name, t]));
log(`tools: ${tools.map((t) => t.name).join(", ") || "(none)"}; hidden: ${JSON.stringify(server.toolbox.hidden ?? [])}`);

/** Arguments a user would enter: the context's, else a value of each required property's type. */
function argumentsFor(tool) {
  const given = context.arguments ?? context.toolArguments?.[tool.name];
  if (given && typeof given === "object") return given;
  const schema = tool.inputSchema ?? {};
  const args = {};
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    if (!(schema.required ?? []).includes(key) && prop?.default === undefined) continue;
    if (prop?.default !== undefined) args[key] = prop.default;
    else if (prop?.enum) args[key] = prop.enum[0];
    else if (prop?.type === "number" || prop?.type === "integer") args[key] = key === "b" ? 3 : 2;
    else if (prop?.type === "boolean") args[key] = true;
    else if (prop?.type === "object") args[key] = {};
    else if (prop?.type === "array") args[key] = [];
    else args[key] = "example";
  }
  return args;
}

async function call(name, args) {
  const outcome = await server.call(name, args, { timeoutMs: 20000 });
  log(`${name}(${JSON.stringify(args).slice(0, 200)}): ${outcome.ok ? JSON.stringify(outcome.summary) : outcome.error}`);
  return outcome;
}

let plan;
if (scenario === "json-schema-2020-12-preservation") {
  // Round-trip the focal tool's inputSchema through the echo tool, as the scenario asks.
  const echo = byName.get("json_schema_echo");
  const focal = tools.find((t) => t.name !== "json_schema_echo");
  plan = echo && focal ? [[echo.name, { schema: focal.inputSchema }]] : [];
} else if (Array.isArray(context.toolCalls)) {
  plan = context.toolCalls.map((c) => [c.name, c.arguments ?? argumentsFor(byName.get(c.name) ?? {})]);
} else {
  plan = tools.map((t) => [t.name, argumentsFor(t)]);
}
for (const [name, args] of plan) await call(name, args);
await server.close();
// A host that connects again (a page reload) with its token storage signs in no more: the stored
// token is sent from the first request.
if (scenario === "auth/metadata-default") {
  const before = redirects;
  const again = await connect(url, { protocol, auth });
  const token = JSON.parse(stored.get(url) ?? "{}").access_token;
  if (!again.ok || redirects !== before || !token) {
    log(`reconnect with stored tokens: ${again.ok ? `${redirects - before} more sign-ins` : again.error}`);
    process.exit(1);
  }
  log("reconnected with the stored token, no new sign-in");
  await again.close();
}
// The gate (tests/peers/conformance_gate.mjs) looks for this line: the host finished its script.
console.log("mbc-conformance-driver: finished");
