// megane-builder-client/megane: Megane Builder's tool seam (connectToolServer, ToolConnection,
// parseTools, interpretCall, structureToSnapshot, residueLabels, sanitizeName, insertOps,
// newFragmentId, callTimeoutMs, readLaunchParams) over the package's wasm API, so Builder's tool
// layer swaps its imports and nothing else. Every contract rule is in the Rust core (src/contract,
// src/mcp); this module loads the wasm lazily and shapes the connection.
//
// The wasm is loaded on first use: `connectToolServer` (or `load()`) fetches it from the URL given
// to `configure({wasmUrl})` (Vite: `…_bg.wasm?url`), else from next to this module. A failed load
// is forgotten, so the next call tries again. The pure helpers are synchronous: they need the wasm
// loaded (after a connection, which is when Builder calls them) and say so otherwise;
// `readLaunchParams` also works before (Builder reads the launch link on mount).

const CANCELLED = "Cancelled.";

let wasmUrl;
let api = null;
let pending = null;

/** Sets where the .wasm is fetched from (call before the first connection). */
export function configure(options = {}) {
  if (options.wasmUrl !== undefined) wasmUrl = options.wasmUrl;
}

/** Loads and initialises the wasm once; a failed load is retried on the next call. */
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

const firstLine = (error) => String(error?.message ?? error).split("\n").find((l) => l.trim())?.trim() ?? "unknown error";

/** Connects to a Streamable HTTP tool server; rejects with `Could not connect to <url>: <reason>`. */
export async function connectToolServer(url, token) {
  const shown = String(url).replace(/\s+/g, " ");
  let server;
  try {
    await load();
    server = await api.connect(url, { token });
  } catch (error) {
    throw new Error(`Could not connect to ${shown}: ${firstLine(error)}`);
  }
  if (!server.ok) throw new Error(`Could not connect to ${shown}: ${server.error}`);
  const listing = api.builderListing(server);
  return {
    serverName: server.serverName,
    serverVersion: server.serverVersion,
    listing,
    call: async (name, args, options = {}) => {
      const { onProgress, signal, timeoutMs } = options;
      if (signal?.aborted) return { ok: false, error: CANCELLED };
      const outcome = await server.call(name, args, { onProgress, signal, timeoutMs });
      // §6: nothing that arrives after a cancel is applied.
      if (signal?.aborted) return { ok: false, error: CANCELLED };
      if (!outcome.ok) return { ok: false, error: outcome.error };
      if (!outcome.result) return { ok: false, error: `${name} is not a Builder tool of this server.` };
      return { ok: true, result: outcome.result.toJSON(), summary: outcome.summary || null };
    },
    close: () => server.close(),
  };
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

/** §5: the document name for a result name. */
export function sanitizeName(name) {
  return core().sanitizeName(name);
}

/** §5.2: `set_cell` (when the cells differ) then `add_fragment`. `documentCell` may be a typed array. */
export function insertOps(structure, fragmentId, documentCell) {
  return core().builderInsertOps(structure, fragmentId, documentCell == null ? null : Array.from(documentCell));
}

// Fragment ids handed out in this page: without `existingIds`, a new id avoids them (as Builder's
// own ids are unique within the page).
const issuedIds = new Set();

/** §5.2: a fresh fragment id from a result name, unique among `existingIds` (default: this page's). */
export function newFragmentId(name, existingIds) {
  const id = core().newFragmentId(name, existingIds ?? [...issuedIds]);
  issuedIds.add(id);
  return id;
}

/** §6: max(60 s, 5 × expectedSeconds), at most 30 minutes, in ms (the contract core's rule). */
export function callTimeoutMs(expectedSeconds) {
  return core().callTimeoutMs(expectedSeconds ?? undefined);
}

/** §8: `#tools=<url>&token=<token>` → `{url, token}` (token "" when absent); null when the hash has
 *  no usable link. Uses the core's parser once the wasm is loaded; before that, a mirror of it
 *  (tests/node/megane.test.mjs checks that both agree). */
export function readLaunchParams(hash) {
  if (api) {
    const launch = api.parseLaunchFragment(String(hash));
    return launch?.ok ? { url: launch.url, token: launch.token ?? "" } : null;
  }
  return launchBeforeLoad(String(hash));
}

function launchBeforeLoad(hash) {
  let url = null;
  let token = null;
  for (const part of hash.replace(/^#/, "").split("&")) {
    const key = part.startsWith("tools=") ? "tools" : part.startsWith("token=") ? "token" : null;
    if (!key) continue;
    let value;
    try {
      value = decodeURIComponent(part.slice(key.length + 1));
    } catch {
      return null;
    }
    if (key === "tools") url ??= value;
    else token ??= value;
  }
  if (url === null || !/^https?:\/\/[^/]/i.test(url) || /[\p{White_Space}\p{Cc}]/u.test(url)) return null;
  return { url, token: token ?? "" };
}
