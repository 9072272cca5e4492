// megane-builder-client/megane: Megane Builder's tool seam (connectToolServer, ToolConnection,
// parseTools, interpretCall, structureToSnapshot, residueLabels, sanitizeName, insertOps,
// callTimeoutMs, readLaunchParams, displayUrl; newFragmentId for hosts that give the document's
// ids) over the package's wasm API, so Builder's tool layer re-exports these and keeps the rest of
// its code. Every contract rule is in the Rust core (src/contract, src/mcp); this module loads the
// wasm lazily and shapes the connection.
//
// The wasm is loaded on first use: `connectToolServer` (or `load()`) fetches it from the URL given
// to `configure({wasmUrl})` (Vite: `…_bg.wasm?url`), else from next to this module. A failed load
// is forgotten, so the next call tries again. In Node (Builder's unit tests), `initSync` of the
// package's main entry with the .wasm bytes, then `load()`, sets it up without a fetch. The pure
// helpers are synchronous: they need the wasm loaded (after a connection, which is when Builder
// calls them) and say so otherwise; `readLaunchParams` needs nothing (it is `URLSearchParams`, as
// the core reads a launch link), and `displayUrl` says "the tool server" until the wasm is loaded.

const CANCELLED = "Cancelled.";

let wasmUrl;
let api = null;
let pending = null;

/** Sets where the .wasm is fetched from (call before the first connection). */
export function configure(options = {}) {
  if (options.wasmUrl !== undefined) wasmUrl = options.wasmUrl;
}

/** Loads and initialises the wasm once (at once when `initSync` already did); a failed load is
 *  retried on the next call. */
export function load() {
  if (api) return Promise.resolve();
  if (!pending) {
    pending = (async () => {
      const module = await import("./megane_builder_client.js");
      await module.default(wasmUrl ? { module_or_path: wasmUrl } : undefined);
      api = module;
    })().catch((error) => {
      pending = null;
      throw error;
    });
  }
  return pending;
}

function core() {
  if (!api) {
    throw new Error("megane-builder-client is not loaded yet: connect with connectToolServer(…) or await load() first.");
  }
  return api;
}

/** A platform error (a failed load) as the first line of its message. */
const platformLine = (error) => String(error?.message ?? error).split("\n")[0].trim() || "unknown error";

/** Connects to a Streamable HTTP tool server. Rejects with the reason alone, one line, never the
 *  URL's query or user info (Builder puts its own `Could not connect to ${displayUrl(url)}: `
 *  before it). */
export async function connectToolServer(url, token) {
  try {
    await load();
  } catch (error) {
    throw new Error(`The tool client could not be loaded: ${platformLine(error)}`);
  }
  let server;
  try {
    server = await api.connect(String(url), { token });
  } catch (error) {
    throw new Error(String(error?.message ?? error));
  }
  if (!server.ok) throw new Error(server.error);
  const listing = api.builderListing(server);
  return {
    serverName: server.serverName,
    serverVersion: server.serverVersion,
    listing,
    call: async (name, args, options = {}) => {
      const { onProgress, signal, timeoutMs } = options;
      if (signal?.aborted) return { ok: false, error: CANCELLED };
      const outcome = await api.builderCall(server, name, args, { onProgress, signal, timeoutMs });
      // §6: nothing that arrives after a cancel is applied.
      if (signal?.aborted) return { ok: false, error: CANCELLED };
      return outcome;
    },
    close: () => server.close(),
  };
}

/** A server URL as a message shows it: no query, fragment or user info, one line (the core's
 *  rule). Before the wasm is loaded (a failed load), "the tool server". */
export function displayUrl(url) {
  return api ? api.displayUrl(String(url)) : "the tool server";
}

/** §3: a tools/list's tools → `{tools, unsupported}`. */
export function parseTools(tools) {
  return core().builderParseTools(tools);
}

/** §5/§6: a raw tools/call result → `{ok: true, result, summary}` or `{ok: false, error}`. */
export function interpretCall(raw) {
  return core().builderInterpretCall(raw);
}

/** §5.2: a result's structure → Megane's Snapshot. */
export function structureToSnapshot(structure) {
  return core().builderStructureToSnapshot(structure);
}

/** §5.2: per-atom `RESNAME<resid>` labels, or null. */
export function residueLabels(structure) {
  return core().builderResidueLabels(structure);
}

/** §5: the document name for a result name (Builder's rule). */
export function sanitizeName(name) {
  return core().sanitizeName(name);
}

/** §5.2: `set_cell` (when the cells differ) then `add_fragment` with the id the host gives.
 *  `documentCell` may be a typed array. */
export function insertOps(structure, fragmentId, documentCell) {
  return core().builderInsertOps(structure, fragmentId, documentCell == null ? null : Array.from(documentCell));
}

/** §5.2: a fragment id from a result name, unique among `existingIds` (required: the fragment ids
 *  already in the document). Builder keeps its own ids and does not use this. */
export function newFragmentId(name, existingIds) {
  return core().newFragmentId(name, existingIds);
}

/** §6: max(60 s, 5 × expectedSeconds), at most 30 minutes, in ms (the contract core's rule). */
export function callTimeoutMs(expectedSeconds) {
  return core().callTimeoutMs(expectedSeconds ?? undefined);
}

/** §8: `#tools=<url>&token=<token>` → `{url, token}` (token "" when absent), or null without a
 *  non-empty `tools`. The fragment is read with `URLSearchParams`, before and after the wasm
 *  loads, as the core's `parseLaunchFragment` reads it; whether the URL is usable is decided at
 *  connect (`connectToolServer` refuses it in one line). */
export function readLaunchParams(hash) {
  const params = new URLSearchParams(String(hash).replace(/^#/, ""));
  const url = params.get("tools");
  if (!url) return null;
  return { url, token: params.get("token") ?? "" };
}
