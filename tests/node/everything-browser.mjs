// connect() from the built package in headless Chromium against npm
// @modelcontextprotocol/server-everything over Streamable HTTP: plain (non-Builder) tools, structured
// content, progress without messages, cancel. The server listens on all interfaces, so this file is
// run only inside a network namespace with loopback alone: tests/peers/run_everything_browser.sh.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { AUTO_PROBE_CONSOLE, ROOT, launchBrowser, openPage, startServer } from "./harness.mjs";

const SERVER = join(ROOT, "target", "peers-node", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const PORT = 3001;
let everything, web, browser, page;
const errors = [];

before(async () => {
  everything = spawn(process.execPath, [SERVER, "streamableHttp"], { env: { ...process.env, PORT: String(PORT) }, stdio: "ignore" });
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://127.0.0.1:${PORT}/mcp`, { method: "GET" });
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  web = await startServer();
  browser = await launchBrowser();
  // The default auto probe's HTTP 400 from this legacy server is logged by Chromium itself.
  page = await openPage(browser, `${web.url}/tests/node/pages/blank.html`, errors, AUTO_PROBE_CONSOLE);
  await page.evaluate(async () => {
    window.pkg = await import("/pkg/megane_builder_client.js");
    await window.pkg.default();
  });
});

after(async () => {
  await browser?.close();
  web?.stop();
  everything?.kill();
});

test("plain tools, structured content, progress without messages, cancel and close", async () => {
  const outcome = await page.evaluate(async (url) => {
    const server = await window.pkg.connect(url);
    if (!server.ok) return { error: server.error };
    const plain = server.toolbox.plainTools.map((t) => t.name);
    const echo = await server.call("echo", { message: "héllo" });
    const structured = await server.call("get-structured-content", { location: "Chicago" });
    const progress = [];
    const long = await server.call("trigger-long-running-operation", { duration: 1, steps: 4 }, {
      onProgress: (fraction, message) => progress.push([fraction, message]),
    });
    const controller = new AbortController();
    const cancelled = await server.call("trigger-long-running-operation", { duration: 3, steps: 3 }, {
      signal: controller.signal, onProgress: () => controller.abort(),
    });
    const after = await server.call("echo", { message: "still here" });
    await server.close();
    return {
      name: server.serverName, buttons: server.toolbox.buttons.length, plain, echo, progress, long: long.summary,
      temperature: structured.raw?.structuredContent?.temperature, cancelled, after: after.summary,
    };
  }, `http://127.0.0.1:${PORT}/mcp`);
  assert.equal(outcome.error, undefined, outcome.error);
  assert.equal(outcome.buttons, 0, "server-everything has no Builder tools");
  for (const name of ["echo", "get-structured-content", "trigger-long-running-operation"]) assert.ok(outcome.plain.includes(name), name);
  assert.equal(outcome.echo.ok, true);
  assert.match(outcome.echo.summary, /héllo/);
  assert.equal(typeof outcome.temperature, "number");
  assert.match(outcome.long, /completed/);
  assert.deepEqual(outcome.progress, [[0.25, null], [0.5, null], [0.75, null], [1, null]]);
  assert.equal(outcome.cancelled.ok, false);
  assert.equal(outcome.cancelled.cancelled, true);
  assert.match(outcome.after, /still here/);
});

test("no page errors", () => {
  assert.deepEqual(errors, []);
});
