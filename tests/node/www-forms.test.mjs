// The demo page's generated forms for every control and widget of contract §4.1/§4.2, from a
// tools/list the page previews from a file (no server needed): a data: icon, a disabled button
// with its reason, hidden tools with why, the element picker, the 3×3 cell editor with the
// orthorhombic shortcut prefilled from the document, the selection count from atoms clicked in
// the 3D view, the document's atom count, vector, checkbox, text and fieldset controls.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ROOT, launchBrowser, startServer, consoleProblem } from "./harness.mjs";

const SHOTS = join(ROOT, "artifacts", "screenshots");
let server, browser, page;
const errors = [];
const dialogs = [];
let answer = true;

/** The page's sample (the recorded reference tools list), reshaped into one tool per control plus
 *  tools the page must refuse. */
function toolsList() {
  const list = JSON.parse(readFileSync(join(ROOT, "www", "samples", "tools-list.json"), "utf8"));
  const solvate = list.tools.find((t) => t.name === "solvate");
  const meta = (tool) => tool._meta["io.github.megane-labs/builder"];
  const demo = structuredClone(solvate);
  Object.assign(demo, { name: "widgets_demo", title: "Widget demo", description: "Every form control in one tool. The rest is for the model." });
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" fill="#c33"/></svg>';
  demo.icons = [{ src: `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`, mimeType: "image/svg+xml" }];
  Object.assign(meta(demo), { category: "surface", expectedSeconds: 1 });
  Object.assign(demo.inputSchema.properties, {
    element: { type: "integer", minimum: 1, maximum: 118, "x-megane-widget": "element", title: "Element" },
    cell: { type: "array", items: { type: "number" }, minItems: 9, maxItems: 9, "x-megane-widget": "cell", title: "Cell" },
    anchors: { type: "array", items: { type: "integer", minimum: 0 }, "x-megane-widget": "selection", title: "Anchors" },
    flag: { type: "boolean", default: false, title: "Freeze anchors" },
    label: { type: "string", maxLength: 12, title: "Label" },
    origin: { type: "array", items: { type: "number" }, minItems: 3, maxItems: 3, title: "Origin" },
    options: { type: "object", title: "Options", properties: {
      temperature: { type: "number", default: 300, "x-megane-unit": "kelvin", title: "Temperature" },
      mode: { type: "string", enum: ["fast", "careful"], default: "fast", title: "Mode" } } },
  });
  demo.inputSchema.required = [...demo.inputSchema.required, "element", "anchors"];
  const oneOf = structuredClone(solvate);
  Object.assign(oneOf, { name: "needs_oneof", title: "Needs oneOf" });
  oneOf.inputSchema.properties.weird = { oneOf: [{ type: "string" }, { type: "number" }], title: "Weird" };
  const future = structuredClone(solvate);
  Object.assign(future, { name: "future_tool", title: "Future tool" });
  meta(future).contract = 2;
  const replace = structuredClone(solvate);
  Object.assign(replace, { name: "replace_tool", title: "Replace tool" });
  meta(replace).apply = "replace";
  const plain = { name: "plain_echo", description: "Echo.", inputSchema: { type: "object", properties: {} } };
  return { tools: [demo, oneOf, future, replace, plain] };
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startServer(join(ROOT, "www"));
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
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

const built = () => page.evaluate(() => window.meganeDemo.built);

test("a previewed tools/list: categories, data: icon, tooltip, disabled button with its reason, hidden tools with why", async () => {
  await page.setInputFiles("#list-file", [{ name: "tools.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(toolsList())) }]);
  const section = '.server[data-server="file:tools.json"]';
  await page.waitForSelector(`${section} button.tool`);
  assert.deepEqual(await page.$$eval(`${section} .category h4`, (hs) => hs.map((h) => h.textContent)), ["Surface", "Solvation"]);
  const demo = `${section} button.tool[data-tool="widgets_demo"]`;
  assert.match(await page.getAttribute(`${demo} img`, "src"), /^data:image\/svg\+xml;base64,/);
  assert.equal(await page.getAttribute(demo, "title"), "Every form control in one tool.");
  // Without an icon of its own a tool shows its category's (also a data: URI).
  assert.match(await page.getAttribute(`${section} button.tool[data-tool="needs_oneof"] img`, "src"), /^data:image\/svg\+xml,/);
  assert.equal(await page.isDisabled(`${section} button.tool[data-tool="needs_oneof"]`), true);
  assert.match(await page.textContent(`${section} .reason`), /^Builder cannot build a form: property .weird. uses .oneOf./);
  // Tools the page cannot use: named, with the reason folded ("why").
  const hidden = await page.$$eval(`${section} .hidden-tools li`, (lis) => lis.map((li) => [li.firstChild.textContent.trim(), li.querySelector("details span").textContent.trim()]));
  assert.equal(hidden.length, 2);
  assert.equal(hidden[0][0], "Future tool");
  assert.match(hidden[0][1], /^future_tool: .*contract 2/);
  assert.equal(hidden[1][0], "Replace tool");
  assert.match(hidden[1][1], /^replace_tool: .*replace/);
  assert.match(await page.textContent(section), /they do not build structures\): plain_echo/);
});

test("every widget: document count, cell prefilled with its shortcut, element picker, selection from the view", async () => {
  const structure = { elements: [8, 1, 1], positions: [0, 0.4, 0, -0.77, -0.19, 0, 0.76, -0.21, 0], cell: [20, 0, 0, 0, 21, 0, 0, 0, 22], bonds: [[0, 1], [0, 2]] };
  await page.setInputFiles("#open-file", [{ name: "water-cell.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(structure)) }]);
  await page.waitForFunction(() => document.getElementById("atom-count").textContent === "3 atoms");
  await page.click('button.tool[data-tool="widgets_demo"]');
  await page.waitForSelector('[data-path="element"]');
  assert.equal(await page.textContent('[data-path="document"] .live'), "Works on the open structure (3 atoms, with a cell).");
  assert.equal(await page.textContent("#form-destination"), "Preview from a file: there is no server to run it.");
  // The cell: a 3×3 prefilled from the document, and a, b, c from its diagonal.
  const cell = await page.$$eval('[data-path="cell"] .cell3x3 input', (is) => is.map((i) => i.value));
  assert.deepEqual(cell, ["20", "0", "0", "0", "21", "0", "0", "0", "22"]);
  const abc = page.locator('[data-path="cell"] .shortcut input');
  assert.deepEqual([await abc.nth(0).inputValue(), await abc.nth(1).inputValue(), await abc.nth(2).inputValue()], ["20", "21", "22"]);
  // Nothing chosen yet: Run waits, the first problem is shown.
  assert.equal(await page.isDisabled("#run"), true);
  assert.equal(await page.textContent("#form-problem"), "Run is disabled: Element is required.");
  await page.click('[data-path="element"] button:has-text("Periodic table")');
  await page.click('[data-path="element"] .periodic button[data-z="26"]');
  assert.equal(await page.inputValue('[data-path="element"] input'), "26");
  assert.equal(await page.textContent('[data-path="element"] .element-symbol'), "Fe");
  assert.match(await page.textContent('[data-path="anchors"] .live'), /^0 atoms selected/);
  assert.deepEqual((await built()).arguments.anchors, []);
  // Selection: click atom 0 in the 3D view.
  const { x, y } = await page.evaluate(() => window.meganeDemo.view.screenPosition(0));
  await page.mouse.click(x, y);
  assert.match(await page.textContent('[data-path="anchors"] .live'), /^1 atom selected/);
  assert.equal(await page.isDisabled("#run"), false, await page.textContent("#form-problem"));
  // Orthorhombic shortcut → a diagonal cell.
  await abc.nth(0).fill("10");
  await abc.nth(1).fill("11");
  await abc.nth(2).fill("12");
  await page.click('[data-path="cell"] button:has-text("Set orthorhombic")');
  // Vector, checkbox, text, fieldset with a unit.
  await page.locator('[data-path="origin"] input').nth(0).fill("1");
  assert.match(await page.textContent("#form-problem"), /Origin/);
  await page.locator('[data-path="origin"] input').nth(1).fill("2");
  await page.locator('[data-path="origin"] input').nth(2).fill("3");
  await page.check('[data-path="flag"] input');
  await page.fill('[data-path="label"] input', "a very long label indeed");
  assert.equal((await page.inputValue('[data-path="label"] input')).length, 12, "maxLength respected");
  assert.equal(await page.textContent('[data-path="options"] legend'), "Options");
  await page.selectOption('[data-path="options/mode"] select', "careful");
  await page.screenshot({ path: join(SHOTS, "forms-widgets.png"), fullPage: true });
  const outcome = await built();
  assert.equal(outcome.ok, true, JSON.stringify(outcome.errors));
  const args = outcome.arguments;
  assert.equal(args.element, 26);
  assert.deepEqual(args.cell, [10, 0, 0, 0, 11, 0, 0, 0, 12]);
  assert.deepEqual(args.anchors, [0]);
  assert.deepEqual(args.origin, [1, 2, 3]);
  assert.equal(args.flag, true);
  assert.equal(args.label, "a very long ");
  assert.deepEqual(args.options, { temperature: 300, mode: "careful" });
  assert.equal(args.document.elements.length, 3);
  assert.equal(args.solvent.name, "water");
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("form-error").textContent.length > 0);
  assert.match(await page.textContent("#form-error"), /^Preview only/);
});

test("a declined first connection is not made; a #tools= link that cannot be used is refused and removed", async () => {
  answer = false;
  await page.fill("#server-url", "http://127.0.0.1:9/mcp");
  await page.click("#connect");
  await page.waitForFunction(() => !document.getElementById("server-error").hidden);
  assert.match(dialogs.at(-1), /^Connect to the tool server at http:\/\/127\.0\.0\.1:9\/mcp\?/);
  assert.equal(await page.textContent("#server-error"), "Not connected: you declined the connection.");
  assert.equal(await page.evaluate(() => localStorage.getItem("megane-demo.trusted-urls")), null, "a refusal is not remembered as trust");
  answer = true;
  await page.goto(`${server.url}/#tools=javascript%3Aalert(1)&token=secret`);
  await page.waitForFunction(() => location.hash === "" && !document.getElementById("server-error").textContent.startsWith("Not connected"));
  assert.equal(await page.isVisible("#server-error"), true);
  assert.match(await page.textContent("#server-error"), /^#tools=: The tool server URL is not usable: it must start with https:\/\/ or http:\/\//);
  assert.ok(!(await page.textContent("#server-error")).includes("\n"));
});

test("no page errors under the Content-Security-Policy", () => {
  assert.deepEqual(errors, []);
});
