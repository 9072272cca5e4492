// The threaded build in a cross-origin-isolated page (scripts/serve.py sends COOP/COEP): the offline
// Worker packs on a rayon pool of Workers and gives the same structure as the single-threaded build;
// the lazy loader loads on first use and retries a failed load.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launchBrowser, molblock, openPage, startServer } from "./harness.mjs";

let server, browser, page;
const errors = [];

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  page = await openPage(browser, `${server.url}/tests/node/pages/blank.html`, errors);
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test("the threaded offline Worker gives the same structure as the single-threaded one", async () => {
  const outcome = await page.evaluate(async (water) => {
    const { loadBuilderClient } = await import("/pkg/loader.js");
    const client = await loadBuilderClient();
    const args = { components: [{ molecule: { name: "water", molblock: water }, count: 100 }], seed: 42 };
    const run = async (threads) => {
      const tools = client.offlineTools({ threads, threadCount: 2 });
      const t0 = performance.now();
      const result = await tools.call("liquid_box", args);
      const ms = performance.now() - t0;
      const used = tools.threads;
      await tools.close();
      if (!result.ok) return { error: result.error };
      return { used, ms, notices: tools.notices, positions: result.result.toJSON().structure.positions };
    };
    const single = await run(false);
    const threaded = await run(true);
    return { isolated: self.crossOriginIsolated, threadedFlag: client.threaded, single, threaded };
  }, molblock("water"));
  assert.equal(outcome.isolated, true, "the test page is cross-origin isolated");
  assert.equal(outcome.threadedFlag, true);
  assert.equal(outcome.single.error, undefined, outcome.single.error);
  assert.equal(outcome.threaded.error, undefined, outcome.threaded.error);
  assert.equal(outcome.single.used, 1);
  assert.equal(outcome.threaded.used, 2, JSON.stringify(outcome.threaded.notices));
  assert.equal(outcome.single.positions.length, 900);
  assert.deepEqual(outcome.threaded.positions, outcome.single.positions, "bit-identical with 1 and 2 threads");
  console.log(`100 water: ${outcome.single.ms.toFixed(0)} ms on 1 thread, ${outcome.threaded.ms.toFixed(0)} ms on 2 (first call includes loading)`);
});

test("the loader downloads nothing before first use and retries a failed load", async () => {
  // A fresh page: nothing of the package is loaded yet.
  const fresh = await openPage(browser, `${server.url}/tests/node/pages/blank.html`, errors);
  const outcome = await fresh.evaluate(async () => {
    const before = performance.getEntriesByType("resource").filter((e) => e.name.endsWith(".wasm")).length;
    const loaderModule = await import("/pkg/loader.js");
    const afterImport = performance.getEntriesByType("resource").filter((e) => e.name.endsWith(".wasm")).length;
    let firstError = null;
    try {
      await loaderModule.loadBuilderClient({ wasmUrl: "/pkg/does-not-exist.wasm" });
    } catch (error) {
      firstError = String(error.message ?? error);
    }
    const client = await loaderModule.loadBuilderClient({ wasmUrl: "/pkg/megane_builder_client_bg.wasm" });
    return { before, afterImport, firstError, works: client.api.callTimeoutMs(20) };
  });
  await fresh.close();
  assert.equal(outcome.afterImport, outcome.before, "importing the loader fetches no .wasm");
  assert.ok(outcome.firstError, "a bad URL fails the first load");
  assert.equal(outcome.works, 100000, "the next call loads again and works");
});

test("no page errors", () => {
  // The deliberately missing .wasm of the retry test is the only expected failure.
  const unexpected = errors.filter((e) => !e.includes("404 (File not found)"));
  assert.deepEqual(unexpected, []);
});
