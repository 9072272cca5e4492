// connect() from the built package in headless Chromium against a real server on 127.0.0.1: the
// Python test peer on the official MCP SDK (tests/peers/builder_peer.py), cross-origin with CORS and
// a bearer token. Every tool is called with arguments built by buildArguments; progress, cancel,
// timeout, wrong token and close are checked from the page.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { AUTO_PROBE_CONSOLE, ROOT, FIXTURES, launchBrowser, openPage, startServer, startBuilderPeer } from "./harness.mjs";

const TOKEN = "peer-token-e2e-71c3";
const RECORDED = join(FIXTURES, "megane-recorded");
let web, browser, page, peer, peerUrl;
const errors = [];

function recorded(tool) {
  return JSON.parse(readFileSync(join(RECORDED, `call-${tool}.json`), "utf8"));
}

function startPeer(origin, extra = []) {
  return startBuilderPeer(origin, TOKEN, RECORDED, ["--step-seconds", "0.15", ...extra]);
}

before(async () => {
  web = await startServer();
  peer = await startPeer(web.url, ["--output-schema-tools"]);
  peerUrl = `${peer.url}/mcp`;
  browser = await launchBrowser();
  // The wrong-token test provokes HTTP 401s, which Chromium logs as console errors itself; so is the
  // default auto probe's refused preflight (the peer's CORS list lacks the 2026-07-28 headers).
  page = await openPage(browser, `${web.url}/tests/node/pages/blank.html`, errors,
    new RegExp(`status of 401 \\(Unauthorized\\)|${AUTO_PROBE_CONSOLE.source}`));
  await page.evaluate(async () => {
    window.pkg = await import("/pkg/megane_builder_client.js");
    await window.pkg.default();
  });
});

after(async () => {
  await browser?.close();
  peer?.child.kill();
  web?.stop();
});

test("connect lists every page of tools and calls each tool with built arguments", async () => {
  const calls = ["liquid_box", "polymer_chain", "solvate"].map((tool) => ({ tool, ...recorded(tool) }));
  const outcome = await page.evaluate(async ({ url, token, calls }) => {
    const { connect, buildArguments, planApply } = window.pkg;
    const server = await connect(url, { token, serverId: "peer" });
    if (!server.ok) return { error: server.error };
    const report = {
      serverName: server.serverName, serverVersion: server.serverVersion, protocolVersion: server.protocolVersion,
      buttons: server.toolbox.buttons.map((b) => b.name), calls: [],
    };
    for (const { tool, arguments: args } of calls) {
      const button = server.toolbox.buttons.find((b) => b.name === tool);
      const molecule = args.components?.[0].molecule ?? args.solvent ?? args.monomer;
      const library = molecule.molblock ? [{ name: molecule.name, molblock: molecule.molblock }] : [];
      const context = { library, document: args.document ?? null };
      // Form values as a user leaves them: defaults cleared, the recorded choices made.
      const values = { seed: args.seed, density: "", tolerance: "", shape: "", aspect: null, length: "" };
      if (tool === "liquid_box") values.components = [{ molecule: molecule.name, count: args.components[0].count }];
      if (tool === "solvate") values.solvent = molecule.name;
      if (tool === "polymer_chain") Object.assign(values, { monomer: molecule, head: args.head, tail: args.tail });
      const built = buildArguments(button, values, context);
      if (!built.ok) return { error: JSON.stringify(built.errors) };
      const progress = [];
      const result = await server.call(tool, built.arguments, { onProgress: (f, m) => progress.push([f, m]) });
      const plan = result.ok ? planApply(button, result.result, context.document, {}) : null;
      report.calls.push({ tool, ok: result.ok, error: result.error, atoms: result.result?.atomCount, progress, mode: plan?.plan?.mode });
    }
    await server.close();
    return report;
  }, { url: peerUrl, token: TOKEN, calls });
  assert.equal(outcome.error, undefined, outcome.error);
  assert.equal(outcome.serverName, "builder-test-peer");
  assert.equal(outcome.serverVersion, "0.1.0");
  assert.match(outcome.protocolVersion, /^20\d\d-\d\d-\d\d$/);
  assert.deepEqual(outcome.buttons, ["liquid_box", "polymer_chain", "solvate"], "three pages of one tool each");
  const byTool = Object.fromEntries(outcome.calls.map((c) => [c.tool, c]));
  assert.deepEqual(Object.values(byTool).map((c) => c.error), [undefined, undefined, undefined]);
  assert.equal(byTool.liquid_box.atoms, 300);
  assert.equal(byTool.liquid_box.mode, "new_document");
  assert.equal(byTool.polymer_chain.atoms, 62);
  assert.equal(byTool.solvate.atoms, 798);
  assert.equal(byTool.solvate.mode, "insert");
  for (const call of outcome.calls) {
    const fractions = call.progress.map(([f]) => f);
    assert.ok(fractions.length >= 5, `${call.tool}: ${JSON.stringify(call.progress)}`);
    assert.deepEqual(fractions, [...fractions].sort((a, b) => a - b), "progress arrives in order");
    assert.equal(call.progress.at(-1)[1], "done");
  }
});

/** The peer's tools/list pages as it sends them, read over plain HTTP from Node (one session). */
async function listedPages(url, token) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` };
  const post = async (body, session) => {
    const response = await fetch(url, { method: "POST", headers: session ? { ...headers, "mcp-session-id": session } : headers, body: JSON.stringify(body) });
    const text = await response.text();
    const data = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).join("");
    return { session: response.headers.get("mcp-session-id"), message: data || text ? JSON.parse(data || text) : null };
  };
  const init = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "0" } } });
  await post({ jsonrpc: "2.0", method: "notifications/initialized" }, init.session);
  const pages = [];
  let cursor;
  do {
    const { message } = await post({ jsonrpc: "2.0", id: 2 + pages.length, method: "tools/list", params: cursor ? { cursor } : {} }, init.session);
    pages.push(message.result);
    cursor = message.result.nextCursor;
  } while (cursor);
  return pages;
}

test("connect's toolbox is the toolbox parseToolList makes of the same pages", async () => {
  const pages = await listedPages(peerUrl, TOKEN);
  assert.ok(pages.length >= 3, "several pages");
  const outcome = await page.evaluate(async ({ url, token, pages }) => {
    const { connect, parseToolList } = window.pkg;
    const server = await connect(url, { token, serverId: "peer" });
    if (!server.ok) return { error: server.error };
    const listed = server.toolbox;
    const button = listed.buttons[0];
    const fresh = button.form !== listed.buttons[0].form || button.inputSchema !== listed.buttons[0].inputSchema;
    const again = await server.refreshTools();
    await server.close();
    return {
      connected: JSON.stringify(listed), refreshed: JSON.stringify(again), cloned: JSON.stringify(structuredClone(listed)),
      parsed: JSON.stringify(parseToolList(pages, "peer")), fresh,
      otherButtons: listed.buttons.map((b) => b.form !== button.form && b.inputSchema !== button.inputSchema),
    };
  }, { url: peerUrl, token: TOKEN, pages });
  assert.equal(outcome.error, undefined, outcome.error);
  const parsed = JSON.parse(outcome.parsed);
  assert.equal(parsed.buttons.length, 3);
  assert.ok(parsed.buttons.every((b) => b.form?.fields.length && b.inputSchema?.type === "object"));
  assert.ok(parsed.plainTools.some((t) => t.outputSchema?.required), "a plain tool's outputSchema");
  assert.equal(outcome.connected, outcome.parsed);
  assert.equal(outcome.refreshed, outcome.parsed);
  assert.equal(outcome.cloned, outcome.parsed, "structuredClone reads the lazy forms and schemas");
  assert.equal(outcome.fresh, false, "a read property stays the same object");
  assert.deepEqual(outcome.otherButtons, [false, true, true], "each button has its own form and schema objects");
});

test("cancel reaches the server and no result is applied; a timeout is reported as one", async () => {
  const args = recorded("liquid_box").arguments;
  const outcome = await page.evaluate(async ({ url, token, args }) => {
    const server = await window.pkg.connect(url, { token });
    const controller = new AbortController();
    const cancelled = await server.call("liquid_box", args, {
      signal: controller.signal, onProgress: () => controller.abort(),
    });
    // The peer reports progress every 150 ms and progress resets the timer: 100 ms expires.
    const timedOut = await server.call("liquid_box", args, { timeoutMs: 100 });
    const after = await server.call("liquid_box", args);
    await server.close();
    return { cancelled, timedOut, after: after.ok ? after.result.atomCount : after.error };
  }, { url: peerUrl, token: TOKEN, args });
  assert.equal(outcome.cancelled.ok, false);
  assert.equal(outcome.cancelled.cancelled, true);
  assert.equal(outcome.cancelled.result, undefined);
  assert.equal(outcome.timedOut.ok, false);
  assert.equal(outcome.timedOut.timedOut, true);
  // §6: the offline tools' words too (the core's one table), the 100 ms limit shown rounded up.
  assert.equal(outcome.timedOut.error, "No answer within 1 s; it was stopped (timeout).");
  assert.equal(outcome.after, 300, "the connection still works after a cancel and a timeout");
  const { cancellations } = await (await fetch(`${peer.url}/peer/cancellations`)).json();
  // Both the cancel and the timeout sent notifications/cancelled, and the server stopped the call.
  assert.equal(cancellations.length, 2, JSON.stringify(cancellations));
  assert.ok(cancellations.every((c) => c.tool === "liquid_box"));
});

test("a wrong token and an insecure URL give one line a user can act on", async () => {
  const outcome = await page.evaluate(async ({ url }) => {
    const wrong = await window.pkg.connect(url, { token: "not-the-token" });
    const missing = await window.pkg.connect(url, {});
    const insecure = await window.pkg.connect("http://tools.example.org/mcp", {});
    return { wrong, missing, insecure };
  }, { url: peerUrl });
  for (const failure of Object.values(outcome)) {
    assert.equal(failure.ok, false);
    assert.ok(!failure.error.includes("\n"), failure.error);
  }
  assert.match(outcome.wrong.error, /token is wrong/);
  assert.ok(!outcome.wrong.error.includes("not-the-token"), "the token never appears in errors");
  assert.match(outcome.missing.error, /token is missing/);
  assert.match(outcome.insecure.error, /HTTPS|https/);
});

test("an unknown tool name gives the same outcome remote and offline, and no request", async () => {
  const outcome = await page.evaluate(async ({ url, token }) => {
    const server = await window.pkg.connect(url, { token });
    if (!server.ok) return { error: server.error };
    const remote = await server.call("nope", {});
    const listedPlain = server.toolbox.plainTools.map((t) => t.name);
    await server.close();
    const offline = (await import("/pkg/offline.js")).offlineTools();
    const local = await offline.call("nope", {});
    await offline.close();
    return { remote, local, listedPlain };
  }, { url: peerUrl, token: TOKEN });
  assert.equal(outcome.error, undefined, outcome.error);
  assert.deepEqual(outcome.remote, { ok: false, error: "Unknown tool: nope" });
  assert.deepEqual(outcome.local, outcome.remote);
  const seen = await (await fetch(`${peer.url}/peer/cancellations`)).json();
  assert.deepEqual(seen.calls.filter((c) => c.tool === "nope"), [], "the call never reached the server");
});

test("a plain tool's structuredContent is checked against its outputSchema", async () => {
  const outcome = await page.evaluate(async ({ url, token }) => {
    const server = await window.pkg.connect(url, { token });
    if (!server.ok) return { error: server.error };
    const schema = server.toolbox.plainTools.find((t) => t.name === "plain_count")?.outputSchema ?? null;
    const good = await server.call("plain_count", { atoms: 12, label: "twelve" });
    const broken = await server.call("plain_count", { atoms: -3 });
    const missing = await server.call("plain_count", { omit: true });
    const badSchema = await server.call("plain_bad_schema", {});
    const failed = await server.call("plain_count", { fail: true });
    await server.close();
    return { schema, good, broken, missing, badSchema, failed };
  }, { url: peerUrl, token: TOKEN });
  assert.equal(outcome.error, undefined, outcome.error);
  assert.equal(outcome.schema?.required?.[0], "atoms", "the toolbox carries the plain tool's outputSchema");
  assert.equal(outcome.good.ok, true);
  assert.deepEqual(outcome.good.raw.structuredContent, { atoms: 12, label: "twelve" });
  assert.equal(outcome.good.summary, "plain_count ran.");
  assert.deepEqual(outcome.broken, { ok: false, error: "The result does not match the tool's outputSchema: atoms must be at least 0." });
  assert.deepEqual(outcome.missing, { ok: false, error: "structuredContent: missing, but the tool declares an outputSchema" });
  assert.equal(outcome.badSchema.ok, false);
  assert.match(outcome.badSchema.error, /^Builder cannot check this tool's result: its outputSchema is not valid JSON Schema \(/);
  assert.deepEqual(outcome.failed, { ok: false, error: "no atoms to count", refused: true });
});

test("a JSON-RPC error from the SDK peer: §6's one line with its code beside it, -32602 a refusal, the token hidden", async () => {
  const outcome = await page.evaluate(async ({ url, token }) => {
    const server = await window.pkg.connect(url, { token });
    if (!server.ok) return { error: server.error };
    const message = `boom (token ${token})\nTraceback (most recent call last):`;
    const failed = await server.call("liquid_box", { jsonRpcError: { code: -32603, message } });
    const refused = await server.call("liquid_box", { jsonRpcError: { code: -32602, message } });
    const bare = await server.call("liquid_box", { jsonRpcError: { code: -32000, message: "" } });
    await server.close();
    return { failed, refused, bare };
  }, { url: peerUrl, token: TOKEN });
  assert.equal(outcome.error, undefined, outcome.error);
  assert.deepEqual(outcome.failed, { ok: false, error: "The server failed: boom (token <token>)", code: -32603 });
  assert.deepEqual(outcome.refused, { ok: false, error: "The server failed: boom (token <token>)", code: -32602, refused: true });
  assert.deepEqual(outcome.bare, { ok: false, error: "The server failed: error -32000", code: -32000 });
});

test("no page errors", () => {
  assert.deepEqual(errors, []);
});
