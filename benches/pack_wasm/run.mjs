// Packing in wasm, in headless Chromium, on the baseline cases a–f: the offline tools' Worker on the
// single-threaded build and on the threaded build with 2 threads (the page is cross-origin isolated).
// Each structure is written to OUT/<case>-<threads>t.json for check_packing.py. Prints JSON lines
// {case, threads, atoms, ms} on stdout. Usage: node run.mjs OUT CASES SEEDS
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { launchBrowser, molblock, openPage, startServer, SHARED } from "../../tests/node/harness.mjs";
import { readFileSync } from "node:fs";

const [out, casesArg = "a,b,c,d,e", seedsArg = "1"] = process.argv.slice(2);
const water = { name: "water", molblock: molblock("water") };
const ethanol = { name: "ethanol", molblock: molblock("ethanol") };
const benzene = { name: "benzene", molblock: molblock("benzene") };
const caffeineDoc = JSON.parse(readFileSync(join(SHARED, "fixtures", "packed", "solvate_caffeine_box40.document.json"), "utf8"));
const CASES = {
  a: ["liquid_box", { components: [{ molecule: water, count: 1000 }], density: 1.0 }],
  b: ["liquid_box", { components: [{ molecule: water, count: 10000 }], density: 1.0 }],
  c: ["liquid_box", { components: [{ molecule: water, count: 900 }, { molecule: ethanol, count: 100 }], density: 0.95 }],
  d: ["liquid_box", { components: [{ molecule: benzene, count: 2000 }], density: 0.87 }],
  e: ["solvate", { document: caffeineDoc.structure ?? caffeineDoc, solvent: water, density: 1.0 }],
  f: ["liquid_box", { components: [{ molecule: water, count: 100000 }], density: 1.0 }],
};

const server = await startServer();
const browser = await launchBrowser();
const page = await openPage(browser, `${server.url}/tests/node/pages/blank.html`);
await page.evaluate(async () => {
  window.offline = await import("/pkg/offline.js");
  const pkg = await import("/pkg/megane_builder_client.js");
  await pkg.default();
});
for (const threads of [1, 2]) {
  for (const key of casesArg.split(",")) {
    for (const seed of seedsArg.split(",").map(Number)) {
      const [tool, args] = CASES[key];
      const result = await page.evaluate(async ({ tool, args, threads, seed }) => {
        const tools = window.offline.offlineTools({ threads: threads > 1, threadCount: threads });
        // Warm-up on the same case with another seed: the timed call measures packing, not the
        // Worker's start or the JIT's first tier.
        await tools.call(tool, { ...args, seed: seed + 1000, tolerance: 2.0 }, { timeoutMs: 1_800_000 });
        const t0 = performance.now();
        const outcome = await tools.call(tool, { ...args, seed, tolerance: 2.0 }, { timeoutMs: 1_800_000 });
        const ms = performance.now() - t0;
        const used = tools.threads;
        await tools.close();
        if (!outcome.ok) return { error: outcome.error };
        return { ms, used, warnings: outcome.warnings, json: JSON.stringify(outcome.result.toJSON().structure) };
      }, { tool, args, threads, seed });
      if (result.error) {
        console.log(JSON.stringify({ case: key, threads, seed, error: result.error }));
        continue;
      }
      const file = join(out, `${key}-${threads}t-s${seed}.json`);
      writeFileSync(file, result.json);
      const atoms = JSON.parse(result.json).elements.length;
      console.log(JSON.stringify({ case: key, threads: result.used, seed, atoms, ms: result.ms, warnings: result.warnings, file }));
    }
  }
}
await browser.close();
server.stop();
