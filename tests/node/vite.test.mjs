// Consumer check: tests/vite-app imports the package as Builder does (the lazy loader, .wasm URLs
// via Vite's ?url, the offline tools' Worker), is built with Vite 6, and runs in headless Chromium,
// cross-origin isolated (so the offline Worker takes the threaded build) under the strict CSP.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ROOT, launchBrowser, openPage, startServer } from "./harness.mjs";

const APP = join(ROOT, "tests", "vite-app");
let server, browser;
const errors = [];

before(async () => {
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: APP, stdio: "inherit" });
  execFileSync(join(APP, "node_modules", ".bin", "vite"), ["build", "--logLevel", "warn"], { cwd: APP, stdio: "inherit" });
  server = await startServer(join(APP, "dist"));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test("the Vite build of a consumer app loads the package lazily and builds a box in the Worker", async () => {
  const page = await openPage(browser, `${server.url}/`, errors);
  await page.waitForFunction(() => !document.getElementById("status").textContent.startsWith("loading"), null, { timeout: 60000 });
  const status = await page.textContent("#status");
  assert.match(status, /^ok 300 atoms, threads [12]$/, status);
  assert.equal(await page.evaluate(() => self.crossOriginIsolated), true);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.equal(status, `ok 300 atoms, threads ${cores}`, "the Vite-bundled threaded Worker starts its rayon pool");
});

test("no page errors", () => {
  assert.deepEqual(errors, []);
});
