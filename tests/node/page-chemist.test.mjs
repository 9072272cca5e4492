// The demo page as a chemist keeps using it (issue 33), at a laptop's 1366×768 and at 1920×1080,
// in Debian's headless Chromium under the page's CSP: Save in every format and Open again (and
// files it does not read, in error style), Check with a running state and its report in the main
// area in plain words, the caption and the applied results following Undo/Redo, selection that
// keeps element colours, each new structure framed with bonds as sticks, the layout (the view
// keeps its size, every control reachable, unclipped, not overlapped), chemistry words (no
// developer terms in any flow; head and tail chosen on a picture), the first screen, the form's
// small points; and against the Python SDK peer: connection notices in plain words, and an origin
// that refused the newer protocol connected with the earlier one next time, without a probe.
// Screenshots: artifacts/screenshots/chemist-<flow>-<width>x<height>.png.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { AUTO_PROBE_CONSOLE, FIXTURES, ROOT, launchBrowser, startBuilderPeer, startServer } from "./harness.mjs";

const SHOTS = join(ROOT, "artifacts", "screenshots");
const SIZES = [{ width: 1366, height: 768 }, { width: 1920, height: 1080 }];
/** Words a chemist should not have to read (issue 33), in any visible text of the page. */
const DEVELOPER_TERMS = ["§", "contract", "outputSchema", "marker", "new_document", "tolerance bodies", "packing fraction",
  "sha256", "probe", "handshake", "TypeError", "JSON-RPC"];
let server, browser;
const errors = [];

before(async () => {
  assert.ok(existsSync(join(ROOT, "www", "pkg")), "www/pkg is staged by scripts/build.sh");
  mkdirSync(SHOTS, { recursive: true });
  server = await startServer(join(ROOT, "www"));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** A fresh page at `size`, ready; console errors and page errors go to `errors`. */
async function openPage(size, expected = null) {
  const page = await browser.newPage({ viewport: size, acceptDownloads: true });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error" && !(expected && expected.test(m.text()))) errors.push(`${m.text()} (${m.location().url})`); });
  page.on("dialog", (d) => d.accept());
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Ready"));
  return page;
}

const tag = (size) => `${size.width}x${size.height}`;
const shot = (page, flow, size) => page.screenshot({ path: join(SHOTS, `chemist-${flow}-${tag(size)}.png`) });

async function chooseTool(page, tool, serverId = "offline") {
  await page.click(`button.tool[data-server="${serverId}"][data-tool="${tool}"]`);
  await page.waitForSelector("#tool-form .field");
}

/** Runs the open form and waits until the atom count is `atoms` (or changes, when null). */
async function runAndWait(page, atoms = null) {
  const before = await page.textContent("#atom-count");
  await page.click("#run");
  await page.waitForFunction(([want, was]) => {
    const now = document.getElementById("atom-count").textContent;
    return want ? now === want : now !== was;
  }, [atoms, before], { timeout: 120000 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

async function liquidBox(page, count) {
  await chooseTool(page, "liquid_box");
  await page.fill('[data-path="components/0/count"] input', String(count));
  await runAndWait(page, `${3 * count} atoms`);
}

/** The page's visible text (closed disclosures, hidden nodes and tooltips excluded: innerText). */
const visibleText = (page) => page.evaluate(() => document.body.innerText);

async function assertNoDeveloperTerms(page, flow) {
  const text = await visibleText(page);
  for (const term of DEVELOPER_TERMS) {
    assert.ok(!text.toLowerCase().includes(term.toLowerCase()), `${flow}: the page shows "${term}":\n${text}`);
  }
}

/** RGB of the view's pixel at client (x, y), read back from the canvas. */
async function pixel(page, x, y) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return page.evaluate(([cx, cy]) => {
    const source = document.getElementById("view");
    const rect = source.getBoundingClientRect();
    const px = Math.round(((cx - rect.left) * source.width) / rect.width);
    const py = Math.round(((cy - rect.top) * source.height) / rect.height);
    const copy = Object.assign(document.createElement("canvas"), { width: source.width, height: source.height });
    const ctx = copy.getContext("2d");
    ctx.drawImage(source, 0, 0);
    return Array.from(ctx.getImageData(px, py, 1, 1).data.slice(0, 3));
  }, [x, y]);
}

const isBackground = ([r, g, b]) => Math.abs(r - 0x1d) + Math.abs(g - 0x23) + Math.abs(b - 0x30) <= 24;

/**
 * Every visible control (button, select, input, summary, link, the file buttons) lies inside the
 * viewport, or inside its scrolling panel across and with that panel inside the viewport; no
 * ancestor that hides overflow cuts it; and, scrolled into view, the control itself is what is
 * under its centre (nothing overlaps it). Returns the problems found.
 */
function controlProblems(page) {
  return page.evaluate(() => {
    const problems = [];
    const controls = [...document.querySelectorAll("button, select, input, summary, a[href], label.file-button, canvas.unit-picture")]
      .filter((c) => !c.classList.contains("visually-hidden") && !c.closest("[hidden]") && c.getClientRects().length > 0)
      .filter((c) => getComputedStyle(c).visibility !== "hidden")
      .filter((c) => !c.closest("details:not([open]) > :not(summary)"));
    const name = (c) => `${c.tagName.toLowerCase()}${c.id ? `#${c.id}` : ""}${c.dataset.tool ? `[${c.dataset.tool}]` : ""} "${(c.textContent || c.value || c.getAttribute("aria-label") || "").trim().slice(0, 30)}"`;
    for (const c of controls) {
      c.scrollIntoView({ block: "nearest", inline: "nearest" });
      let scroller = null;
      for (let a = c.parentElement; a && a !== document.body; a = a.parentElement) {
        const style = getComputedStyle(a);
        const r = a.getBoundingClientRect();
        const cr = c.getBoundingClientRect();
        if (/(auto|scroll)/.test(style.overflowY) && !scroller) scroller = a;
        if (/(hidden|clip)/.test(style.overflowX) && (cr.left < r.left - 1 || cr.right > r.right + 1)) problems.push(`${name(c)} is cut across by ${a.tagName.toLowerCase()}#${a.id}`);
        if (/(hidden|clip)/.test(style.overflowY) && !/(auto|scroll)/.test(style.overflowY) && (cr.top < r.top - 1 || cr.bottom > r.bottom + 1)) problems.push(`${name(c)} is cut off by ${a.tagName.toLowerCase()}#${a.id}`);
      }
      const r = c.getBoundingClientRect();
      if (r.left < 0 || r.top < 0 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5) problems.push(`${name(c)} is outside the viewport ${JSON.stringify([r.left, r.top, r.right, r.bottom])}`);
      if (scroller) {
        const s = scroller.getBoundingClientRect();
        if (r.left < s.left - 1 || r.right > s.right + 1) problems.push(`${name(c)} sticks out of its panel #${scroller.id}`);
        if (scroller.scrollWidth > scroller.clientWidth + 1) problems.push(`#${scroller.id} scrolls sideways`);
      }
      const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
      const y = Math.min(Math.max(r.top + Math.min(r.height / 2, 8), 0), innerHeight - 1);
      const hit = document.elementFromPoint(x, y);
      if (!hit || !(c === hit || c.contains(hit) || hit.contains(c) || hit.closest("label") === c.closest("label") && c.closest("label"))) {
        problems.push(`${name(c)} is covered by ${hit ? `${hit.tagName.toLowerCase()}#${hit.id}.${hit.className}` : "nothing"}`);
      }
    }
    if (document.scrollingElement.scrollHeight > innerHeight + 1) problems.push(`the page itself scrolls (${document.scrollingElement.scrollHeight} > ${innerHeight})`);
    return problems;
  });
}

for (const size of SIZES) {
  const at = tag(size);

  test(`${at}: the first screen has no developer controls, no made-up server address, and no developer words`, async () => {
    const page = await openPage(size);
    assert.equal(await page.inputValue("#server-url"), "", "no default URL where nothing runs");
    const text = await visibleText(page);
    assert.doesNotMatch(text, /tools\/list|Preview/, "the tool authors' preview is folded away");
    assert.match(text, /For tool authors/);
    await assertNoDeveloperTerms(page, "first screen");
    assert.match(await page.textContent("#library-list"), /ethane \(polyethylene repeat unit\) \(8 atoms, 3D\)/);
    assert.doesNotMatch(await page.textContent("#library-list"), /ethylene \(8/);
    assert.deepEqual(await controlProblems(page), []);
    await shot(page, "first-screen", size);
    await page.close();
  });

  test(`${at}: Save as extended XYZ, PDB, mol and .gro, and Open each again: same atoms, positions, cell and bonds`, async () => {
    const page = await openPage(size);
    await liquidBox(page, 20);
    const original = await page.evaluate(() => {
      const s = window.meganeDemo.doc.state;
      return { elements: Array.from(s.elements), positions: Array.from(s.positions), cell: s.cell, bonds: s.bonds.map((b) => [...b].sort((x, y) => x - y)).sort((a, b) => a[0] - b[0] || a[1] - b[1]) };
    });
    assert.deepEqual(await page.$$eval("#save-format option", (os) => os.map((o) => o.value)), ["xyz", "pdb", "mol", "gro"]);
    const firstLines = { xyz: /^60\nLattice="/, pdb: /^TITLE .*\nCRYST1 /, mol: /\n\s+60\s+40 .*V2000\n/, gro: /^.*\n\s+60\n/ };
    const tolerance = { xyz: 1e-6, pdb: 1e-3, mol: 1e-3, gro: 5e-3 + 1e-9 };
    for (const format of ["xyz", "pdb", "mol", "gro"]) {
      await page.selectOption("#save-format", format);
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#save")]);
      assert.match(download.suggestedFilename(), new RegExp(`^[A-Za-z0-9._-]+\\.${format}$`));
      const text = readFileSync(await download.path(), "utf8");
      assert.match(text, firstLines[format], format);
      assert.match(await page.textContent("#file-message"), new RegExp(`^Saved .*\\.${format} \\(60 atoms\\)`));
      await page.setInputFiles("#open-file", { name: download.suggestedFilename(), mimeType: "text/plain", buffer: Buffer.from(text) });
      await page.waitForFunction((f) => (document.getElementById("notice").textContent || "").startsWith(`Opened `) && document.getElementById("notice").textContent.includes(`.${f}`), format);
      const back = await page.evaluate(() => {
        const s = window.meganeDemo.doc.state;
        return { elements: Array.from(s.elements), positions: Array.from(s.positions), cell: s.cell, bonds: s.bonds.map((b) => [...b].sort((x, y) => x - y)).sort((a, b) => a[0] - b[0] || a[1] - b[1]) };
      });
      assert.deepEqual(back.elements, original.elements, format);
      const worst = Math.max(...original.positions.map((v, i) => Math.abs(v - back.positions[i])));
      assert.ok(worst <= tolerance[format], `${format}: a position moved ${worst} Å`);
      if (format === "mol") assert.equal(back.cell, null, "a mol file has no cell");
      else original.cell.forEach((v, i) => assert.ok(Math.abs(v - back.cell[i]) < 1e-3, `${format}: cell ${back.cell}`));
      assert.deepEqual(back.bonds, original.bonds, `${format}: bonds`);
      if (format === "xyz" || format === "gro") assert.match(await page.textContent("#notice"), /40 bonds found from distances: .*covalent radii/);
      await page.click("#undo"); // back to the built box for the next format
    }
    await shot(page, "save-open", size);
    await page.close();
  });

  test(`${at}: Open reads PDB, SD and .gro files of other programs; anything else is one line in error style`, async () => {
    const page = await openPage(size);
    const golden = (name) => readFileSync(join(FIXTURES, "golden", name));
    await page.setInputFiles("#open-file", { name: "caffeine.pdb", mimeType: "chemical/x-pdb", buffer: golden("caffeine.pdb") });
    await page.waitForFunction(() => document.getElementById("atom-count").textContent === "24 atoms");
    assert.match(await page.textContent("#notice"), /^Opened caffeine\.pdb: 24 atoms, 25 bonds, no cell\./);
    const water = readFileSync(join(FIXTURES, "molecules", "water.mol"), "utf8");
    await page.setInputFiles("#open-file", { name: "two.sdf", mimeType: "chemical/x-mdl-molfile", buffer: Buffer.from(`${water}$$$$\n${water}$$$$\n`) });
    await page.waitForFunction(() => document.getElementById("atom-count").textContent === "3 atoms");
    assert.match(await page.textContent("#notice"), /The file holds 2 molecules; the first was opened\./);
    const gro = "SPC water\n    3\n    1SOL     OW    1   0.126   1.624   1.679\n    1SOL    HW1    2   0.190   1.661   1.747\n    1SOL    HW2    3   0.177   1.568   1.613\n   1.86206   1.86206   1.86206\n";
    await page.setInputFiles("#open-file", { name: "spc.gro", mimeType: "text/plain", buffer: Buffer.from(gro) });
    await page.waitForFunction(() => /spc\.gro/.test(document.getElementById("notice").textContent));
    assert.deepEqual(await page.evaluate(() => [window.meganeDemo.doc.state.bonds.length, window.meganeDemo.doc.state.cell[0]]), [2, 18.6206]);
    // A file the page does not read, and one that is not what its name says: one line, in error style.
    const before = await page.textContent("#atom-count");
    for (const [name, content, want] of [["notes.txt", "hello", /^notes\.txt is not a structure file this page reads/],
      ["water.xyz", "{\"elements\": [8]}", /^water\.xyz: line 1: the atom count/]]) {
      await page.setInputFiles("#open-file", { name, mimeType: "text/plain", buffer: Buffer.from(content) });
      await page.waitForFunction(() => !document.getElementById("file-message").hidden);
      const message = await page.textContent("#file-message");
      assert.match(message, want);
      assert.ok(!message.includes("\n"), message);
      assert.equal(await page.getAttribute("#file-message", "class"), "error");
      assert.equal(await page.getAttribute("#file-message", "role"), "alert");
      const colour = await page.$eval("#file-message", (n) => getComputedStyle(n).color);
      assert.equal(colour, "rgb(179, 38, 30)", "red, not the success box");
      assert.equal(await page.textContent("#atom-count"), before, "the open structure stays");
    }
    await assertNoDeveloperTerms(page, "open errors");
    await shot(page, "open-error", size);
    await page.close();
  });

  test(`${at}: a structure beyond 99 999 atoms cannot be saved as PDB: the page says so and offers the others`, async () => {
    const page = await openPage(size);
    // 100 000 argon atoms 4 Å apart (no bonds), as extended XYZ.
    const lines = ["100000", 'Lattice="200 0 0 0 200 0 0 0 12" Properties=species:S:1:pos:R:3'];
    for (let i = 0; i < 100000; i++) lines.push(`Ar ${(i % 50) * 4} ${(Math.floor(i / 50) % 50) * 4} ${Math.floor(i / 2500) * 4}`);
    await page.setInputFiles("#open-file", { name: "argon.xyz", mimeType: "text/plain", buffer: Buffer.from(lines.join("\n")) });
    await page.waitForFunction(() => document.getElementById("atom-count").textContent === "100000 atoms", null, { timeout: 120000 });
    const options = await page.$$eval("#save-format option", (os) => os.map((o) => [o.value, o.disabled]));
    assert.deepEqual(options, [["xyz", false], ["pdb", true], ["mol", false], ["gro", false]]);
    assert.match(await page.textContent("#file-message"), /A PDB file holds at most 99 999 atoms and this structure has 100000: save it as extended XYZ, mol or GROMACS \.gro instead\./);
    assert.notEqual(await page.inputValue("#save-format"), "pdb");
    await shot(page, "pdb-limit", size);
    await page.close();
  });

  test(`${at}: Check shows that it runs, then its report in the main area in plain words with the details folded`, async () => {
    const page = await openPage(size);
    // What the button and the report show while the check runs, recorded as it changes (an
    // offline check can be over before the test could look).
    await page.evaluate(() => {
      window.seenWhileChecking = [];
      const button = document.querySelector('.server[data-server="offline"] button.check');
      const note = () => window.seenWhileChecking.push({
        button: button.textContent, busy: button.getAttribute("aria-busy"), disabled: button.disabled,
        state: document.getElementById("check-state").textContent, spinner: Boolean(document.querySelector("#check-state .spinner")),
      });
      new MutationObserver(note).observe(document.getElementById("center"), { subtree: true, childList: true, characterData: true, attributes: true });
      new MutationObserver(note).observe(button, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await page.click('.server[data-server="offline"] button.check');
    await page.waitForFunction(() => /passed|problem/.test(document.getElementById("check-state").textContent), null, { timeout: 120000 });
    const seen = await page.evaluate(() => window.seenWhileChecking);
    assert.ok(seen.some((v) => v.button === "Checking…" && v.busy === "true" && v.disabled && v.spinner && /^Checking the tools in this page/.test(v.state)),
      `a running state was shown: ${JSON.stringify(seen.slice(0, 3))}`);
    assert.equal(await page.textContent("#check-state"), "Every check passed.", "the library's ethane runs: no SMILES-only warning");
    assert.equal(await page.textContent('.server[data-server="offline"] button.check'), "Check");
    // The report is in the main area (the centre column), in view.
    assert.equal(await page.$eval("#check-panel", (p) => Boolean(p.closest("#center"))), true);
    const box = await page.$eval("#check-panel", (p) => { const r = p.getBoundingClientRect(); return [r.top, r.bottom]; });
    assert.ok(box[0] >= 0 && box[0] < size.height, `the report starts in view: ${box}`);
    const lines = await page.$$eval("#check-report li .plain", (ls) => ls.map((l) => l.textContent));
    assert.ok(lines.includes("Liquid box: the example run gave a valid structure (300 atoms, a new structure)."), lines.join(" | "));
    assert.ok(lines.includes("Solvate: not run: it needs an open structure."), lines.join(" | "));
    assert.ok(lines.includes("Polymer chain: the same seed gives the same structure again."), lines.join(" | "));
    assert.equal(await page.$$eval("#check-report details", (ds) => ds.every((d) => !d.open)), true);
    assert.ok(await page.locator("#check-report details").count() > 0, "the technical details are there, folded");
    await assertNoDeveloperTerms(page, "check");
    await shot(page, "check", size);
    await page.close();
  });

  test(`${at}: the caption and the applied results follow Undo and Redo; undone runs are marked`, async () => {
    const page = await openPage(size);
    await liquidBox(page, 10);
    const first = await page.textContent("#notice");
    assert.match(first, /^Liquid box: 10 water/);
    await chooseTool(page, "liquid_box");
    await page.fill('[data-path="components/0/count"] input', "12");
    await runAndWait(page, "36 atoms");
    assert.match(await page.textContent("#notice"), /^Liquid box: 12 water/);
    const marks = () => page.$$eval("#provenance-list li", (ls) => ls.map((l) => l.classList.contains("undone")));
    assert.deepEqual(await marks(), [false, false]);
    await page.click("#undo");
    assert.equal(await page.textContent("#notice"), first, "the caption of the structure shown");
    assert.deepEqual(await marks(), [false, true]);
    assert.match(await page.textContent("#provenance-list li:nth-child(2)"), /\(undone\)/);
    await page.click("#undo");
    assert.equal(await page.isHidden("#notice"), true, "no caption over an empty view");
    assert.deepEqual(await marks(), [true, true]);
    await shot(page, "undone", size);
    await page.click("#redo");
    assert.equal(await page.textContent("#notice"), first);
    assert.deepEqual(await marks(), [false, true]);
    await page.close();
  });

  test(`${at}: after Solvate the added solvent is selected and keeps its element colours; the view is framed`, async () => {
    const page = await openPage(size);
    // 20 waters in a dilute box (0.3 g/cm³), then solvated to 1 g/cm³: about 40 waters added.
    await chooseTool(page, "liquid_box");
    await page.fill('[data-path="components/0/count"] input', "20");
    await page.fill('[data-path="density"] input', "0.3");
    await runAndWait(page, "60 atoms");
    await chooseTool(page, "solvate");
    await runAndWait(page);
    const n = Number.parseInt(await page.textContent("#atom-count"));
    assert.equal(await page.textContent("#selection-count"), `${n - 60} selected`);
    // Selected oxygens whose centre shows red without the selection (not hidden behind another
    // atom) still show it with the selection: it is a ring around each atom, not a new colour.
    const oxygens = await page.evaluate(() => {
      const { doc, view } = window.meganeDemo;
      return doc.state.selection.filter((i) => doc.state.elements[i] === 8).map((i) => view.screenPosition(i));
    });
    await shot(page, "solvated-selection", size);
    const withSelection = [];
    for (const o of oxygens) withSelection.push(await pixel(page, o.x, o.y));
    const selection = await page.evaluate(() => window.meganeDemo.doc.state.selection);
    await page.evaluate(() => window.meganeDemo.doc.setSelection([]));
    const red = ([r, g, b]) => r > g + 80 && r > b + 80;
    let seen = 0, kept = 0;
    for (const [k, o] of oxygens.entries()) {
      const plain = await pixel(page, o.x, o.y);
      if (!red(plain)) continue;
      seen++;
      if (Math.max(...plain.map((v, c) => Math.abs(v - withSelection[k][c]))) <= 12) kept++;
    }
    assert.ok(seen >= 3, `${seen} oxygens in plain view`);
    assert.ok(kept >= 0.6 * seen, `only ${kept} of ${seen} selected oxygens keep their red centre`);
    await page.evaluate((sel) => window.meganeDemo.doc.setSelection(sel), selection);
    // Every atom, with its drawn radius, is inside the view.
    const outside = await page.evaluate(() => {
      const { doc, view } = window.meganeDemo;
      const rect = document.getElementById("view").getBoundingClientRect();
      const out = [];
      for (let i = 0; i < doc.state.elements.length; i++) {
        const p = view.screenPosition(i);
        p.radius ??= 0;
        if (p.x - p.radius < rect.left || p.x + p.radius > rect.right || p.y - p.radius < rect.top || p.y + p.radius > rect.bottom) out.push(i);
      }
      return out;
    });
    assert.deepEqual(outside, [], "the solvated box is framed whole");
    await page.close();
  });

  test(`${at}: bonds are drawn as sticks, not hairlines`, async () => {
    const page = await openPage(size);
    // One C–C bond (1.54 Å), opened as the page's JSON: nothing else in the view.
    const ethaneCC = { elements: [6, 6], positions: [0, 0, 0, 1.54, 0, 0], cell: null, bonds: [[0, 1]] };
    await page.setInputFiles("#open-file", { name: "cc.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(ethaneCC)) });
    await page.waitForFunction(() => document.getElementById("atom-count").textContent === "2 atoms");
    const around = await page.evaluate(() => {
      const { view } = window.meganeDemo;
      const a = view.screenPosition(0), b = view.screenPosition(1);
      const len = Math.hypot(b.x - a.x, b.y - a.y);
      return { mid: { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 }, nx: -(b.y - a.y) / len, ny: (b.x - a.x) / len, len };
    });
    // The bond's middle, between the two spheres, is drawn; so are pixels 3 px to either side.
    for (const side of [0, -3, 3]) {
      const rgb = await pixel(page, around.mid.x + side * around.nx, around.mid.y + side * around.ny);
      assert.ok(!isBackground(rgb), `a pixel ${side} px beside the bond's middle is background (${rgb}); the bond is ${around.len.toFixed(1)} px long`);
    }
    await shot(page, "stick", size);
    await page.close();
  });

  test(`${at}: a 20-unit chain is framed whole; head and tail are chosen on a picture of the unit; head = tail is caught before Run`, async () => {
    const page = await openPage(size);
    await chooseTool(page, "polymer_chain");
    await page.fill('[data-path="length"] input', "20");
    await page.fill('[data-path="seed"] input', "7");
    await runAndWait(page, "122 atoms");
    const outside = await page.evaluate(() => {
      const { doc, view } = window.meganeDemo;
      const rect = document.getElementById("view").getBoundingClientRect();
      return Array.from(doc.state.elements.keys()).filter((i) => {
        const p = view.screenPosition(i);
        const r = p.radius ?? 0;
        return p.x - r < rect.left || p.x + r > rect.right || p.y - r < rect.top || p.y + r > rect.bottom;
      });
    });
    assert.deepEqual(outside, [], "every atom of the chain is in view");
    await shot(page, "polymer-chain", size);
    assert.equal(await page.inputValue('[data-path="monomer"] select'), "ethane (polyethylene repeat unit)");
    assert.equal(await page.locator('[data-path="head"] canvas.unit-picture').count(), 1);
    assert.equal(await page.locator('[data-path="tail"] canvas.unit-picture').count(), 1);
    // Click atom 2 (a hydrogen) on the tail's picture: the tail becomes 2.
    const spot = await page.$eval('[data-path="tail"] canvas.unit-picture', (c) => c.atomPosition(2));
    await page.mouse.click(spot.x, spot.y);
    assert.equal(await page.inputValue('[data-path="tail"] select'), "2");
    // Head = tail: caught before Run, on the tail.
    await page.selectOption('[data-path="tail"] select', "0");
    assert.equal(await page.isDisabled("#run"), true);
    assert.equal(await page.textContent("#form-problem"), "Run is disabled: Tail atom: the same atom as Head atom; choose a different atom.");
    await shot(page, "polymer-form", size);
    await page.close();
  });

  test(`${at}: layout: the view keeps its size, panels scroll on their own, every control is reachable and unclipped`, async () => {
    const page = await openPage(size);
    await liquidBox(page, 10);
    const viewHeight = () => page.$eval("#view-wrap", (v) => v.getBoundingClientRect().height);
    const before = await viewHeight();
    assert.ok(before >= (size.height === 768 ? 300 : 560), `the view is ${before} px high`);
    for (let k = 0; k < 4; k++) {
      await page.fill('[data-path="components/0/count"] input', String(11 + k));
      await runAndWait(page, `${3 * (11 + k)} atoms`);
    }
    assert.equal(await page.locator("#provenance-list li").count(), 5);
    assert.equal(await viewHeight(), before, "five applied results do not shrink the view");
    await page.click("#cell-editor summary");
    assert.deepEqual(await controlProblems(page), [], "with the cell editor open");
    await page.click("#cell-editor summary");
    await chooseTool(page, "polymer_chain");
    await page.click('.server[data-server="offline"] button.check');
    await page.waitForFunction(() => /passed|problem/.test(document.getElementById("check-state").textContent), null, { timeout: 120000 });
    assert.equal(await viewHeight(), before, "the check report does not shrink the view");
    assert.deepEqual(await controlProblems(page), [], "with the polymer form and the check report");
    await chooseTool(page, "liquid_box");
    await page.click('[data-path="components"] button.add-row');
    assert.deepEqual(await controlProblems(page), [], "with the liquid box form and two rows");
    await shot(page, "layout", size);
    await page.close();
  });

  test(`${at}: the form's small points: Enter keeps focus, empty rows not red before touched, plain document wording, Cancelled is not an error, a refusal in plain words`, async () => {
    const page = await openPage(size);
    await page.focus('button.tool[data-server="offline"][data-tool="liquid_box"]');
    await page.keyboard.press("Enter");
    await page.waitForSelector("#tool-form .field");
    assert.equal(await page.evaluate(() => document.activeElement?.dataset?.tool), "liquid_box", "focus stays on the tool");
    await page.click('[data-path="components"] button.add-row');
    assert.equal(await page.locator('[data-path="components/1/molecule"].invalid, [data-path="components/1/count"].invalid').count(), 0);
    assert.equal(await page.locator('[data-path^="components/1/"] .field-error:not([hidden])').count(), 0);
    assert.match(await page.textContent("#form-problem"), /^Run is disabled: Molecule: choose a molecule/);
    assert.equal(await page.$eval("#form-problem", (n) => getComputedStyle(n).color), "rgb(74, 84, 104)", "said, not in red");
    // Touched and left empty: now it is marked.
    await page.selectOption('[data-path="components/1/molecule"] select', "methanol");
    await page.selectOption('[data-path="components/1/molecule"] select', "");
    assert.equal(await page.locator('[data-path="components/1/molecule"].invalid').count(), 1);
    await page.click('[data-path="components"] tbody tr:nth-child(2) button.remove-row');
    // A refusal in plain words: 2000 waters at 4 Å apart do not fit.
    await page.fill('[data-path="components/0/count"] input', "2000");
    await page.fill('[data-path="tolerance"] input', "4");
    await page.click("#run");
    await page.waitForFunction(() => document.getElementById("form-error").textContent.length > 0, null, { timeout: 120000 });
    const refusal = await page.textContent("#form-error");
    assert.match(refusal, /lower the minimum distance to about [\d.]+ Å/);
    assert.equal(await page.getAttribute("#form-error", "class"), "error");
    await assertNoDeveloperTerms(page, "packing refusal");
    await shot(page, "refusal", size);
    // Cancelled is a note, not an error.
    await page.fill('[data-path="tolerance"] input', "2");
    await page.fill('[data-path="components/0/count"] input', "60000");
    await page.click("#run");
    await page.waitForSelector("#cancel:not([hidden])");
    await page.click("#cancel");
    await page.waitForFunction(() => document.getElementById("form-error").textContent === "Cancelled: nothing was applied.", null, { timeout: 60000 });
    assert.equal(await page.getAttribute("#form-error", "class"), "note");
    assert.equal(await page.getAttribute("#form-error", "role"), null);
    assert.notEqual(await page.$eval("#form-error", (n) => getComputedStyle(n).color), "rgb(179, 38, 30)");
    // Solvate's document field: no "sent with the call" beside "nothing leaves your browser".
    await liquidBox(page, 5);
    await chooseTool(page, "solvate");
    const documentText = await page.textContent('[data-path="document"]');
    assert.match(documentText, /Works on the open structure \(15 atoms, with a cell\)/);
    assert.doesNotMatch(documentText, /sent/);
    await page.close();
  });
}

/** Connects `page` to `url` with the form; resolves when its tools show. */
async function connectWithForm(page, url) {
  await page.fill("#server-url", url);
  await page.fill("#server-token", "chemist-token");
  await page.click("#connect");
  await page.waitForSelector(`.server[data-server="${url}"] button.tool`, { timeout: 30000 });
}

let peer = null;
async function peerUrl() {
  peer ??= await startBuilderPeer(server.url, "chemist-token", join(FIXTURES, "megane-recorded"), ["--step-seconds", "0.05"]);
  return `${peer.url}/mcp`;
}
after(() => peer?.child.kill());

for (const size of SIZES) {
  test(`${tag(size)}: against a server: connection notices, the check and a connection error in plain words, the protocol detail folded`, async () => {
    const url = await peerUrl();
    const page = await openPage(size, AUTO_PROBE_CONSOLE);
    await connectWithForm(page, url);
    await assertNoDeveloperTerms(page, "remote connect");
    const notice = await page.textContent(`.server[data-server="${url}"] .server-notice`);
    assert.match(notice, /^Connected with the earlier version of the tool protocol/);
    assert.equal(await page.$eval(`.server[data-server="${url}"] .server-notice details`, (d) => d.open), false, "the protocol detail is folded");
    await shot(page, "remote-connected", size);
    await page.click(`.server[data-server="${url}"] button.check`);
    await page.waitForFunction(() => /passed|problem/.test(document.getElementById("check-state").textContent), null, { timeout: 60000 });
    await assertNoDeveloperTerms(page, "remote check");
    await shot(page, "remote-check", size);
    // A server that does not answer: plain words, the browser's detail folded.
    await page.fill("#server-url", "http://127.0.0.1:9/mcp");
    await page.fill("#server-token", "x");
    await page.click("#connect");
    await page.waitForFunction(() => !document.getElementById("server-error").hidden, null, { timeout: 30000 });
    assert.match(await page.textContent("#server-error"), /^Could not reach http:\/\/127\.0\.0\.1:9\/mcp: is the server running\?/);
    await assertNoDeveloperTerms(page, "connection error");
    await shot(page, "remote-error", size);
    await page.close();
  });
}

test("an origin that refused the newer protocol is connected with the earlier one next time, without a probe", async () => {
  const url = await peerUrl();
  const page = await openPage(SIZES[0], AUTO_PROBE_CONSOLE);
  const discover = [];
  page.on("request", (r) => { if (r.method() === "POST" && (r.postData() ?? "").includes("server/discover")) discover.push(r.url()); });
  await connectWithForm(page, url);
  const probes = discover.length;
  assert.ok(probes > 0, "the first connection tries the newer protocol");
  await page.click(`.server[data-server="${url}"] button.disconnect`);
  await page.waitForFunction((u) => !document.querySelector(`.server[data-server="${u}"]`), url);
  await connectWithForm(page, url);
  assert.equal(discover.length, probes, "no second probe: the page remembered the origin");
  assert.equal(await page.locator(`.server[data-server="${url}"] .server-notice`).count(), 0, "nothing to say the second time");
  await page.close();
});

test("no page errors under the Content-Security-Policy", () => {
  const unexpected = errors.filter((e) => !/Failed to load resource: net::ERR_CONNECTION_REFUSED|127\.0\.0\.1:9\//.test(e));
  assert.deepEqual(unexpected, []);
});
