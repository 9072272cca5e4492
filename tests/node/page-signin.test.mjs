// The demo page (www/) signs in to a protected tool server: the MCP authorization flow end to end in
// headless Chromium, against real servers on loopback. The authorization server is oidc-provider
// (npm; authorization-server.mjs is only its configuration) with its own login and consent pages;
// the tool server is the Python SDK test peer (tests/peers/builder_peer.py --oauth-issuer) with the
// SDK's auth support, which publishes its protected resource metadata and accepts only JWT access
// tokens of that issuer for its own URL. The test does what a user does: Connect without a token,
// click "Sign in", fill the login and consent forms in the popup; then it runs a tool.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { AUTO_PROBE_CONSOLE, ROOT, FIXTURES, consoleProblem, launchBrowser, startServer, startBuilderPeer } from "./harness.mjs";
import { startAuthorizationServer } from "./authorization-server.mjs";

const RECORDED = join(FIXTURES, "megane-recorded");
const resources = [];
let web, as, peer, peerUrl, browser, context, page;
const errors = [];
const dialogs = [];
const requests = [];

before(async () => {
  assert.ok(existsSync(join(ROOT, "www", "pkg")), "www/pkg is staged by scripts/build.sh");
  web = await startServer(join(ROOT, "www"));
  as = await startAuthorizationServer({ resources, pageOrigin: web.url });
  peer = await startBuilderPeer(web.url, null, RECORDED, ["--oauth-issuer", as.issuer, "--step-seconds", "0.05"]);
  peerUrl = `${peer.url}/mcp`;
  resources.push(peerUrl);
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    // Chromium logs the 401 that starts sign-in, the default auto probe's refused preflight, and the
    // authorization server's metadata locations it does not serve (404 without CORS) itself.
    const text = m.text();
    const expected = /status of 40[14] \((Unauthorized|Not Found)\)/.test(text) || AUTO_PROBE_CONSOLE.test(text)
      || (text.includes(as.issuer) && /blocked by CORS policy/.test(text));
    const problem = expected ? null : consoleProblem(m.type(), text, m.location().url);
    if (problem) errors.push(problem);
  });
  page.on("dialog", (d) => { dialogs.push(d.message()); d.accept(); });
  context.on("request", (r) => requests.push(r.url())); // the popup's too
  await page.goto(web.url);
  await page.waitForFunction(() => /offline tools|Ready/i.test(document.getElementById("status").textContent) || document.querySelector("button.tool"));
});

after(async () => {
  await browser?.close();
  peer?.child.kill();
  await as?.stop();
  web?.stop();
});

/** Connect without a token; resolves when the Sign in panel shows. */
async function connectAndWaitForSignIn() {
  await page.fill("#server-url", peerUrl);
  await page.fill("#server-token", "");
  await page.click("#connect");
  await page.waitForSelector("#sign-in:not([hidden])", { timeout: 30000 });
}

test("the peer refuses a call without a token and names its protected resource metadata", async () => {
  const answer = await fetch(peerUrl, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
  assert.equal(answer.status, 401);
  assert.match(answer.headers.get("www-authenticate"), /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/);
});

test("Connect without a token shows Sign in; the popup's login and consent sign in; the tools appear", async () => {
  await connectAndWaitForSignIn();
  assert.equal(await page.textContent("#sign-in-message"), `${new URL(peerUrl).host} asks you to sign in at ${new URL(as.issuer).host}.`);
  const popupOpened = context.waitForEvent("page");
  await page.click("#sign-in-open");
  const popup = await popupOpened;
  // oidc-provider's own login page, then its consent page.
  await popup.waitForSelector('input[name="login"]', { timeout: 20000 });
  assert.ok(popup.url().startsWith(as.issuer), popup.url());
  await popup.fill('input[name="login"]', "ada");
  await popup.fill('input[name="password"]', "any password");
  await popup.click('button[type="submit"]');
  await popup.waitForSelector('button[type="submit"]:has-text("Continue")', { timeout: 20000 });
  assert.match(await popup.textContent("body"), /mcp:tools/);
  await popup.click('button[type="submit"]:has-text("Continue")');
  await page.waitForSelector(`.server[data-server="${peerUrl}"] button.tool`, { timeout: 30000 });
  assert.equal(await page.isHidden("#sign-in"), true);
  assert.equal(await page.textContent("#status"), `Connected to ${peerUrl}.`);
  // The callback page closed its popup, after taking the code out of its address bar.
  for (let i = 0; i < 50 && !popup.isClosed(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(popup.isClosed(), true);
  const tools = await page.$$eval(`.server[data-server="${peerUrl}"] button.tool`, (bs) => bs.map((b) => b.dataset.tool));
  assert.deepEqual(tools, ["liquid_box", "polymer_chain", "solvate"]);
  assert.equal(dialogs.length, 1, "the first connection to the URL was confirmed");
  // The authorization request carried PKCE S256, state and the resource indicator; the callback
  // came back to the page's callback page (redirect URI) with the code.
  const authorize = new URL(requests.find((u) => u.startsWith(`${as.issuer}/auth?`)));
  assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
  assert.equal(authorize.searchParams.get("resource"), peerUrl);
  assert.ok(authorize.searchParams.get("state"));
  assert.equal(authorize.searchParams.get("redirect_uri"), `${web.url}/oauth-callback.html`);
});

test("a tool call goes out with the token and its result opens", async () => {
  const water = JSON.parse(readFileSync(join(RECORDED, "call-liquid_box.json"), "utf8")).arguments.components[0].molecule.molblock;
  await page.setInputFiles("#mol-file", [{ name: "water.mol", mimeType: "chemical/x-mdl-molfile", buffer: Buffer.from(water) }]);
  await page.waitForFunction(() => document.getElementById("library-list").textContent.includes("water (3 atoms, 3D) — imported"));
  await page.click(`button.tool[data-server="${peerUrl}"][data-tool="liquid_box"]`);
  await page.waitForSelector("#tool-form .field");
  await page.fill('[data-path="seed"] input', "1");
  for (const key of ["density", "shape", "aspect", "tolerance"]) {
    const inputs = page.locator(`[data-path="${key}"] input`);
    for (let i = 0; i < await inputs.count(); i++) await inputs.nth(i).fill("");
    const select = page.locator(`[data-path="${key}"] > select`);
    if (await select.count()) await select.selectOption("");
  }
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "300 atoms" || document.getElementById("form-error").textContent, null, { timeout: 30000 });
  assert.equal(await page.textContent("#form-error"), "");
  assert.equal(await page.textContent("#atom-count"), "300 atoms");
  const { calls } = await (await fetch(`${peer.url}/peer/cancellations`)).json();
  assert.deepEqual(calls.map((c) => c.tool), ["liquid_box"]);
});

test("no token or code is kept outside memory: not in storage, not in the address bar", async () => {
  const kept = await page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, url: location.href }));
  assert.ok(!/code=|eyJ|access_token|refresh_token/.test(kept), kept);
  assert.ok(kept.includes(peerUrl), "the URL is remembered, as for any server");
});

test("Cancel at Sign in is one line and keeps the working connection", async () => {
  await connectAndWaitForSignIn();
  await page.click("#sign-in-cancel");
  await page.waitForFunction(() => !document.getElementById("server-error").hidden, null, { timeout: 20000 });
  const error = await page.textContent("#server-error");
  assert.equal(error, "Sign-in failed: the sign-in window was closed or gave no answer.");
  assert.ok(!error.includes("\n"), error);
  assert.equal(await page.isHidden("#sign-in"), true);
  assert.equal(await page.locator(`.server[data-server="${peerUrl}"] button.tool`).count(), 3);
});

test("no page errors under the Content-Security-Policy", () => {
  assert.deepEqual(errors, []);
});
