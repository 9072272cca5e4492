// The §4.3 document taken into wasm memory, the JavaScript half of the package's wasm bindings
// (imported by src/wasm/document.rs; wasm-bindgen copies this module into pkg/snippets). The
// document's plain arrays are copied by these loops straight into views of the vectors Rust made
// for them (typed arrays the host already has are used as they are); a document with other
// fields, or values the loops do not take (not a whole number, out of range), is left to the
// exact serde path, whose errors name the field.
//
// Positions: a plain array of numbers is held by V8 either unboxed (a double array: JSON.parse,
// arrays built in JavaScript) or as boxed numbers (structuredClone, postMessage). A loop that has
// read both kinds is compiled for both and boxes every number it reads from an unboxed array (14
// MB of garbage for 300 000 atoms, whose collection also moves the host's young document):
// copying the positions of a JSON.parse-made document took 30-100 ms after a structuredClone-made
// one had been read, 2-6 ms otherwise. So the same loop exists twice, as two function literals
// with their own type feedback (two closures made from one literal share it: checked, the copy is
// on purpose). `copyUnboxed` is given only long arrays for which `includes(null)` returned at
// once, timed with `performance.now()`: V8 answers it without a scan for an unboxed array (which
// cannot hold null) and scans a boxed one (≥ 0.3 ns per item). Everything else goes to
// `copyBoxed`. The route decides speed only: both copies take and refuse the same values, and a
// null refuses the array either way. A boxed array sent to `copyUnboxed` (a clock far coarser
// than `fillDoubles` assumes) only brings back the one loop's slowness.

const FIELDS = new Set(["elements", "positions", "cell", "bonds", "bondOrders"]);
// Each fill writes a document array into `out` (a view of wasm memory of the length `lengths`
// gave) and says whether it could.
function fillBytes(a, out) {
  if (a instanceof Uint8Array) return a.length === out.length && (out.set(a), true);
  if (!Array.isArray(a) || a.length !== out.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (typeof x !== "number" || !Number.isInteger(x) || x < 0 || x > 255) return false;
    out[i] = x;
  }
  return true;
}
// Positions: two copies of one loop, each with its own type feedback (see above).
const isNumber = (x) => typeof x === "number";
function copyUnboxed(a, out) {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (!isNumber(x)) return false;
    out[i] = x;
  }
  return true;
}
function copyBoxed(a, out) {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (!isNumber(x)) return false;
    out[i] = x;
  }
  return true;
}
// Below this many items no probe: a boxed array's scan could be shorter than a coarse clock tick
// (100 µs in a page that is not cross-origin isolated).
const PROBED = 1 << 19;
function fillDoubles(a, out) {
  if (a instanceof Float64Array || a instanceof Float32Array) return a.length === out.length && (out.set(a), true);
  if (!Array.isArray(a) || a.length !== out.length) return false;
  if (a.length < PROBED) return copyBoxed(a, out);
  const t0 = performance.now();
  if (a.includes(null)) return false;
  // At once: under 0.05 ns per item (45 µs for 900 000), a sixth of the fastest scan.
  if (performance.now() - t0 < a.length * 5e-8) return copyUnboxed(a, out);
  return copyBoxed(a, out);
}
function fillPairs(a, out) {
  if (!Array.isArray(a) || 2 * a.length !== out.length) return false;
  for (let k = 0; k < a.length; k++) {
    const b = a[k];
    if (!Array.isArray(b) || b.length !== 2) return false;
    for (let j = 0; j < 2; j++) {
      const x = b[j];
      if (typeof x !== "number" || !Number.isInteger(x) || x < 0 || x > 4294967295) return false;
      out[2 * k + j] = x;
    }
  }
  return true;
}
const length = (a, typed) => (Array.isArray(a) || typed.some((t) => a instanceof t) ? a.length : -1);
// [elements, positions, bond pairs, bondOrders (−1: none)] lengths of a document the fast copy
// may take, or null.
export function documentLengths(doc) {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return null;
  for (const key of Object.keys(doc)) if (!FIELDS.has(key)) return null;
  if (!("cell" in doc)) return null;
  const out = [length(doc.elements, [Uint8Array]), length(doc.positions, [Float64Array, Float32Array]),
    Array.isArray(doc.bonds) ? doc.bonds.length : -1, doc.bondOrders == null ? -1 : length(doc.bondOrders, [Uint8Array])];
  if (out[0] < 0 || out[1] < 0 || out[2] < 0 || (doc.bondOrders != null && out[3] < 0)) return null;
  return out;
}
// Fills the views (`cell`: 9 numbers) from the document; 0: not taken, 1: taken, no cell,
// 2: taken with its cell.
export function fillStructure(doc, elements, positions, bonds, orders, cell) {
  if (!fillBytes(doc.elements, elements) || !fillDoubles(doc.positions, positions) || !fillPairs(doc.bonds, bonds)) return 0;
  if (orders !== null && !fillBytes(doc.bondOrders, orders)) return 0;
  if (doc.cell === null) return 1;
  return fillDoubles(doc.cell, cell) ? 2 : 0;
}
export function withoutKey(object, key) {
  const copy = Object.assign({}, object);
  delete copy[key];
  return copy;
}
export function arrayLength(object, key) {
  const a = object?.[key];
  return a != null && typeof a.length === "number" ? a.length : -1;
}
