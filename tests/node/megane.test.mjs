// The `megane` entry as Megane Builder's tool layer uses it, in headless Chromium, against the
// Python SDK peer (tests/peers/builder_peer.py) on 127.0.0.1 with a token: a `#tools=` link →
// connectToolServer; the listing's fields rendered; liquid_box with progress → structureToSnapshot;
// solvate → insertOps pushed onto a document model as one undo step; cancel; a wrong token; a plain
// tool and a contract-2 tool. Then every pure helper on tests/fixtures/megane-recorded, the
// lazy load (retried after a failure), and the core-API fixes the entry relies on. The page imports
// only /pkg/megane.js (the core API only where a test checks a core fix).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { AUTO_PROBE_CONSOLE, ROOT, FIXTURES, launchBrowser, openPage, startServer, startBuilderPeer } from "./harness.mjs";

const TOKEN = "megane-seam-token-4b1f";
const RECORDED = join(FIXTURES, "megane-recorded");
const WASM = "/pkg/megane_builder_client_bg.wasm";
let web, browser, peer, peerUrl;
const errors = [];

const recorded = (file) => JSON.parse(readFileSync(join(RECORDED, file), "utf8"));

function startPeer(origin) {
  return startBuilderPeer(origin, TOKEN, RECORDED, ["--step-seconds", "0.15", "--extra-tools"]);
}

/** A fresh page on the test server; `hash` is the page's fragment. */
async function page(hash = "", expected = null) {
  // connectToolServer connects with the core's default protocol, "auto": against this legacy
  // peer the browser logs the refused 2026-07-28 probe, which the page cannot silence.
  const allowed = expected ? new RegExp(`${expected.source}|${AUTO_PROBE_CONSOLE.source}`) : AUTO_PROBE_CONSOLE;
  return openPage(browser, `${web.url}/tests/node/pages/blank.html${hash}`, errors, allowed);
}

before(async () => {
  web = await startServer();
  peer = await startPeer(web.url);
  peerUrl = `${peer.url}/mcp`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  peer?.child.kill();
  web?.stop();
});

test("Builder's store flow: launch link, listing, liquid_box, solvate as one undo step, cancel, wrong token", async () => {
  const hash = `#view=2&tools=${encodeURIComponent(peerUrl)}&token=${TOKEN}`;
  // The wrong-token case provokes HTTP 401s, which Chromium logs itself.
  const p = await page(hash, /status of 401 \(Unauthorized\)/);
  const calls = { liquid_box: recorded("call-liquid_box.json").arguments, solvate: recorded("call-solvate.json").arguments };
  const report = await p.evaluate(async ({ wasm, calls }) => {
    const megane = await import("/pkg/megane.js");
    // On mount, before anything is loaded (Builder's useToolServerLaunch).
    const launch = megane.readLaunchParams(window.location.hash);
    megane.configure({ wasmUrl: wasm });
    const connection = await megane.connectToolServer(launch.url, launch.token);

    // The Tools menu and the forms, rendered as text the way Builder does.
    const menu = document.createElement("ul");
    for (const tool of connection.listing.tools) {
      const item = document.createElement("li");
      item.textContent = `${tool.label}…`;
      item.title = tool.formError ? `Builder cannot build a form: ${tool.formError}` : tool.tooltip;
      for (const field of tool.fields ?? []) {
        const row = document.createElement("label");
        row.textContent = `${field.label}${field.kind === "number" && field.unit ? ` (${field.unit})` : ""}`;
        row.dataset.kind = field.kind;
        item.append(row);
      }
      menu.append(item);
    }
    document.body.append(menu);
    const fieldsOf = (name) => connection.listing.tools.find((t) => t.name === name).fields;

    // A document model with Builder's undo: pushOps is one step.
    const doc = { elements: [], positions: [], bonds: [], cell: null, fragments: [], undo: [] };
    const state = () => JSON.stringify({ ...doc, undo: undefined });
    const pushOps = (ops) => {
      doc.undo.push(state());
      for (const op of ops) {
        if (op.op === "set_cell") doc.cell = [...op.box];
        else if (op.op === "add_fragment") {
          const base = doc.elements.length;
          doc.elements.push(...op.elements);
          doc.positions.push(...op.positions);
          doc.bonds.push(...op.bonds.map(([i, j]) => [base + i, base + j]));
          doc.fragments.push(op.id);
        }
      }
    };
    const undo = () => Object.assign(doc, JSON.parse(doc.undo.pop()));
    const start = calls.solvate.document;
    Object.assign(doc, { elements: [...start.elements], positions: [...start.positions], bonds: start.bonds.map((b) => [...b]), cell: [...start.cell] });

    const run = async (tool, controller = new AbortController(), onProgress = () => {}) => {
      const info = connection.listing.tools.find((t) => t.name === tool);
      return connection.call(tool, calls[tool], { signal: controller.signal, timeoutMs: megane.callTimeoutMs(info.expectedSeconds), onProgress });
    };

    const progress = [];
    const box = await run("liquid_box", undefined, (fraction, message) => progress.push([fraction, message]));
    const snapshot = box.ok ? megane.structureToSnapshot(box.result.structure) : null;
    const labels = box.ok ? megane.residueLabels(box.result.structure) : null;

    const solvated = await run("solvate");
    let inserted = null;
    if (solvated.ok) {
      const before = doc.elements.length;
      const ops = megane.insertOps(solvated.result.structure, megane.newFragmentId(solvated.result.name, doc.fragments), doc.cell);
      pushOps(ops);
      inserted = { ops: ops.map((o) => [o.op, o.id, o.elements?.length]), before, after: doc.elements.length, steps: doc.undo.length };
      undo();
      inserted.undone = doc.elements.length;
    }

    const controller = new AbortController();
    const atomsBefore = doc.elements.length;
    const cancelled = await run("liquid_box", controller, () => controller.abort());
    const afterCancel = doc.elements.length;

    let wrong = null;
    try {
      await megane.connectToolServer(launch.url, "not-the-token");
    } catch (error) {
      // Builder's store puts its own prefix before the reason, with the URL's display form.
      wrong = { reason: error.message, shown: `Could not connect to ${megane.displayUrl(launch.url)}: ${error.message}` };
    }
    await connection.close();
    return {
      launch, serverName: connection.serverName, serverVersion: connection.serverVersion,
      tools: connection.listing.tools.map((t) => t.name), unsupported: connection.listing.unsupported,
      menu: menu.textContent, density: fieldsOf("liquid_box").find((f) => f.key === "density"),
      solventHelp: fieldsOf("solvate").find((f) => f.key === "solvent").help,
      box: { ok: box.ok, summary: box.summary, name: box.result?.name, contract: box.result?.contract,
        provenance: box.result?.provenance, warnings: box.result?.warnings, bondsIsArray: Array.isArray(box.result?.structure.bonds?.[0]) },
      progress, snapshot: snapshot && { nAtoms: snapshot.nAtoms, nBonds: snapshot.nBonds, nFileBonds: snapshot.nFileBonds,
        box: Array.from(snapshot.box), boxOrigin: snapshot.boxOrigin, atomBFactors: snapshot.atomBFactors,
        positions: snapshot.positions.constructor.name, elements: snapshot.elements.constructor.name, bonds: snapshot.bonds.constructor.name },
      labels: labels && [labels.length, ...labels.slice(0, 4)],
      inserted, cancelled, atomsBefore, afterCancel, wrong,
    };
  }, { wasm: WASM, calls });

  assert.deepEqual(report.launch, { url: peerUrl, token: TOKEN });
  assert.equal(report.serverName, "builder-test-peer");
  assert.equal(report.serverVersion, "0.1.0");
  assert.deepEqual(report.tools, ["liquid_box", "polymer_chain", "solvate"], "the plain tool is not a button");
  assert.deepEqual(report.unsupported, ["future_box"]);
  assert.match(report.menu, /Liquid box…/);
  assert.match(report.menu, /Density \(g\/cm3\)/);
  assert.deepEqual(report.density, { key: "density", label: "Density", help: null, required: false, default: 1,
    kind: "number", integer: false, min: 0, max: 5, exclusiveMin: true, exclusiveMax: false, unit: "g/cm3" });
  assert.equal(report.solventHelp, null, "a $ref-only property has no help");

  assert.equal(report.box.ok, true);
  assert.match(report.box.summary, /^Liquid box: 100 water/);
  assert.equal(report.box.contract, 1);
  assert.equal(report.box.bondsIsArray, true);
  assert.deepEqual(report.box.warnings, []);
  assert.equal(typeof report.box.provenance, "object");
  const fractions = report.progress.map(([f]) => f);
  assert.ok(fractions.length >= 5, JSON.stringify(report.progress));
  assert.deepEqual(fractions, [...fractions].sort((a, b) => a - b));
  assert.equal(report.progress.at(-1)[1], "done");
  assert.deepEqual({ ...report.snapshot, box: undefined }, { nAtoms: 300, nBonds: 200, nFileBonds: 200, box: undefined,
    boxOrigin: null, atomBFactors: null, positions: "Float32Array", elements: "Uint8Array", bonds: "Uint32Array" });
  assert.ok(Math.abs(report.snapshot.box[0] - 14.4088) < 1e-4 && report.snapshot.box[4] === report.snapshot.box[0]);
  assert.deepEqual(report.labels, [300, "WATE1", "WATE1", "WATE1", "WATE2"]);

  assert.deepEqual(report.inserted, { ops: [["add_fragment", "water-solvent", 798]], before: 3, after: 801, steps: 1, undone: 3 });
  assert.deepEqual(report.cancelled, { ok: false, error: "Cancelled." });
  assert.equal(report.afterCancel, report.atomsBefore, "nothing applied after a cancel");
  assert.match(report.wrong.reason, /^The server refused the token \(HTTP 401\): the token is wrong/);
  assert.ok(!report.wrong.reason.includes("not-the-token") && !report.wrong.reason.includes("\n"), report.wrong.reason);
  assert.equal(report.wrong.shown, `Could not connect to ${peerUrl}: ${report.wrong.reason}`);
  const { cancellations } = await (await fetch(`${peer.url}/peer/cancellations`)).json();
  assert.ok(cancellations.some((c) => c.tool === "liquid_box"), "the cancel reached the server");
});

test("every helper on the recorded fixtures", async () => {
  const p = await page();
  const fixtures = {
    list: recorded("tools-list.json"), box: recorded("call-liquid_box.json"),
    polymer: recorded("call-polymer_chain.json"), solvate: recorded("call-solvate.json"),
  };
  const out = await p.evaluate(async ({ wasm, fixtures }) => {
    const m = await import("/pkg/megane.js");
    m.configure({ wasmUrl: wasm });
    await m.load();
    const listing = m.parseTools(fixtures.list.tools);
    const box = m.interpretCall(fixtures.box.result);
    const polymer = m.interpretCall(fixtures.polymer.result);
    const solvate = m.interpretCall(fixtures.solvate.result);
    const doc = fixtures.solvate.arguments.document;
    const water = { elements: [8, 1, 1], positions: [0, 0, 0, 0.96, 0, 0, -0.24, 0.93, 0], cell: null, bonds: [[0, 1], [0, 2]], bondOrders: [1, 1] };
    const polymerSnapshot = m.structureToSnapshot(polymer.result.structure);
    return {
      tools: listing.tools.map((t) => [t.name, t.apply, t.expectedSeconds, t.fields.length, t.formError]),
      head: listing.tools[1].fields.find((f) => f.key === "head"),
      count: listing.tools[0].fields.find((f) => f.key === "components").columns.find((f) => f.key === "count"),
      box: { atoms: box.result.structure.elements.length, cell: box.result.structure.cell[0], summary: box.summary, keys: Object.keys(box.result).sort() },
      boxSnapshot: (({ nAtoms, nBonds, nFileBonds, boxOrigin, atomBFactors, bondOrders, atomChainIds }) =>
        ({ nAtoms, nBonds, nFileBonds, boxOrigin, atomBFactors, bondOrders, atomChainIds }))(m.structureToSnapshot(box.result.structure)),
      polymer: { atoms: polymerSnapshot.nAtoms, box: polymerSnapshot.box, labels: m.residueLabels(polymer.result.structure)?.slice(0, 2) },
      solvateOps: m.insertOps(solvate.result.structure, "water-solvent", new Float32Array(doc.cell)).map((o) => [o.op, o.elements?.length, "bondOrders" in o]),
      solvateNoCell: m.insertOps(solvate.result.structure, "w", null).map((o) => o.op),
      kept: m.insertOps(water, "water", null)[0].bondOrders,
      noLabels: m.residueLabels(water),
      names: [m.sanitizeName("water / ethanol"), m.sanitizeName(""), m.newFragmentId("Water Solvent", ["water-solvent"]),
        m.newFragmentId("***", []), m.newFragmentId("ice", ["ice"])],
      idsRequired: (() => { try { return m.newFragmentId("ice"); } catch (error) { return error.message; } })(),
      timeouts: [m.callTimeoutMs(null), m.callTimeoutMs(20), m.callTimeoutMs(1e6)],
      bare: m.interpretCall({ isError: true }),
      toolError: m.interpretCall({ isError: true, content: [{ type: "text", text: "Error executing tool solvate: the document has no cell\nTraceback" }] }),
      rpc: m.interpretCall({ jsonrpc: "2.0", id: 3, error: { code: -32603, message: "internal\nerror" } }),
      invalid: m.interpretCall({ structuredContent: { contract: 1, name: "x", structure: { elements: [0], positions: [0, 0, 0], cell: null, bonds: [] } } }),
      nothing: m.interpretCall(null),
      noSummary: m.interpretCall({ structuredContent: fixtures.box.result.structuredContent }).summary,
    };
  }, { wasm: WASM, fixtures });
  assert.deepEqual(out.tools, [["liquid_box", "new_document", 20, 6, null], ["polymer_chain", "new_document", 60, 5, null], ["solvate", "insert", 30, 5, null]]);
  assert.deepEqual(out.head, { key: "head", label: "Head atom", help: null, required: true, example: 0, kind: "widget", widget: "atom", of: "monomer", unit: null });
  assert.deepEqual(out.count, { key: "count", label: "Count", help: null, required: true, example: 100, kind: "number", integer: true,
    min: 1, max: 500000, exclusiveMin: false, exclusiveMax: false, unit: "count" });
  assert.equal(out.box.atoms, 300);
  assert.ok(Math.abs(out.box.cell - 14.4088) < 1e-4);
  assert.match(out.box.summary, /300 atoms/);
  assert.deepEqual(out.box.keys, ["contract", "name", "provenance", "structure", "warnings"]);
  assert.deepEqual(out.boxSnapshot, { nAtoms: 300, nBonds: 200, nFileBonds: 200, boxOrigin: null, atomBFactors: null, bondOrders: null, atomChainIds: null });
  assert.equal(out.polymer.atoms, 62);
  assert.equal(out.polymer.box, null);
  assert.deepEqual(out.solvateOps, [["add_fragment", 798, false]], "the document's cell (as Float32) is the result's: no set_cell");
  assert.deepEqual(out.solvateNoCell, ["set_cell", "add_fragment"]);
  assert.deepEqual(out.kept, [1, 1]);
  assert.equal(out.noLabels, null);
  assert.deepEqual(out.names, ["water-ethanol", "result", "water-solvent-2", "result", "ice-2"]);
  assert.match(out.idsRequired, /existingIds is required/);
  assert.deepEqual(out.timeouts, [60000, 100000, 1800000]);
  assert.deepEqual(out.bare, { ok: false, error: "The tool reported an error." });
  assert.deepEqual(out.toolError, { ok: false, error: "the document has no cell\nTraceback" }, "the whole block, as Builder shows it");
  assert.deepEqual(out.rpc, { ok: false, error: "The server failed: internal" });
  assert.equal(out.invalid.ok, false);
  assert.equal(out.invalid.error, "The tool returned an invalid result: structure.elements[0]: 0 is not an atomic number (1–118)");
  assert.deepEqual(out.nothing, { ok: false, error: "The server sent no result." });
  assert.equal(out.noSummary, null);
});

test("lazy load: helpers say so before it, a failed load is retried; launch links are URLSearchParams before and after", async () => {
  const p = await page("", /404|Failed to load resource/);
  const corpusDir = join(ROOT, "fuzz", "corpus", "launch");
  const corpus = readdirSync(corpusDir).sort().map((f) => new TextDecoder().decode(readFileSync(join(corpusDir, f))));
  const out = await p.evaluate(async ({ wasm, corpus }) => {
    const m = await import("/pkg/megane.js");
    let state = 5;
    const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const pieces = ["#", "?", "&", "=", "+", "%", "%2", "%2B", "%zz", "%ff", "%c3%28", "%C3%A9", "tools", "token", "to%6Fls", " ",
      "\n", "é", "🧪", "\uD800", "http://", "https://", "127.0.0.1/mcp", "evil.example.org", "u:p@", "?token=s3cret", "a"];
    const random = Array.from({ length: 3000 }, () => Array.from({ length: Math.floor(next() * 12) }, () => pieces[Math.floor(next() * pieces.length)]).join(""));
    // Link-shaped fragments as well, so that most of the URLSearchParams cases carry a `tools`.
    const linked = random.slice(0, 500).map((r, i) => `${i % 2 ? "#" : ""}tools=${r}&token=${random[i + 500]}`);
    const hashes = [...corpus, ...random, ...linked];
    const reference = hashes.map((h) => {
      const params = new URLSearchParams(h.replace(/^#/, ""));
      const url = params.get("tools");
      return url ? { url, token: params.get("token") ?? "" } : null;
    });
    const before = hashes.map((h) => m.readLaunchParams(h));
    let early = null;
    try { m.sanitizeName("x"); } catch (error) { early = error.message; }
    const shownEarly = m.displayUrl("https://u:p@x.org/mcp?token=s3cret");
    m.configure({ wasmUrl: "/pkg/no-such-file.wasm" });
    let failed = null;
    try { await m.connectToolServer("http://127.0.0.1:9/mcp", "t"); } catch (error) { failed = error.message; }
    m.configure({ wasmUrl: wasm });
    await m.load();
    const after = hashes.map((h) => m.readLaunchParams(h));
    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    return {
      count: hashes.length, links: reference.filter(Boolean).length,
      beforeDiffers: hashes.filter((h, i) => !same(before[i], reference[i])).slice(0, 3),
      afterDiffers: hashes.filter((h, i) => !same(after[i], reference[i])).slice(0, 3),
      early, shownEarly, failed, name: m.sanitizeName("x y"), shown: m.displayUrl("https://u:p@x.org/mcp?token=s3cret"),
      builder: [m.readLaunchParams("#tools=http://h/mcp"), m.readLaunchParams("#tools=https://u:p@x.org/mcp&token=a+b")],
    };
  }, { wasm: WASM, corpus });
  assert.ok(out.count > 2500 && out.links > 100, JSON.stringify([out.count, out.links]));
  assert.deepEqual(out.beforeDiffers, []);
  assert.deepEqual(out.afterDiffers, []);
  assert.deepEqual(out.builder, [{ url: "http://h/mcp", token: "" }, { url: "https://u:p@x.org/mcp", token: "a b" }], "any non-empty tools, as Builder reads it");
  assert.match(out.early, /not loaded yet/);
  assert.equal(out.shownEarly, "the tool server");
  assert.match(out.failed, /^The tool client could not be loaded: /);
  assert.ok(!out.failed.includes("\n"));
  assert.equal(out.name, "x-y", "the load after a failure succeeded");
  assert.equal(out.shown, "https://x.org/mcp");
});

test("core API fixes: no doubled Error prefix, snapshot fields, chosen fragment id, serverVersion", async () => {
  const p = await page();
  const fixtures = { list: recorded("tools-list.json"), box: recorded("call-liquid_box.json"), solvate: recorded("call-solvate.json") };
  const out = await p.evaluate(async ({ fixtures, url, token }) => {
    const pkg = await import("/pkg/megane_builder_client.js");
    await pkg.default();
    const toolbox = pkg.parseToolList(fixtures.list, "x");
    const [box, , solvate] = toolbox.buttons;
    const broken = structuredClone(fixtures.box.result);
    // A type error inside the structure: read by serde-wasm-bindgen, whose errors are JS Errors.
    broken.structuredContent.structure.elements[3] = "x";
    const parsed = pkg.interpretCall(box, broken);
    const asText = pkg.interpretCall(box, JSON.stringify(broken));
    const snapshot = pkg.planApply(box, pkg.interpretCall(box, fixtures.box.result).result, null).plan.snapshot;
    const solvated = pkg.interpretCall(solvate, fixtures.solvate.result).result;
    const doc = fixtures.solvate.arguments.document;
    const chosen = pkg.planApply(solvate, solvated, doc, { fragmentId: "solvent-1", existingFragmentIds: ["water-solvent"] });
    const taken = pkg.planApply(solvate, solvated, doc, { fragmentId: "water-solvent", existingFragmentIds: ["water-solvent"] });
    const bare = pkg.interpretCall(box, { isError: true, content: [] });
    const server = await pkg.connect(url, { token });
    const version = server.serverVersion;
    await server.close();
    return { parsed: parsed.error, asText: asText.error, nFileBonds: snapshot.nFileBonds, nBonds: snapshot.nBonds,
      boxOrigin: snapshot.boxOrigin, atomBFactors: snapshot.atomBFactors, chosen: chosen.plan.ops[0].id, taken, bare: bare.error, version };
  }, { fixtures, url: peerUrl, token: TOKEN });
  assert.ok(!out.parsed.includes("Error: "), out.parsed);
  assert.match(out.parsed, /^structure\.elements\[3\]: /);
  assert.equal(out.parsed, out.asText, "a parsed object and its JSON text give the same line");
  assert.deepEqual([out.nFileBonds, out.nBonds, out.boxOrigin, out.atomBFactors], [200, 200, null, null]);
  assert.equal(out.chosen, "solvent-1");
  assert.equal(out.taken.ok, false);
  assert.match(out.taken.error, /^fragmentId:/);
  assert.equal(out.bare, "The tool reported an error.");
  assert.equal(out.version, "0.1.0");
});

test("planApply: the string channels read back as sent, from a table of at most 256 names and of more", async () => {
  const p = await page();
  const fixtures = { list: recorded("tools-list.json"), box: recorded("call-liquid_box.json") };
  const out = await p.evaluate(async ({ fixtures }) => {
    const pkg = await import("/pkg/megane_builder_client.js");
    await pkg.default();
    const [box] = pkg.parseToolList(fixtures.list, "x").buttons;
    const read = (names) => {
      const result = structuredClone(fixtures.box.result);
      const s = result.structuredContent.structure;
      const n = s.elements.length;
      s.residueNames = Array.from({ length: n }, (_, i) => names(i));
      s.atomNames = Array.from({ length: n }, (_, i) => ["O", "H1", "H2"][i % 3]);
      s.residueIds = Array.from({ length: n }, (_, i) => 7 - i);
      const snapshot = pkg.planApply(box, pkg.interpretCall(box, JSON.stringify(result)).result, null).plan.snapshot;
      return {
        sent: [s.residueNames, s.atomNames, s.residueIds, s.residueNames.map((r, i) => r + s.residueIds[i])],
        read: [snapshot.residueNames, snapshot.atomNames, snapshot.residueIds, snapshot.labels],
      };
    };
    // 3 names (one byte per index), and 300 (the table past 256 entries).
    return [read((i) => ["HOH", "NA", "CL"][i % 3]), read((i) => `R${i}`)];
  }, { fixtures });
  for (const { sent, read } of out) assert.deepEqual(read, sent);
  assert.equal(new Set(out[1].read[0]).size, 300);
});

test("the package exports ./megane with its types", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "pkg", "package.json"), "utf8"));
  assert.deepEqual(pkg.exports["./megane"], { types: "./megane.d.ts", default: "./megane.js" });
  for (const file of ["megane.js", "megane.d.ts"]) assert.ok(pkg.files.includes(file), file);
});

test("no page errors", () => {
  assert.deepEqual(errors, []);
});
