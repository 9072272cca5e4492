// polymer_chain of 200 units in wasm (single-threaded build, in Node, as the offline tools'
// Worker runs `offlineCall`): the bench monomers (ethylene, styrene: tests/fixtures) and the 20
// repeat units of tests/fixtures/monomers. Per package and case: one warm-up call, then the median
// of REPEAT calls with seeds 1…REPEAT (each a different chain), and how many were refused. With several packages (e.g. this
// branch's and main's), the calls alternate between them, case by case, so both see the same load.
// Usage: node benches/polymer_wasm.mjs [REPEAT] [PKG_DIR,…]   (default 9, pkg). Needs pkg/
// (THREADS=0 bash scripts/build.sh). Prints one JSON line per package and case. Env: POLYMER_WASM_CASES=a,b
// (only those cases), POLYMER_WASM_SET=extra (the fixture units of set "extra" instead).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const repeat = Number(process.argv[2] ?? 9);
const dirs = (process.argv[3] ?? "pkg").split(",");
const only = process.env.POLYMER_WASM_CASES?.split(",");
// POLYMER_WASM_SET=extra: the fixture units of set "extra" instead of the 20.
const set = process.env.POLYMER_WASM_SET ?? "issue";

const packages = [];
for (const dir of dirs) {
  const base = resolve(ROOT, dir);
  const pkg = await import(join(base, "megane_builder_client.js") + `?${packages.length}`);
  pkg.initSync({ module: readFileSync(join(base, "megane_builder_client_bg.wasm")) });
  packages.push([dir, pkg]);
}

const cases = [];
for (const name of ["ethylene", "styrene"]) {
  const molblock = readFileSync(join(ROOT, "tests", "fixtures", `${name}.mol`), "utf8");
  cases.push([name, { monomer: { name, molblock }, head: 0, tail: 1 }]);
}
const index = JSON.parse(readFileSync(join(ROOT, "tests", "fixtures", "monomers", "monomers.json"), "utf8"));
for (const u of index.units.filter((u) => u.set === set)) {
  const molblock = readFileSync(join(ROOT, "tests", "fixtures", "monomers", u.file), "utf8");
  cases.push([u.name, { monomer: { name: u.name, molblock }, head: u.head, tail: u.tail }]);
}

for (const [name, args] of cases) {
  if (only && !only.includes(name)) continue;
  const times = packages.map(() => []);
  const outcome = packages.map(() => null);
  const refusals = packages.map(() => 0);
  const call = (p, seed) => {
    const [, pkg] = packages[p];
    const t0 = performance.now();
    const bytes = pkg.offlineCall("polymer_chain", { ...args, seed, length: 200 }, null);
    return [performance.now() - t0, bytes];
  };
  packages.forEach((_, p) => call(p, 1000));
  for (let seed = 1; seed <= repeat; seed++) {
    packages.forEach((_, p) => {
      const [ms, bytes] = call(p, seed);
      times[p].push(ms);
      const [, pkg] = packages[p];
      const button = pkg.parseToolList(pkg.offlineToolsList(), "offline").buttons.find((b) => b.name === "polymer_chain");
      const o = pkg.interpretOfflineCall(button, bytes);
      if (!o.ok) refusals[p] += 1;
      if (outcome[p] === null || (outcome[p].ok && !o.ok)) outcome[p] = o;
    });
  }
  packages.forEach(([dir], p) => {
    const t = times[p].sort((a, b) => a - b);
    const o = outcome[p];
    console.log(JSON.stringify({
      pkg: dir, case: `polymer-${name}-200`, refusals: refusals[p], atoms: o.ok ? o.result.atomCount : 0,
      medianMs: Number(t[t.length >> 1].toFixed(2)), minMs: Number(t[0].toFixed(2)),
      error: o.ok ? undefined : o.error,
    }));
  });
}
