// Memory per atom of an offline liquid_box call in wasm (single-threaded build, in Node, as the
// offline tools' Worker runs it): the wasm memory size after the call (it never shrinks, so it is
// the call's peak), the process's peak RSS and its growth during the call, each case in a fresh
// process; and the progress updates (count, longest gap between two, in ms).
// Usage: node benches/pack_wasm/memory.mjs [CASES] [OUT]
//   CASES: comma-separated; a number N or `water-N` is N atoms of water, `mix8` is 50 000
//   molecules of eight species (193 100 atoms; liquid_box takes at most eight components; as
//   benches/pack_memory.rs). Default 10000,100000,300000.
//   OUT (optional): each result's structure is written there and judged by the project's judge
//   (examples/pack_judge.rs, built by `cargo build --release --example pack_judge`).
// Env: MEMORY_WARMUP=1 makes a 1 000-water call first, in the same process, so the growth is
// measured after the code a call runs has been compiled (a Worker's second call and later): a
// first call's RSS growth includes ~15-20 MB that does not depend on the size (issue 12, s7).
// The call is the one the offline Worker makes, `offlineCall`; its result is read back after the
// figures are taken (`interpretOfflineCall`, or JSON text from a package before it). MEMORY_PKG=DIR
// (relative to the repository, default pkg) loads another build, e.g. main's, for a comparison in
// the same minutes. MEMORY_RUNS=N (default 1) runs each case N times, each in a fresh process, and
// adds a summary line per case with the median (the lower middle run for an even N), lowest and
// highest RSS growth per atom: a cold call's RSS moves by ±5 MB from run to run (how much of the
// code V8 has compiled, and how much memory its background compiler's zones leave with the
// allocator, when the peak is reached).
// Prints one JSON line per run (and per case with MEMORY_RUNS > 1). Needs pkg/ (scripts/build.sh).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const [cases = "10000,100000,300000", out = "", child] = process.argv.slice(2);

const MIX8 = [
  ["water", 43300], ["methanol", 1500], ["ethanol", 1000], ["acetonitrile", 1000], ["benzene", 1500],
  ["chloroform", 1000], ["caffeine", 400], ["alanine_dipeptide", 300],
];

function molecule(name) {
  for (const dir of [join(ROOT, "tests", "fixtures", "molecules"), join(ROOT, "tests", "fixtures")]) {
    try {
      return { name, molblock: readFileSync(join(dir, `${name}.mol`), "utf8") };
    } catch {}
  }
  throw new Error(`no molecule ${name}`);
}

function components(name) {
  if (name === "mix8") return MIX8.map(([m, count]) => ({ molecule: molecule(m), count }));
  const atoms = Number(name.replace(/^water-/, ""));
  return [{ molecule: molecule("water"), count: Math.floor(atoms / 3) }];
}

if (child !== "--child") {
  const runs = Math.max(1, Number(process.env.MEMORY_RUNS ?? 1));
  for (const name of cases.split(",")) {
    const growth = [];
    for (let run = 0; run < runs; run++) growth.push(measure(name).rssGrowthPerAtom);
    if (runs > 1) {
      const sorted = [...growth].sort((a, b) => a - b);
      console.log(JSON.stringify({ case: name, runs, rssGrowthPerAtom: { median: sorted[(runs - 1) >> 1], low: sorted[0], high: sorted[runs - 1], each: growth } }));
    }
  }
}

/** One cold run of `name` in a fresh process: its line is printed (with the checker's verdict when
 * OUT is given) and returned. */
function measure(name) {
  const line = execFileSync(process.execPath, ["--max-old-space-size=4096", fileURLToPath(import.meta.url), name, out, "--child"], { encoding: "utf8", maxBuffer: 1 << 20 });
  const r = JSON.parse(line);
  if (out && r.file) {
    try {
      const report = execFileSync(join(ROOT, "target", "release", "examples", "pack_judge"), [r.file, "--tolerance", "2.0"], { encoding: "utf8", maxBuffer: 1 << 28 });
      const c = JSON.parse(report);
      r.check = { pass: c.pass, min_intermolecular_distance: c.min_intermolecular_distance, pairs_below_tolerance: c.pairs_below_tolerance, non_rigid_molecules: c.non_rigid_molecules, s_max: c.s_max, s_threshold: c.s_threshold };
    } catch (error) {
      const c = error.stdout ? JSON.parse(error.stdout) : null;
      r.check = c ? { pass: c.pass, min_intermolecular_distance: c.min_intermolecular_distance, pairs_below_tolerance: c.pairs_below_tolerance, non_rigid_molecules: c.non_rigid_molecules, s_max: c.s_max, s_threshold: c.s_threshold } : { error: String(error.message).split("\n")[0] };
    }
  }
  console.log(JSON.stringify(r));
  return r;
}

if (child === "--child") {
  const name = cases;
  const dir = join(ROOT, process.env.MEMORY_PKG || "pkg");
  const pkg = await import(join(dir, "megane_builder_client.js"));
  const wasm = pkg.initSync({ module: readFileSync(join(dir, "megane_builder_client_bg.wasm")) });
  const transfer = typeof pkg.interpretOfflineCall === "function";
  const args = { components: components(name), seed: 1 };
  const warm = process.env.MEMORY_WARMUP === "1";
  if (warm) pkg.offlineCall("liquid_box", { components: components("3000"), seed: 2 }, null);
  const before = { wasm: wasm.memory.buffer.byteLength, rss: process.memoryUsage().rss };
  let updates = 0;
  let last = performance.now();
  let maxGap = 0;
  let gapAt = "";
  const t0 = performance.now();
  const bytes = pkg.offlineCall("liquid_box", args, (fraction, message) => {
    const now = performance.now();
    if (now - last > maxGap) {
      maxGap = now - last;
      gapAt = message;
    }
    last = now;
    updates += 1;
  });
  const end = performance.now();
  const ms = end - t0;
  if (end - last > maxGap) {
    maxGap = end - last;
    gapAt = "(end of call: result written)";
  }
  const after = { wasm: wasm.memory.buffer.byteLength };
  const peakRss = process.resourceUsage().maxRSS * 1024;
  let result;
  if (transfer) {
    const button = pkg.parseToolList(pkg.offlineToolsList(), "offline").buttons.find((b) => b.name === "liquid_box");
    const outcome = pkg.interpretOfflineCall(button, bytes);
    result = outcome.ok ? { isError: false, structuredContent: outcome.result.toJSON() } : { isError: true, error: outcome.error };
  } else {
    result = JSON.parse(new TextDecoder().decode(bytes));
  }
  const n = result.structuredContent?.structure?.elements?.length ?? 0;
  let file = null;
  if (out && n) {
    mkdirSync(out, { recursive: true });
    file = join(out, `wasm-${name}.json`);
    writeFileSync(file, JSON.stringify(result.structuredContent));
  }
  console.log(JSON.stringify({
    case: name, atoms: n, warm, ms: Math.round(ms), ok: result.isError === false,
    wasmBytes: after.wasm, wasmPerAtom: Math.round(after.wasm / n),
    wasmGrowthPerAtom: Math.round((after.wasm - before.wasm) / n),
    peakRssBytes: peakRss, peakRssPerAtom: Math.round(peakRss / n),
    rssGrowthPerAtom: Math.round((peakRss - before.rss) / n), resultBytes: bytes.length, transfer,
    progressUpdates: updates, longestGapMs: Math.round(maxGap), longestGapBefore: gapAt,
    warnings: result.structuredContent?.warnings ?? [], file,
  }));
}
