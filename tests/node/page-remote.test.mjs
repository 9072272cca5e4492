// The demo page (www/) against a real tool server: the Python SDK test peer
// (tests/peers/builder_peer.py) replaying recorded megane-builder-tools calls, cross-origin with
// CORS and a bearer token. Connect with a #tools= link (asked first, fragment removed), run tools
// from the generated forms with progress, a tool error in the form, cancel, a wrong token,
// disconnect. The peer answers only the recorded arguments, so the test drives the form to them.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { AUTO_PROBE_CONSOLE, ROOT, FIXTURES, consoleProblem, launchBrowser, startServer, startBuilderPeer } from "./harness.mjs";

const TOKEN = "page-token-5d2e";
const RECORDED = join(FIXTURES, "megane-recorded");
const SHOTS = join(ROOT, "artifacts", "screenshots");
let web, browser, page, peer, peerUrl;
const errors = [];
const dialogs = [];

function recorded(tool) {
  return JSON.parse(readFileSync(join(RECORDED, `call-${tool}.json`), "utf8"));
}

function startPeer(origin) {
  // solvate is listed without its outputSchema: the server check must say so (§5).
  return startBuilderPeer(origin, TOKEN, RECORDED, ["--step-seconds", "0.15", "--without-output-schema", "solvate"]);
}

before(async () => {
  assert.ok(existsSync(join(ROOT, "www", "pkg")), "www/pkg is staged by scripts/build.sh");
  mkdirSync(SHOTS, { recursive: true });
  web = await startServer(join(ROOT, "www"));
  peer = await startPeer(web.url);
  peerUrl = `${peer.url}/mcp`;
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    // The wrong-token test provokes HTTP 401s, which Chromium logs as console errors itself; so is the
    // default auto probe's refused preflight (the peer's CORS list lacks the 2026-07-28 headers).
    const expected = new RegExp(`status of 401 \\(Unauthorized\\)|${AUTO_PROBE_CONSOLE.source}`);
    const problem = consoleProblem(m.type(), m.text(), m.location().url, expected);
    if (problem) errors.push(problem);
  });
  page.on("dialog", (d) => { dialogs.push(d.message()); d.accept(); });
});

after(async () => {
  await browser?.close();
  peer?.child.kill();
  web?.stop();
});

const atomCount = () => page.textContent("#atom-count");

/** Saves a screenshot and checks that the 3D canvas shows something (pixels read back in the page). */
async function shotWithStructure(name) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const { lit, total } = await page.evaluate(() => {
    const source = document.getElementById("view");
    const copy = Object.assign(document.createElement("canvas"), { width: source.width, height: source.height });
    const ctx = copy.getContext("2d");
    ctx.drawImage(source, 0, 0);
    const data = ctx.getImageData(0, 0, copy.width, copy.height).data;
    let lit = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (Math.abs(data[i] - 0x1d) + Math.abs(data[i + 1] - 0x23) + Math.abs(data[i + 2] - 0x30) > 24) lit++;
    }
    return { lit, total: data.length / 4 };
  });
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
  assert.ok(lit > total * 0.01, `${name}: the 3D view is blank (${lit} of ${total} pixels lit)`);
}

async function chooseTool(tool) {
  await page.click(`button.tool[data-server="${peerUrl}"][data-tool="${tool}"]`);
  await page.waitForSelector("#tool-form .field");
}

/** Clears the optional fields the recorded call left out, so their defaults are not sent. */
async function clearOptional(keys) {
  for (const key of keys) {
    const inputs = page.locator(`[data-path="${key}"] input`);
    for (let i = 0; i < await inputs.count(); i++) await inputs.nth(i).fill("");
    const select = page.locator(`[data-path="${key}"] > select`);
    if (await select.count()) await select.selectOption("");
  }
}

test("a #tools= link asks first, connects, and leaves the address bar without the token", async () => {
  await page.goto(`${web.url}/#tools=${encodeURIComponent(peerUrl)}&token=${TOKEN}`);
  await page.waitForSelector(`.server[data-server="${peerUrl}"] button.tool`, { timeout: 30000 });
  assert.equal(dialogs.length, 1);
  assert.ok(dialogs[0].includes(peerUrl), dialogs[0]);
  assert.equal(await page.evaluate(() => location.hash), "");
  assert.ok(!(await page.evaluate(() => location.href)).includes(TOKEN));
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }));
  assert.ok(stored.includes(peerUrl), "the URL is remembered");
  assert.ok(!stored.includes(TOKEN), "the token is never stored");
  const tools = await page.$$eval(`.server[data-server="${peerUrl}"] button.tool`, (bs) => bs.map((b) => b.dataset.tool));
  assert.deepEqual(tools, ["liquid_box", "polymer_chain", "solvate"]);
  const groups = await page.$$eval(`.server[data-server="${peerUrl}"] .category h4`, (hs) => hs.map((h) => h.textContent));
  assert.deepEqual(groups, ["Bulk", "Polymer", "Solvation"]);
  // Offline tools stay next to the server's: two liquid_box buttons, told apart by server.
  assert.equal(await page.locator('button.tool[data-tool="liquid_box"]').count(), 2);
  assert.match(await page.textContent(`.server[data-server="${peerUrl}"]`), /builder-test-peer/);
});

test("liquid_box on the server: the form says where molecules go, shows progress, and the box opens", async () => {
  // The recorded call used this water mol block: import it under the library name "water".
  const water = recorded("liquid_box").arguments.components[0].molecule.molblock;
  await page.setInputFiles("#mol-file", [{ name: "water.mol", mimeType: "chemical/x-mdl-molfile", buffer: Buffer.from(water) }]);
  await page.waitForFunction(() => document.getElementById("library-list").textContent.includes("water (3 atoms, 3D) — imported"));
  await chooseTool("liquid_box");
  const host = new URL(peerUrl).host;
  assert.equal(await page.textContent("#form-destination"), `Sends the chosen molecules to ${host}.`);
  await page.fill('[data-path="seed"] input', "1");
  await clearOptional(["density", "shape", "aspect", "tolerance"]);
  assert.equal(await page.isDisabled("#run"), false, await page.textContent("#form-problem"));
  await page.click("#run");
  await page.waitForFunction(() => /^step \d of 5$/.test(document.getElementById("progress-message").textContent), null, { timeout: 20000 });
  assert.equal(await page.isVisible("#progress-bar"), true, "expectedSeconds 20: a bar, not a spinner");
  await page.screenshot({ path: join(SHOTS, "remote-progress.png") });
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "300 atoms", null, { timeout: 20000 });
  assert.match(await page.textContent("#notice"), /water/);
  assert.match(await page.textContent("#provenance-list li:last-child"), /^Liquid box on builder-test-peer: 300 atoms, seed 1/);
  await shotWithStructure("remote-liquid-box");
});

test("a tool error is one line in the form and the user's values stay", async () => {
  await chooseTool("polymer_chain");
  await page.selectOption('[data-path="monomer"] select', "ethanol");
  // The atom picker lists the chosen molecule's atoms by index and element.
  const atoms = await page.$$eval('[data-path="head"] select option', (os) => os.map((o) => o.textContent));
  assert.deepEqual(atoms.slice(0, 3), ["— choose an atom —", "0: C", "1: C"]);
  await page.selectOption('[data-path="tail"] select', "1");
  await page.fill('[data-path="seed"] input', "7");
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("form-error").textContent.length > 0, null, { timeout: 20000 });
  const error = await page.textContent("#form-error");
  assert.match(error, /only reproduces the recorded call/);
  assert.ok(!error.includes("\n"));
  assert.equal(await page.inputValue('[data-path="seed"] input'), "7");
  assert.equal(await page.inputValue('[data-path="monomer"] select'), "ethanol");
  assert.equal(await atomCount(), "300 atoms", "nothing applied");
  await shotWithStructure("remote-tool-error");
});

test("solvate on the server inserts the solvent into the open structure as one undo step", async () => {
  const { document: structure } = recorded("solvate").arguments;
  await page.setInputFiles("#open-file", [{ name: "one-water.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(structure)) }]);
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "3 atoms");
  await chooseTool("solvate");
  assert.match(await page.textContent("#form-destination"), /^Sends the open structure and the chosen molecules to 127\.0\.0\.1:/);
  await page.fill('[data-path="seed"] input', "1");
  await clearOptional(["density", "tolerance"]);
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("atom-count").textContent !== "3 atoms" || document.getElementById("form-error").textContent, null, { timeout: 20000 });
  assert.equal(await page.textContent("#form-error"), "");
  assert.equal(await atomCount(), "801 atoms");
  assert.equal(await page.textContent("#selection-count"), "798 selected");
  await shotWithStructure("remote-solvated");
  await page.click("#undo");
  assert.equal(await atomCount(), "3 atoms");
});

test("Cancel during a server call tells the server and applies nothing", async () => {
  await chooseTool("liquid_box");
  await page.fill('[data-path="seed"] input', "1");
  await clearOptional(["density", "shape", "aspect", "tolerance"]);
  await page.click("#run");
  await page.waitForFunction(() => /^step/.test(document.getElementById("progress-message").textContent), null, { timeout: 20000 });
  await page.click("#cancel");
  await page.waitForFunction(() => document.getElementById("form-error").textContent.length > 0);
  assert.equal(await page.textContent("#form-error"), "Cancelled: nothing was applied.");
  assert.equal(await page.getAttribute("#form-error", "class"), "note", "a cancel is not an error");
  assert.equal(await atomCount(), "3 atoms");
  let cancellations = [];
  for (let i = 0; i < 30 && cancellations.length === 0; i++) {
    ({ cancellations } = await (await fetch(`${peer.url}/peer/cancellations`)).json());
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(cancellations.length, 1);
  assert.equal(cancellations[0].tool, "liquid_box");
});

test("Rebuild calls the server again with the recorded arguments and finds the same structure", async () => {
  await page.click("#provenance-list li:first-child button.rebuild");
  await page.waitForFunction(() => /structure|failed/i.test(document.querySelector("#provenance-list li:first-child .rebuild-result").textContent), null, { timeout: 20000 });
  assert.equal(await page.textContent("#provenance-list li:first-child .rebuild-result"), "Identical structure: the same atoms at the same positions.");
});

test("a wrong token shows the one-line reason and keeps the working connection", async () => {
  await page.fill("#server-url", peerUrl);
  await page.fill("#server-token", "not-the-token");
  await page.click("#connect");
  await page.waitForFunction(() => !document.getElementById("server-error").hidden, null, { timeout: 20000 });
  const error = await page.textContent("#server-error");
  assert.match(error, /token is wrong/);
  assert.ok(!error.includes("\n") && !error.includes("not-the-token"), error);
  assert.equal(dialogs.length, 1, "the URL was confirmed once and remembered");
  assert.equal(await page.locator(`.server[data-server="${peerUrl}"] button.tool`).count(), 3);
  await page.screenshot({ path: join(SHOTS, "remote-wrong-token.png") });
});

test("Check server sends the schema's examples and reports the peer's refusal of a sample as a warning in its words", async () => {
  const callsBefore = (await (await fetch(`${peer.url}/peer/cancellations`)).json()).calls.length;
  await page.click(`.server[data-server="${peerUrl}"] button.check`);
  await page.waitForFunction(() => /passed|problem/.test(document.getElementById("check-state").textContent), null, { timeout: 30000 });
  const lines = await page.$$eval("#check-report li", (lis) => lis.map((li) => `${li.className} ${li.querySelector(".plain").textContent}`));
  const detail = (text) => page.$$eval("#check-report li", (lis, t) => lis.find((li) => li.querySelector(".plain").textContent === t)?.querySelector("details span")?.textContent.trim() ?? null, text);
  assert.equal(lines[0], "pass 3 tools can be used from this page.");
  assert.equal(await detail("3 tools can be used from this page."), "3 Builder tool(s) with a supported marker (contract 1).");
  assert.ok(lines.includes("pass Polymer chain: its form can be filled in (5 fields)."), lines.join(" | "));
  assert.ok(lines.some((l) => /^warn Liquid box: the server declined the example run: .*this test peer only reproduces the recorded call/.test(l)), lines.join(" | "));
  assert.ok(!lines.some((l) => /example run failed/.test(l)), lines.join(" | "));
  assert.ok(lines.includes("pass Liquid box: a run with nothing filled in is refused, as it should be."), lines.join(" | "));
  // §5: a tool listed without an outputSchema is a problem; the recorded ones declare an object schema.
  assert.ok(lines.includes("fail Solvate: does not describe the result it gives."), lines.join(" | "));
  assert.equal(await detail("Solvate: does not describe the result it gives."), "no outputSchema declared (§5: a Builder tool declares the BuilderResult schema).");
  for (const tool of ["Liquid box", "Polymer chain"]) assert.ok(lines.includes(`pass ${tool}: describes the result it gives.`), lines.join(" | "));
  assert.match(await page.textContent("#check-state"), /^1 problem found \(\d+ warnings?\)\.$/);
  // polymer_chain's sample is the schema's own example monomer (ethylene, SMILES CC), which the
  // library holds as ethane with its 3D coordinates: that molecule is sent, as a form would.
  const calls = (await (await fetch(`${peer.url}/peer/cancellations`)).json()).calls.slice(callsBefore);
  const sample = calls.find((c) => c.tool === "polymer_chain" && Object.keys(c.arguments).length > 0);
  assert.equal(sample?.arguments.monomer.name, "ethane (polyethylene repeat unit)", JSON.stringify(calls));
  assert.equal(sample.arguments.monomer.smiles, "CC");
  assert.match(sample.arguments.monomer.molblock, /V2000/);
  assert.deepEqual([sample.arguments.head, sample.arguments.tail], [0, 1]);
});

test("Disconnect closes the server and removes its tools; the offline tools stay", async () => {
  await chooseTool("liquid_box");
  await page.click(`.server[data-server="${peerUrl}"] button.disconnect`);
  await page.waitForFunction((url) => !document.querySelector(`.server[data-server="${url}"]`), peerUrl);
  assert.equal(await page.textContent("#form-title"), "Choose a tool");
  assert.equal(await page.locator('button.tool[data-server="offline"]').count(), 3);
});

test("no page errors under the Content-Security-Policy", () => {
  assert.deepEqual(errors, []);
});
