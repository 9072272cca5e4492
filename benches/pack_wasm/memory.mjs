// Memory per atom of an offline liquid_box call in wasm (single-threaded build, in Node, as the
// offline tools' Worker runs it): the wasm memory size after the call (it never shrinks, so it is
// the call's peak) and the process's peak RSS, each size in a fresh process.
// Usage: node benches/pack_wasm/memory.mjs [ATOMS,...]   (default 10000,100000,300000 water atoms)
// Prints one JSON line per size. Needs pkg/ (scripts/build.sh).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const [sizes = "10000,100000,300000", child] = process.argv.slice(2);

if (child !== "--child") {
  for (const atoms of sizes.split(",").map(Number)) {
    const out = execFileSync(process.execPath, ["--max-old-space-size=4096", fileURLToPath(import.meta.url), String(atoms), "--child"], { encoding: "utf8" });
    process.stdout.write(out);
  }
} else {
  const atoms = Number(sizes);
  const pkg = await import(join(ROOT, "pkg", "megane_builder_client.js"));
  const wasm = pkg.initSync({ module: readFileSync(join(ROOT, "pkg", "megane_builder_client_bg.wasm")) });
  const water = readFileSync(join(ROOT, "..", "shared", "fixtures", "molecules", "water.mol"), "utf8");
  const count = Math.round(atoms / 3);
  const before = { wasm: wasm.memory.buffer.byteLength, rss: process.memoryUsage().rss };
  const t0 = performance.now();
  const bytes = pkg.offlineCall("liquid_box", { components: [{ molecule: { name: "water", molblock: water }, count }], seed: 1 }, null);
  const ms = performance.now() - t0;
  const after = { wasm: wasm.memory.buffer.byteLength, rss: process.memoryUsage().rss };
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const text = new TextDecoder().decode(bytes.subarray(0, 200));
  const n = count * 3;
  console.log(JSON.stringify({
    atoms: n, ms: Math.round(ms), ok: !text.includes('"isError":true'),
    wasmBytes: after.wasm, wasmPerAtom: Math.round(after.wasm / n),
    wasmGrowthPerAtom: Math.round((after.wasm - before.wasm) / n),
    peakRssBytes: peakRss, peakRssPerAtom: Math.round(peakRss / n), resultBytes: bytes.length,
  }));
}
