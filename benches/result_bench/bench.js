// interpretCall + planApply (wasm) against JSON.parse + JavaScript checks (baseline.js) on the
// same 500 000-atom response bytes, in one page. Results are POSTed to /results as JSON.
// Query: ?runs=7 (timed runs after one warm-up). Chromium flags: --js-flags=--expose-gc and
// --enable-precise-memory-info make the memory figures exact.

// ?pkg=/artifacts/other-build compares another build of the package (default /pkg).
const PKG = new URLSearchParams(location.search).get("pkg") ?? "/pkg";
const { default: init, parseToolList, interpretCall, planApply } = await import(`${PKG}/megane_builder_client.js`);
import { interpretAndPlan, sseData } from "./baseline.js";
import { syntheticLiquidBox } from "./synthetic.js";

const RUNS = Number(new URLSearchParams(location.search).get("runs") ?? 9);
const query = new URLSearchParams(location.search);
const log = (line) => {
  document.getElementById("log").textContent += `${line}\n`;
  console.log(line);
};
const gc = () => globalThis.gc?.();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A full GC, and time for V8 to finish sweeping freed ArrayBuffers before the heap is read.
const settle = async () => {
  gc();
  await sleep(200);
  gc();
  await sleep(200);
};
const heap = () => performance.memory?.usedJSHeapSize ?? NaN;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const MB = 1024 * 1024;

function wasmPath(button, bytes) {
  const t0 = performance.now();
  const outcome = interpretCall(button, bytes);
  const t1 = performance.now();
  if (!outcome.ok) throw new Error(`interpretCall: ${outcome.error}`);
  const planned = planApply(button, outcome.result, null, {});
  const t2 = performance.now();
  if (!planned.ok) throw new Error(`planApply: ${planned.error}`);
  return { outcome, snapshot: planned.plan.snapshot, interpretMs: t1 - t0, planMs: t2 - t1, ms: t2 - t0 };
}

// The snapshot's string channels are built in JavaScript on first read (lazy getters): this path
// also reads them, for what a consumer that uses every channel pays (compare with jsFull).
function wasmReadAllPath(button, bytes) {
  const r = wasmPath(button, bytes);
  const t0 = performance.now();
  const s = r.snapshot;
  const read = [s.labels, s.residueNames, s.residueIds, s.atomNames].reduce((n, a) => n + (a?.length ?? 0), 0);
  r.readMs = performance.now() - t0;
  r.ms += r.readMs;
  r.read = read;
  return r;
}

function jsPath(button, bytes, full) {
  const t0 = performance.now();
  const r = interpretAndPlan(bytes, button, { full });
  const ms = performance.now() - t0;
  if (!r.ok) throw new Error(`baseline: ${r.error}`);
  return { snapshot: r.snapshot, ms };
}

// Both paths must give the same snapshot (positions within f32 rounding).
function crossCheck(w, j) {
  const problems = [];
  const same = (name, a, b) => {
    if (a === null || b === null) {
      if (a !== b) problems.push(`${name}: one is null`);
      return;
    }
    if (a.length !== b.length) return problems.push(`${name}: length ${a.length} vs ${b.length}`);
    for (let i = 0; i < a.length; i++) {
      const ok = name === "positions" || name === "box"
        ? Math.abs(a[i] - b[i]) <= 2 ** -23 * Math.abs(b[i])
        : a[i] === b[i];
      if (!ok) return problems.push(`${name}[${i}]: ${a[i]} vs ${b[i]}`);
    }
  };
  for (const key of ["positions", "elements", "bonds", "bondOrders", "box", "molecules", "labels",
    "residueNames", "residueIds", "atomNames"]) {
    same(key, w[key], j[key]);
  }
  if (w.nAtoms !== j.nAtoms || w.nBonds !== j.nBonds) problems.push("nAtoms/nBonds differ");
  if (w.fileName !== j.fileName) problems.push(`fileName: ${w.fileName} vs ${j.fileName}`);
  return problems;
}

// The first run of each path, with heap deltas while its outputs (and, for JavaScript, the
// decoded string and parsed tree) are alive, and the wasm memory size it needed; then the
// cross-check of the two snapshots. Runs before any timed run grows the wasm memory.
async function measureMemoryAndCheck(button, bytes, memory, heapCountsWasmMemory) {
  const typedBytes = (s) =>
    ["positions", "elements", "bonds", "bondOrders", "box", "molecules", "atomChainIds", "formalCharges"]
      .reduce((sum, k) => sum + (s[k]?.byteLength ?? 0), 0);
  await settle();
  let h0 = heap();
  const m0 = memory();
  const w = wasmPath(button, bytes);
  const wasmMemoryAfterFirstRun = memory();
  // Without the wasm memory's own growth when the heap counts it.
  const wasmOutputHeapDelta = heap() - h0 - (heapCountsWasmMemory ? wasmMemoryAfterFirstRun - m0 : 0);
  void [w.snapshot.labels, w.snapshot.residueNames, w.snapshot.residueIds, w.snapshot.atomNames];
  await settle();
  const wasmOutputHeapDeltaAfterReading = heap() - h0 - (heapCountsWasmMemory ? wasmMemoryAfterFirstRun - m0 : 0);

  await settle();
  h0 = heap();
  const decoded = new TextDecoder().decode(bytes);
  const hString = heap() - h0;
  const parsed = JSON.parse(sseData(decoded));
  const hParsed = heap() - h0;
  const j = jsPath(button, bytes, true); // the string and tree above stay alive: the JS peak
  const jsPeakHeapDelta = heap() - h0;
  log(`memory: decoded string ${(hString / MB).toFixed(1)} MB, parsed tree ${((hParsed - hString) / MB).toFixed(1)} MB (JS heap), ${typeof parsed}`);

  const core = jsPath(button, bytes, false).snapshot;
  const problems = [
    ...crossCheck(w.snapshot, j.snapshot),
    ...crossCheck(w.snapshot, { ...j.snapshot, ...core }),
  ];
  w.outcome.result.free();
  const memoryReport = {
    wasmMemoryAfterFirstRun,
    wasmOutputHeapDelta,
    wasmOutputHeapDeltaAfterReading,
    wasmOutputTypedArrayBytes: typedBytes(w.snapshot),
    jsDecodedStringHeap: hString,
    jsParsedTreeHeap: hParsed - hString,
    jsPeakHeapDelta,
    jsOutputTypedArrayBytes: typedBytes(j.snapshot),
  };
  return { memoryReport, problems };
}

// Wall-clock ms (same clock as the server's time.time()), sub-ms resolution.
const wallMs = () => performance.timeOrigin + performance.now();

// The streamed-call leg: `ToolServer.call` against server.py's MCP endpoint, which sends the same
// body in 64 KiB pieces at a paced rate; last byte (the server's write time) -> plan, against the
// JS path on the same stream (fetch, arrayBuffer, then baseline.js). A second instance of the
// module (its own wasm memory, fresh) so the call path's memory growth is its own: after init,
// after the first call, after 10 calls; and the JS heap of one call's outputs.
async function streamedLeg(bytes, heapCountsWasmMemory, calls = 10) {
  const api = await import(`${PKG}/megane_builder_client.js?streamed`);
  const wasm = await api.default();
  const memory = () => wasm.memory.buffer.byteLength;
  const toolsList = await (await fetch("/tests/fixtures/megane-recorded/tools-list.json")).json();
  const button = api.parseToolList(toolsList).buttons.find((b) => b.name === "liquid_box");
  // ?length: the server announces the body's Content-Length (as a JSON-response server does).
  await fetch(query.has("length") ? "/body?length" : "/body", { method: "POST", body: bytes });
  const server = await api.connect(`${location.origin}/mcp`, { protocol: "legacy" });
  if (!server.ok) throw new Error(`connect: ${server.error}`);
  const lastWrite = async () => (await (await fetch("/last")).json()).ms;
  const report = {
    wasmMemoryAfterInit: memory(), wasmMemoryAfterFirstCall: 0, wasmMemoryAfterCalls: 0, calls,
    contentLength: query.has("length"),
    outputHeapDelta: 0, wasmLastByteToPlanMs: [], wasmCallMs: [], jsLastByteToPlanMs: [], jsCallMs: [],
  };
  for (let i = 0; i < calls; i++) {
    await settle();
    const h0 = heap();
    const m0 = memory();
    let t0 = wallMs();
    const outcome = await server.call("liquid_box", {});
    if (!outcome.ok) throw new Error(`call: ${outcome.error}`);
    const planned = api.planApply(button, outcome.result, null, {});
    let done = wallMs();
    if (!planned.ok) throw new Error(`planApply: ${planned.error}`);
    report.wasmLastByteToPlanMs.push(done - (await lastWrite()));
    report.wasmCallMs.push(done - t0);
    if (i === 0) {
      report.wasmMemoryAfterFirstCall = memory();
      await settle();
      report.outputHeapDelta = heap() - h0 - (heapCountsWasmMemory ? memory() - m0 : 0);
    }
    outcome.result.free();

    await settle();
    t0 = wallMs();
    const response = await fetch("/mcp", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1000 + i, method: "tools/call", params: { name: "liquid_box", arguments: {} } }),
    });
    const body = new Uint8Array(await response.arrayBuffer());
    const r = interpretAndPlan(body, button, { full: false });
    done = wallMs();
    if (!r.ok) throw new Error(`baseline: ${r.error}`);
    report.jsLastByteToPlanMs.push(done - (await lastWrite()));
    report.jsCallMs.push(done - t0);
    log(`streamed call ${i + 1}: wasm last byte -> plan ${report.wasmLastByteToPlanMs[i].toFixed(0)} ms, ` +
      `JS ${report.jsLastByteToPlanMs[i].toFixed(0)} ms`);
  }
  report.wasmMemoryAfterCalls = memory();
  await server.close();
  // Medians without the first call (a warm-up).
  const rest = (xs) => xs.slice(1);
  report.medians = {
    wasmLastByteToPlan: median(rest(report.wasmLastByteToPlanMs)),
    jsLastByteToPlan: median(rest(report.jsLastByteToPlanMs)),
    wasmCall: median(rest(report.wasmCallMs)),
    jsCall: median(rest(report.jsCallMs)),
  };
  report.ratio = report.medians.wasmLastByteToPlan / report.medians.jsLastByteToPlan;
  return report;
}

// ?waters=N: atoms = 3N + 2 (default 166 666 → 500 000). ?sse: the body framed as a Streamable
// HTTP server sends it (`event: message` / `data: …`), for both paths.
function generate() {
  const waters = query.has("waters") ? Number(query.get("waters")) : undefined;
  const { text, atoms, bonds } = syntheticLiquidBox(12345, [], waters);
  const body = query.has("sse") ? `event: message\ndata: ${text}\n\n` : text;
  return { atoms, bonds, bytes: new TextEncoder().encode(body) };
}

async function main() {
  const wasm = await init();
  const memory = () => wasm.memory.buffer.byteLength;
  const wasmMemoryAfterInit = memory();
  const toolsList = await (await fetch("/tests/fixtures/megane-recorded/tools-list.json")).json();
  const toolbox = parseToolList(toolsList);
  const button = toolbox.buttons.find((b) => b.name === "liquid_box");

  let t0 = performance.now();
  const { atoms, bonds, bytes } = generate();
  log(`generated ${atoms} atoms, ${bonds} bonds, ${bytes.length} bytes in ${(performance.now() - t0).toFixed(0)} ms`);

  // Does usedJSHeapSize count ArrayBuffer backing stores? (Decides how memory is reported.)
  await settle();
  const h0 = heap();
  let probe = new Float64Array(16 * MB);
  const heapCountsArrayBuffers = heap() - h0 > 64 * MB;
  probe = null;
  await settle();
  const h1 = heap();
  let probeMemory = new WebAssembly.Memory({ initial: 2048 }); // 128 MiB
  const heapCountsWasmMemory = heap() - h1 > 64 * MB;
  probeMemory = null;

  const { memoryReport, problems } = await measureMemoryAndCheck(button, bytes, memory, heapCountsWasmMemory);
  memoryReport.wasmMemoryAfterInit = wasmMemoryAfterInit;
  memoryReport.heapCountsArrayBuffers = heapCountsArrayBuffers;
  memoryReport.heapCountsWasmMemory = heapCountsWasmMemory;
  void probe, probeMemory;
  log(`cross-check: ${problems.length === 0 ? "identical" : problems.join("; ")}`);

  // Timing: one warm-up each, then RUNS rounds in rotating order, GC between runs.
  const names = ["wasm", "js", "jsFull", "jsonParseOnly", "wasmReadAll"];
  const times = Object.fromEntries(names.map((n) => [n, []]));
  const wasmSplit = { interpretCall: [], planApply: [] };
  const run = {
    wasm: () => {
      const r = wasmPath(button, bytes);
      wasmSplit.interpretCall.push(r.interpretMs);
      wasmSplit.planApply.push(r.planMs);
      r.outcome.result.free();
      return r.ms;
    },
    wasmReadAll: () => {
      const r = wasmReadAllPath(button, bytes);
      r.outcome.result.free();
      return r.ms;
    },
    js: () => jsPath(button, bytes, false).ms,
    jsFull: () => jsPath(button, bytes, true).ms,
    jsonParseOnly: () => {
      const start = performance.now();
      JSON.parse(sseData(new TextDecoder().decode(bytes)));
      return performance.now() - start;
    },
  };
  for (const n of names) {
    gc();
    run[n]();
  }
  wasmSplit.interpretCall.length = wasmSplit.planApply.length = 0;
  for (let r = 0; r < RUNS; r++) {
    for (let k = 0; k < names.length; k++) {
      const n = names[(r + k) % names.length];
      gc();
      times[n].push(run[n]());
    }
    log(`run ${r + 1}: ${names.map((n) => `${n} ${times[n][r].toFixed(0)} ms`).join(", ")}`);
  }
  memoryReport.wasmMemoryAfterAllRuns = memory();
  memoryReport.wasmBytesPathRuns = 1 + 2 + 2 * RUNS; // memory pass, warm-ups, timed (wasm, wasmReadAll)
  const calls = Number(query.get("calls") ?? 10);
  const streamed = query.has("nostream") ? null : await streamedLeg(bytes, heapCountsWasmMemory, calls);

  const medians = Object.fromEntries(names.map((n) => [n, median(times[n])]));
  const report = {
    atoms,
    bonds,
    jsonBytes: bytes.length,
    sse: query.has("sse"),
    runs: RUNS,
    pkg: PKG,
    userAgent: navigator.userAgent,
    crossCheck: { identical: problems.length === 0, problems },
    timesMs: times,
    wasmSplitMs: wasmSplit,
    mediansMs: {
      ...medians,
      wasmInterpretCall: median(wasmSplit.interpretCall),
      wasmPlanApply: median(wasmSplit.planApply),
    },
    ratio: medians.wasm / medians.js,
    // Load on a shared machine drifts: the ratio within each round (runs side by side), median.
    ratioPerRoundMedian: median(times.wasm.map((w, r) => w / times.js[r])),
    ratioVsFullSnapshot: medians.wasm / medians.jsFull,
    // Reading every lazy string channel too, against the full JavaScript snapshot.
    ratioReadAllVsFullSnapshot: medians.wasmReadAll / medians.jsFull,
    memory: memoryReport,
    streamed,
    loadAverage: await (await fetch("/loadavg")).text(),
  };
  log(`ratio wasm/js ${report.ratio.toFixed(2)} (vs full snapshot ${report.ratioVsFullSnapshot.toFixed(2)})`);
  return report;
}

// ?profile: only set up, then wait for profile.mjs to call profileRuns() under the CPU profiler.
async function profileMode() {
  await init();
  const toolsList = await (await fetch("/tests/fixtures/megane-recorded/tools-list.json")).json();
  const button = parseToolList(toolsList).buttons.find((b) => b.name === "liquid_box");
  const { bytes } = generate();
  window.profileRuns = (path, n) => {
    for (let i = 0; i < n; i++) {
      gc();
      if (path === "wasm") wasmPath(button, bytes).outcome.result.free();
      else jsPath(button, bytes, path === "jsFull");
    }
    return n;
  };
  wasmPath(button, bytes).outcome.result.free(); // warm-up
  jsPath(button, bytes, false);
  window.benchReady = true;
  log("ready for profiling");
}

// ?fields: what each Structure field costs, by leaving it out of the body (medians of 5 runs).
async function fieldsMode() {
  await init();
  const toolsList = await (await fetch("/tests/fixtures/megane-recorded/tools-list.json")).json();
  const button = parseToolList(toolsList).buttons.find((b) => b.name === "liquid_box");
  const variants = [[], ["residueNames"], ["residueIds"], ["residueNames", "residueIds"], ["molecules"],
    ["bondOrders"], ["bonds"], ["bonds", "molecules", "residueNames", "residueIds"]];
  const rows = [];
  for (const omit of variants) {
    const bytes = new TextEncoder().encode(syntheticLiquidBox(12345, omit).text);
    const t = { interpretCall: [], planApply: [], js: [] };
    for (let r = 0; r < 6; r++) {
      await settle();
      const w = wasmPath(button, bytes);
      w.outcome.result.free();
      await settle();
      const j = jsPath(button, bytes, false);
      if (r === 0) continue; // warm-up
      t.interpretCall.push(w.interpretMs);
      t.planApply.push(w.planMs);
      t.js.push(j.ms);
    }
    const row = { omit: omit.join("+") || "(nothing)", jsonBytes: bytes.length };
    for (const k of Object.keys(t)) row[k] = median(t[k]);
    rows.push(row);
    log(JSON.stringify(row));
  }
  return { fields: rows };
}

if (query.has("profile")) profileMode();
else (query.has("fields") ? fieldsMode() : main())
  .catch((e) => ({ error: String(e && e.stack ? e.stack : e) }))
  .then((report) => fetch("/results", { method: "POST", body: JSON.stringify(report) }))
  .then(() => log("posted"));
