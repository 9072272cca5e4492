// The page's main flows in Firefox (Debian's firefox-esr, headless), driven over WebDriver BiDi by
// puppeteer-core: the offline liquid box on the page's thread and in the threaded Worker (a rayon pool
// of nested Workers, the page being cross-origin isolated), the demo page's offline run from its form,
// a remote connect + call + cancel against the Python SDK peer, and sign-in against the authorization
// server the Chromium tests use. Every console error and warning of the page, its Workers and theirs
// fails the run (consoleProblem), so the package's own warnings are caught here as in Chromium.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { FIREFOX_AUTO_PROBE, FIXTURES, ROOT, consoleProblem, launchFirefox, molblock, startBuilderPeer, startServer } from "./harness.mjs";
import { startAuthorizationServer } from "./authorization-server.mjs";

const TOKEN = "firefox-token-3b9d";
const RECORDED = join(FIXTURES, "megane-recorded");
const problems = [];
const dialogs = [];
const resources = [];
let root, www, peer, peerUrl, as, signInPeer, signInUrl, browser, scratch;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), "mbc-firefox-"));
  root = await startServer(ROOT);
  www = await startServer(join(ROOT, "www"));
  peer = await startBuilderPeer(www.url, TOKEN, RECORDED, ["--step-seconds", "0.15"]);
  peerUrl = `${peer.url}/mcp`;
  as = await startAuthorizationServer({ resources, pageOrigin: www.url });
  signInPeer = await startBuilderPeer(www.url, null, RECORDED, ["--oauth-issuer", as.issuer, "--step-seconds", "0.05"]);
  signInUrl = `${signInPeer.url}/mcp`;
  resources.push(signInUrl);
  browser = await launchFirefox();
});

after(async () => {
  await browser?.close();
  peer?.child.kill();
  signInPeer?.child.kill();
  await as?.stop();
  www?.stop();
  root?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** A new tab at `url` whose page errors, console errors and warnings go to `problems`. */
async function open(url) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });
  // The default auto probe's refused preflight (the peer's CORS list lacks the 2026-07-28 headers)
  // is the browser's own line; everything else counts.
  page.on("pageerror", (e) => { if (!FIREFOX_AUTO_PROBE.test(e?.message ?? "")) problems.push(`pageerror: ${e?.message ?? e}`); });
  page.on("console", (m) => {
    const problem = consoleProblem(m.type(), m.text(), m.location()?.url, FIREFOX_AUTO_PROBE);
    if (problem) problems.push(problem);
  });
  page.on("dialog", (d) => { dialogs.push(d.message()); d.accept(); });
  await page.goto(url);
  return page;
}

const text = (page, selector) => page.$eval(selector, (e) => e.textContent);

/** Sets inputs and selects the way a user's typing does (their `input` and `change` events). */
async function setFields(page, values) {
  await page.evaluate((values) => {
    for (const [selector, value] of Object.entries(values)) {
      for (const field of document.querySelectorAll(selector)) {
        field.value = value;
        field.dispatchEvent(new Event(field.tagName === "SELECT" ? "change" : "input", { bubbles: true }));
      }
    }
  }, values);
}

/** The recorded call leaves these optional fields out: cleared, so their defaults are not sent. */
function cleared(keys) {
  return Object.fromEntries(keys.flatMap((k) => [[`[data-path="${k}"] input`, ""], [`[data-path="${k}"] > select`, ""]]));
}

async function waitForStatusReady(page) {
  await page.waitForFunction(() => document.getElementById("status")?.textContent.startsWith("Ready"), { timeout: 60000 });
}

test("offline liquid box on the page's thread and in the threaded Worker, with the single-threaded Worker's structure", async () => {
  const page = await open(`${root.url}/tests/node/pages/blank.html`);
  const outcome = await page.evaluate(async (water) => {
    const { loadBuilderClient } = await import("/pkg/loader.js");
    const client = await loadBuilderClient();
    const json = (o) => (o.ok ? JSON.stringify(o.result.toJSON().structure) : o.error);
    const small = { components: [{ molecule: { name: "water", molblock: water }, count: 5 }], seed: 3 };
    const box = { components: [{ molecule: { name: "water", molblock: water }, count: 100 }], seed: 42 };
    const here = client.offlineTools({ threads: false });
    const smallHere = await here.call("liquid_box", small);
    const threadsAfterSmall = here.threads;
    const single = client.offlineTools({ threads: false, here: false });
    const smallThere = await single.call("liquid_box", small);
    const boxSingle = await single.call("liquid_box", box);
    const threaded = client.offlineTools({ threads: true, threadCount: 2 });
    const boxThreaded = await threaded.call("liquid_box", box);
    const used = { single: single.threads, threaded: threaded.threads, notices: threaded.notices };
    for (const t of [here, single, threaded]) await t.close();
    return {
      isolated: self.crossOriginIsolated, threadedBuild: client.threaded, threadsAfterSmall, used,
      smallAtoms: smallHere.ok ? smallHere.result.atomCount : smallHere.error, smallSame: json(smallHere) === json(smallThere),
      boxAtoms: boxThreaded.ok ? boxThreaded.result.atomCount : boxThreaded.error, boxSame: json(boxSingle) === json(boxThreaded),
    };
  }, molblock("water"));
  await page.close();
  assert.equal(outcome.isolated, true, "the test page is cross-origin isolated");
  assert.equal(outcome.threadedBuild, true);
  assert.equal(outcome.smallAtoms, 15);
  assert.equal(outcome.threadsAfterSmall, null, "5 water ran on the page's thread, no Worker started");
  assert.ok(outcome.smallSame, "the page's thread gives the Worker's structure");
  assert.equal(outcome.used.single, 1);
  assert.equal(outcome.used.threaded, 2, JSON.stringify(outcome.used.notices));
  assert.equal(outcome.boxAtoms, 300);
  assert.ok(outcome.boxSame, "bit-identical on 1 and 2 threads");
});

test("the demo page builds an offline liquid box from its form", async () => {
  const page = await open(`${www.url}/`);
  await waitForStatusReady(page);
  await page.click('button.tool[data-server="offline"][data-tool="liquid_box"]');
  await page.waitForSelector('[data-path="components/0/count"] input');
  assert.equal(await page.$eval('[data-path="components/0/molecule"] select', (s) => s.value), "water");
  await setFields(page, { '[data-path="components/0/count"] input': "200" });
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "600 atoms", { timeout: 60000 });
  assert.match(await text(page, "#notice"), /^Liquid box: 200 water in a .* box .*600 atoms/);
  assert.equal(await text(page, "#status"), "Liquid box finished in this page.");
  await page.close();
});

test("remote: the demo page connects to the Python SDK peer, runs liquid_box, and a cancel reaches the server", async () => {
  const page = await open(`${www.url}/`);
  await waitForStatusReady(page);
  dialogs.length = 0;
  await setFields(page, { "#server-url": peerUrl, "#server-token": TOKEN });
  await page.click("#connect");
  await page.waitForSelector(`.server[data-server="${peerUrl}"] button.tool`, { timeout: 30000 });
  assert.equal(dialogs.length, 1, "the first connection to the URL is confirmed");
  const tools = await page.$$eval(`.server[data-server="${peerUrl}"] button.tool`, (bs) => bs.map((b) => b.dataset.tool));
  assert.deepEqual(tools, ["liquid_box", "polymer_chain", "solvate"]);
  // The recorded call's water, imported under the library name "water".
  const waterFile = join(scratch, "water.mol");
  writeFileSync(waterFile, JSON.parse(readFileSync(join(RECORDED, "call-liquid_box.json"), "utf8")).arguments.components[0].molecule.molblock);
  await (await page.$("#mol-file")).uploadFile(waterFile);
  await page.waitForFunction(() => document.getElementById("library-list").textContent.includes("water (3 atoms, 3D) — imported"));
  const run = async () => {
    await page.click(`button.tool[data-server="${peerUrl}"][data-tool="liquid_box"]`);
    await page.waitForSelector("#tool-form .field");
    await setFields(page, { '[data-path="seed"] input': "1", ...cleared(["density", "shape", "aspect", "tolerance"]) });
    await page.click("#run");
  };
  await run();
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "300 atoms" || document.getElementById("form-error").textContent, { timeout: 30000 });
  assert.equal(await text(page, "#form-error"), "");
  assert.equal(await text(page, "#atom-count"), "300 atoms");
  await run();
  await page.waitForFunction(() => /^step/.test(document.getElementById("progress-message").textContent), { timeout: 20000 });
  await page.click("#cancel");
  await page.waitForFunction(() => document.getElementById("form-error").textContent.length > 0);
  assert.equal(await text(page, "#form-error"), "Cancelled: nothing was applied.");
  let cancellations = [];
  for (let i = 0; i < 30 && cancellations.length === 0; i++) {
    ({ cancellations } = await (await fetch(`${peer.url}/peer/cancellations`)).json());
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(cancellations.map((c) => c.tool), ["liquid_box"]);
  await page.close();
});

test("sign-in: Connect without a token, the popup's login and consent, then a call with the token", async () => {
  const page = await open(`${www.url}/`);
  await waitForStatusReady(page);
  await setFields(page, { "#server-url": signInUrl, "#server-token": "" });
  await page.click("#connect");
  await page.waitForSelector("#sign-in:not([hidden])", { timeout: 30000 });
  assert.equal(await text(page, "#sign-in-message"), `${new URL(signInUrl).host} asks you to sign in at ${new URL(as.issuer).host}.`);
  const popupOpened = browser.waitForTarget((t) => t.url().startsWith(as.issuer), { timeout: 20000 });
  await page.click("#sign-in-open");
  const popup = await (await popupOpened).page();
  popup.on("pageerror", (e) => problems.push(`pageerror (popup): ${e?.message ?? e}`));
  // oidc-provider's own login page, then its consent page.
  await popup.waitForSelector('input[name="login"]', { timeout: 20000 });
  await popup.type('input[name="login"]', "ada");
  await popup.type('input[name="password"]', "any password");
  await popup.click('button[type="submit"]');
  await popup.waitForSelector("button[type=submit]::-p-text(Continue)", { timeout: 20000 });
  assert.match(await popup.$eval("body", (b) => b.textContent), /mcp:tools/);
  await popup.click("button[type=submit]::-p-text(Continue)");
  await page.waitForSelector(`.server[data-server="${signInUrl}"] button.tool`, { timeout: 30000 });
  assert.equal(await text(page, "#status"), `Connected to ${signInUrl}.`);
  assert.equal(await page.$eval("#sign-in", (e) => e.hidden), true);
  // A call goes out with the token and its result opens; no token or code is kept outside memory.
  const waterFile = join(scratch, "water.mol");
  writeFileSync(waterFile, JSON.parse(readFileSync(join(RECORDED, "call-liquid_box.json"), "utf8")).arguments.components[0].molecule.molblock);
  await (await page.$("#mol-file")).uploadFile(waterFile);
  await page.waitForFunction(() => document.getElementById("library-list").textContent.includes("water (3 atoms, 3D) — imported"));
  await page.click(`button.tool[data-server="${signInUrl}"][data-tool="liquid_box"]`);
  await page.waitForSelector("#tool-form .field");
  await setFields(page, { '[data-path="seed"] input': "1", ...cleared(["density", "shape", "aspect", "tolerance"]) });
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "300 atoms" || document.getElementById("form-error").textContent, { timeout: 30000 });
  assert.equal(await text(page, "#form-error"), "");
  assert.equal(await text(page, "#atom-count"), "300 atoms");
  const { calls } = await (await fetch(`${signInPeer.url}/peer/cancellations`)).json();
  assert.deepEqual(calls.map((c) => c.tool), ["liquid_box"]);
  const kept = await page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, url: location.href }));
  assert.ok(!/code=|eyJ|access_token|refresh_token/.test(kept), kept);
  await page.close();
});

test("no page error, console error or console warning in Firefox", () => {
  assert.deepEqual(problems, []);
});
