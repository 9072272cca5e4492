// Where a slow tiny call's time goes: run.mjs's procedure (PACK_WASM_WARMUP untimed calls, then
// PACK_WASM_REPEAT timed calls of `offlineTools().call` on one case and seed, headless Chromium,
// single-threaded build) with every timed call's segments stamped on both threads by
// performance.timeOrigin + performance.now() (the page is cross-origin isolated: 5 µs clocks):
//   pre      call() entry -> the call message posted (queue, refuse, timeout set-up)
//   toWorker page post -> the Worker's message handler starts (delivery + the Worker's wake-up)
//   worker   the Worker's handler -> its result posted (offlineCall, mostly)
//   toPage   Worker post -> the page's first message listener (delivery + the page's wake-up)
//   after    page receive -> call() resolved to the bench (interpretOfflineCall, promise hops)
// The Worker is the package's own offline-worker.js wrapped by a generated module that stamps its
// messages (nothing in the package changes); the page's Worker constructor is wrapped likewise.
// Prints per segment the median, p10, p90 of the timed calls; every call's segments with VERBOSE=1.
// Diagnosis switches (issue 12: the slow calls among run.mjs's 51 after 100 are V8 still tiering
// the code up, its compile jobs competing for the cores): ECHO=1 runs the same loop against an echo Worker
// (no wasm, the same message shape); WORKER_WARMUP=N has the Worker run N calls of the case by
// itself before it says ready (their time: workerWarmMs); JS_FLAGS="--no-liftoff" etc. launches
// Chromium with those V8 flags; TRACE=FILE records a Chrome trace per run (FILE-RUN.json, all
// threads, user-timing marks per timed call) for segments_trace.py.
// Usage: node benches/pack_wasm/segments.mjs [PKG_DIR] [CASE] [RUNS]   (default pkg, tiny-5-water,
// 1 run; each run a fresh page). PKG_DIR relative to the repository, e.g. artifacts/base-pkg.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { launchBrowser, openPage, startServer, ROOT } from "../../tests/node/harness.mjs";
import { CASES } from "./cases.mjs";

const [dir = "pkg", caseName = "tiny-5-water", runsArg = "1"] = process.argv.slice(2);
const WARMUP = Number(process.env.PACK_WASM_WARMUP ?? 100);
const REPEAT = Number(process.env.PACK_WASM_REPEAT ?? 51);
const stampDir = join(ROOT, "artifacts", "segments");
mkdirSync(stampDir, { recursive: true });
const wrapper = `stamp-${dir.replace(/[^A-Za-z0-9]/g, "_")}-${process.env.WORKER_WARMUP ?? 0}.js`;
// Static import: the package's Worker sets self.onmessage when it is evaluated, then this wraps it.
const [warmTool, warmArgs] = CASES[caseName];
writeFileSync(join(stampDir, wrapper), `import "/${dir}/offline-worker.js";
import { offlineCall } from "/${dir}/megane_builder_client.js";
const stamp = () => performance.timeOrigin + performance.now();
const post = self.postMessage.bind(self);
let recv = 0;
const mark = ${process.env.TRACE ? "true" : "false"};
self.postMessage = (m, t) => {
  if (m?.type === "ready") {
    const t0 = performance.now();
    for (let i = 0; i < ${Number(process.env.WORKER_WARMUP ?? 0)}; i++) offlineCall(${JSON.stringify(warmTool)}, { ...${JSON.stringify(warmArgs)}, seed: 5000 + i, tolerance: 2.0 }, () => {});
    m.warmMs = performance.now() - t0;
  }
  if (m?.type === "result") { m.stamps = { recv, post: stamp() }; if (mark) performance.mark(\`w\${m.id}:post\`); }
  post(m, t);
};
const inner = self.onmessage;
self.onmessage = (e) => { recv = stamp(); if (mark && e.data?.id) performance.mark(\`w\${e.data.id}:recv\`); return inner(e); };
`);
writeFileSync(join(stampDir, "echo.js"), `const stamp = () => performance.timeOrigin + performance.now();
self.onmessage = (e) => {
  const recv = stamp();
  const bytes = new Uint8Array(e.data.n ?? 1);
  self.postMessage({ type: "result", id: e.data.id, bytes, progress: null, stamps: { recv, post: stamp() } }, [bytes.buffer]);
};
`);

const TRACE_CATEGORIES = ["toplevel", "v8", "v8.wasm", "v8.execute", "disabled-by-default-v8.gc", "disabled-by-default-v8.compile",
  "devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing", "blink", "scheduler", "v8.gc"];
const server = await startServer();
const browser = await launchBrowser(process.env.JS_FLAGS ? [`--js-flags=${process.env.JS_FLAGS}`] : []);
const [tool, args] = CASES[caseName];
for (let run = 0; run < Number(runsArg); run++) {
  const page = await openPage(browser, `${server.url}/tests/node/pages/blank.html`);
  const trace = process.env.TRACE ? process.env.TRACE.replace(/(\.json)?$/, `-${run}.json`) : null;
  if (trace) await browser.startTracing(page, { path: trace, categories: TRACE_CATEGORIES });
  const result = await page.evaluate(async ({ dir, wrapper, tool, args, warmup, repeat, echo, mark }) => {
    const stamp = () => performance.timeOrigin + performance.now();
    const log = new Map();
    let warmMs = null;
    const Base = window.Worker;
    window.Worker = class extends Base {
      constructor(...a) {
        super(...a);
        this.addEventListener("message", (e) => {
          if (e.data?.type === "ready") warmMs = e.data.warmMs;
          if (e.data?.type === "result") log.set(e.data.id, { ...log.get(e.data.id), ...e.data.stamps, recvPage: stamp() });
        });
      }
      postMessage(m, t) {
        if (m?.type === "call") log.set(m.id, { postPage: stamp() });
        return super.postMessage(m, t);
      }
    };
    const offline = await import(`/${dir}/offline.js`);
    const pkg = await import(`/${dir}/megane_builder_client.js`);
    await pkg.default();
    // here: false: every call through the (stamped) Worker, the path these segments are of (a
    // call this small would otherwise run on the page's own thread).
    const tools = offline.offlineTools({ threads: false, here: false, workerUrl: `/artifacts/segments/${wrapper}` });
    for (let i = 0; i < warmup; i++) await tools.call(tool, { ...args, seed: 1001, tolerance: 2.0 });
    const rows = [];
    // Worker ids count from 1 per tools object; the timed calls are warmup+1 .. warmup+repeat.
    for (let i = 0; i < repeat; i++) {
      if (mark) performance.mark(`c${warmup + 1 + i}:start`);
      const t0 = stamp();
      const outcome = await tools.call(tool, { ...args, seed: 1, tolerance: 2.0 });
      const t1 = stamp();
      if (mark) performance.mark(`c${warmup + 1 + i}:end`);
      if (!outcome.ok) throw new Error(outcome.error);
      const s = log.get(warmup + 1 + i);
      rows.push({ total: t1 - t0, pre: s.postPage - t0, toWorker: s.recv - s.postPage, worker: s.post - s.recv, toPage: s.recvPage - s.post, after: t1 - s.recvPage });
    }
    await tools.close();
    const echoRows = [];
    if (echo) {
      log.clear();
      const w = new window.Worker("/artifacts/segments/echo.js");
      let id = 0;
      const once = () => new Promise((resolve) => {
        const my = ++id;
        const t0 = stamp();
        w.onmessage = () => resolve({ t0, my });
        w.postMessage({ type: "call", id: my, name: tool, args: { ...args, seed: 1, tolerance: 2.0 }, n: 2000 });
      });
      for (let i = 0; i < warmup; i++) await once();
      for (let i = 0; i < repeat; i++) {
        const { t0, my } = await once();
        const t1 = stamp();
        const s = log.get(my);
        echoRows.push({ total: t1 - t0, pre: s.postPage - t0, toWorker: s.recv - s.postPage, worker: s.post - s.recv, toPage: s.recvPage - s.post, after: t1 - s.recvPage });
      }
      w.terminate();
    }
    return { rows, echoRows, warmMs };
  }, { dir, wrapper, tool, args, warmup: WARMUP, repeat: REPEAT, echo: process.env.ECHO === "1", mark: Boolean(trace) });
  if (trace) await browser.stopTracing();
  await page.close();
  const summary = (rows) => {
    const out = {};
    for (const k of Object.keys(rows[0] ?? {})) {
      const v = rows.map((r) => r[k]).sort((a, b) => a - b);
      const at = (q) => Number(v[Math.floor((v.length - 1) * q)].toFixed(3));
      out[k] = [at(0.5), at(0.1), at(0.9)];
    }
    return out;
  };
  console.log(JSON.stringify({ run, dir, case: caseName, workerWarmMs: result.warmMs, segments: "[median, p10, p90] ms", call: summary(result.rows), ...(result.echoRows.length ? { echo: summary(result.echoRows) } : {}) }));
  if (process.env.VERBOSE === "1") {
    for (const [name, rows] of [["call", result.rows], ["echo", result.echoRows]]) {
      for (const r of rows) console.log(name, Object.entries(r).map(([k, x]) => `${k} ${x.toFixed(3)}`).join("  "));
    }
  }
}
await browser.close();
server.stop();
