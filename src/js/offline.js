// The offline tools (liquid_box, solvate, polymer_chain) as a ToolServer, like a remote one: the
// same toolbox, call(name, args, {onProgress, signal, timeoutMs}) → the contract core's
// interpretation. Packing runs in a module Worker so the page does not freeze. Cancel and timeout
// terminate the worker (a blocking wasm call cannot be interrupted otherwise); the next call starts
// a fresh one. Where the page is cross-origin isolated the Worker uses the multi-threaded build (a
// rayon pool of Workers); the structure is the same either way. A small call (at most 200 atoms)
// runs at once on the page's own thread instead, unless `here: false` (issue 12: the trip to the
// Worker and back cost more than packing a few molecules, and a first call need not wait for the
// Worker to start): it blocks the page for at most 16 ms of packing (50 ms the first time a tool
// packs here, compiling its code) after reading its arguments, so it is not cancelled midway (a
// cancel or timeout counts once it returns), and one that would pack for longer is given up and
// run in the Worker.
import { callDeadlineMs, callFailure, callTimeoutMs, interpretOfflineCall, offlineCallHere, offlineToolsList, parseToolList, refuseCall } from "./megane_builder_client.js";

const SERVER_NAME = "megane-builder-client (offline)";

// §6: the outcomes of a call this module ends itself are the core's (callFailure: the one message
// table's words, the remote client's shape). close() ends the calls made before it (running,
// starting the Worker, or queued) as cancelled (nothing is applied); a call that has not answered
// within its time limit (ms) times out. CLOSED_ERROR only tells close() from a failed start.
const CLOSED_ERROR = new Error("closed");
const closed = () => callFailure("closed");
const cancelledOutcome = () => callFailure("cancelled");
const timedOutOutcome = (limit) => callFailure("timedOut", limit);

// Whether a prepare() on this page has run its box on the page's thread (see warmHere).
let pageWarm = false;

// prepare()'s call: 5 water, the smallest call that runs what every call runs (the argument check,
// the packing, the result's transfer and its reading on the page).
const WARM_UP_ARGS = {
  components: [{
    molecule: {
      name: "water",
      molblock: "water\n  warm-up        3D\n\n  3  2  0  0  0  0  0  0  0  0999 V2000\n" +
        "    0.0053    0.3978    0.0000 O   0  0  0  0  0  0  0  0  0  0  0  0\n" +
        "   -0.7661   -0.1886    0.0000 H   0  0  0  0  0  0  0  0  0  0  0  0\n" +
        "    0.7607   -0.2091    0.0000 H   0  0  0  0  0  0  0  0  0  0  0  0\n" +
        "  1  2  1  0\n  1  3  1  0\nM  END\n",
    },
    count: 5,
  }],
  seed: 1,
};

/**
 * @param {{serverId?: string, wasmUrl?: string | URL, threadsWasmUrl?: string | URL,
 *          threads?: "auto" | boolean, threadCount?: number, workerUrl?: string | URL,
 *          here?: boolean}} [options]
 */
export function offlineTools(options = {}) {
  let toolbox;
  try {
    toolbox = parseToolList(offlineToolsList(), options.serverId ?? "offline");
  } catch (error) {
    // Before init() the wasm exports fail with a TypeError about an undefined `wasm`.
    if (error instanceof TypeError) {
      throw new Error("offlineTools(): the package is not initialised; await init() (its default export) first.", { cause: error });
    }
    throw error;
  }
  const threads = options.threads ?? "auto";
  const here = options.here ?? true;
  const notices = [];
  // `ready`: the current Worker has loaded the package (calls then skip the start-up wait).
  const status = { threads: null, ready: false };
  let worker = null;
  let ready = null;
  // prepare()'s promise for the current Worker (null: not asked, or the Worker was stopped since).
  let prepared = null;
  // What close() must end: the Worker's start (rejects its `ready`) and the call it runs (settles
  // it as cancelled); a terminated Worker sends nothing, so both would otherwise wait forever, and
  // every later call behind them in the queue.
  let abortStart = null;
  let running = null;
  // Each call carries the generation it was made in; close() starts a new one, so a call queued
  // before it never runs (nor starts a Worker after close() returned).
  let generation = 0;
  let sequence = 0;
  // The toolbox never changes, so refuseCall (§6; it reads the whole toolbox) is asked once per
  // accepted name; an unknown name is asked, and refused, every time.
  const accepted = new Set();

  // One timer watches the running call's deadline (§6) for all calls: armed for the earliest
  // deadline asked and left armed when a call ends, so a quick call neither sets nor clears a
  // timer (a setTimeout + clearTimeout pair was ~5 % of a 5-water call on the page). When it
  // fires, the call it watches (if any) checks its own deadline: past it, the call times out,
  // else the timer is armed again for that deadline.
  const watch = { timer: null, at: Infinity, check: null };
  function watchUntil(at, check) {
    watch.check = check;
    if (watch.timer !== null && watch.at <= at) return;
    clearTimeout(watch.timer);
    watch.at = at;
    watch.timer = setTimeout(() => {
      const fired = watch.check;
      Object.assign(watch, { timer: null, at: Infinity, check: null });
      fired?.();
    }, Math.max(0, at - performance.now()));
  }
  function stopWatching() {
    clearTimeout(watch.timer);
    Object.assign(watch, { timer: null, at: Infinity, check: null });
  }

  function stopWorker() {
    stopWatching();
    if (worker) worker.terminate();
    worker = null;
    ready = null;
    prepared = null;
    status.ready = false;
    const abort = abortStart;
    abortStart = null;
    abort?.();
  }

  function startWorker() {
    // The literal `new Worker(new URL(…, import.meta.url))` lets bundlers (Vite) find the worker.
    worker = options.workerUrl
      ? new Worker(options.workerUrl, { type: "module", name: "megane-builder-offline" })
      : new Worker(new URL("./offline-worker.js", import.meta.url), { type: "module", name: "megane-builder-offline" });
    const current = worker;
    ready = new Promise((resolve, reject) => {
      const onMessage = (event) => {
        if (event.data?.type === "ready") {
          status.threads = event.data.threads;
          status.ready = true;
          for (const n of event.data.notices ?? []) if (!notices.includes(n)) notices.push(n);
          cleanup();
          resolve();
        }
        else if (event.data?.type === "init-error") { cleanup(); reject(new Error(event.data.error)); }
      };
      const onError = (event) => { cleanup(); reject(new Error(event.message || "the worker script did not load")); };
      const cleanup = () => {
        current.removeEventListener("message", onMessage);
        current.removeEventListener("error", onError);
        if (abortStart === stop) abortStart = null;
      };
      const stop = () => { cleanup(); reject(CLOSED_ERROR); };
      abortStart = stop;
      current.addEventListener("message", onMessage);
      current.addEventListener("error", onError);
    });
    worker.postMessage({
      type: "init",
      wasmUrl: options.wasmUrl ? String(options.wasmUrl) : null,
      threadsWasmUrl: options.threadsWasmUrl ? String(options.threadsWasmUrl) : null,
      threads: threads === true || (threads === "auto" && globalThis.crossOriginIsolated === true),
      threadCount: options.threadCount ?? null,
    });
    return ready;
  }

  // The page's reading of a Worker's result. It returns the call's outcome; if it throws (a fault
  // of this package, not of the tool) the call fails at once with that line, instead of waiting
  // for its deadline and reporting a timeout. The Worker is left running: its wasm did not fail.
  function readResult(button, bytes) {
    try {
      return interpretOfflineCall(button, bytes);
    } catch (error) {
      // The message is this package's own (a JsError) or the engine's: one line.
      return { ok: false, error: `The offline tool's result could not be read: ${error?.message ?? error}` };
    }
  }

  // Calls run one at a time: the Worker blocks while it packs, and a cancel or timeout has to
  // terminate it, which must never take another call down with it.
  let queue = Promise.resolve();

  // A small call on the page's own thread (offlineCallHere: declined when it builds more than 200
  // atoms, given up past 16 or 50 ms of packing, with nothing reported either way): its outcome, or
  // null for the Worker. Its only report, its last, is passed on with the result (as the
  // Worker's path does for a quick call). The same time limit as in the Worker (§6), from
  // `startedAt`, checked when it returns (it cannot be interrupted, and packs for 50 ms at most).
  function callHere(name, args, button, onProgress, limit, startedAt) {
    let last = null;
    let bytes;
    try {
      bytes = offlineCallHere(name, args, (fraction, message) => { last = { fraction, message }; });
    } catch (error) {
      return { ok: false, error: `The offline tool failed: ${error?.message ?? error}` };
    }
    if (!bytes) return null;
    if (performance.now() - startedAt >= limit) return timedOutOutcome(limit);
    try {
      if (last) onProgress?.(last.fraction, last.message);
    } catch {
      // The host's callback failed; the result still counts (as in the Worker's path).
    }
    return readResult(button, bytes);
  }

  function call(name, args, options) {
    return enqueue(name, args, options, false);
  }

  // `inWorker`: prepare()'s call, which is for the Worker whatever its size.
  function enqueue(name, args, options, inWorker) {
    const made = generation;
    const run = queue.then(() => (made === generation ? runCall(name, args, options ?? {}, inWorker, made) : closed()));
    queue = run.catch(() => {});
    const signal = options?.signal;
    if (!signal) return run;
    // A cancel settles the call at once, also while it waits in the queue behind another (a
    // warm-up, a long box): it then never runs (runCall returns at once for an aborted signal).
    return new Promise((resolve, reject) => {
      const onAbort = () => resolve(cancelledOutcome());
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      run.then(
        (outcome) => { signal.removeEventListener("abort", onAbort); resolve(outcome); },
        (error) => { signal.removeEventListener("abort", onAbort); reject(error); },
      );
    });
  }

  // Starts the Worker ahead of a first call and runs one 5-water box through it (in the Worker,
  // though so small a call would run on the page's thread), then once on the page's thread, so
  // that a user's first call does not wait for the Worker, the package and V8's first compiles
  // (~150 ms here; a 5-water call after it, ~1 ms). Opt-in, for a host that expects a call soon:
  // a page that never calls a tool starts no Worker. Resolves to whether the warm-up call
  // succeeded (never rejects); a failed one is not kept, so the next prepare() tries again.
  function prepare() {
    if (!prepared) {
      const made = generation;
      const mine = enqueue("liquid_box", WARM_UP_ARGS, {}, true).then((outcome) => {
        if (here && outcome.ok === true && made === generation) warmHere();
        return outcome.ok === true;
      }, () => false);
      prepared = mine;
      mine.then((ok) => { if (!ok && prepared === mine) prepared = null; });
    }
    return prepared;
  }

  // prepare()'s second half: the same box once on the page's thread (result dropped), so the
  // first small call does not pay this thread's one-time compiles (~50-100 ms: the argument
  // schema, the packer's code). Once per page: the package's wasm is shared by every tools object.
  function warmHere() {
    if (pageWarm) return;
    pageWarm = true;
    // callHere catches every failure: a warm-up that fails changes nothing.
    const button = toolbox.buttons.find((b) => b.name === "liquid_box");
    callHere("liquid_box", WARM_UP_ARGS, button, null, Infinity, performance.now())?.result?.free?.();
  }

  // `inWorker`: prepare()'s call; `made`: the generation the call was made in (close() since ends it).
  async function runCall(name, args, { onProgress, signal, timeoutMs } = {}, inWorker = false, made = generation) {
    if (!accepted.has(String(name))) {
      const refused = refuseCall(toolbox, String(name));
      if (refused) return refused;
      accepted.add(String(name));
    }
    const button = toolbox.buttons.find((b) => b.name === name);
    if (signal?.aborted) return cancelledOutcome();
    // §6: the contract core's timeout (explicit timeoutMs capped at 30 min), reset by progress
    // but never past 30 min after the start — the same functions the remote client uses.
    const requested = Number(timeoutMs);
    const limit = callTimeoutMs(button.marker.expectedSeconds ?? undefined, Number.isFinite(requested) ? requested : undefined);
    // Time the page's thread spent on a call it then gave up, counted against the Worker's limit.
    let spentHere = 0;
    if (here && !inWorker) {
      const hereStartedAt = performance.now();
      const outcome = callHere(name, args, button, onProgress, limit, hereStartedAt);
      if (outcome) return outcome;
      spentHere = performance.now() - hereStartedAt;
      // Given up or declined: on to the Worker, unless it was cancelled or closed meanwhile.
      if (signal?.aborted) return cancelledOutcome();
      if (made !== generation) return closed();
    }
    // Only while the Worker starts: once it is ready, a call goes straight to it.
    if (!status.ready) {
      // A cancel while the Worker starts counts too (§6: nothing is applied after a cancel).
      const aborted = new Promise((resolve) => signal?.addEventListener("abort", () => resolve(cancelledOutcome()), { once: true }));
      try {
        const early = await Promise.race([(ready ?? startWorker()).then(() => null), aborted]);
        if (early) {
          stopWorker();
          return early;
        }
      } catch (error) {
        stopWorker();
        if (error === CLOSED_ERROR) return closed();
        return { ok: false, error: `The offline tools could not start: ${error.message}` };
      }
      if (signal?.aborted) return cancelledOutcome();
    }
    if (!worker) return closed();
    const id = ++sequence;
    const current = worker;
    const startedAt = performance.now() - spentHere;
    return new Promise((resolve) => {
      let settled = false;
      let deadline = Infinity;
      const check = () => {
        if (settled) return;
        if (performance.now() >= deadline) {
          finish(timedOutOutcome(limit), true);
        } else {
          watchUntil(deadline, check);
        }
      };
      const armTimer = (lastActivity) => {
        deadline = callDeadlineMs(startedAt, lastActivity, limit);
        watchUntil(deadline, check);
      };
      const finish = (outcome, kill) => {
        if (settled) return;
        settled = true;
        if (running === finish) running = null;
        if (watch.check === check) watch.check = null;
        current.removeEventListener("message", onMessage);
        current.removeEventListener("error", onError);
        signal?.removeEventListener("abort", onAbort);
        if (kill && worker === current) stopWorker();
        resolve(outcome);
      };
      const onMessage = (event) => {
        const message = event.data;
        if (message?.id !== id) return;
        if (message.type === "progress") {
          armTimer(performance.now());
          onProgress?.(message.fraction, message.message);
        }
        else if (message.type === "result") {
          // A quick call's only progress report (its last) comes with its result.
          try {
            if (message.progress) onProgress?.(message.progress.fraction, message.progress.message);
          } finally {
            finish(readResult(button, message.bytes), false);
          }
        }
        // A trap leaves the wasm instance unusable: start afresh next time.
        else if (message.type === "error") finish({ ok: false, error: `The offline tool failed: ${message.error}` }, true);
      };
      const onError = (event) => finish({ ok: false, error: `The offline tool failed: ${event.message || "worker error"}` }, true);
      const onAbort = () => finish(cancelledOutcome(), true);
      running = finish;
      armTimer(startedAt);
      current.addEventListener("message", onMessage);
      current.addEventListener("error", onError);
      signal?.addEventListener("abort", onAbort);
      current.postMessage({ type: "call", id, name, args });
    });
  }

  return {
    ok: true,
    serverName: SERVER_NAME,
    serverVersion: null,
    protocolVersion: null,
    url: null,
    instructions: "Offline tools computed in this page: no structure leaves the browser.",
    toolbox,
    notices,
    /** Threads the Worker's packing uses (1 for the single-threaded build); null until the Worker has started (the first call it runs, or prepare()). */
    get threads() { return status.threads; },
    call,
    prepare,
    async refreshTools() { return toolbox; },
    async close() {
      generation += 1;
      const inFlight = running;
      stopWorker();
      inFlight?.(closed(), false);
    },
  };
}
