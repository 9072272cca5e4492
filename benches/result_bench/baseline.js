// The path a TypeScript client takes today, written as a fair peer of the wasm package:
// response bytes → JSON.parse → the §5/§5.1 checks in plain JavaScript → the §5.2 `new_document`
// snapshot's typed arrays. Each per-atom array is checked and converted in one pass; duplicate
// bonds are found by sorting numeric keys in a Float64Array (O(B log B)), as the Rust side does.
//
// `interpretAndPlan(bytes, tool, {full})` returns `{ok: true, snapshot, summary, warnings}` or
// `{ok: false, error}` with a one-line error naming the field.
//   full = false: the typed arrays the issue names (positions Float32Array, elements Uint8Array,
//                 bonds Uint32Array, bondOrders Uint8Array|null, box Float32Array(9)|null).
//   full = true:  the whole Snapshot planApply returns (adds labels RESNAME<resid>, molecules
//                 Uint32Array, atomChainIds, formalCharges Int32Array, fileName, kept channels).
//
// Not mirrored (JSON.parse cannot see them): duplicate object keys, which the Rust reader refuses.

export const MAX_ATOMS = 500_000;
export const MAX_BYTES = 64 * 1024 * 1024;

const decoder = new TextDecoder();

class Invalid extends Error {}
const fail = (message) => {
  throw new Invalid(message);
};

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const isInt = (v) => Number.isInteger(v) && Math.abs(v) < 9e15;

function oneLine(text) {
  const line = String(text).split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
  return line.length > 500 ? `${line.slice(0, 500)}…` : line;
}

function perAtomArray(s, key, n) {
  const v = s[key];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) fail(`structure.${key}: expected an array`);
  if (v.length !== n) fail(`structure.${key}: has ${v.length} entries for ${n} atoms`);
  return v;
}

function strings(s, key, n) {
  const v = perAtomArray(s, key, n);
  if (v) for (let i = 0; i < n; i++) if (typeof v[i] !== "string") fail(`structure.${key}[${i}]: expected a string`);
  return v;
}

/** §5: `[A-Za-z0-9._-]` only (runs of others → one `_`), trimmed, ≤ 64 characters, else `result`. */
function sanitiseFileName(name) {
  const out = name.replace(/_?[^A-Za-z0-9._-]+/g, "_").replace(/^[_.]+|[_.]+$/g, "");
  return out.slice(0, 64).replace(/[_.]+$/, "") || "result";
}

/** §5.1: checks a Structure and converts it; throws Invalid with the first problem. */
function structureToSnapshot(s, name, full) {
  if (!isObject(s)) fail("structure: expected a Structure object (§5.1)");
  for (const key of ["elements", "positions", "cell", "bonds"]) {
    if (!(key in s)) fail(`structure.${key}: missing`);
  }
  const el = s.elements;
  if (!Array.isArray(el)) fail("structure.elements: expected an array");
  const n = el.length;
  if (n > MAX_ATOMS) fail(`structure.elements: ${n} atoms; Builder accepts at most ${MAX_ATOMS} per result`);
  const elements = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const z = el[i];
    if ((z | 0) !== z || z < 1 || z > 118) fail(`structure.elements[${i}]: ${z} is not an atomic number (1–118)`);
    elements[i] = z;
  }

  const pos = s.positions;
  if (!Array.isArray(pos)) fail("structure.positions: expected an array");
  if (pos.length !== 3 * n) fail(`structure.positions: has ${pos.length} numbers; ${n} atoms need ${3 * n}`);
  const positions = new Float32Array(3 * n);
  for (let i = 0; i < 3 * n; i++) {
    const v = pos[i];
    if (!Number.isFinite(v)) fail(`structure.positions[${i}]: not a finite number`);
    positions[i] = v;
  }

  let box = null;
  if (s.cell !== null) {
    const c = s.cell;
    if (!Array.isArray(c) || c.length !== 9) fail("structure.cell: a cell is 9 numbers (row-major 3×3, Å) or null");
    box = new Float32Array(9);
    for (let i = 0; i < 9; i++) {
      if (!Number.isFinite(c[i])) fail(`structure.cell[${i}]: not a finite number`);
      box[i] = c[i];
    }
  }

  const bl = s.bonds;
  if (!Array.isArray(bl)) fail("structure.bonds: expected an array");
  const nb = bl.length;
  const bonds = new Uint32Array(2 * nb);
  const keys = new Float64Array(nb); // min · 2^20 + max: exact and unique for n ≤ 2^20
  for (let k = 0; k < nb; k++) {
    const pair = bl[k];
    if (!Array.isArray(pair) || pair.length !== 2) fail(`structure.bonds[${k}]: a bond is a pair of two atom indices`);
    const a = pair[0];
    const b = pair[1];
    if ((a >>> 0) !== a || a >= n) fail(`structure.bonds[${k}]: atom ${a} is out of range (${n} atoms)`);
    if ((b >>> 0) !== b || b >= n) fail(`structure.bonds[${k}]: atom ${b} is out of range (${n} atoms)`);
    if (a === b) fail(`structure.bonds[${k}]: bonds atom ${a} to itself`);
    bonds[2 * k] = a;
    bonds[2 * k + 1] = b;
    keys[k] = a < b ? a * 1048576 + b : b * 1048576 + a;
  }
  keys.sort();
  for (let k = 1; k < nb; k++) {
    if (keys[k] === keys[k - 1]) {
      const lo = Math.floor(keys[k] / 1048576);
      const hi = keys[k] % 1048576;
      fail(`structure.bonds: atoms ${lo} and ${hi} are bonded twice`);
    }
  }

  let bondOrders = null;
  if (s.bondOrders !== undefined && s.bondOrders !== null) {
    const bo = s.bondOrders;
    if (!Array.isArray(bo)) fail("structure.bondOrders: expected an array");
    if (bo.length !== nb) fail(`structure.bondOrders: has ${bo.length} entries but there are ${nb} bonds`);
    bondOrders = new Uint8Array(nb);
    for (let k = 0; k < nb; k++) {
      const o = bo[k];
      if ((o | 0) !== o || o < 1 || o > 4) fail(`structure.bondOrders[${k}]: ${o} is not a bond order (1, 2, 3 or 4)`);
      bondOrders[k] = o;
    }
  }

  // Per-atom channels: length N and item types; converted only for the full snapshot.
  const mol = perAtomArray(s, "molecules", n);
  let molecules = null;
  if (mol) {
    molecules = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const m = mol[i];
      if ((m >>> 0) !== m) fail(`structure.molecules[${i}]: ${m} is not a 0-based index`);
      molecules[i] = m;
    }
  }
  const residueNames = strings(s, "residueNames", n);
  const residueIds = perAtomArray(s, "residueIds", n);
  if (residueIds) for (let i = 0; i < n; i++) if (!isInt(residueIds[i])) fail(`structure.residueIds[${i}]: expected an integer`);
  const atomNames = strings(s, "atomNames", n);
  const chainIds = strings(s, "chainIds", n);
  let atomChainIds = null;
  if (chainIds) {
    atomChainIds = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const c = chainIds[i];
      const code = c.codePointAt(0);
      if (c.length === 0 || c.length !== (code > 0xffff ? 2 : 1)) fail(`structure.chainIds[${i}]: a chain id is exactly one character`);
      if (code > 255) fail(`structure.chainIds[${i}]: cannot be stored as a chain id (char code above 255)`);
      atomChainIds[i] = code;
    }
  }
  const fc = perAtomArray(s, "formalCharges", n);
  let formalCharges = null;
  if (fc) {
    formalCharges = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      if ((fc[i] | 0) !== fc[i]) fail(`structure.formalCharges[${i}]: ${fc[i]} is not a formal charge`);
      formalCharges[i] = fc[i];
    }
  }
  let scalars = null;
  if (s.scalars !== undefined && s.scalars !== null) {
    if (!isObject(s.scalars)) fail("structure.scalars: expected an object of number arrays");
    scalars = {};
    for (const key of Object.keys(s.scalars)) {
      const v = perAtomArray(s.scalars, key, n) ?? fail(`structure.scalars.${key}: expected an array`);
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        if (!Number.isFinite(v[i])) fail(`structure.scalars.${key}[${i}]: not a finite number`);
        out[i] = v[i];
      }
      scalars[key] = out;
    }
  }

  const snapshot = { nAtoms: n, nBonds: nb, positions, elements, bonds, bondOrders, box };
  if (!full) return snapshot;
  let labels = null;
  if (residueNames) {
    labels = residueNames;
    if (residueIds) {
      labels = new Array(n);
      for (let i = 0; i < n; i++) labels[i] = residueNames[i] + residueIds[i];
    }
  }
  const fileName = sanitiseFileName(name);
  return Object.assign(snapshot, {
    atomChainIds, labels, fileName, molecules, formalCharges, atomNames, residueNames, residueIds, scalars,
  });
}

/** §5/§6: the response body → the checked result as a `new_document` snapshot. */
// A Streamable HTTP body (`event: message` / `data: …` lines): the data of its last event, as the
// MCP TypeScript SDK's SSE reader hands it over; JSON text is returned as it is.
export function sseData(text) {
  let start = 0;
  while (start < text.length && " \t\r\n\ufeff".includes(text[start])) start++;
  if (text[start] === "{" || text[start] === "[") return text;
  let last = "";
  let data = null;
  for (let at = 0; at < text.length; ) {
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    const line = text.slice(at, end > at && text[end - 1] === "\r" ? end - 1 : end);
    if (line === "") {
      if (data !== null) last = data;
      data = null;
    } else if (line.startsWith("data:")) {
      const value = line.slice(line[5] === " " ? 6 : 5);
      data = data === null ? value : `${data}\n${value}`;
    }
    at = end + 1;
  }
  return data !== null ? data : last;
}

export function interpretAndPlan(bytes, tool, { full = false, maxBytes = MAX_BYTES } = {}) {
  try {
    if (bytes.length > maxBytes) fail(`result: ${bytes.length} bytes is more than the ${maxBytes} bytes Builder accepts`);
    let body;
    try {
      body = JSON.parse(sseData(decoder.decode(bytes)));
    } catch (e) {
      fail(`result: not valid JSON: ${oneLine(e.message)}`);
    }
    if (!isObject(body)) fail("result: expected a CallToolResult or JSON-RPC response object");
    if (body.error !== undefined && body.error !== null) {
      fail(`The server failed: ${oneLine(body.error.message ?? "") || `error ${body.error.code}`}`);
    }
    const call = body.result !== undefined && body.result !== null ? body.result : body;
    if (!isObject(call)) fail("result: expected a CallToolResult object");
    const content = Array.isArray(call.content) ? call.content : [];
    if (call.isError === true) {
      const first = content.find((c) => isObject(c) && typeof c.text === "string");
      const line = oneLine(first ? first.text : "").replace(`Error executing tool ${tool.name}: `, "");
      fail(line || "The tool failed without saying why.");
    }
    let result = call.structuredContent;
    if (result === undefined || result === null) {
      const texts = content.filter((c) => isObject(c) && typeof c.text === "string");
      if (texts.length !== 1 || !texts[0].text.trimStart().startsWith("{")) {
        fail("structuredContent: missing; the tool returned no BuilderResult");
      }
      result = JSON.parse(texts[0].text);
    }
    if (!isObject(result)) fail("structuredContent: expected a BuilderResult object (§5)");
    if (!isInt(result.contract)) fail("contract: missing or not an integer");
    if (result.contract !== tool.marker.contract) {
      fail(`contract: the result is for contract ${result.contract}, but the tool declared contract ${tool.marker.contract}`);
    }
    if (result.name !== undefined && result.name !== null && typeof result.name !== "string") fail("name: expected a string");
    const name = typeof result.name === "string" && result.name.trim() !== "" ? result.name : "result";
    if (result.warnings !== undefined && result.warnings !== null && !Array.isArray(result.warnings)) {
      fail("warnings: expected an array");
    }
    const warnings = (result.warnings ?? []).filter((w) => typeof w === "string");
    if (result.provenance !== undefined && result.provenance !== null && !isObject(result.provenance)) {
      fail("provenance: expected an object of strings and numbers");
    }
    if (!("structure" in result)) fail("structure: missing");
    const snapshot = structureToSnapshot(result.structure, name, full);
    const summary = content
      .filter((c) => isObject(c) && c.type === "text" && typeof c.text === "string")
      .map((c) => c.text)
      .join("\n");
    return { ok: true, snapshot, summary, warnings };
  } catch (e) {
    if (e instanceof Invalid) return { ok: false, error: e.message };
    throw e;
  }
}
