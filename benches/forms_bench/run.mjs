// Forms benchmark (issue 15), in Node (V8) on the built package: discovery and per-keystroke form
// work, side by side with a JavaScript baseline written from the contract (baseline.js) and,
// when given, an older build of the package measured in the same run.
//
//   node benches/forms_bench/run.mjs [--pkg DIR] [--base DIR] [--runs N] [--json OUT] [--toolbox-only | --forms-only]
//
// parseToolList: the three recorded reference tools repeated under new names (10, 100, 1000
// tools). "cold" gives every run schemas never seen before (a `$comment` naming the run), so
// each run compiles its three distinct schemas: a page connecting for the first time. "warm"
// parses the same list again (a tools/list_changed).
// Keystroke: buildArguments with the same context (same document object) and one changed value,
// for liquid_box and for solvate with synthetic water documents of 3e3, 3e4, 3e5 atoms (plain
// arrays, the §4.3 wire shape). Before Run: validateArguments on the built arguments, "warm"
// (the document object the keystrokes already took) and "cold" (a fresh copy of the document,
// in four shapes taking turns: structuredClone, whose arrays V8 keeps as boxed numbers;
// JSON.parse and a loop in JavaScript, unboxed; typed arrays).
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseTools } from "./baseline.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg("--runs", "15"));
const pkgs = [["new", resolve(arg("--pkg", join(root, "pkg")))]];
if (arg("--base")) pkgs.push(["base", resolve(arg("--base"))]);

async function load(dir) {
  const mod = await import(pathToFileURL(join(dir, "megane_builder_client.js")).href);
  await mod.default({ module_or_path: readFileSync(join(dir, "megane_builder_client_bg.wasm")) });
  return mod;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
function time(runs, fn) {
  const out = [];
  for (let i = 0; i < runs; i++) { const t0 = performance.now(); fn(i); out.push(performance.now() - t0); }
  return median(out);
}

const recorded = JSON.parse(readFileSync(join(root, "tests/fixtures/megane-recorded/tools-list.json"), "utf8")).tools;
const water = readFileSync(join(root, "tests/fixtures/molecules/water.mol"), "utf8");
const library = [{ name: "water", molblock: water }];

/** n tools: the recorded three under new names; `tag` makes every schema new. */
function toolList(n, tag) {
  const tools = [];
  for (let i = 0; i < n; i++) {
    const t = structuredClone(recorded[i % recorded.length]);
    t.name = `${t.name}_${i}`;
    if (tag !== undefined) t.inputSchema.$comment = `run ${tag}`;
    tools.push(t);
  }
  return { tools };
}

/** A synthetic water box of n atoms (n a multiple of 3): O, H, H with two bonds each. */
function waterDocument(n) {
  const elements = new Array(n), positions = new Array(3 * n), bonds = [];
  const side = Math.cbrt(n / 3) * 3.1 + 2;
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let m = 0; m < n / 3; m++) {
    const [x, y, z] = [rand() * side, rand() * side, rand() * side];
    const o = 3 * m;
    elements[o] = 8; elements[o + 1] = 1; elements[o + 2] = 1;
    [x, y, z, x + 0.96, y, z, x - 0.24, y + 0.93, z].forEach((v, k) => { positions[3 * o + k] = v; });
    bonds.push([o, o + 1], [o, o + 2]);
  }
  return { elements, positions, cell: [side, 0, 0, 0, side, 0, 0, 0, side], bonds };
}

const results = { runs: RUNS, node: process.version, toolbox: [], keystroke: [], pkgs: Object.fromEntries(pkgs), loadStart: loadavg() };
const mods = [];
for (const [name, dir] of pkgs) mods.push([name, await load(dir)]);

// ---- discovery ----
let tag = 0;
for (const n of process.argv.includes("--forms-only") ? [] : [10, 100, 1000]) {
  const row = { tools: n };
  const runs = n >= 1000 ? Math.max(3, Math.ceil(RUNS / 3)) : RUNS;
  const list = toolList(n);
  parseTools(list);
  for (const [name, mod] of mods) {
    const slow = name === "base" && n >= 1000;
    const lists = Array.from({ length: slow ? 2 : runs }, () => toolList(n, ++tag));
    row[`${name}Cold`] = time(lists.length, (i) => {
      const box = mod.parseToolList(lists[i]);
      if (!box.ok || box.buttons.length !== n || box.buttons.some((b) => b.disabledReason)) throw new Error(`parseToolList: ${JSON.stringify(box).slice(0, 300)}`);
    });
    mod.parseToolList(list);
  }
  // Warm: the JS baseline and each package in turn within every run, so a burst of load on this
  // shared machine falls on all of them alike; medians per column. "+tips": every button's
  // tooltip and description read too (made by the §3 text rules on first read); "+forms": every
  // button's form read too (the new package parses a form on first read).
  const samples = {};
  const sample = (key, fn) => { const t0 = performance.now(); fn(); (samples[key] ??= []).push(performance.now() - t0); };
  for (let i = 0; i < runs; i++) {
    sample("js", () => parseTools(list));
    for (const [name, mod] of mods) {
      if (name === "base" && n >= 1000 && i >= 2) continue;
      sample(`${name}Warm`, () => mod.parseToolList(list));
      sample(`${name}WarmTips`, () => {
        for (const b of mod.parseToolList(list).buttons) if (!b.tooltip || !b.description) throw new Error("no tooltip");
      });
      sample(`${name}WarmForms`, () => {
        for (const b of mod.parseToolList(list).buttons) if (!b.form) throw new Error("no form");
      });
    }
  }
  for (const [key, xs] of Object.entries(samples)) row[key] = median(xs);
  results.toolbox.push(row);
  console.error(JSON.stringify(row));
}

// ---- keystrokes and before-Run validation ----
// (--toolbox-only: parseToolList alone, for a quick run.)
const cases = process.argv.includes("--toolbox-only") ? [] : [["liquid_box", 0], ["solvate", 3000], ["solvate", 30000], ["solvate", 300000]];
for (const [tool, atoms] of cases) {
  const row = { tool, atoms };
  const document = atoms ? waterDocument(atoms) : null;
  for (const [name, mod] of mods) {
    const box = mod.parseToolList({ tools: recorded });
    const button = box.buttons.find((b) => b.name === tool);
    const context = { document, documentEditable: true, selection: [], library, randomSeed: 7 };
    const values = mod.initialValues(button, context);
    const slow = name === "base" && atoms >= 30000;
    const runs = slow ? 3 : Math.max(RUNS, 20);
    let t0 = performance.now();
    let built = mod.buildArguments(button, values, context);
    row[`${name}First`] = performance.now() - t0;
    if (!built.ok) throw new Error(`${tool}: ${JSON.stringify(built.errors)}`);
    const key = "density" in values ? "density" : Object.keys(values)[0];
    row[`${name}Keystroke`] = time(runs, (i) => {
      values[key] = 1 + (i % 7) * 0.01;
      built = mod.buildArguments(button, values, context);
      if (!built.ok) throw new Error(`${tool}: ${JSON.stringify(built.errors)}`);
    });
    const args = built.arguments;
    row[`${name}ValidateWarm`] = time(runs, () => {
      const problems = mod.validateArguments(button, args);
      if (problems.length) throw new Error(JSON.stringify(problems));
    });
    // Fresh copies of the document as a host may hold them, each made just before it is
    // validated: structuredClone (as after a postMessage; V8 keeps every number boxed),
    // JSON.parse (as read from a file or a server; unboxed double arrays), built in JavaScript
    // (`new Array(n)` filled in a loop; unboxed, holey) and typed arrays (elements and positions;
    // bonds and cell plain arrays). The shapes take turns, the first one changing every round,
    // so no shape is always the first (or the last) one V8 sees.
    const text = document && JSON.stringify(document);
    const shapes = [
      ["ValidateCold", () => structuredClone(document)],
      ["ValidateColdJson", () => JSON.parse(text)],
      ["ValidateColdBuilt", () => waterDocument(atoms)],
      ["ValidateColdTyped", () => ({ ...document, elements: Uint8Array.from(document.elements), positions: Float64Array.from(document.positions), bonds: document.bonds.map((b) => [...b]) })],
    ];
    const samples = {};
    for (let r = 0; r < (slow ? 2 : 7); r++) {
      for (let j = 0; j < shapes.length; j++) {
        const [key, copy] = shapes[(r + j) % shapes.length];
        const copied = document ? { ...args, document: copy() } : { ...args };
        const t0 = performance.now();
        const problems = mod.validateArguments(button, copied);
        (samples[key] ??= []).push(performance.now() - t0);
        if (problems.length) throw new Error(JSON.stringify(problems));
      }
    }
    for (const [key, xs] of Object.entries(samples)) row[`${name}${key}`] = median(xs);
  }
  results.keystroke.push(row);
  console.error(JSON.stringify(row));
}

const f = (x) => (x === undefined ? "" : x < 10 ? x.toFixed(2) : x.toFixed(0));
const hasBase = mods.length > 1;
console.log(`\nparseToolList (median ms; cold = schemas new to the page, warm = the same list again)`);
console.log(`(+tips: every button's tooltip and description read too; +forms: every button's form read too)`);
console.log(["tools", "JS baseline", "wasm cold", "cold/JS", "wasm warm", "warm/JS", "warm+tips", "+tips/JS", "warm+forms", "+forms/JS", ...(hasBase ? ["old cold", "old/JS", "old warm", "new/old w", "old +tips", "old+tips/JS"] : [])].map((h) => h.padStart(12)).join(""));
for (const r of results.toolbox) {
  console.log([r.tools, f(r.js), f(r.newCold), (r.newCold / r.js).toFixed(2), f(r.newWarm), (r.newWarm / r.js).toFixed(2), f(r.newWarmTips), (r.newWarmTips / r.js).toFixed(2), f(r.newWarmForms), (r.newWarmForms / r.js).toFixed(2),
    ...(hasBase ? [f(r.baseCold), (r.baseCold / r.js).toFixed(1), f(r.baseWarm), (r.newWarm / r.baseWarm).toFixed(3), f(r.baseWarmTips), (r.baseWarmTips / r.js).toFixed(2)] : [])].map((c) => String(c).padStart(12)).join(""));
}
console.log(`\nforms (median ms): keystroke = buildArguments with one changed value; first = the first call with this document;`);
console.log(`validate = validateArguments before Run (warm: the document already taken; cold: a fresh copy, made by`);
console.log(`structuredClone / JSON.parse / a loop in JavaScript / typed arrays)`);
const cold = ["ValidateCold", "ValidateColdJson", "ValidateColdBuilt", "ValidateColdTyped"];
console.log(["tool", "atoms", "keystroke", "first", "valid. warm", "cold clone", "cold JSON", "cold built", "cold typed", ...(hasBase ? ["old keystr.", "old valid.", "old clone", "old JSON", "old built", "old typed", "new/old ks"] : [])].map((h) => h.padStart(12)).join(""));
for (const r of results.keystroke) {
  console.log([r.tool, r.atoms, f(r.newKeystroke), f(r.newFirst), f(r.newValidateWarm), ...cold.map((k) => f(r[`new${k}`])),
    ...(hasBase ? [f(r.baseKeystroke), f(r.baseValidateWarm), ...cold.map((k) => f(r[`base${k}`])), (r.newKeystroke / r.baseKeystroke).toFixed(4)] : [])].map((c) => String(c).padStart(12)).join(""));
}
results.loadEnd = loadavg();
const la = (l) => l.map((x) => x.toFixed(2)).join(" ");
console.log(`\nload average (1, 5, 15 min): start ${la(results.loadStart)}, end ${la(results.loadEnd)}`);
const out = arg("--json");
if (out) writeFileSync(out, JSON.stringify(results, null, 2) + "\n");
