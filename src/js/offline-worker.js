// Worker side of offlineTools(): loads the package once (the threaded build with a rayon pool when
// asked and the page is cross-origin isolated, else the single-threaded one), then runs each call
// to completion and posts the progress reports offlineCall passes on (at most every 100 ms, none in a
// call's first 100 ms) and its result (transferred; for interpretOfflineCall: the CallToolResult's
// typed parts with the Structure's arrays as binary), with the last report not yet posted.
let offlineCall = null;

async function load({ wasmUrl, threadsWasmUrl, threads, threadCount }) {
  const notices = [];
  if (threads && self.crossOriginIsolated) {
    try {
      const pkg = await import("./threads/megane_builder_client.js");
      await pkg.default(threadsWasmUrl ? { module_or_path: threadsWasmUrl } : undefined);
      const count = Math.max(1, threadCount ?? navigator.hardwareConcurrency ?? 2);
      await pkg.initThreadPool(count);
      offlineCall = pkg.offlineCall;
      return { threads: count, notices };
    } catch (error) {
      notices.push(`The multi-threaded build did not load (${error?.message ?? error}); packing runs on one thread.`);
    }
  }
  const pkg = await import("./megane_builder_client.js");
  await pkg.default(wasmUrl ? { module_or_path: wasmUrl } : undefined);
  offlineCall = pkg.offlineCall;
  return { threads: 1, notices };
}

self.onmessage = async (event) => {
  const message = event.data;
  if (message?.type === "init") {
    try {
      const loaded = await load(message);
      self.postMessage({ type: "ready", ...loaded });
    } catch (error) {
      self.postMessage({ type: "init-error", error: String(error?.message ?? error) });
    }
  } else if (message?.type === "call") {
    // Progress: offlineCall paces its reports (none in the first 100 ms, then at most one per
    // 100 ms; src/offline/pace.rs) and each is posted as it comes; the last report not passed yet
    // (`last`) comes just before offlineCall returns and travels with the result. A call that ends
    // within 100 ms thus costs two messages (its arguments and its result).
    let pending = null;
    try {
      const bytes = offlineCall(message.name, message.args, (fraction, text, last) => {
        if (last) pending = { fraction, message: text };
        else self.postMessage({ type: "progress", id: message.id, fraction, message: text });
      });
      self.postMessage({ type: "result", id: message.id, bytes, progress: pending }, [bytes.buffer]);
    } catch (error) {
      // A Rust panic (a trap under panic = "abort") or running out of memory.
      self.postMessage({ type: "error", id: message.id, error: String(error?.message ?? error) });
    }
  }
};
