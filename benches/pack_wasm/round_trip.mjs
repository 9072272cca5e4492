// Where a tiny offline call's time goes, in headless Chromium (single-threaded build): the whole
// `offlineTools().call` as a page sees it (`call`: a call of at most 200 atoms runs on the page's
// own thread; `callInWorker`: the same with `here: false`, through the Worker), and its parts
// measured one at a time on the same case —
//   wasm       `offlineCall` on the page's thread (what the Worker runs),
//   workerWasm `offlineCall` timed inside a module Worker by the Worker's clock,
//   worker     a call message to the offline Worker and its result back (offlineCall + messaging),
//   echo       a message to a Worker that answers at once (the messaging floor of this machine),
//   interpret  `interpretOfflineCall(button, bytes)` on the page,
//   refuse     `refuseCall(toolbox, name)` + `callTimeoutMs` (the checks before posting),
//   plan       `planApply(button, result, null)` (what a host does next; not part of call()).
// Medians of REPEAT warm runs (ms). Usage: node benches/pack_wasm/round_trip.mjs [CASES] [REPEAT]
// (default t5w,t5c and 60). Needs pkg/ (THREADS=0 bash scripts/build.sh). One JSON line per case.
import { launchBrowser, openPage, startServer } from "../../tests/node/harness.mjs";
import { CASES as SMALL } from "./cases.mjs";

const NAMES = { t5w: "tiny-5-water", t5c: "tiny-5-chloroform", sala: "solvate-alanine-dipeptide-20A", stst: "solvate-testosterone-24A" };
const [casesArg = "t5w,t5c", repeatArg = "60"] = process.argv.slice(2);
const repeat = Number(repeatArg);

const server = await startServer();
const browser = await launchBrowser();
const page = await openPage(browser, `${server.url}/tests/node/pages/blank.html`);
await page.evaluate(async () => {
  window.offline = await import("/pkg/offline.js");
  window.pkg = await import("/pkg/megane_builder_client.js");
  await window.pkg.default();
});
for (const key of casesArg.split(",")) {
  const [tool, args] = SMALL[NAMES[key] ?? key];
  const result = await page.evaluate(async ({ tool, args, repeat }) => {
    const { pkg, offline } = window;
    const median = async (f) => {
      for (let i = 0; i < 5; i++) await f(1000 + i);
      const times = [];
      for (let i = 0; i < repeat; i++) {
        const t0 = performance.now();
        await f(i);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      return Number(times[times.length >> 1].toFixed(4));
    };
    const tools = offline.offlineTools({ threads: false });
    const button = tools.toolbox.buttons.find((b) => b.name === tool);
    const call = await median((seed) => tools.call(tool, { ...args, seed, tolerance: 2.0 }));
    await tools.close();
    const inWorkerTools = offline.offlineTools({ threads: false, here: false });
    const callInWorker = await median((seed) => inWorkerTools.call(tool, { ...args, seed, tolerance: 2.0 }));
    await inWorkerTools.close();

    const wasm = await median((seed) => pkg.offlineCall(tool, { ...args, seed, tolerance: 2.0 }, () => {}));
    const bytes = pkg.offlineCall(tool, { ...args, seed: 1, tolerance: 2.0 }, null);

    const worker = new Worker("/pkg/offline-worker.js", { type: "module" });
    await new Promise((resolve) => {
      worker.onmessage = (e) => { if (e.data.type === "ready") resolve(); };
      worker.postMessage({ type: "init", wasmUrl: null, threadsWasmUrl: null, threads: false, threadCount: null });
    });
    const viaWorker = await median((seed) => new Promise((resolve) => {
      worker.onmessage = (e) => { if (e.data.type === "result") resolve(); };
      worker.postMessage({ type: "call", id: seed, name: tool, args: { ...args, seed, tolerance: 2.0 } });
    }));
    worker.terminate();

    const w = new Worker("/benches/pack_wasm/echo-worker.js");
    const echo = await median((seed) => new Promise((resolve) => {
      w.onmessage = () => resolve();
      w.postMessage({ type: "call", id: seed, name: tool, args: { ...args, seed }, n: bytes.length });
    }));
    w.terminate();

    // offlineCall timed inside a Worker: the median of the Worker's own clock.
    const timed = new Worker("/benches/pack_wasm/timed-worker.js", { type: "module" });
    const inside = [];
    await median((seed) => new Promise((resolve) => {
      timed.onmessage = (e) => { if (seed < 1000) inside.push(e.data.ms); resolve(); };
      timed.postMessage({ id: seed, name: tool, args: { ...args, seed, tolerance: 2.0 } });
    }));
    timed.terminate();
    inside.sort((a, b) => a - b);
    const workerWasm = Number(inside[inside.length >> 1].toFixed(4));

    const interpret = await median(() => { pkg.interpretOfflineCall(button, bytes.slice()); });
    const refuse = await median(() => { pkg.refuseCall(tools.toolbox, tool); pkg.callTimeoutMs(button.marker.expectedSeconds ?? undefined, undefined); });
    const outcome = pkg.interpretOfflineCall(button, bytes);
    const plan = await median(() => { pkg.planApply(button, outcome.result, null); });
    return { call, callInWorker, wasm, workerWasm, worker: viaWorker, echo, interpret, refuse, plan, bytes: bytes.length };
  }, { tool, args, repeat });
  console.log(JSON.stringify({ case: key, ...result }));
}
await browser.close();
server.stop();
