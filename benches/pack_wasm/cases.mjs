// Small offline cases shared by the wasm benches (fixed_cost.mjs in Node, run.mjs in Chromium):
// tiny boxes (5 water, 5 chloroform at 1 g/cm³), small solvates (alanine dipeptide in a 20 Å cell,
// testosterone in a 24 Å cell, water at 1 g/cm³) and polymer_chain of 100 styrene units. Molecules
// from tests/fixtures/molecules or tests/fixtures; packmol runs the same boxes through the pack
// bench's driver (benches/support/packmol.rs, `cargo bench --bench pack`).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export function molecule(name) {
  for (const dir of [join(ROOT, "tests", "fixtures", "molecules"), join(ROOT, "tests", "fixtures")]) {
    try {
      return { name, molblock: readFileSync(join(dir, `${name}.mol`), "utf8") };
    } catch {}
  }
  throw new Error(`no molecule ${name}`);
}

const Z = { H: 1, C: 6, N: 7, O: 8, Cl: 17 };
/** A V2000 molecule as a §5.1 document centred in a cubic cell of `side` Å. */
export function solute(name, side) {
  const lines = molecule(name).molblock.split("\n");
  const [na, nb] = [Number(lines[3].slice(0, 3)), Number(lines[3].slice(3, 6))];
  const atoms = lines.slice(4, 4 + na).map((l) => [Number(l.slice(0, 10)), Number(l.slice(10, 20)), Number(l.slice(20, 30)), Z[l.slice(31, 34).trim()]]);
  const c = [0, 1, 2].map((k) => atoms.reduce((s, a) => s + a[k], 0) / na);
  return {
    elements: atoms.map((a) => a[3]),
    positions: atoms.flatMap((a) => [0, 1, 2].map((k) => a[k] - c[k] + side / 2)),
    cell: [side, 0, 0, 0, side, 0, 0, 0, side],
    bonds: lines.slice(4 + na, 4 + na + nb).map((l) => [Number(l.slice(0, 3)) - 1, Number(l.slice(3, 6)) - 1]),
  };
}

/** `name → [tool, arguments without seed]`. */
export const CASES = {
  "tiny-5-water": ["liquid_box", { components: [{ molecule: molecule("water"), count: 5 }] }],
  "tiny-5-chloroform": ["liquid_box", { components: [{ molecule: molecule("chloroform"), count: 5 }] }],
  "solvate-alanine-dipeptide-20A": ["solvate", { document: solute("alanine_dipeptide", 20), solvent: molecule("water") }],
  "solvate-testosterone-24A": ["solvate", { document: solute("testosterone", 24), solvent: molecule("water") }],
  "polymer-styrene-100": ["polymer_chain", { monomer: molecule("styrene"), head: 0, tail: 1, length: 100 }],
};

