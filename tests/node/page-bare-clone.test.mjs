// The README's main command on a bare clone (issue 14): the repository's files alone (what git
// tracks, plus files not yet committed that are not ignored) are copied to a temporary folder with
// no ../shared beside it, `scripts/build.sh` (the build `scripts/serve.sh` runs) stages the page
// there, and headless Chromium makes a 100-water offline box from the page that copy serves.
//
// Kept cheap: THREADS=0 (the multi-threaded pkg/threads is not needed: serve.py's page uses it only
// when present), CARGO_TARGET_DIR is this repository's target/ so only the crate itself compiles
// (its dependencies are already built by the release build before this test), and the copy's
// www/node_modules (three.js, which build.sh would `npm ci`) is a link to this repository's.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { ROOT, launchBrowser, startServer, consoleProblem } from "./harness.mjs";

let work, copy, server, browser;
const errors = [];

before(async () => {
  work = mkdtempSync(join(tmpdir(), "megane-bare-clone-"));
  copy = join(work, "megane-builder-client");
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT })
    .toString().split("\0").filter((f) => f && existsSync(join(ROOT, f)));
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(ROOT, file), join(copy, file));
  }
  if (existsSync(join(ROOT, "www", "node_modules"))) symlinkSync(join(ROOT, "www", "node_modules"), join(copy, "www", "node_modules"));
  assert.equal(existsSync(join(work, "shared")), false, "no ../shared beside the copy");
  assert.equal(existsSync(join(copy, "www", "pkg")), false, "the copy starts unbuilt");
  execFileSync("bash", ["scripts/build.sh"], {
    cwd: copy, stdio: ["ignore", "ignore", "inherit"], timeout: 15 * 60 * 1000,
    env: { ...process.env, THREADS: "0", WASM_OPT: "0", CARGO_TARGET_DIR: join(ROOT, "target") },
  });
  server = await startServer(join(copy, "www"));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

test("the copy's page has its sample library and sample tools/list, all from the repository", () => {
  for (const name of ["water", "methanol", "ethanol", "acetonitrile", "benzene", "caffeine", "alanine_dipeptide", "ethylene"]) {
    const mol = readFileSync(join(copy, "www", "samples", "molecules", `${name}.mol`), "utf8");
    assert.match(mol.split("\n")[3], /V2000$/, name);
  }
  assert.equal(JSON.parse(readFileSync(join(copy, "www", "samples", "tools-list.json"), "utf8")).tools.length, 3);
});

test("a 100-water box is made offline from the page the bare clone serves", async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { const p = consoleProblem(m.type(), m.text(), m.location().url); if (p) errors.push(p); });
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Ready"));
  assert.match(await page.textContent("#status"), /library: water, methanol, ethanol, acetonitrile, benzene, caffeine, alanine dipeptide, ethane \(polyethylene repeat unit\)\./);
  assert.equal(await page.locator("#library-list li").count(), 8);
  await page.click('button.tool[data-server="offline"][data-tool="liquid_box"]');
  await page.waitForSelector('[data-path="components/0/molecule"] select');
  assert.equal(await page.inputValue('[data-path="components/0/molecule"] select'), "water");
  await page.fill('[data-path="components/0/count"] input', "100");
  assert.equal(await page.isDisabled("#run"), false);
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "300 atoms", null, { timeout: 120000 });
  assert.match(await page.textContent("#notice"), /^Liquid box: 100 water/);
  assert.equal(await page.evaluate(() => window.meganeDemo.doc.state.elements.filter((z) => z === 8).length), 100);
  await page.close();
  assert.deepEqual(errors, []);
});
