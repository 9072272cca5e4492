// Two package builds side by side in one headless Chromium page (single-threaded builds): each
// build's `offlineTools().call` on the same small case, in alternating blocks of 25 calls after 100
// warm-up calls each, so a change in the machine's load during the run falls on both builds alike
// (bench-pack-wasm.sh's BASE_PKG runs one build after the other; on a loaded machine the second
// often loses). Prints one JSON line: the case and per build the median, p10 and p90 (ms).
// Usage: node benches/pack_wasm/ab.mjs DIR_A DIR_B [CASE] [CALLS]   (directories relative to the
// repository, e.g. pkg and a copy of main's pkg; CASE a key of cases.mjs, default tiny-5-water;
// CALLS per build, default 400). Seeds 0..CALLS-1, tolerance 2 Å, as run.mjs.
import { launchBrowser, openPage, startServer } from "../../tests/node/harness.mjs";
import { CASES } from "./cases.mjs";

const [a, b, caseName = "tiny-5-water", callsArg = "400"] = process.argv.slice(2);
if (!a || !b || !CASES[caseName]) {
  console.error(`usage: node benches/pack_wasm/ab.mjs DIR_A DIR_B [${Object.keys(CASES).join("|")}] [CALLS]`);
  process.exit(2);
}
const BLOCK = 25;
const server = await startServer();
const browser = await launchBrowser();
const page = await openPage(browser, `${server.url}/tests/node/pages/blank.html`);
const [tool, args] = CASES[caseName];
const result = await page.evaluate(async ({ dirs, tool, args, calls, block }) => {
  const servers = [];
  for (const dir of dirs) {
    const offline = await import(`/${dir}/offline.js`);
    const pkg = await import(`/${dir}/megane_builder_client.js`);
    await pkg.default();
    servers.push(offline.offlineTools({ threads: false }));
  }
  const call = async (server, seed) => {
    const outcome = await server.call(tool, { ...args, seed, tolerance: 2.0 });
    if (!outcome.ok) throw new Error(outcome.error);
  };
  for (let i = 0; i < 100; i++) for (const server of servers) await call(server, 100000 + i);
  const times = servers.map(() => []);
  for (let start = 0; start < calls; start += block) {
    for (const [k, server] of servers.entries()) {
      for (let seed = start; seed < Math.min(start + block, calls); seed++) {
        const t0 = performance.now();
        await call(server, seed);
        times[k].push(performance.now() - t0);
      }
    }
  }
  for (const server of servers) await server.close();
  return times.map((v) => {
    v.sort((x, y) => x - y);
    const at = (q) => Number(v[Math.floor((v.length - 1) * q)].toFixed(4));
    return { median: at(0.5), p10: at(0.1), p90: at(0.9), calls: v.length };
  });
}, { dirs: [a, b], tool, args, calls: Number(callsArg), block: BLOCK });
console.log(JSON.stringify({ case: caseName, [a]: result[0], [b]: result[1] }));
await browser.close();
server.stop();
