// The `megane` entry in Node, as Megane Builder's unit tests (vitest) use it: set up exactly as
// README's "Builder's unit tests" block says (that block is written to a scratch folder whose
// node_modules/megane-builder-client is pkg/, and run there), then Builder's own checks of the
// members it re-exports, written here against the package; fragment ids interleaved as Builder
// makes them; launch links against URLSearchParams on the committed `launch` fuzz corpus and on
// random strings, before and after the wasm loads; file names against Builder's rule on random
// UTF-16; Builder's words for a failed call; connect errors against the Python SDK peer
// (tests/peers/builder_peer.py) on 127.0.0.1, and a tool error made by pydantic there.
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import { FIXTURES, ROOT, startBuilderPeer } from "./harness.mjs";

const RECORDED = join(FIXTURES, "megane-recorded");
const recorded = (file) => JSON.parse(readFileSync(join(RECORDED, file), "utf8"));
const TOOLS = recorded("tools-list.json").tools;
const CALLS = { liquid_box: recorded("call-liquid_box.json"), polymer_chain: recorded("call-polymer_chain.json"), solvate: recorded("call-solvate.json") };
const TOKEN = "megane-node-token-7c2e";

let scratch, megane, core, peer;

/** README's block after `<!-- name -->`. */
function readmeBlock(name) {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = readme.split(`<!-- ${name} -->\n`)[1]?.match(/^```\w*\n([\s\S]*?)```\n/)?.[1];
  assert.ok(block, `README has the ${name} block`);
  return block;
}

before(async () => {
  // A consumer folder: the package installed under its name (pkg/, as npm would link it).
  scratch = mkdtempSync(join(tmpdir(), "megane-node-"));
  mkdirSync(join(scratch, "node_modules"));
  symlinkSync(join(ROOT, "pkg"), join(scratch, "node_modules", "megane-builder-client"), "dir");
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(join(scratch, "setup.mjs"), readmeBlock("builder-test-setup"));
  writeFileSync(join(scratch, "seam.mjs"), 'export * from "megane-builder-client/megane";\n');
  writeFileSync(join(scratch, "core.mjs"), 'export * from "megane-builder-client";\n');
  megane = await import(pathToFileURL(join(scratch, "seam.mjs")));
  peer = await startBuilderPeer("http://127.0.0.1:1", TOKEN, RECORDED, ["--steps", "1", "--step-seconds", "0.01", "--pydantic-tool"]);
});

after(() => {
  peer?.child.kill();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// ---- Launch links: URLSearchParams, before and after the wasm loads ----

/** What Builder's own `readLaunchParams` gives: URLSearchParams over the fragment. */
function byUrlSearchParams(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const url = params.get("tools");
  return url ? { url, token: params.get("token") ?? "" } : null;
}

/** The committed `launch` fuzz corpus, each file's bytes read as the fuzz target reads them. */
function launchCorpus() {
  const dir = join(ROOT, "fuzz", "corpus", "launch");
  const decoder = new TextDecoder();
  return readdirSync(dir).sort().map((file) => decoder.decode(readFileSync(join(dir, file))));
}

/** Deterministic random fragments built from the pieces that matter to the reading. */
function randomFragments(count, seed = 7) {
  let state = seed;
  const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const pieces = ["#", "?", "&", "=", "+", "%", "%2", "%2B", "%20", "%zz", "%ff", "%c3%28", "%e2%82", "%C3%A9", "%F0%9F%A7%AA",
    "tools", "token", "to%6Fls", "TOOLS", "view=3", " ", "\t", "\n", "é", "🧪", "\uD800", "\uDC00x", "http://", "https://",
    "127.0.0.1:8765/mcp", "h/mcp", "evil.example.org", "u:p@", "?token=s3cret", "#", "a", "Z", "0", "-", "."];
  return Array.from({ length: count }, () => {
    let out = next() < 0.5 ? "#" : "";
    const n = Math.floor(next() * 14);
    for (let i = 0; i < n; i++) out += pieces[Math.floor(next() * pieces.length)];
    return out;
  });
}

let launchBeforeLoad;

test("before the wasm loads: readLaunchParams is URLSearchParams, the helpers say they need the wasm", () => {
  const hashes = [...launchCorpus(), ...randomFragments(3000)];
  launchBeforeLoad = hashes.map((h) => megane.readLaunchParams(h));
  hashes.forEach((h, i) => assert.deepEqual(launchBeforeLoad[i], byUrlSearchParams(h), JSON.stringify(h)));
  // Builder's own cases (store.test.ts), and the link kinds issue 31 names.
  assert.equal(megane.readLaunchParams(""), null);
  assert.deepEqual(megane.readLaunchParams("#tools=http%3A%2F%2Fh%2Fmcp&token=t"), { url: "http://h/mcp", token: "t" });
  assert.deepEqual(megane.readLaunchParams("#tools=http://h/mcp"), { url: "http://h/mcp", token: "" });
  assert.deepEqual(megane.readLaunchParams("#tools=https://x.org/mcp&token=a+b&token=c"), { url: "https://x.org/mcp", token: "a b" });
  assert.deepEqual(megane.readLaunchParams("#tools=http://evil.example.org/mcp"), { url: "http://evil.example.org/mcp", token: "" });
  assert.deepEqual(megane.readLaunchParams("#tools=%zz&token=%ff"), { url: "%zz", token: "\uFFFD" });
  assert.throws(() => megane.sanitizeName("x"), /not loaded yet/);
  assert.equal(megane.displayUrl("https://u:p@x.org/mcp?token=s3cret"), "the tool server");
});

test("README's Node set-up: initSync of the .wasm bytes, then load()", async () => {
  await import(pathToFileURL(join(scratch, "setup.mjs")));
  core = await import(pathToFileURL(join(scratch, "core.mjs")));
  assert.equal(megane.sanitizeName("water / ethanol"), "water-ethanol", "the helpers work: the wasm is loaded");
  await megane.load(); // again: at once
});

test("after the wasm loads: readLaunchParams gives the same, and the core reads links the same way", () => {
  const hashes = [...launchCorpus(), ...randomFragments(3000)];
  const afterLoad = hashes.map((h) => megane.readLaunchParams(h));
  assert.deepEqual(afterLoad, launchBeforeLoad);
  let usable = 0;
  hashes.forEach((hash, i) => {
    const expected = byUrlSearchParams(hash);
    const parsed = core.parseLaunchFragment(hash);
    const context = JSON.stringify({ hash, expected, parsed });
    if (parsed?.ok) {
      usable += 1;
      assert.deepEqual({ url: parsed.url, token: parsed.token ?? "" }, expected, context);
      assert.equal(core.checkServerUrl(parsed.url).ok, true, context);
    } else if (parsed) {
      // Refused: a link Builder reads as empty or whose URL connect refuses, in one line.
      assert.ok(!expected || !core.checkServerUrl(expected.url).ok || /[\s\p{Cc}]/u.test(expected.url), context);
      assert.doesNotMatch(parsed.error, /\n/);
    } else {
      assert.equal(new URLSearchParams(hash.replace(/^#/, "")).has("tools"), false, context);
    }
  });
  assert.ok(usable > 20, `usable links among the strings: ${usable}`);
});

// ---- Builder's own checks of what it re-exports (tests/ts/builder/tools/*.test.ts) ----

test("client: interpretCall on a recorded result, tool errors and an invalid result, in Builder's words", () => {
  const outcome = megane.interpretCall(CALLS.liquid_box.result);
  assert.equal(outcome.ok, true);
  assert.equal(outcome.result.structure.elements.length, 300);
  assert.match(outcome.summary, /Liquid box/);
  assert.deepEqual(megane.interpretCall({ isError: true, content: [{ type: "text", text: " nope " }] }), { ok: false, error: "nope" });
  assert.deepEqual(megane.interpretCall({ isError: true }), { ok: false, error: "The tool reported an error." });
  assert.deepEqual(megane.interpretCall({ structuredContent: { contract: 1 } }),
    { ok: false, error: "The tool returned an invalid result: structure is missing" });
});

test("contract: parseTools on the reference server and on sorted tools; timeouts; file names", () => {
  const listing = megane.parseTools(TOOLS);
  const byName = Object.fromEntries(listing.tools.map((t) => [t.name, t]));
  assert.deepEqual(listing.tools.map((t) => t.name), ["liquid_box", "polymer_chain", "solvate"]);
  assert.deepEqual(listing.unsupported, []);
  assert.deepEqual([byName.liquid_box.label, byName.liquid_box.category, byName.liquid_box.apply, byName.liquid_box.stochastic], ["Liquid box", "bulk", "new_document", true]);
  assert.deepEqual([byName.solvate.apply, byName.solvate.document, byName.solvate.category], ["insert", "required", "solvation"]);
  assert.equal(byName.polymer_chain.expectedSeconds, 60);
  assert.equal(byName.liquid_box.tooltip, "Fill a periodic box with molecules at a target density using packmol.");
  for (const t of listing.tools) assert.equal(t.formError, null);
  const components = byName.liquid_box.fields.find((f) => f.key === "components");
  assert.equal(components.kind, "table");
  assert.deepEqual(components.columns.map((c) => [c.key, c.kind]), [["molecule", "widget"], ["count", "number"]]);
  assert.equal(components.columns[1].example, 100);
  const head = byName.polymer_chain.fields.find((f) => f.key === "head");
  assert.deepEqual([head.kind, head.widget, head.of], ["widget", "atom", "monomer"]);
  assert.equal(byName.polymer_chain.fields.find((f) => f.key === "monomer").help, null);
  const density = byName.liquid_box.fields.find((f) => f.key === "density");
  assert.deepEqual([density.kind, density.unit, density.exclusiveMin, density.min, density.default], ["number", "g/cm3", true, 0, 1]);
  const doc = byName.solvate.fields.find((f) => f.key === "document");
  assert.deepEqual([doc.kind, doc.widget, doc.required], ["widget", "document", true]);

  const marker = (over = {}) => ({ "io.github.megane-labs/builder": { contract: 1, category: "bulk", apply: "new_document", document: "none", stochastic: false, ...over } });
  const tool = (over) => ({ name: "t", description: "Does it. More text.", inputSchema: { type: "object", properties: {} }, _meta: marker(), ...over });
  const sorted = megane.parseTools([tool({ name: "a" }), tool({ name: "b", _meta: marker({ contract: 9 }) }), tool({ name: "c", _meta: {} })]);
  assert.deepEqual([sorted.tools.map((t) => t.name), sorted.unsupported], [["a"], ["b"]]);

  assert.deepEqual([megane.callTimeoutMs(null), megane.callTimeoutMs(60), megane.callTimeoutMs(10_000)], [60_000, 300_000, 1_800_000]);
  assert.equal(megane.sanitizeName("water / ethanol"), "water-ethanol");
  assert.equal(megane.sanitizeName("***"), "result");
});

test("the Tools menu's listings: unsupported, unformable and empty as Builder's tests expect; its kitchen sink is outside §4.2", () => {
  const META = "io.github.megane-labs/builder";
  const odd = megane.parseTools([
    { name: "future", inputSchema: { type: "object" }, _meta: { [META]: { contract: 5 } } },
    { name: "oneof", title: "One of", inputSchema: { type: "object", properties: { x: { oneOf: [] } } }, _meta: { [META]: { contract: 1, category: "bulk", apply: "new_document" } } },
  ]);
  assert.deepEqual(odd.unsupported, ["future"]);
  assert.equal(odd.tools[0].name, "oneof");
  assert.equal(odd.tools[0].fields, null);
  assert.ok(odd.tools[0].formError, "Builder's title says `Builder cannot build a form: <formError>`");
  assert.deepEqual(megane.parseTools([]), { tools: [], unsupported: [] });
  // The UI tests' "kitchen sink" (ToolsSection / ToolServer "renders every control kind") has a
  // `cell` and a `selection` widget whose schemas take no numbers, and an `atom` widget without
  // `x-megane-of`: the package refuses such a form (§4.2's widget shapes), Builder's own parseTools
  // renders it. So README leaves Builder's parseTools in contract.ts, where those tests build their
  // fake connections' listings; a real connection's listing is the package's.
  const widget = (key, schema) => megane.parseTools([{ name: "k", inputSchema: { type: "object", properties: { [key]: schema } },
    _meta: { [META]: { contract: 1, category: "other", apply: "new_document" } } }]).tools[0];
  assert.match(widget("cell", { type: "array", "x-megane-widget": "cell" }).formError, /`cell` widget but its schema does not accept a 3×3 cell/);
  assert.match(widget("sel", { type: "array", "x-megane-widget": "selection" }).formError, /`selection` widget/);
  assert.match(widget("loose", { type: "integer", "x-megane-widget": "atom" }).formError, /without `x-megane-of`/);
  const el = widget("el", { type: "integer", "x-megane-widget": "element" });
  assert.deepEqual([el.formError, el.fields[0].kind, el.fields[0].widget], [null, "widget", "element"]);
});

test("payload: structureToSnapshot, residueLabels and insertOps as Builder's tests check them", () => {
  const water = { elements: [8, 1, 1], positions: [0, 0, 0, 0.96, 0, 0, -0.24, 0.93, 0], cell: [10, 0, 0, 0, 10, 0, 0, 0, 10], bonds: [[0, 1], [0, 2]] };
  const snap = megane.structureToSnapshot({ ...water, bondOrders: [1, 2], chainIds: ["A", "A", "B"] });
  assert.deepEqual([snap.nAtoms, snap.nBonds, snap.nFileBonds], [3, 2, 2]);
  assert.deepEqual([Array.from(snap.bonds), Array.from(snap.bondOrders), Array.from(snap.box), Array.from(snap.atomChainIds)],
    [[0, 1, 0, 2], [1, 2], water.cell, [65, 65, 66]]);
  const plain = megane.structureToSnapshot({ ...water, cell: null });
  assert.deepEqual([plain.box, plain.bondOrders, plain.atomChainIds], [null, null, null]);
  assert.ok(Math.abs(plain.positions[3] - 0.96) < 1e-6);
  assert.equal(megane.residueLabels(water), null);
  assert.deepEqual(megane.residueLabels({ ...water, residueNames: ["WAT", "WAT", "WAT"] }), ["WAT", "WAT", "WAT"]);
  assert.deepEqual(megane.residueLabels({ ...water, residueNames: ["WAT", "WAT", "WAT"], residueIds: [7, 7, 7] }), ["WAT7", "WAT7", "WAT7"]);
  assert.match(megane.residueLabels(megane.interpretCall(CALLS.liquid_box.result).result.structure)[0], /^WATE\d+$/);

  const same = megane.insertOps(water, "frag-1", new Float32Array(water.cell));
  assert.deepEqual(same.map((o) => o.op), ["add_fragment"]);
  assert.deepEqual([same[0].id, same[0].elements, same[0].positions, "bondOrders" in same[0]], ["frag-1", water.elements, water.positions, false]);
  const grown = megane.insertOps({ ...water, bondOrders: [1, 1] }, "f", new Float32Array([9, 0, 0, 0, 9, 0, 0, 0, 9]));
  assert.deepEqual(grown.map((o) => o.op), ["set_cell", "add_fragment"]);
  assert.deepEqual(grown[0], { op: "set_cell", box: water.cell, scaleAtoms: false });
  assert.deepEqual(grown[1].bondOrders, [1, 1]);
  assert.deepEqual(megane.insertOps(water, "f", null).map((o) => o.op), ["set_cell", "add_fragment"]);
  assert.deepEqual(megane.insertOps({ ...water, cell: null }, "f", null).map((o) => o.op), ["add_fragment"]);
});

// ---- Fragment ids: library placements and tool inserts interleaved, Builder's way ----

/** Builder's fragment ids (src/builder/library/fragment.ts), emulated: the name's lower-case
 *  alphanumeric words joined by `-` (at most 24 characters, else `fragment`), then `-<n>` from one
 *  serial for the whole page, shared by library placements and tool results. */
function builderIds() {
  let serial = 0;
  return (name) => {
    const words = name.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean).join("-").slice(0, 24);
    serial += 1;
    return `${words || "fragment"}-${serial}`;
  };
}

/** Builder's edit replay (src/pipeline/nodes/edit), emulated for `add_fragment` and `set_cell`:
 *  fragment atoms are addressed `<id>:<k>`; an atom whose address is taken is skipped, and then
 *  the fragment's bonds are too (what lost 3 atoms and the bonds in issue 31). */
function builderDocument(cell) {
  const atoms = new Map();
  const bonds = new Set();
  return {
    atoms, bonds, cell,
    push(ops) {
      for (const op of ops) {
        if (op.op === "set_cell") { this.cell = [...op.box]; continue; }
        let whole = true;
        op.elements.forEach((z, k) => {
          const key = `${op.id}:${k}`;
          if (atoms.has(key)) whole = false;
          else atoms.set(key, z);
        });
        if (whole) for (const [i, j] of op.bonds) bonds.add(`${op.id}:${i}|${op.id}:${j}`);
      }
    },
  };
}

test("fragment ids: library placements and tool inserts interleaved with Builder's ids: every atom and bond lands", () => {
  const solvate = megane.interpretCall(CALLS.solvate.result).result;
  const result = { ...solvate, name: "water" };
  const libraryWater = { elements: [8, 1, 1], positions: [0, 0, 0, 0.96, 0, 0, -0.24, 0.93, 0], bonds: [[0, 1], [0, 2]] };
  const expectAll = (doc, placed) => {
    const atoms = placed.reduce((n, p) => n + p.elements.length, 0);
    const bonds = placed.reduce((n, p) => n + p.bonds.length, 0);
    assert.equal(doc.atoms.size, atoms);
    assert.equal(doc.bonds.size, bonds);
  };
  for (const order of ["LLTTT", "LTLTLTL", "TTLLT", "TLTLT"]) {
    const id = builderIds();
    const doc = builderDocument([20, 0, 0, 0, 20, 0, 0, 0, 20]);
    const placed = [];
    for (const step of order) {
      if (step === "L") {
        doc.push([{ op: "add_fragment", id: id("Water"), ...libraryWater, translate: [1, 1, 1] }]);
        placed.push(libraryWater);
      } else {
        doc.push(megane.insertOps(result.structure, id(result.name), doc.cell));
        placed.push(result.structure);
      }
      expectAll(doc, placed);
    }
    assert.equal(doc.atoms.size, placed.reduce((n, p) => n + p.elements.length, 0), order);
  }
  // The package's own ids are unique only among the ids it is given: they are required.
  assert.throws(() => megane.newFragmentId("water"), /existingIds is required/);
  const doc = builderDocument([20, 0, 0, 0, 20, 0, 0, 0, 20]);
  const id = builderIds();
  const placed = [];
  for (const step of "LLTLTT") {
    const fragments = [...new Set([...doc.atoms.keys()].map((k) => k.slice(0, k.lastIndexOf(":"))))];
    if (step === "L") {
      doc.push([{ op: "add_fragment", id: id("Water"), ...libraryWater }]);
      placed.push(libraryWater);
    } else {
      doc.push(megane.insertOps(result.structure, megane.newFragmentId(result.name, fragments), doc.cell));
      placed.push(result.structure);
    }
    expectAll(doc, placed);
  }
});

// ---- File names: Builder's rule on random UTF-16 ----

/** Builder's `sanitizeName`, the expression issue 31 gives. */
const builderName = (s) => (s.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "result").slice(0, 64);

test("file names: sanitizeName and a new document's fileName are Builder's rule on random UTF-16 (astral, lone surrogates)", () => {
  let state = 11;
  const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const unit = () => {
    const r = next();
    if (r < 0.4) return "aZ09._- /*-"[Math.floor(next() * 11)];
    if (r < 0.55) return String.fromCharCode(Math.floor(next() * 0x80));
    if (r < 0.7) return String.fromCharCode(0x80 + Math.floor(next() * 0xD780));
    if (r < 0.8) return String.fromCharCode(0xD800 + Math.floor(next() * 0x800)); // lone or paired surrogates
    if (r < 0.9) return String.fromCodePoint(0x10000 + Math.floor(next() * 0xFFFFF));
    return String.fromCharCode(0xE000 + Math.floor(next() * 0x2000));
  };
  const names = ["water / ethanol", "***", "", "a-/b", "..", "-".repeat(70), `${"a".repeat(63)} b`, `${"🧪".repeat(40)}x`];
  for (let i = 0; i < 4000; i++) names.push(Array.from({ length: Math.floor(next() * 100) }, unit).join(""));
  const [box] = core.parseToolList(recorded("tools-list.json"), "x").buttons;
  const interpreted = core.interpretCall(box, CALLS.liquid_box.result).result;
  for (const name of names) {
    assert.equal(megane.sanitizeName(name), builderName(name), JSON.stringify(name));
  }
  // The plan's file name (the demo page's document name) is the same rule, on the result's name.
  // (Well-formed names only: a lone surrogate cannot be written as JSON the core reads.)
  for (const name of names.filter((n) => n.isWellFormed()).slice(0, 300)) {
    const raw = structuredClone(CALLS.liquid_box.result);
    raw.structuredContent.name = name;
    const result = core.interpretCall(box, raw).result;
    const fileName = core.planApply(box, result, null).plan.snapshot.fileName;
    assert.equal(fileName, builderName(name), JSON.stringify(name));
  }
  assert.equal(core.planApply(box, interpreted, null).plan.snapshot.fileName, "water");
});

// ---- Failed calls in Builder's words ----

test("a tool error is its whole first block (pydantic, HTML, controls), sanitised and bounded; JSON-RPC errors one line", () => {
  const error = (text) => megane.interpretCall({ isError: true, content: [{ type: "text", text }] }).error;
  const pydantic = "Error executing tool calculate_ph: 1 validation error for calculate_phArguments\nph\n  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='seven', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.11/v/float_parsing\n";
  assert.equal(error(pydantic), pydantic.slice("Error executing tool calculate_ph: ".length).trim());
  const html = `<!DOCTYPE html>\r\n<html><head><title>502</title></head>\r\n<body>\r\n${"<p>Bad gateway</p>\r\n".repeat(30)}</body></html>`;
  const shown = error(html);
  assert.equal(shown.split("\n").length, 20);
  assert.ok(shown.startsWith("<!DOCTYPE html>\n<html><head><title>502</title></head>\n<body>\n<p>Bad gateway</p>") && shown.endsWith("…"), shown);
  assert.equal(error("\u001b[31mred\u001b[0m\u0007\r\n\u202Egnp.exe\u2028next\tcol\u0000 "), "[31mred[0m\ngnp.exe\nnext col");
  const long = error("x".repeat(5000));
  assert.equal([...long].length, 2000);
  assert.equal(error("   "), "The tool reported an error.");
  assert.deepEqual(megane.interpretCall({ jsonrpc: "2.0", id: 3, error: { code: -32603, message: "internal error\nTraceback (most recent call last):\n  File \"x.py\"" } }),
    { ok: false, error: "The server failed: internal error" });
  // The core API keeps `error` one line.
  const [box] = core.parseToolList(recorded("tools-list.json"), "x").buttons;
  const sdk = pydantic.replace("calculate_ph:", "liquid_box:");
  assert.equal(core.interpretCall(box, { isError: true, content: [{ type: "text", text: sdk }] }).error, "1 validation error for calculate_phArguments");
});

// ---- Connecting: the reason alone, one line, never a secret; Builder's prefix with displayUrl ----

/** Builder's store after README's edit: its own prefix, the URL's display form. */
async function builderConnect(url, token) {
  try {
    return { connection: await megane.connectToolServer(url, token) };
  } catch (err) {
    return { error: `Could not connect to ${megane.displayUrl(url)}: ${err instanceof Error ? err.message : String(err)}`, reason: err.message };
  }
}

test("connect errors: the reason alone, one line; Builder's prefix shows the URL without query or user info", async () => {
  const port = new URL(peer.url).port;
  const cases = [
    [`http://127.0.0.1:${port}/mcp?token=s3cret`, "", /query.*token field/, `http://127.0.0.1:${port}/mcp`],
    [`https://me:s3cret@x.org/mcp`, "", /user name or password.*token field/, "https://x.org/mcp"],
    ["http://evil.example.org/mcp", "", /^Refusing to connect to evil\.example\.org over plain http/, "http://evil.example.org/mcp"],
    ["javascript:alert(1)", "", /must start with https:\/\/ or http:\/\//, "javascript:alert(1)"],
    ["http://127.0.0.1:9/mcp#token=s3cret", "", /^Could not reach http:\/\/127\.0\.0\.1:9\/mcp: is the server running\?/, "http://127.0.0.1:9/mcp"],
    [`${peer.url}/mcp`, "s3cret-but-wrong", /^The server refused the token \(HTTP 401\)/, `${peer.url}/mcp`],
  ];
  for (const [url, token, reason, shown] of cases) {
    const { error, reason: alone } = await builderConnect(url, token);
    assert.match(alone, reason, url);
    assert.doesNotMatch(alone, /Could not connect to|s3cret|\n/, alone);
    assert.equal(error, `Could not connect to ${shown}: ${alone}`);
  }
  const { connection } = await builderConnect(`${peer.url}/mcp`, TOKEN);
  assert.equal(connection.serverName, "builder-test-peer");
  await connection.close();
});

test("a pydantic validation error from the server is shown whole; a cancel and an unknown tool stay one line", async () => {
  const connection = await megane.connectToolServer(`${peer.url}/mcp`, TOKEN);
  const info = connection.listing.tools.find((t) => t.name === "calculate_ph");
  assert.deepEqual(info.fields.map((f) => f.key), ["ph", "seed"]);
  const outcome = await connection.call("calculate_ph", { ph: "seven" }, { timeoutMs: megane.callTimeoutMs(info.expectedSeconds) });
  assert.equal(outcome.ok, false);
  const lines = outcome.error.split("\n");
  assert.equal(lines[0], "1 validation error for calculate_phArguments", outcome.error);
  assert.equal(lines[1], "ph");
  assert.match(lines[2], /^ {2}Input should be a valid number, unable to parse string as a number \[type=float_parsing, input_value='seven', input_type=str\]$/);
  assert.deepEqual(Object.keys(outcome), ["ok", "error"]);
  const controller = new AbortController();
  controller.abort();
  assert.deepEqual(await connection.call("liquid_box", {}, { timeoutMs: 1000, signal: controller.signal }), { ok: false, error: "Cancelled." });
  assert.deepEqual(await connection.call("no_such_tool", {}, { timeoutMs: 1000 }), { ok: false, error: "Unknown tool: no_such_tool" });
  const box = await connection.call("liquid_box", CALLS.liquid_box.arguments, { timeoutMs: 60_000 });
  assert.deepEqual([box.ok, box.result.structure.elements.length, Object.keys(box).sort()], [true, 300, ["ok", "result", "summary"]]);
  await connection.close();
});
