// The demo page (www/) end to end with no tool server, in Debian's headless Chromium under the
// page's strict CSP: the offline liquid_box and solvate from the generated forms, the 3D view,
// Undo/Redo, the new_document confirmation, cancel mid-run, rebuild by SHA-256, mol import.
// Screenshots of each state go to artifacts/screenshots/ (git-ignored), each with a non-blank check.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ROOT, launchBrowser, startServer, consoleProblem } from "./harness.mjs";

const SHOTS = join(ROOT, "artifacts", "screenshots");
let server, browser, page;
const errors = [];
const dialogs = [];
let answer = true; // how the next confirm() is answered

before(async () => {
  assert.ok(existsSync(join(ROOT, "www", "pkg")), "www/pkg is staged by scripts/build.sh");
  assert.ok(existsSync(join(ROOT, "www", "vendor", "three.module.js")), "www/vendor is staged by scripts/build.sh");
  mkdirSync(SHOTS, { recursive: true });
  server = await startServer(join(ROOT, "www"));
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { const p = consoleProblem(m.type(), m.text(), m.location().url); if (p) errors.push(p); });
  page.on("dialog", (d) => { dialogs.push(d.message()); answer ? d.accept() : d.dismiss(); });
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Ready"));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** Pixels of the 3D canvas that are not the background colour (read back in the page). */
async function viewPixels() {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return page.evaluate(() => {
    const source = document.getElementById("view");
    const copy = document.createElement("canvas");
    copy.width = source.width;
    copy.height = source.height;
    const ctx = copy.getContext("2d");
    ctx.drawImage(source, 0, 0);
    const data = ctx.getImageData(0, 0, copy.width, copy.height).data;
    let lit = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (Math.abs(data[i] - 0x1d) + Math.abs(data[i + 1] - 0x23) + Math.abs(data[i + 2] - 0x30) > 24) lit++;
    }
    return { lit, total: data.length / 4 };
  });
}

async function shot(name, { blank = false } = {}) {
  const { lit, total } = await viewPixels();
  await page.screenshot({ path: join(SHOTS, `offline-${name}.png`) });
  if (blank) assert.ok(lit < total * 0.001, `${name}: the view should be empty (${lit} lit pixels)`);
  else assert.ok(lit > total * 0.01, `${name}: the 3D view is blank (${lit} of ${total} pixels lit)`);
}

async function chooseTool(tool, server = "offline") {
  await page.click(`button.tool[data-server="${server}"][data-tool="${tool}"]`);
  await page.waitForFunction((t) => document.getElementById("form-title").textContent.length > 0 && document.querySelector("#tool-form .field"), tool);
}

const atomCount = () => page.textContent("#atom-count");

test("a 200-water liquid box from the library water: view, notice, provenance; Undo empties it, Redo restores it", async () => {
  await shot("start", { blank: true });
  const labels = await page.$$eval("#tools .category h4", (hs) => hs.map((h) => h.textContent));
  assert.deepEqual(labels, ["Bulk", "Polymer", "Solvation"]);
  assert.match(await page.getAttribute('button.tool[data-tool="liquid_box"]', "title"), /^Fill a periodic box/);
  await chooseTool("liquid_box");
  assert.equal(await page.inputValue('[data-path="components/0/molecule"] select'), "water");
  assert.match(await page.textContent("#form-destination"), /nothing leaves your browser/);
  await page.fill('[data-path="components/0/count"] input', "200");
  assert.equal(await page.isDisabled("#run"), false);
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "600 atoms", null, { timeout: 60000 });
  assert.match(await page.textContent("#notice"), /^Liquid box: 200 water in a .* box .*600 atoms/);
  assert.equal(await page.textContent("#status"), "Liquid box finished in this page.");
  assert.equal(await page.locator("#provenance-list li").count(), 1);
  assert.match(await page.textContent("#provenance-list li"), /^Liquid box in this page: 600 atoms, seed \d+/);
  assert.equal(await page.evaluate(() => window.meganeDemo.doc.state.cell.length), 9);
  await shot("liquid-box-200");
  await page.click("#undo");
  assert.equal(await atomCount(), "0 atoms");
  await shot("undone", { blank: true });
  await page.click("#redo");
  assert.equal(await atomCount(), "600 atoms");
});

test("Rebuild calls the tool again with the recorded arguments and finds the same structure (SHA-256)", async () => {
  await page.click("#provenance-list li button.rebuild");
  await page.waitForFunction(() => document.querySelector("#provenance-list .rebuild-result").textContent.includes("structure"), null, { timeout: 60000 });
  assert.equal(await page.textContent("#provenance-list .rebuild-result"), "Identical structure: the same atoms at the same positions.");
  assert.equal(await page.getAttribute("#provenance-list .rebuild-result", "data-identical"), "true");
  // The export link is a Blob URL with the §7 records (the document would be replaced by its size).
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-provenance")]);
  assert.equal(download.suggestedFilename(), "provenance.json");
  const records = JSON.parse(readFileSync(await download.path(), "utf8"));
  assert.equal(records.length, 1);
  assert.equal(records[0].tool, "liquid_box");
  assert.equal(records[0].atoms, 600);
  assert.equal(records[0].arguments.components[0].count, 200);
  assert.match(records[0].sha256, /^[0-9a-f]{64}$/);
});

test("clicking an atom in the view selects it", async () => {
  const { x, y } = await page.evaluate(() => window.meganeDemo.view.screenPosition(0));
  await page.mouse.click(x, y);
  const selected = await page.evaluate(() => window.meganeDemo.doc.state.selection);
  assert.equal(selected.length, 1, `selection ${JSON.stringify(selected)}`);
  assert.equal(await page.textContent("#selection-count"), "1 selected");
  await shot("selected-atom");
  const again = await page.evaluate(() => window.meganeDemo.view.screenPosition(0));
  assert.deepEqual({ x: again.x, y: again.y }, { x, y }, "selecting does not move the view");
  await page.keyboard.down("Shift");
  await page.mouse.click(x, y); // shift-click on a selected atom takes it out again
  await page.keyboard.up("Shift");
  assert.equal(await page.textContent("#selection-count"), "", "shift-click toggles the atom off");
});

test("solvate a 20-water box at low density: one undo step, new atoms selected", async () => {
  await chooseTool("liquid_box");
  await page.fill('[data-path="components/0/count"] input', "20");
  answer = true;
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "60 atoms", null, { timeout: 60000 });
  await chooseTool("solvate");
  assert.match(await page.textContent('[data-path="document"]'), /Works on the open structure \(60 atoms, with a cell\)/);
  await page.fill('[data-path="density"] input', "0.3");
  await page.click("#run");
  await page.waitForFunction(() => Number.parseInt(document.getElementById("atom-count").textContent) > 60, null, { timeout: 60000 });
  const n = Number.parseInt(await atomCount());
  assert.equal((n - 60) % 3, 0, "whole water molecules were added");
  assert.match(await page.textContent("#notice"), /^Solvate/);
  assert.equal(await page.textContent("#selection-count"), `${n - 60} selected`);
  assert.deepEqual(await page.evaluate(() => window.meganeDemo.doc.state.fragmentIds.length), 1);
  await shot("solvated");
  await page.click("#undo");
  assert.equal(await atomCount(), "60 atoms");
  await page.click("#redo");
  assert.equal(await atomCount(), `${n} atoms`);
});

test("a new_document run on an edited document asks to discard the edits first", async () => {
  await chooseTool("liquid_box");
  assert.equal(await page.textContent("#form-warning"), "The result replaces the open structure and its history.");
  const before = await atomCount();
  answer = false;
  dialogs.length = 0;
  await page.fill('[data-path="components/0/count"] input', "10");
  await page.click("#run");
  assert.match(dialogs[0] ?? "", /^Discard unsaved edits\?/);
  assert.equal(await atomCount(), before, "declined: nothing ran");
  answer = true;
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "30 atoms", null, { timeout: 60000 });
});

test("Cancel stops a 100 000-water box on its first progress message; nothing is applied", async () => {
  await chooseTool("liquid_box");
  const before = await atomCount();
  await page.fill('[data-path="components/0/count"] input', "100000");
  await page.click("#run");
  await page.waitForSelector("#cancel:not([hidden])");
  await page.waitForFunction(() => Number(document.getElementById("progress").dataset.events ?? 0) > 0 || document.getElementById("progress-message").textContent !== "Starting…", null, { timeout: 60000 });
  assert.equal(await page.isVisible("#progress-bar") || await page.isVisible("#spinner"), true);
  await page.screenshot({ path: join(SHOTS, "offline-running.png") });
  await page.click("#cancel");
  await page.waitForFunction(() => document.getElementById("form-error").textContent.length > 0);
  assert.equal(await page.textContent("#form-error"), "Cancelled: nothing was applied.");
  assert.equal(await page.getAttribute("#form-error", "class"), "note", "a cancel is not an error");
  assert.equal(await atomCount(), before);
  assert.equal(await page.inputValue('[data-path="components/0/count"] input'), "100000", "the form keeps the user's values");
  assert.equal(await page.isHidden("#progress"), true);
});

test("the form validates as the user types: first problem shown, per-field messages, units, table rows", async () => {
  await chooseTool("liquid_box");
  await page.fill('[data-path="components/0/count"] input', "50");
  await page.fill('[data-path="tolerance"] input', "0.5");
  assert.equal(await page.isDisabled("#run"), true);
  assert.equal(await page.textContent("#form-problem"), "Run is disabled: Minimum distance must be at least 1 Å.");
  assert.equal(await page.textContent('[data-path="tolerance"] .field-error'), "Minimum distance must be at least 1 Å.");
  // Unit conversion: the value shown in nm, kept in Å.
  await page.selectOption('[data-path="tolerance"] select.unit', { label: "nm" });
  assert.equal(await page.inputValue('[data-path="tolerance"] input'), "0.05");
  await page.fill('[data-path="tolerance"] input', "0.25");
  assert.equal(await page.isDisabled("#run"), false);
  assert.equal(await page.isHidden("#form-problem"), true);
  // Table rows: add one (Run waits for its molecule), fill it, remove it.
  await page.click('[data-path="components"] button.add-row');
  assert.equal(await page.locator('[data-path="components"] tbody tr').count(), 2);
  assert.equal(await page.isDisabled("#run"), true);
  assert.match(await page.textContent("#form-problem"), /^Run is disabled: Molecule: choose a molecule/);
  await page.selectOption('[data-path="components/1/molecule"] select', "methanol");
  await page.fill('[data-path="components/1/count"] input', "5");
  assert.equal(await page.isDisabled("#run"), false);
  await page.click('[data-path="components"] tbody tr:nth-child(2) button.remove-row');
  assert.equal(await page.locator('[data-path="components"] tbody tr').count(), 1);
  assert.equal(await page.isDisabled('[data-path="components"] tbody tr button.remove-row'), true, "minItems 1");
  await page.click('[data-path="seed"] button.new-seed');
  assert.match(await page.inputValue('[data-path="seed"] input'), /^\d+$/);
  await page.screenshot({ path: join(SHOTS, "offline-form.png") });
});

test("mol files join the library after parseMolblock checks them; a broken one is refused with its reason", async () => {
  const mol = "\n  test\n\n  2  1  0  0  0  0  0  0  0  0999 V2000\n    0.0000    0.0000    0.0000 C   0  0\n    1.2000    0.0000    0.0000 O   0  0\n  1  2  2  0\nM  END\n";
  await page.setInputFiles("#mol-file", [
    { name: "carbon_monoxide.mol", mimeType: "chemical/x-mdl-molfile", buffer: Buffer.from(mol) },
    { name: "broken.mol", mimeType: "chemical/x-mdl-molfile", buffer: Buffer.from("not a mol block") },
  ]);
  await page.waitForFunction(() => !document.getElementById("library-msg").hidden);
  const msg = await page.textContent("#library-msg");
  assert.match(msg, /carbon_monoxide: 2 atoms \(3D\)/);
  assert.match(msg, /broken\.mol: /);
  assert.match(await page.textContent("#library-list"), /carbon_monoxide \(2 atoms, 3D\) — imported/);
  const options = await page.$$eval('[data-path="components/0/molecule"] option', (os) => os.map((o) => o.value));
  assert.ok(options.includes("carbon_monoxide"));
  assert.ok(!options.includes("broken"));
});

test("Check runs the §10 checks against the offline tools: every check passes, the polymer sample is the library's ethane", async () => {
  await page.click('.server[data-server="offline"] button.check');
  await page.waitForFunction(() => /passed|problem/.test(document.getElementById("check-state").textContent), null, { timeout: 60000 });
  const lines = await page.$$eval("#check-report li", (lis) => lis.map((li) => `${li.className} ${li.querySelector(".plain").textContent}`));
  // polymer_chain's sample is the schema's own example monomer (ethylene, SMILES CC): the library
  // holds it (ethane, the polyethylene repeat unit, with 3D coordinates), so the check runs it.
  assert.equal(await page.textContent("#check-state"), "Every check passed.", lines.join("\n"));
  for (const expected of ["pass Liquid box: the example run gave a valid structure (300 atoms, a new structure).",
    "pass Liquid box: the same seed gives the same structure again.", "pass Liquid box: a run with nothing filled in is refused, as it should be.",
    "pass Solvate: a seed makes its random result repeatable.", "pass Liquid box: describes the result it gives.",
    "pass Liquid box: the result is as the tool describes it.", "pass Polymer chain: the example run gave a valid structure (62 atoms, a new structure).",
    "pass Solvate: the result is as the tool describes it."]) {
    assert.ok(lines.includes(expected), `${expected} in ${lines.join(" | ")}`);
  }
  // The contract's own words, folded beside the plain line.
  assert.equal(await page.$eval("#check-report li.pass:nth-child(4) details span", (s) => s.textContent.trim()), "declares an object outputSchema.");
  await page.screenshot({ path: join(SHOTS, "offline-server-check.png") });
});

test("Check counts only the tool's refusal: a timed-out or failed call without arguments is not 'refused'", async () => {
  // A fault only a stand-in can make: the offline server's calls without arguments time out
  // (liquid_box) or fail on the way (solvate); the sample calls still reach the real tools.
  await page.evaluate(() => {
    const server = window.meganeDemo.servers.get("offline").server;
    const real = server.call;
    window.realOfflineCall = real;
    server.call = (name, args, options) => (Object.keys(args).length > 0 ? real(name, args, options)
      : Promise.resolve(name === "liquid_box" ? { ok: false, error: "Timed out after 60 s.", timedOut: true }
        : { ok: false, error: "The tool server did not answer (network error)." }));
  });
  try {
    await page.click('.server[data-server="offline"] button.check');
    await page.waitForFunction(() => /passed|problem/.test(document.getElementById("check-state").textContent), null, { timeout: 60000 });
    const lines = await page.$$eval("#check-report li", (lis) => lis.map((li) => `${li.className} ${li.querySelector(".plain").textContent}`));
    assert.ok(!lines.some((l) => /nothing filled in is refused/.test(l)), lines.join(" | "));
    assert.ok(lines.includes("skip Liquid box: could not check a run with nothing filled in: Timed out after 60 s."), lines.join(" | "));
    assert.ok(lines.includes("fail Polymer chain: a run with nothing filled in was not refused by the tool: The tool server did not answer (network error)."), lines.join(" | "));
  } finally {
    await page.evaluate(() => { window.meganeDemo.servers.get("offline").server.call = window.realOfflineCall; });
  }
});

test("from page load to a 1000-water box in the view (timed), and Ctrl+Z undoes it", async () => {
  const fresh = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  fresh.on("pageerror", (e) => errors.push(String(e)));
  const t0 = Date.now();
  await fresh.goto(`${server.url}/`);
  await fresh.waitForFunction(() => document.getElementById("status").textContent.startsWith("Ready"));
  const ready = Date.now() - t0;
  await fresh.click('button.tool[data-tool="liquid_box"]');
  await fresh.fill('[data-path="components/0/count"] input', "1000");
  await fresh.click("#run");
  await fresh.waitForFunction(() => document.getElementById("atom-count").textContent === "3000 atoms", null, { timeout: 120000 });
  const total = Date.now() - t0;
  console.log(`page load → ready ${ready} ms; page load → 1000-water box shown ${total} ms (includes the form filled by the test)`);
  await fresh.click("#view");
  await fresh.keyboard.press("Control+z");
  assert.equal(await fresh.textContent("#atom-count"), "0 atoms");
  await fresh.close();
});

test("solvate on a structure without a cell: Run is off with the reason, and Set cell… in the form fixes it (one undo step)", async () => {
  await page.setInputFiles("#open-file", [
    { name: "caffeine.mol", mimeType: "chemical/x-mdl-molfile", buffer: readFileSync(join(ROOT, "www", "samples", "molecules", "caffeine.mol")) },
  ]);
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "24 atoms");
  await chooseTool("solvate");
  assert.equal(await page.isDisabled("#run"), true);
  assert.match(await page.textContent("#form-problem"), /^Run is disabled: The open structure has no cell, and this tool fills the cell: set a cell/);
  assert.match(await page.textContent('[data-path="document"] .field-error'), /has no cell/);
  await page.click('[data-path="document"] button.set-cell');
  assert.equal(await page.evaluate(() => document.getElementById("cell-editor").open), true);
  const abc = await Promise.all(["#cell-a", "#cell-b", "#cell-c"].map((id) => page.inputValue(id)));
  assert.ok(abc.every((v) => Number(v) > 10), `prefilled from the atoms' extent + 10 Å: ${abc}`);
  for (const id of ["#cell-a", "#cell-b", "#cell-c"]) await page.fill(id, "20");
  await page.click("#cell-apply");
  assert.deepEqual(await page.evaluate(() => window.meganeDemo.doc.state.cell), [20, 0, 0, 0, 20, 0, 0, 0, 20]);
  assert.equal(await page.isDisabled("#run"), false);
  assert.match(await page.textContent('[data-path="document"]'), /24 atoms, with a cell/);
  await page.click("#undo");
  assert.equal(await page.evaluate(() => window.meganeDemo.doc.state.cell), null);
  assert.equal(await page.isDisabled("#run"), true);
});

test("the committed sample tools/list previews the reference tools; polymer_chain starts from the library's ethane (its example's SMILES)", async () => {
  await page.click("#authors summary");
  await page.click("#sample-list");
  await page.waitForSelector('button.tool[data-server="file:reference tools"][data-tool="polymer_chain"]');
  await chooseTool("polymer_chain", "file:reference tools");
  assert.equal(await page.inputValue('[data-path="monomer"] select'), "ethane (polyethylene repeat unit)");
  assert.equal(await page.inputValue('[data-path="head"] select'), "0");
  assert.equal(await page.inputValue('[data-path="tail"] select'), "1");
  assert.deepEqual(await page.$$eval('[data-path="head"] select option:checked, [data-path="tail"] select option:checked', (os) => os.map((o) => o.textContent)), ["0: C", "1: C"]);
  assert.equal(await page.isDisabled("#run"), false);
  assert.match(await page.textContent("#form-destination"), /^Preview from a file/);
});

test("an empty library: the forms say how to add a molecule, Run stays off until one is imported", async () => {
  while (await page.locator("#library-list li button.remove-molecule").count()) {
    await page.click("#library-list li button.remove-molecule");
  }
  assert.equal(await page.isVisible("#library-empty"), true);
  await chooseTool("liquid_box");
  const field = '[data-path="components/0/molecule"]';
  assert.equal(await page.locator(`${field} select`).count(), 0, "no blank drop-down");
  assert.match(await page.textContent(`${field} .library-empty`), /The molecule library is empty\. Import a \.mol file/);
  assert.equal(await page.isDisabled("#run"), true);
  assert.match(await page.textContent("#form-problem"), /^Run is disabled: Molecule: the molecule library is empty; import a \.mol file/);
  await page.screenshot({ path: join(SHOTS, "offline-empty-library.png") });
  // The form's own import control adds the molecule; then it can be chosen and Run comes on.
  await page.setInputFiles(`${field} input[type=file]`, [
    { name: "water.mol", mimeType: "chemical/x-mdl-molfile", buffer: readFileSync(join(ROOT, "www", "samples", "molecules", "water.mol")) },
  ]);
  await page.waitForSelector(`${field} select`);
  assert.equal(await page.isVisible("#library-empty"), false);
  await page.selectOption(`${field} select`, "water");
  assert.equal(await page.isDisabled("#run"), false);
});

test("a server URL with a query or user:pass@ is refused with the token-field hint, before it is confirmed or stored", async () => {
  for (const url of ["http://127.0.0.1:9/mcp?token=s3cret", "http://me:s3cret@127.0.0.1:9/mcp"]) {
    dialogs.length = 0;
    await page.fill("#server-url", url);
    await page.click("#connect");
    await page.waitForFunction(() => !document.getElementById("server-error").hidden);
    const error = await page.textContent("#server-error");
    assert.match(error, /token field/, url);
    assert.doesNotMatch(error, /s3cret/, url);
    assert.deepEqual(dialogs, [], "no confirmation is asked");
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }));
    assert.doesNotMatch(stored, /s3cret/);
  }
});

test("no page errors under the Content-Security-Policy", () => {
  assert.deepEqual(errors, []);
});
