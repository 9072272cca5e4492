// Lazy loader, the way Megane loads megane-rdkit: nothing is downloaded until the first
// loadBuilderClient() call; the host may pass the .wasm URLs (Vite: `…_bg.wasm?url`); a failed load
// is forgotten so the next call tries again. The page's own thread always uses the single-threaded
// build (a rayon pool may not block the main thread); the offline tools' Worker uses the
// multi-threaded build when the page is cross-origin isolated.
let pending = null;

/**
 * @param {{wasmUrl?: string | URL, threadsWasmUrl?: string | URL, threads?: "auto" | boolean, threadCount?: number}} [options]
 */
export function loadBuilderClient(options = {}) {
  if (!pending) {
    pending = load(options).catch((error) => {
      pending = null;
      throw error;
    });
  }
  return pending;
}

async function load(options) {
  const api = await import("./megane_builder_client.js");
  await api.default(options.wasmUrl ? { module_or_path: options.wasmUrl } : undefined);
  const offline = await import("./offline.js");
  const threads = options.threads ?? "auto";
  return {
    api,
    /** Whether the offline tools' Worker will pack on several threads (the page is cross-origin isolated; a small call packs on the page's thread). */
    threaded: threads !== false && globalThis.crossOriginIsolated === true,
    offlineTools: (extra = {}) => offline.offlineTools({
      wasmUrl: options.wasmUrl, threadsWasmUrl: options.threadsWasmUrl, threads, threadCount: options.threadCount, ...extra,
    }),
  };
}
