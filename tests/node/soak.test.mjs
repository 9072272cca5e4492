// Soak in headless Chromium against the Python SDK peer (tests/peers/builder_peer.py): one
// ToolServer makes SOAK_CALLS (default 1 000) sequential calls and rounds of 20 concurrent ones,
// every 10th cancelled at its first progress. Counts are asserted: every result valid (300 atoms)
// or cancelled, no JSON-RPC id or progress token sent twice (read from the page's own fetch
// calls), the server saw every cancel; wasm memory must not grow after warm-up and the JS heap
// (after a forced GC) stays within a bound. Not a timed test: the figures are printed for the note.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { AUTO_PROBE_CONSOLE, ROOT, FIXTURES, launchBrowser, openPage, startServer, startBuilderPeer } from "./harness.mjs";

const TOKEN = "peer-token-soak-5e1d";
const RECORDED = join(FIXTURES, "megane-recorded");
const SEQUENTIAL = Number(process.env.SOAK_CALLS ?? 1000);
const ROUNDS = 5;
const CONCURRENT = 20;
let web, browser, page, peer, cdp;
const errors = [];

function startPeer(origin) {
  return startBuilderPeer(origin, TOKEN, RECORDED, ["--steps", "2", "--step-seconds", "0.03"]);
}

async function memory() {
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("HeapProfiler.collectGarbage");
  const { usedSize } = await cdp.send("Runtime.getHeapUsage");
  const wasmBytes = await page.evaluate(() => window.wasmExports.memory.buffer.byteLength);
  return { jsHeap: usedSize, wasm: wasmBytes };
}

before(async () => {
  web = await startServer();
  peer = await startPeer(web.url);
  browser = await launchBrowser();
  // The default protocol "auto" probes 2026-07-28 first: the browser logs the refused preflight.
  page = await openPage(browser, `${web.url}/tests/node/pages/blank.html`, errors, AUTO_PROBE_CONSOLE);
  cdp = await page.context().newCDPSession(page);
  const args = JSON.parse(readFileSync(join(RECORDED, "call-liquid_box.json"), "utf8")).arguments;
  await page.evaluate(async ({ url, token, args }) => {
    window.pkg = await import("/pkg/megane_builder_client.js");
    window.wasmExports = await window.pkg.default();
    // Every JSON-RPC message the client sends, read where it leaves: the page's fetch.
    window.sent = [];
    const realFetch = window.fetch.bind(window);
    window.fetch = (input, init) => {
      if (init?.body) {
        // Only what is checked is kept, so that the heap figure is the client's, not this log's.
        try {
          const m = JSON.parse(new TextDecoder().decode(init.body));
          window.sent.push({ id: m.id, method: m.method, params: { _meta: { progressToken: m.params?._meta?.progressToken } } });
        } catch { /* not JSON */ }
      }
      return realFetch(input, init);
    };
    window.server = await window.pkg.connect(url, { token });
    if (!window.server.ok) throw new Error(window.server.error);
    window.tally = { ok: 0, cancelled: 0, bad: [] };
    // One call; `cancel`: aborted at its first progress.
    window.one = async (cancel) => {
      const controller = new AbortController();
      const options = cancel ? { signal: controller.signal, onProgress: () => controller.abort() } : {};
      const outcome = await window.server.call("liquid_box", args, options);
      if (cancel) {
        if (outcome.ok === false && outcome.cancelled === true && outcome.result === undefined) window.tally.cancelled++;
        else window.tally.bad.push(JSON.stringify(outcome).slice(0, 200));
      } else if (outcome.ok === true && outcome.result.atomCount === 300 && outcome.warnings.length === 0) {
        window.tally.ok++;
        outcome.result.free();
      } else window.tally.bad.push(JSON.stringify(outcome).slice(0, 200));
    };
  }, { url: `${peer.url}/mcp`, token: TOKEN, args });
});

after(async () => {
  await browser?.close();
  peer?.child.kill();
  web?.stop();
});

test(`soak: ${SEQUENTIAL} sequential and ${ROUNDS}×${CONCURRENT} concurrent calls, cancels mixed in`, async () => {
  // Warm-up: 50 sequential calls (5 cancelled) and two concurrent rounds, so that the allocator's
  // high-water mark and the JIT settle (how many of 20 calls overlap mid-answer varies from round
  // to round; one round left the mark a page or two short of what five rounds reach).
  await page.evaluate(async (width) => {
    for (let i = 0; i < 50; i++) await window.one(i % 10 === 9);
    for (let r = 0; r < 2; r++) {
      await Promise.all(Array.from({ length: width }, (_, i) => window.one(i % 10 === 9)));
    }
  }, CONCURRENT);
  const warm = await memory();
  const t0 = Date.now();
  await page.evaluate(async (n) => { for (let i = 0; i < n; i++) await window.one(i % 10 === 9); }, SEQUENTIAL);
  const afterSequential = await memory();
  const t1 = Date.now();
  await page.evaluate(async ({ rounds, width }) => {
    for (let r = 0; r < rounds; r++) {
      await Promise.all(Array.from({ length: width }, (_, i) => window.one(i % 10 === 9)));
    }
  }, { rounds: ROUNDS, width: CONCURRENT });
  const afterConcurrent = await memory();
  const t2 = Date.now();
  const report = await page.evaluate(async () => {
    await window.server.close();
    const requests = window.sent.filter((m) => m && m.id !== undefined && m.method);
    const calls = requests.filter((m) => m.method === "tools/call");
    const tokens = calls.map((m) => m.params?._meta?.progressToken);
    const cancels = window.sent.filter((m) => m?.method === "notifications/cancelled");
    return {
      tally: window.tally, requests: requests.length, uniqueIds: new Set(requests.map((m) => JSON.stringify(m.id))).size,
      calls: calls.length, tokens: tokens.filter((t) => t !== undefined).length, uniqueTokens: new Set(tokens.map(String)).size,
      cancelNotes: cancels.length,
    };
  });
  const seen = await (await fetch(`${peer.url}/peer/cancellations`)).json();
  const total = 50 + 2 * CONCURRENT + SEQUENTIAL + ROUNDS * CONCURRENT;
  const cancelled = 5 + 2 * 2 + SEQUENTIAL / 10 + ROUNDS * 2;
  console.log(JSON.stringify({
    total, cancelled, requests: report.requests, cancelNotes: report.cancelNotes, seconds: { sequential: (t1 - t0) / 1000, concurrent: (t2 - t1) / 1000 },
    memory: { warm, afterSequential, afterConcurrent }, serverCalls: seen.calls.length, serverCancellations: seen.cancellations.length,
  }));
  assert.deepEqual(report.tally.bad, []);
  assert.equal(report.tally.ok, total - cancelled);
  assert.equal(report.tally.cancelled, cancelled);
  assert.equal(report.calls, total, "every call sent once");
  assert.equal(report.uniqueIds, report.requests, "no JSON-RPC id reused");
  assert.equal(report.tokens, total);
  assert.equal(report.uniqueTokens, total, "no progress token reused");
  // A cancel told the server unless the answer had already arrived (then it is just dropped).
  assert.ok(report.cancelNotes <= cancelled && report.cancelNotes >= cancelled * 0.8, `${report.cancelNotes} cancel notifications`);
  assert.ok(seen.cancellations.length <= report.cancelNotes);
  assert.equal(seen.calls.length, total);
  assert.equal(new Set(seen.calls.map((c) => JSON.stringify(c.requestId))).size, total, "the server saw no id twice");
  // wasm memory never shrinks; after warm-up it may grow by at most one 64 KiB page.
  assert.ok(afterConcurrent.wasm - warm.wasm <= 65536, `wasm memory grew by ${afterConcurrent.wasm - warm.wasm} bytes`);
  // JS heap after a forced GC: within 4 MB of the warm-up figure.
  assert.ok(afterConcurrent.jsHeap - warm.jsHeap < 4e6, `JS heap grew by ${afterConcurrent.jsHeap - warm.jsHeap} bytes`);
});

test("no page errors", () => {
  assert.deepEqual(errors, []);
});
