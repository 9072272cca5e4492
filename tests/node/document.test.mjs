// The §4.3 document taken once (issue 15), in Node on the built package: the page copies a
// document's plain arrays into wasm memory with a JavaScript loop, and the loop for positions
// exists twice (one for arrays V8 keeps unboxed, one for the rest: src/wasm/interop.rs,
// `fillDoubles`). Whatever way the host made the document (structuredClone: boxed numbers;
// JSON.parse or a loop in JavaScript: unboxed; typed arrays), and whichever loop takes it, the same
// document gets the same verdict: none for a good one, the same problems for a bad one. Documents
// of 180 000 atoms (540 000 positions, above the size from which the page probes the array).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, test } from "node:test";
import { ROOT, FIXTURES } from "./harness.mjs";

let pkg, button, args;
before(async () => {
  pkg = await import(join(ROOT, "pkg", "megane_builder_client.js"));
  await pkg.default({ module_or_path: readFileSync(join(ROOT, "pkg", "megane_builder_client_bg.wasm")) });
  const recorded = JSON.parse(readFileSync(join(FIXTURES, "megane-recorded/tools-list.json"), "utf8")).tools;
  button = pkg.parseToolList({ tools: recorded }).buttons.find((b) => b.name === "solvate");
  const water = readFileSync(join(FIXTURES, "molecules/water.mol"), "utf8");
  const context = { document: waterBox(30), documentEditable: true, selection: [], library: [{ name: "water", molblock: water }], randomSeed: 7 };
  const built = pkg.buildArguments(button, pkg.initialValues(button, context), context);
  assert.ok(built.ok, JSON.stringify(built.errors));
  args = built.arguments;
});

const ATOMS = 180000;

/** n atoms of water (O, H, H and two bonds each) in a box, built in JavaScript: `new Array(n)`
 *  filled by a loop, so V8 holds the positions unboxed (a holey double array). */
function waterBox(n) {
  const elements = new Array(n), positions = new Array(3 * n), bonds = [];
  const side = Math.cbrt(n / 3) * 3.1 + 2;
  for (let m = 0; m < n / 3; m++) {
    const o = 3 * m, x = (m * 0.618) % side, y = (m * 0.414) % side, z = (m * 0.732) % side;
    elements[o] = 8; elements[o + 1] = 1; elements[o + 2] = 1;
    const p = [x, y, z, x + 0.96, y, z, x - 0.24, y + 0.93, z];
    for (let k = 0; k < 9; k++) positions[3 * o + k] = p[k] + 0.5;
    bonds.push([o, o + 1], [o, o + 2]);
  }
  return { elements, positions, cell: [side, 0, 0, 0, side, 0, 0, 0, side], bonds };
}

/** Makers of the document in every shape a host may hold it. */
const shapes = (document) => ({
  built: () => document,
  json: () => JSON.parse(JSON.stringify(document)),
  clone: () => structuredClone(document),
  typed: () => ({ ...document, elements: Uint8Array.from(document.elements), positions: Float64Array.from(document.positions) }),
});

const problemsOf = (document) => pkg.validateArguments(button, { ...args, document });

test("a good document has no problems in any shape, taken either way", () => {
  const good = waterBox(ATOMS);
  // Twice over, the shapes in turn, so each loop has seen the other kinds before.
  for (let round = 0; round < 2; round++) {
    for (const [shape, make] of Object.entries(shapes(good))) {
      assert.deepEqual(problemsOf(make()), [], `${shape}, round ${round}`);
    }
  }
});

test("a bad position gets the same problems whatever the shape of the document", () => {
  const k = 3 * ATOMS - 7;
  let called = 0;
  class Boxed { valueOf() { called++; return 1; } }
  // [what, value, whether JSON keeps it] (JSON.stringify writes a hole, NaN and Infinity as null).
  const bad = [
    ["a number as text", "1.5", true],
    ["null", null, true],
    ["true", true, true],
    ["an object with valueOf", new Boxed(), true],
    ["a hole", undefined, false],
    ["NaN", NaN, false],
    ["Infinity", Infinity, false],
  ];
  for (const [what, value, json] of bad) {
    const document = waterBox(ATOMS);
    if (what === "a hole") delete document.positions[k];
    else document.positions[k] = value;
    const all = Object.entries(shapes(document)).filter(([shape]) => shape !== "typed" && (json || shape !== "json"));
    const expected = problemsOf(document);
    assert.ok(expected.length > 0, `${what}: refused`);
    assert.equal(expected[0].path, "document", what);
    for (const [shape, make] of all) assert.deepEqual(problemsOf(make()), expected, `${what}: ${shape}`);
    if (!json) assert.match(expected[0].message, new RegExp(`positions\\[${k}\\]`), what);
  }
  // A value that is not a number is never converted: the host's valueOf is not called.
  assert.equal(called, 0);
});
