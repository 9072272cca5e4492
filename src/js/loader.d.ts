import type * as Api from "./megane_builder_client.js";
import type { OfflineToolServer, OfflineToolsOptions } from "./offline.js";

export interface LoadOptions {
  /** URL of megane_builder_client_bg.wasm (e.g. Vite `?url`); default: next to the module. */
  wasmUrl?: string | URL;
  /** URL of threads/megane_builder_client_bg.wasm, for the offline tools' Worker. */
  threadsWasmUrl?: string | URL;
  /** "auto" (default): threads where the page is cross-origin isolated. */
  threads?: "auto" | boolean;
  /** Rayon threads in the offline Worker (default: navigator.hardwareConcurrency). */
  threadCount?: number;
}

export interface BuilderClient {
  /** The initialised JavaScript API (parseToolList, connect, interpretCall, planApply, …). */
  api: typeof Api;
  /** Whether the offline tools' Worker will pack on several threads (a small call packs on the page's thread). */
  threaded: boolean;
  /** The offline tools, using the URLs given to the loader. */
  offlineTools(options?: OfflineToolsOptions): OfflineToolServer;
}

/** Loads the package on first use; a failed load is retried on the next call. */
export function loadBuilderClient(options?: LoadOptions): Promise<BuilderClient>;
