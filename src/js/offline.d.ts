import type { CallOptions, CallOutcome, Toolbox } from "./megane_builder_client.js";

/** The offline tools as a tool server, like a `ToolServer` from `connect`. */
export interface OfflineToolServer {
  readonly ok: true;
  readonly serverName: string;
  readonly serverVersion: null;
  readonly protocolVersion: null;
  readonly url: null;
  readonly instructions: string;
  readonly toolbox: Toolbox;
  readonly notices: string[];
  /** Threads the packing uses (1: single-threaded build); null until the Worker has started (the first call it runs, or `prepare()`). */
  readonly threads: number | null;
  call(name: string, args: Record<string, unknown>, options?: CallOptions | null): Promise<CallOutcome>;
  /**
   * Starts the Worker ahead of a first call and runs one 5-water box through it (queued like a
   * call), then once on the page's thread (unless `here: false`; once per page, ~50-100 ms there
   * the first time), so a user's first call does not wait for the Worker and the first compiles.
   * Opt-in: no Worker starts otherwise until the first call it runs. Resolves to whether the warm-up succeeded (never
   * rejects); the same promise until the Worker is stopped (cancel, timeout, close) or the warm-up
   * failed, after which prepare() tries again.
   */
  prepare(): Promise<boolean>;
  refreshTools(): Promise<Toolbox>;
  /**
   * Stops the Worker. Every call made before it that has not ended (running, starting the Worker,
   * or queued) ends as `{ok: false, cancelled: true, error: "Cancelled: the offline tools were
   * closed."}`; later calls start a new Worker.
   */
  close(): Promise<void>;
}

export interface OfflineToolsOptions {
  serverId?: string;
  /** URL of megane_builder_client_bg.wasm, the single-threaded build (e.g. Vite `?url`); default: next to the module. */
  wasmUrl?: string | URL;
  /** URL of threads/megane_builder_client_bg.wasm, the threaded build; default: threads/ next to the module. */
  threadsWasmUrl?: string | URL;
  /** "auto" (default): the threaded build where the page is cross-origin isolated. */
  threads?: "auto" | boolean;
  /** Rayon threads in the offline Worker (default: navigator.hardwareConcurrency). */
  threadCount?: number;
  /** Override of the Worker script's URL. */
  workerUrl?: string | URL;
  /**
   * true (default): a call that builds at most 200 atoms (a solvate's document counted) runs at
   * once on the page's own thread, about a millisecond, so it neither waits for the Worker to
   * start nor pays the trip to it and back. It blocks the page while it reads its arguments and
   * for at most 16 ms of packing (50 ms the first time a tool packs there, compiling its code);
   * a cancel or timeout counts when it returns; one that would pack for longer is given up and
   * run in the Worker, with the same structure. false: every call runs in the Worker.
   */
  here?: boolean;
}

/** The offline tools liquid_box, solvate and polymer_chain, computed in this page: in a Worker, or on the page's thread for a small call (see `here`). */
export function offlineTools(options?: OfflineToolsOptions): OfflineToolServer;
