// The demo page (www/) under its strict CSP: load the reference tools, pick a tool, see the
// generated form and arguments, load a recorded result and see its apply plan.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ROOT, launchBrowser, openPage, startServer } from "./harness.mjs";

let server, browser, page;
const errors = [];

before(async () => {
  assert.ok(existsSync(join(ROOT, "www", "pkg")), "www/pkg is staged by scripts/build.sh");
  server = await startServer(join(ROOT, "www"));
  browser = await launchBrowser();
  page = await openPage(browser, `${server.url}/`, errors);
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Ready"));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test("the playground turns the reference tools into buttons, forms and plans", async () => {
  await page.click("#load-sample-list");
  await page.waitForSelector("button.tool");
  const labels = await page.$$eval("button.tool", (buttons) => buttons.map((b) => b.textContent));
  assert.deepEqual(labels, ["Liquid box", "Polymer chain", "Solvate"]);
  await page.click('button.tool[data-tool="liquid_box"]');
  await page.waitForFunction(() => document.getElementById("run-state").textContent.length > 0);
  assert.match(await page.textContent("#run-state"), /Run would be enabled/);
  const args = JSON.parse(await page.textContent("#arguments"));
  assert.equal(args.components[0].count, 100);
  assert.equal(args.components[0].molecule.name, "water");
  // A bad value disables Run with the field's message.
  await page.fill('[data-path="tolerance"] input[type=number]', "0.5");
  assert.equal(await page.textContent("#run-state"), "Run is disabled: Minimum distance must be at least 1 Å.");
  await page.click("#load-sample-result");
  await page.waitForFunction(() => document.getElementById("plan").textContent.length > 0);
  assert.match(await page.textContent("#plan"), /^new_document "water": 300 atoms, 200 bonds, box 14\.409 0\.000/);
});

test("no page errors under the Content-Security-Policy", () => {
  assert.deepEqual(errors, []);
});
