// offlineTools() in headless Chromium: a liquid box built in a Worker with progress events, the
// result interpreted and planned by the same contract path, a small call on the page's own thread,
// a cancelled call, solvate, and a polymer chain.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { launchBrowser, molblock, openPage, ROOT, startServer } from "./harness.mjs";

let server, browser, page;
const errors = [];

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  page = await openPage(browser, `${server.url}/tests/node/pages/blank.html`, errors);
  await page.evaluate(async () => {
    const pkg = await import("/pkg/megane_builder_client.js");
    await pkg.default();
    window.pkg = pkg;
    window.offline = await import("/pkg/offline.js");
  });
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test("§6 an unknown tool is refused on every call, before and after a listed one runs", async () => {
  const outcome = await page.evaluate(async (water) => {
    const tools = window.offline.offlineTools();
    const args = { components: [{ molecule: { name: "water", molblock: water }, count: 5 }], seed: 1 };
    const calls = [];
    for (const name of ["nope", "nope", "liquid_box", "liquid_box", "nope", "polymer_chain "]) {
      const result = await tools.call(name, args);
      calls.push(result.ok ? "ok" : result.error);
    }
    await tools.close();
    return calls;
  }, molblock("water"));
  assert.deepEqual(outcome, ["Unknown tool: nope", "Unknown tool: nope", "ok", "ok", "Unknown tool: nope", "Unknown tool: polymer_chain"]);
});

test("a 100-water box is built in a Worker with progress, then planned as a new document", async () => {
  const outcome = await page.evaluate(async (water) => {
    const tools = window.offline.offlineTools();
    const button = tools.toolbox.buttons.find((b) => b.name === "liquid_box");
    const context = { library: [{ name: "water", molblock: water }], randomSeed: 5 };
    const built = window.pkg.buildArguments(button, window.pkg.initialValues(button, context), context);
    const progress = [];
    const t0 = performance.now();
    const result = await tools.call("liquid_box", built.arguments, { onProgress: (f, m) => progress.push([f, m]) });
    const ms = performance.now() - t0;
    if (!result.ok) return { error: result.error };
    const planned = window.pkg.planApply(button, result.result, null, {});
    await tools.close();
    return {
      ms, summary: result.summary, warnings: result.warnings, progress,
      mode: planned.plan.mode, atoms: planned.plan.snapshot.nAtoms,
      positionsType: planned.plan.snapshot.positions.constructor.name,
      mainThreadIsolated: self.crossOriginIsolated,
    };
  }, molblock("water"));
  assert.equal(outcome.error, undefined, outcome.error);
  assert.equal(outcome.mode, "new_document");
  assert.equal(outcome.atoms, 300);
  assert.equal(outcome.positionsType, "Float32Array");
  assert.match(outcome.summary, /^Liquid box: 100 water in a 14\.4 x 14\.4 x 14\.4 Å box/);
  assert.deepEqual(outcome.warnings, []);
  // A call that ends within 100 ms reports once, its last report with its result (offline-worker.js);
  // a slower one (a loaded machine) more often. Either way the last report is the result's writing.
  assert.ok(outcome.progress.length >= 1, `progress events: ${JSON.stringify(outcome.progress)}`);
  assert.deepEqual(outcome.progress.at(-1), [1, "writing 300 atoms"]);
  const fractions = outcome.progress.map(([f]) => f);
  assert.deepEqual(fractions, [...fractions].sort((a, b) => a - b), "progress only moves forward");
  assert.ok(fractions.every((f) => f >= 0 && f <= 1));
  assert.ok(outcome.progress.every(([, m]) => typeof m === "string" && m.length > 0));
  console.log(`100 water: ${outcome.ms.toFixed(0)} ms in the Worker (${outcome.progress.length} progress events)`);
});

test("a small call runs on the page's thread with the Worker's structure; a larger or a slow one goes to the Worker", async () => {
  const outcome = await page.evaluate(async ({ water, caffeine }) => {
    const json = (o) => (o.ok ? JSON.stringify(o.result.toJSON().structure) : o.error);
    const tools = window.offline.offlineTools({ threads: false });
    const inWorker = window.offline.offlineTools({ threads: false, here: false });
    const small = { components: [{ molecule: { name: "water", molblock: water }, count: 5 }], seed: 3 };
    const progress = [];
    const t0 = performance.now();
    const here = await tools.call("liquid_box", small, { onProgress: (f, m) => progress.push([f, m]) });
    const hereMs = performance.now() - t0;
    const threadsAfterSmall = tools.threads;
    const there = await inWorker.call("liquid_box", small);
    // 100 water (300 atoms): above the page's 200, so the Worker starts.
    const larger = await tools.call("liquid_box", { ...small, components: [{ ...small.components[0], count: 100 }] });
    const threadsAfterLarger = tools.threads;
    // 8 caffeine (192 atoms) this dense: ~150 ms of packing, given up on the page at 16 ms.
    const slowArgs = { components: [{ molecule: { name: "caffeine", molblock: caffeine }, count: 8 }], seed: 2, density: 1.5, tolerance: 2.2 };
    const fresh = window.offline.offlineTools({ threads: false });
    const slowProgress = [];
    const slow = await fresh.call("liquid_box", slowArgs, { onProgress: (f, m) => slowProgress.push([f, m]) });
    const slowThreads = fresh.threads;
    const slowThere = await inWorker.call("liquid_box", slowArgs);
    for (const t of [tools, inWorker, fresh]) await t.close();
    // A call whose arguments show it is too large is declined before they are read (so before
    // they are checked: these are no molecule), one that may fit is answered (here, the error).
    const { offlineCallHere } = window.pkg;
    // Given up on the page (liquid_box has run here before: a 16 ms deadline), it reports nothing.
    const directReports = [];
    const givenUp = offlineCallHere("liquid_box", slowArgs, (f, m, last) => directReports.push([f, m, last])) === undefined;
    const bad = (count) => ({ components: [{ molecule: "not a molecule", count }], seed: 1 });
    const declinedUnread = offlineCallHere("liquid_box", bad(1000), null) === undefined;
    const answeredError = offlineCallHere("liquid_box", bad(5), null) instanceof Uint8Array;
    return {
      slowProgress, declinedUnread, answeredError, givenUp, directReports,
      hereOk: here.ok, hereMs, threadsAfterSmall, progress, same: json(here) === json(there), atoms: here.result?.atomCount,
      largerOk: larger.ok, threadsAfterLarger,
      slowOk: slow.ok, slowThreads, slowSame: json(slow) === json(slowThere),
    };
  }, { water: molblock("water"), caffeine: molblock("caffeine") });
  assert.equal(outcome.hereOk, true);
  assert.equal(outcome.atoms, 15);
  assert.equal(outcome.threadsAfterSmall, null, "no Worker started for 5 water");
  assert.ok(outcome.same, "the page's thread gives the Worker's structure");
  // Its only report is its last, as through the Worker.
  assert.deepEqual(outcome.progress, [[1, "writing 15 atoms"]]);
  assert.equal(outcome.largerOk, true);
  assert.equal(outcome.threadsAfterLarger, 1, "300 atoms went to the Worker");
  assert.equal(outcome.slowOk, true);
  assert.equal(outcome.slowThreads, 1, "a call past 16 ms on the page is run in the Worker");
  assert.ok(outcome.slowSame, "the Worker's run of a call given up on the page is the one it gives itself");
  // The reports are the Worker's, in order, to the writing; the page's attempt reported nothing.
  const fractions = outcome.slowProgress.map(([f]) => f);
  assert.deepEqual(fractions, [...fractions].sort((a, b) => a - b), JSON.stringify(outcome.slowProgress));
  assert.deepEqual(outcome.slowProgress.at(-1), [1, "writing 192 atoms"]);
  assert.equal(outcome.givenUp, true);
  assert.deepEqual(outcome.directReports, []);
  assert.equal(outcome.declinedUnread, true);
  assert.equal(outcome.answeredError, true);
  console.log(`5 water on the page's thread: ${outcome.hereMs.toFixed(1)} ms`);
});

test("cancel stops a large box mid-run, and the next call still works", async () => {
  const outcome = await page.evaluate(async (water) => {
    const tools = window.offline.offlineTools();
    const molecule = { name: "water", molblock: water };
    const controller = new AbortController();
    let firstProgress = null;
    const t0 = performance.now();
    const big = tools.call("liquid_box", { components: [{ molecule, count: 60000 }], seed: 1 }, {
      signal: controller.signal,
      onProgress: () => { if (firstProgress === null) { firstProgress = performance.now() - t0; controller.abort(); } },
    });
    const safety = setTimeout(() => controller.abort(), 5000);
    const cancelled = await big;
    clearTimeout(safety);
    const cancelMs = performance.now() - t0;
    const small = await tools.call("liquid_box", { components: [{ molecule, count: 10 }], seed: 2, density: 0.5 });
    await tools.close();
    return { cancelled, cancelMs, firstProgress, small: small.ok ? small.result.atomCount : small.error };
  }, molblock("water"));
  assert.equal(outcome.cancelled.ok, false);
  assert.equal(outcome.cancelled.cancelled, true);
  assert.equal(outcome.small, 30);
  console.log(`cancel: first progress after ${outcome.firstProgress?.toFixed(0)} ms, cancelled after ${outcome.cancelMs.toFixed(0)} ms`);
});

test("solvate inserts only solvent, and tool errors come back as one line", async () => {
  const outcome = await page.evaluate(async (water) => {
    const tools = window.offline.offlineTools();
    const button = tools.toolbox.buttons.find((b) => b.name === "solvate");
    const document = { elements: [8, 1, 1], positions: [5, 5, 5, 5.96, 5, 5, 4.76, 5.93, 5], cell: [10, 0, 0, 0, 10, 0, 0, 0, 10], bonds: [[0, 1], [0, 2]] };
    const context = { library: [{ name: "water", molblock: water }], document, randomSeed: 9 };
    const built = window.pkg.buildArguments(button, window.pkg.initialValues(button, context), context);
    const result = await tools.call("solvate", built.arguments);
    const planned = result.ok ? window.pkg.planApply(button, result.result, document, {}) : null;
    const noCell = await tools.call("solvate", { ...built.arguments, document: { ...document, cell: null } });
    await tools.close();
    return {
      error: result.ok ? null : result.error,
      ops: planned?.plan.ops.map((op) => op.op), added: planned?.plan.select.length, first: planned?.plan.select[0],
      noCell,
    };
  }, molblock("water"));
  assert.equal(outcome.error, null, outcome.error);
  assert.deepEqual(outcome.ops, ["add_fragment"]);
  assert.ok(outcome.added > 0 && outcome.added % 3 === 0);
  assert.equal(outcome.first, 3);
  assert.equal(outcome.noCell.ok, false);
  assert.match(outcome.noCell.error, /periodic cell/);
  assert.ok(!outcome.noCell.error.includes("\n"));
});

test("polymer_chain builds 100 styrene units in the Worker, planned as one new document", async () => {
  const styrene = readFileSync(join(ROOT, "tests", "fixtures", "styrene.mol"), "utf8");
  const outcome = await page.evaluate(async (styrene) => {
    const tools = window.offline.offlineTools();
    const button = tools.toolbox.buttons.find((b) => b.name === "polymer_chain");
    const context = { library: [{ name: "styrene", molblock: styrene }], randomSeed: 3 };
    const values = { ...window.pkg.initialValues(button, context), head: 0, tail: 1, length: 100 };
    const built = window.pkg.buildArguments(button, values, context);
    if (!built.ok) return { error: JSON.stringify(built.errors) };
    const progress = [];
    const result = await tools.call("polymer_chain", built.arguments, { onProgress: (f, m) => progress.push([f, m]) });
    if (!result.ok) return { error: result.error };
    const t0 = performance.now();
    const again = await tools.call("polymer_chain", built.arguments);
    const ms = performance.now() - t0;
    const planned = window.pkg.planApply(button, result.result, null, {});
    const bad = await tools.call("polymer_chain", { ...built.arguments, head: 2 });
    await tools.close();
    const json = result.result.toJSON();
    return {
      ms, summary: result.summary, mode: planned.plan.mode, atoms: planned.plan.snapshot.nAtoms,
      residues: new Set(json.structure.residueIds).size, progress,
      same: JSON.stringify(again.result.toJSON().structure) === JSON.stringify(json.structure),
      bad: bad.ok ? "accepted" : bad.error,
    };
  }, styrene);
  assert.equal(outcome.error, undefined, outcome.error);
  assert.equal(outcome.summary, "Polymer chain: 100 units of styrene (1602 atoms).");
  assert.equal(outcome.mode, "new_document");
  assert.equal(outcome.atoms, 1602);
  assert.equal(outcome.residues, 100);
  assert.ok(outcome.same, "the same seed gives the same chain");
  assert.ok(outcome.progress.length >= 1 && outcome.progress.at(-1)[0] === 1, JSON.stringify(outcome.progress));
  // The repeat-unit messages ("placing repeat unit 100 of 100") are checked natively
  // (tests/offline.rs): through the Worker a quick call delivers only its last report.
  const fractions = outcome.progress.map(([f]) => f);
  assert.deepEqual(fractions, [...fractions].sort((a, b) => a - b), "progress only moves forward");
  // Writing the result is the last phase reported (offline::report_writing).
  assert.equal(outcome.progress.at(-1)[1], "writing 1 602 atoms");
  assert.match(outcome.bad, /head atom 2 \(C\) of styrene has no hydrogen to give up/);
  console.log(`100 styrene units: ${outcome.ms.toFixed(0)} ms for a warm call through the Worker`);
});

test("§6 timeouts offline are the contract core's: explicit timeoutMs capped, reset by progress", async () => {
  const outcome = await page.evaluate(async () => {
    const { callTimeoutMs, callDeadlineMs } = window.pkg;
    const rule = [callTimeoutMs(null, 4e6), callTimeoutMs(20, 5000), callTimeoutMs(20, 0), callTimeoutMs(20), callDeadlineMs(0, 1790000, 60000)];
    // A scripted Worker (slow-worker.js) and `here: false`: every call goes to it (its arguments are
    // no tool's, and a call on the page's thread would refuse them at once).
    const tools = window.offline.offlineTools({ workerUrl: "/tests/node/pages/slow-worker.js", here: false });
    // 1.5 s of work with progress every 100 ms outlives a 600 ms timeout only if progress resets it.
    const kept = await tools.call("liquid_box", { steps: 15, every: 100 }, { timeoutMs: 600 });
    const silent = await tools.call("liquid_box", { silentMs: 1500 }, { timeoutMs: 300 });
    const after = await tools.call("liquid_box", {}, { timeoutMs: 5000 });
    await tools.close();
    const brief = (o) => ({ ok: o.ok, error: o.error ?? null, timedOut: o.timedOut ?? false, atoms: o.result?.atomCount ?? null });
    return { rule, kept: brief(kept), silent: brief(silent), after: brief(after) };
  });
  assert.deepEqual(outcome.rule, [1800000, 5000, 100000, 100000, 1800000]);
  assert.deepEqual(outcome.kept, { ok: true, error: null, timedOut: false, atoms: 3 });
  assert.equal(outcome.silent.ok, false);
  assert.equal(outcome.silent.timedOut, true);
  // §6: the remote client's words (the core's one table), the 300 ms limit shown rounded up.
  assert.equal(outcome.silent.error, "No answer within 1 s; it was stopped (timeout).");
  assert.deepEqual(outcome.after, { ok: true, error: null, timedOut: false, atoms: 3 });
});

test("a result the page cannot read fails the call at once with one line, not a timeout; the next call runs", async () => {
  const outcome = await page.evaluate(async () => {
    const tools = window.offline.offlineTools({ workerUrl: "/tests/node/pages/slow-worker.js", here: false });
    const unreadable = await tools.call("liquid_box", { unreadable: true }, { timeoutMs: 60000 });
    const after = await tools.call("liquid_box", {}, { timeoutMs: 5000 });
    await tools.close();
    return { unreadable, after: { ok: after.ok, atoms: after.result?.atomCount ?? null } };
  });
  assert.equal(outcome.unreadable.ok, false);
  assert.equal(outcome.unreadable.timedOut, undefined);
  assert.match(outcome.unreadable.error, /^The offline tool's result could not be read: \S/);
  assert.doesNotMatch(outcome.unreadable.error, /[\r\n]/);
  assert.deepEqual(outcome.after, { ok: true, atoms: 3 });
});

test("prepare() starts the Worker and warms it with 5 water before any call; once per Worker; a Worker that does not start gives false", async () => {
  const outcome = await page.evaluate(async (args) => {
    const tools = window.offline.offlineTools({ threads: false });
    const before = tools.threads;
    const first = tools.prepare();
    const again = tools.prepare();
    const warmed = await first;
    const threads = tools.threads;
    const call = await tools.call("liquid_box", { ...args, seed: 7 });
    await tools.close();
    // A stopped Worker is cold again: prepare() warms the next one.
    const afterClose = tools.prepare();
    const rewarmed = await afterClose;
    await tools.close();
    const broken = window.offline.offlineTools({ workerUrl: "/tests/node/pages/slow-worker.js?init=fail", here: false });
    const failed = await broken.prepare();
    const reason = (await broken.call("liquid_box", { ...args, seed: 7 })).error;
    await broken.close();
    return { before, same: first === again, warmed, threads, ok: call.ok, atoms: call.result?.atomCount ?? null, fresh: afterClose !== first, rewarmed, failed, reason };
  }, { components: [{ molecule: { name: "water", molblock: molblock("water") }, count: 5 }] });
  assert.equal(outcome.before, null, "no Worker before prepare()");
  assert.equal(outcome.same, true, "one warm-up per Worker");
  assert.equal(outcome.warmed, true);
  assert.equal(outcome.threads, 1, "the Worker is ready once prepare() resolves");
  assert.equal(outcome.ok, true);
  assert.equal(outcome.atoms, 15);
  assert.equal(outcome.fresh, true);
  assert.equal(outcome.rewarmed, true);
  assert.equal(outcome.failed, false);
  assert.equal(outcome.reason, "The offline tools could not start: no .wasm here (test)");
});

test("close() ends every call made before it as cancelled (running, starting the Worker, queued); a cancel settles a queued call at once", async () => {
  const outcome = await page.evaluate(async () => {
    // A call that never settles fails the test instead of hanging it (as before this was fixed).
    const settle = (call) => Promise.race([call, new Promise((resolve) => setTimeout(() => resolve({ ok: "never settled" }), 20000))]);
    const brief = (o) => ({ ok: o.ok, error: o.error ?? null, cancelled: o.cancelled ?? false, atoms: o.result?.atomCount ?? null });
    const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
    const worker = "/tests/node/pages/slow-worker.js";
    // Running and queued behind it.
    const tools = window.offline.offlineTools({ workerUrl: worker, here: false });
    await tools.prepare();
    const running = tools.call("liquid_box", { silentMs: 1500 }, { timeoutMs: 60000 });
    const queued = tools.call("liquid_box", {}, { timeoutMs: 60000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await tools.close();
    const during = brief(await settle(running));
    const behind = brief(await settle(queued));
    const after = brief(await settle(tools.call("liquid_box", {}, { timeoutMs: 60000 })));
    await tools.close();
    // Closed while its Worker starts (ready only after 1 s).
    const slow = window.offline.offlineTools({ workerUrl: `${worker}?initMs=1000`, here: false });
    const starting = slow.call("liquid_box", {}, { timeoutMs: 60000 });
    await tick();
    await slow.close();
    const atStart = brief(await settle(starting));
    // prepare() and close() in one go: no Worker is started.
    const quick = window.offline.offlineTools({ workerUrl: worker, here: false });
    const warming = quick.prepare();
    await quick.close();
    const warmed = await settle(warming);
    await tick();
    const threads = quick.threads;
    // Cancelled while it waits behind a warm-up that waits for a slow start.
    const waiting = window.offline.offlineTools({ workerUrl: `${worker}?initMs=1000`, here: false });
    const warmUp = waiting.prepare();
    const controller = new AbortController();
    const mine = waiting.call("liquid_box", {}, { signal: controller.signal, timeoutMs: 60000 });
    setTimeout(() => controller.abort(), 50);
    const cancelledInQueue = brief(await settle(Promise.race([mine, warmUp.then(() => ({ ok: "after the warm-up" }))])));
    await waiting.close();
    return { during, behind, after, atStart, warmed, threads, cancelledInQueue };
  });
  const closed = { ok: false, error: "Cancelled: the offline tools were closed.", cancelled: true, atoms: null };
  assert.deepEqual(outcome.during, closed);
  assert.deepEqual(outcome.behind, closed, "a call queued before close() never runs");
  assert.deepEqual(outcome.after, { ok: true, error: null, cancelled: false, atoms: 3 });
  assert.deepEqual(outcome.atStart, closed);
  assert.equal(outcome.warmed, false);
  assert.equal(outcome.threads, null, "no Worker started after close()");
  assert.deepEqual(outcome.cancelledInQueue, { ok: false, error: "Cancelled.", cancelled: true, atoms: null });
});

test("offlineTools() before init() says what to do", async () => {
  const fresh = await openPage(browser, `${server.url}/tests/node/pages/blank.html`, errors);
  const message = await fresh.evaluate(async () => {
    const offline = await import("/pkg/offline.js");
    try {
      offline.offlineTools();
      return "no error";
    } catch (error) {
      return error.message;
    }
  });
  await fresh.close();
  assert.equal(message, "offlineTools(): the package is not initialised; await init() (its default export) first.");
});

test("no page errors", () => {
  assert.deepEqual(errors, []);
});
