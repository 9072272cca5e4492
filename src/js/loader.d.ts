import type * as Api from "./megane_builder_client.js";
import type { OfflineToolServer, OfflineToolsOptions } from "./offline.js";

/** The .wasm URLs and threads, as the offline tools take them. */
export type LoadOptions = Pick<OfflineToolsOptions, "wasmUrl" | "threadsWasmUrl" | "threads" | "threadCount">;

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
