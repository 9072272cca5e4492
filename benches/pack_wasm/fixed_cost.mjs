// Per-call cost of small offline calls in wasm (single-threaded build, in Node, as the offline
// tools' Worker runs `offlineCall`): tiny boxes (5 water, 5 chloroform), small solvates (alanine
// dipeptide in a 20 Å cell, testosterone in a 24 Å cell) and polymer_chain of 100 styrene units.
// The first call of each tool (validator compiled then) and the median of the warm calls.
// Usage: node benches/pack_wasm/fixed_cost.mjs [REPEAT]   (default 30). Needs pkg/ (scripts/build.sh).
// Prints one JSON line per case.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { CASES } from "./cases.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const repeat = Number(process.argv[2] ?? 30);

const pkg = await import(join(ROOT, "pkg", "megane_builder_client.js"));
pkg.initSync({ module: readFileSync(join(ROOT, "pkg", "megane_builder_client_bg.wasm")) });

for (const [name, [tool, args]] of Object.entries(CASES)) {
  const call = (seed) => {
    const t0 = performance.now();
    const bytes = pkg.offlineCall(tool, { ...args, seed }, null);
    return [performance.now() - t0, bytes];
  };
  const [first, bytes] = call(1);
  const button = pkg.parseToolList(pkg.offlineToolsList(), "offline").buttons.find((b) => b.name === tool);
  const outcome = pkg.interpretOfflineCall(button, bytes);
  const times = [];
  for (let i = 0; i < repeat; i++) times.push(call(2 + i)[0]);
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({
    case: name, tool, ok: outcome.ok, atoms: outcome.ok ? outcome.result.atomCount : 0,
    firstMs: Number(first.toFixed(2)), medianMs: Number(times[times.length >> 1].toFixed(2)),
    minMs: Number(times[0].toFixed(2)), error: outcome.ok ? undefined : outcome.error,
  }));
}
