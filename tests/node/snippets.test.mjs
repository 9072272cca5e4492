// The JavaScript halves of the package's wasm bindings (src/js/snippets/*.js, imported by
// src/wasm through `#[wasm_bindgen(module = …)]`), tested as plain modules: no wasm, no browser.
// The package's own tests (toolbox.test.mjs, document.test.mjs, megane.test.mjs, tests/web.rs)
// test them again through the API.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { ROOT } from "./harness.mjs";

const snippet = (name) => import(pathToFileURL(join(ROOT, "src", "js", "snippets", name)).href);
const { lazy, lazyStrings, lazyLabels, lazyNumbers } = await snippet("lazy.js");
const { packTools, assembleToolbox, assembleListed } = await snippet("toolbox.js");
const { documentLengths, fillStructure, withoutKey, arrayLength } = await snippet("document.js");
const { okOutcome } = await snippet("outcome.js");

test("a lazy property is built once, on first read, then is an ordinary data property", () => {
  let builds = 0;
  const o = { before: 1 };
  lazy(o, "v", () => (builds++, [1, 2]));
  assert.equal(builds, 0);
  assert.deepEqual(Object.keys(o), ["before", "v"], "enumerable, in place");
  const first = o.v;
  assert.deepEqual(first, [1, 2]);
  assert.equal(o.v, first);
  assert.equal(builds, 1);
  const d = Object.getOwnPropertyDescriptor(o, "v");
  assert.deepEqual(d, { value: first, writable: true, enumerable: true, configurable: true });
  // Spread and JSON read through the getter as they would a data property.
  const p = {};
  lazy(p, "w", () => "x");
  assert.deepEqual({ ...p }, { w: "x" });
  const q = {};
  lazy(q, "w", () => [3]);
  assert.equal(JSON.stringify(q), '{"w":[3]}');
  assert.deepEqual(structuredClone((() => { const r = {}; lazy(r, "k", () => 5); return r; })()), { k: 5 });
});

test("a lazy property assigned before its first read is never built", () => {
  const o = {};
  lazy(o, "v", () => assert.fail("built"));
  o.v = "mine";
  assert.equal(o.v, "mine");
  assert.equal(Object.getOwnPropertyDescriptor(o, "v").writable, true);
});

test("on an object frozen before the first read, the getter keeps the one value and refuses assignment", () => {
  let builds = 0;
  const o = {};
  lazy(o, "v", () => (builds++, { n: 1 }));
  Object.freeze(o);
  const first = o.v;
  assert.equal(o.v, first);
  assert.equal(builds, 1);
  assert.throws(() => { "use strict"; o.v = 2; }, TypeError);
  assert.equal(o.v, first);
});

test("lazy string channels, labels and numbers are built from their tables and indices", () => {
  const s = {};
  lazyStrings(s, "residueNames", ["WAT", "NA"], new Uint8Array([0, 0, 0, 1]));
  assert.deepEqual(s.residueNames, ["WAT", "WAT", "WAT", "NA"]);
  const wide = {};
  lazyStrings(wide, "atomNames", ["a", "b"], new Uint32Array([1, 0]));
  assert.deepEqual(wide.atomNames, ["b", "a"]);
  const l = {};
  lazyLabels(l, "labels", ["WAT", "NA"], new Uint8Array([0, 0, 1]), new Int32Array([1, 1, -4503599627370496 | 0]));
  assert.deepEqual(l.labels, ["WAT1", "WAT1", `NA${-4503599627370496 | 0}`]);
  const big = {};
  lazyLabels(big, "labels", ["X"], new Uint8Array([0]), new Float64Array([2 ** 40]));
  assert.deepEqual(big.labels, ["X1099511627776"]);
  const n = {};
  lazyNumbers(n, "residueIds", new Int32Array([3, -1]));
  assert.ok(Array.isArray(n.residueIds));
  assert.deepEqual(n.residueIds, [3, -1]);
});

test("okOutcome is interpretCall's ok outcome in one object", () => {
  assert.deepEqual(okOutcome("Packed.", ["w"], 7), { ok: true, summary: "Packed.", warnings: ["w"], result: 7 });
});

/** The texts `packTools` encoded: the reduced list's JSON, then each description (null: none). */
function unpack(packed) {
  const decoder = new TextDecoder();
  const [first, ...rest] = packed.lengths;
  let at = first;
  const list = JSON.parse(decoder.decode(packed.bytes.subarray(0, first)));
  const descriptions = rest.map((n) => {
    if (n === 0xffffffff) return null;
    const d = decoder.decode(packed.bytes.subarray(at, at + n));
    at += n;
    return d;
  });
  assert.equal(at, packed.bytes.length, "the buffer holds exactly the texts");
  return { list, descriptions };
}

test("packTools leaves schemas and descriptions in JavaScript and sends the rest as one UTF-8 buffer", () => {
  const schema = { type: "object", properties: { n: { type: "integer" } } };
  const tools = [
    { name: "a", description: "Ångström — and 😀", inputSchema: schema, outputSchema: { type: "object" },
      annotations: { title: "A", readOnlyHint: true }, _meta: { k: 1 } },
    { name: "b", description: 5 },
    { name: "c", annotations: ["kept", "as", "is"] },
  ];
  const packed = packTools({ tools, nextCursor: "x" });
  const { list, descriptions } = unpack(packed);
  assert.deepEqual(list, {
    tools: [
      { name: "a", annotations: { title: "A" }, _meta: { k: 1 }, inputSchema: 0 },
      { name: "b", inputSchema: 1 },
      { name: "c", annotations: ["kept", "as", "is"], inputSchema: 2 },
    ],
    nextCursor: "x",
  });
  assert.deepEqual(descriptions, ["Ångström — and 😀", null, null]);
  assert.deepEqual(packed.holders, tools, "the host's own tool objects");
  assert.equal(packed.holders[0], tools[0]);
  assert.deepEqual(packed.descriptions, ["Ångström — and 😀", null, null]);
  assert.equal(packed.copies.length, 3);
  // A bare list of tools, and a list of pages.
  assert.deepEqual(unpack(packTools([{ name: "t" }])).list, [{ name: "t", inputSchema: 0 }]);
  const pages = unpack(packTools([{ tools: [{ name: "p1" }] }, { tools: [{ name: "p2", description: "d" }] }]));
  assert.deepEqual(pages.list, [{ tools: [{ name: "p1", inputSchema: 1 }], inputSchema: 0 }, { tools: [{ name: "p2", inputSchema: 3 }], inputSchema: 2 }]);
  assert.deepEqual(pages.descriptions, [null, null, null, "d"]);
});

test("packTools declines what the general way must take", () => {
  class Tool { constructor() { this.name = "t"; } }
  const cycle = { name: "c" };
  cycle._meta = cycle;
  for (const list of [
    null, "tools", 5,
    { tools: [new Tool()] },
    { tools: [{ name: "j", toJSON() { return {}; } }] },
    Object.assign(Object.create({ inherited: 1 }), { tools: [] }),
    { tools: [cycle] },
    { tools: [{ name: "big", _meta: { n: 10n } }] },
    { tools: [{ name: "lone", description: "a\ud800b" }] },
  ]) {
    assert.equal(packTools(list), null, String(list?.tools?.[0]?.name ?? list));
  }
  assert.notEqual(packTools({ tools: [{ name: "pair", description: "\ud83d\ude00" }] }), null);
  assert.notEqual(packTools(Object.assign(Object.create(null), { tools: [] })), null);
});

test("assembleToolbox makes buttons in one key order, slices texts and defers each button's schema part", () => {
  const schema = { type: "object" };
  const host = [
    { name: "box", description: "Packs a box. More text.", inputSchema: schema, outputSchema: { type: "object" } },
    { name: "same", description: "x", inputSchema: { type: "object" } },
    { name: "plain", description: "A plain tool.", inputSchema: { type: "object", title: "p" } },
  ];
  const packed = packTools({ tools: host });
  const marker = { contract: 1, apply: "new_document", category: "bulk" };
  const page = {
    serverId: "s1",
    buttons: [[0, "Box", 0, null, [0, 12], "Packs a box. More text."], [1, "Same", 0, "icon.png", "x", [0, 1]]],
    markers: [marker],
    plainTools: [[2, "Plain", [0, 13], "A plain tool."]],
    categories: [{ category: "bulk", tools: ["box", "same"] }],
    unsupportedContract: [], unknownApply: [], malformed: [],
    notices: ["server notice"],
  };
  const calls = [];
  const resolve = (key, s, label, markerText) => {
    calls.push({ key, label, markerText, same: s === schema });
    // [serial, form text (or true: the form the page has), disabledReason, notices JSON]
    return typeof key === "number" ? [null, true, null, '["again"]'] : [7, '{"fields":[]}', null, `["${label} notice"]`];
  };
  const box = assembleToolbox(JSON.stringify(page), packed, resolve);
  assert.equal(box.ok, true);
  assert.deepEqual(Object.keys(box), ["serverId", "buttons", "categories", "unsupportedContract", "unknownApply",
    "malformed", "plainTools", "notices", "ok"]);
  const [b0, b1] = box.buttons;
  assert.deepEqual(Object.keys(b0), ["serverId", "name", "label", "tooltip", "description", "category", "marker", "icon",
    "form", "disabledReason", "inputSchema", "outputSchema", "notices"]);
  assert.equal(b0.name, "box");
  assert.equal(b0.tooltip, "Packs a box.");
  assert.equal(b0.description, "Packs a box. More text.");
  assert.equal(b1.tooltip, "x");
  assert.equal(b1.description, "x");
  assert.equal(b0.inputSchema, schema, "the host's own schema object");
  assert.equal(b0.category, "bulk");
  assert.deepEqual(b0.marker, marker);
  assert.notEqual(b0.marker, b1.marker, "a fresh marker per button");
  assert.equal(calls.length, 0, "nothing resolved before a read");
  b0.marker.apply = "changed";
  assert.deepEqual(b0.form, { fields: [] });
  assert.equal(calls.length, 1);
  assert.equal(calls[0].label, "Box");
  assert.deepEqual(JSON.parse(calls[0].markerText), marker, "the marker the button was made from");
  assert.equal(b0.disabledReason, null);
  assert.deepEqual(b0.notices, ["Box notice"]);
  assert.equal(calls.length, 1, "form, disabledReason and notices made together");
  assert.equal(Object.getOwnPropertyDescriptor(b0, "form").writable, true, "a data property once read");
  // The second button has the same schema text: its key is the serial, its form the page's copy.
  assert.deepEqual(b1.form, { fields: [] });
  assert.notEqual(b1.form, b0.form, "a fresh object per button");
  assert.equal(calls[1].key, 7);
  assert.deepEqual(box.notices, ["server notice", "Box notice", "again"]);
  assert.deepEqual(box.plainTools, [{ name: "plain", label: "Plain", tooltip: "A plain tool.", description: "A plain tool.",
    inputSchema: host[2].inputSchema, outputSchema: null }]);
  // A frozen button built afterwards keeps the one value and refuses assignment.
  const again = assembleToolbox(JSON.stringify(page), packTools({ tools: host }), resolve);
  Object.freeze(again.buttons[0]);
  const form = again.buttons[0].form;
  assert.equal(again.buttons[0].form, form);
  assert.throws(() => { again.buttons[0].form = 1; }, TypeError);
});

test("assembleListed parses each schema and form on first read, a fresh object per tool", () => {
  const text = JSON.stringify({
    serverId: "s", buttons: [{ name: "b", inputSchema: 0, outputSchema: 1 }, { name: "d", inputSchema: 0, outputSchema: null }],
    plainTools: [{ name: "p", inputSchema: 0, outputSchema: null }], categories: [], notices: [],
  });
  const box = assembleListed(text, ['{"fields":[1]}'], new Int32Array([0, -1]), ['{"type":"object"}', '{"title":"out"}']);
  assert.equal(box.ok, true);
  const [b, d] = box.buttons;
  assert.deepEqual(b.inputSchema, { type: "object" });
  assert.notEqual(b.inputSchema, d.inputSchema);
  assert.deepEqual(b.outputSchema, { title: "out" });
  assert.equal(d.outputSchema, null);
  assert.deepEqual(b.form, { fields: [1] });
  assert.equal("form" in d, false, "a disabled button has no form");
  assert.deepEqual(box.plainTools[0].inputSchema, { type: "object" });
});

test("documentLengths takes only a plain document with its cell, and reads each array's length", () => {
  const doc = { elements: [8, 1, 1], positions: new Float64Array(9), cell: null, bonds: [[0, 1], [0, 2]] };
  assert.deepEqual(documentLengths(doc), [3, 9, 2, -1]);
  assert.deepEqual(documentLengths({ ...doc, elements: new Uint8Array(3), bondOrders: [1, 2] }), [3, 9, 2, 2]);
  assert.deepEqual(documentLengths({ ...doc, positions: new Float32Array(9), bondOrders: null }), [3, 9, 2, -1]);
  for (const bad of [
    null, [], "doc",
    { ...doc, name: "extra field" },
    (({ cell, ...rest }) => rest)(doc),
    { ...doc, elements: new Int8Array(3) },
    { ...doc, positions: "x" },
    { ...doc, bonds: new Uint32Array(4) },
    { ...doc, bondOrders: new Uint16Array(2) },
  ]) {
    assert.equal(documentLengths(bad), null, JSON.stringify(bad));
  }
});

/** The views `fill_document` gives `fillStructure`, for a document whose lengths are taken. */
function views(doc) {
  const [ne, np, nb, no] = documentLengths(doc);
  return [new Uint8Array(ne), new Float64Array(np), new Uint32Array(2 * nb), no < 0 ? null : new Uint8Array(no), new Float64Array(9)];
}

test("fillStructure copies what it takes and refuses what the exact path must judge", () => {
  const doc = { elements: [8, 1, 1], positions: [0, 0, 0.12, 0, 0.76, -0.47, 0, -0.76, -0.47],
    cell: [10, 0, 0, 0, 10, 0, 0, 0, 10], bonds: [[0, 1], [0, 2]], bondOrders: [1, 2] };
  const v = views(doc);
  assert.equal(fillStructure(doc, ...v), 2);
  assert.deepEqual(Array.from(v[0]), [8, 1, 1]);
  assert.deepEqual(Array.from(v[1]), doc.positions);
  assert.deepEqual(Array.from(v[2]), [0, 1, 0, 2]);
  assert.deepEqual(Array.from(v[3]), [1, 2]);
  assert.deepEqual(Array.from(v[4]), doc.cell);
  const noCell = { ...doc, cell: null };
  assert.equal(fillStructure(noCell, ...views(noCell)), 1);
  const typed = { ...doc, elements: new Uint8Array([6, 6, 6]), positions: new Float32Array(9).fill(0.5) };
  const tv = views(typed);
  assert.equal(fillStructure(typed, ...tv), 2);
  assert.deepEqual(Array.from(tv[1]), new Array(9).fill(0.5));
  for (const [what, bad] of [
    ["an element past 255", { ...doc, elements: [8, 1, 256] }],
    ["a fractional element", { ...doc, elements: [8, 1, 1.5] }],
    ["a negative element", { ...doc, elements: [8, -1, 1] }],
    ["a string position", { ...doc, positions: [...doc.positions.slice(0, 8), "0"] }],
    ["a null position", { ...doc, positions: [...doc.positions.slice(0, 8), null] }],
    ["a bond index past u32", { ...doc, bonds: [[0, 1], [0, 2 ** 32]] }],
    ["a bond of three", { ...doc, bonds: [[0, 1], [0, 2, 1]] }],
    ["a bond order as a string", { ...doc, bondOrders: [1, "2"] }],
    ["a cell of eight", { ...doc, cell: [10, 0, 0, 0, 10, 0, 0, 0] }],
  ]) {
    assert.equal(fillStructure(bad, ...views(doc)), 0, what);
  }
});

test("long positions are taken alike whether V8 holds them unboxed or boxed, and a null refuses either", () => {
  const n = 3 * 200_000; // past the probe's threshold
  const numbers = Array.from({ length: n }, (_, i) => i * 0.25 - 7);
  const unboxed = JSON.parse(JSON.stringify(numbers));
  const boxed = structuredClone(numbers);
  for (const positions of [unboxed, boxed, unboxed]) {
    const doc = { elements: new Uint8Array(n / 3).fill(1), positions, cell: null, bonds: [] };
    const v = views(doc);
    assert.equal(fillStructure(doc, ...v), 1);
    assert.equal(v[1][n - 1], numbers[n - 1]);
    assert.equal(v[1][12345], numbers[12345]);
  }
  const holed = structuredClone(numbers);
  holed[n - 2] = null;
  const doc = { elements: new Uint8Array(n / 3).fill(1), positions: holed, cell: null, bonds: [] };
  assert.equal(fillStructure(doc, ...views(doc)), 0);
});

test("withoutKey and arrayLength", () => {
  const o = { document: { elements: [] }, seed: 1 };
  assert.deepEqual(withoutKey(o, "document"), { seed: 1 });
  assert.deepEqual(o, { document: { elements: [] }, seed: 1 }, "the host's object untouched");
  assert.equal(arrayLength({ elements: [1, 2] }, "elements"), 2);
  assert.equal(arrayLength({ positions: new Float64Array(6) }, "positions"), 6);
  assert.equal(arrayLength({ elements: 3 }, "elements"), -1);
  assert.equal(arrayLength(null, "elements"), -1);
  assert.equal(arrayLength({}, "elements"), -1);
});
