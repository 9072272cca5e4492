//! Offline-tool benchmark, natively: whole `offline::call_tool` calls (argument check, tool,
//! result JSON) on tiny and small cases, where the per-call fixed cost shows, `polymer_chain` of
//! 10, 100, 200 and 1 000 units of ethylene and styrene (`tests/fixtures`), and the coil table
//! over the repeat units of `tests/fixtures/monomers`.
//!
//! `cargo bench --bench offline` (std harness off; under `cargo test --benches` a smoke run only).
//! Prints one JSON line per case: median wall milliseconds over `OFFLINE_BENCH_REPEAT` (default
//! 20) calls, and for chains the non-bonded contacts below the bound (`polymer::coil::contacts`,
//! f32-rounded), which must be 0. Then one line per repeat unit (`OFFLINE_BENCH_MONOMERS=name,…`
//! for some only): refusals over 10, 50 and 200 units with seeds 1–5, the worst junction bond's
//! deviation from the RDKit dimer's, contacts, and over seeds 1–20 the mean R²/((N−1)b²) at 50 and
//! 200 units, the Flory exponent of Rg between them and the median milliseconds of a 200-unit
//! chain. The wasm figures come from `benches/pack_wasm/run.mjs`; packmol's from
//! `scripts/bench-pack.sh` / `bench-pack-wasm.sh` in the same run; the reference server's
//! `polymer_chain` times are in `tests/fixtures/reference-server/http-polymer/`.

use std::time::Instant;

use megane_builder_client::offline::molecule::read_molecule;
use megane_builder_client::offline::polymer::{build_chain, coil, Monomer};
use megane_builder_client::offline::{call_tool, polymer};
use megane_builder_client::pack::PackControl;
use serde_json::{json, Value};

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn median_ms(repeat: usize, mut f: impl FnMut() -> Value) -> (f64, Value) {
    let mut times = Vec::new();
    let mut last = Value::Null;
    for _ in 0..repeat.max(1) {
        let t0 = Instant::now();
        last = f();
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], last)
}

/// Pairs of atoms of different units, more than two bonds apart, below `polymer::contact_bound`,
/// on f32-rounded positions, of a structure as JSON.
fn contacts(structure: &Value) -> usize {
    let elements: Vec<u8> = serde_json::from_value(structure["elements"].clone()).unwrap();
    let flat: Vec<f64> = serde_json::from_value(structure["positions"].clone()).unwrap();
    let bonds: Vec<[u32; 2]> = serde_json::from_value(structure["bonds"].clone()).unwrap();
    let unit: Vec<i64> = serde_json::from_value(structure["residueIds"].clone()).unwrap();
    let p: Vec<[f64; 3]> = flat.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
    coil::contacts(&elements, &p, &bonds, &unit).len()
}

/// The coil table over the fixture repeat units (see the header).
fn monomer_table(root: &str, smoke: bool) {
    let dir = format!("{root}/tests/fixtures/monomers");
    let index: Value = serde_json::from_str(&read(&format!("{dir}/monomers.json"))).unwrap();
    let only = std::env::var("OFFLINE_BENCH_MONOMERS").ok();
    let control = PackControl::default();
    for u in index["units"].as_array().unwrap() {
        let name = u["name"].as_str().unwrap();
        let chosen = match &only {
            Some(list) => list.split(',').any(|x| x == name),
            None => !smoke || name == "polyethylene",
        };
        if !chosen {
            continue;
        }
        let molecule = read_molecule(&json!({"name": name, "molblock": read(&format!("{dir}/{}", u["file"].as_str().unwrap()))})).unwrap();
        let monomer = Monomer::new(
            molecule,
            u["head"].as_u64().unwrap() as usize,
            u["tail"].as_u64().unwrap() as usize,
        )
        .unwrap();
        let reference = u["junction_length"].as_f64().unwrap();
        let (lengths, seeds): (&[usize], u64) = if smoke {
            (&[10], 1)
        } else {
            (&[10, 50, 200], 5)
        };
        let (mut refusals, mut worst, mut contact_count) = (0, 0.0f64, 0);
        for &n in lengths {
            for seed in 1..=seeds {
                match build_chain(&monomer, n, seed, &control) {
                    Ok(chain) => {
                        let unit: Vec<i64> = chain.unit.iter().map(|&x| i64::from(x)).collect();
                        contact_count +=
                            coil::contacts(&chain.elements, &chain.positions, &chain.bonds, &unit)
                                .len();
                        for &[i, j] in &chain.bonds {
                            let (i, j) = (i as usize, j as usize);
                            if chain.unit[i] != chain.unit[j] {
                                let d = (0..3)
                                    .map(|k| {
                                        (chain.positions[i][k] - chain.positions[j][k]).powi(2)
                                    })
                                    .sum::<f64>()
                                    .sqrt();
                                worst = worst.max((d - reference).abs());
                            }
                        }
                    }
                    Err(_) => refusals += 1,
                }
            }
        }
        let coil_seeds = if smoke { 2 } else { 20 };
        let mut stats = Vec::new();
        let mut ms200 = Vec::new();
        for n in [50usize, 200] {
            let (mut ratio, mut rg2, mut built) = (0.0, Vec::new(), 0);
            for seed in 1..=coil_seeds {
                let t0 = Instant::now();
                let Ok(chain) =
                    build_chain(&monomer, if smoke { n / 10 } else { n }, seed, &control)
                else {
                    continue;
                };
                if n == 200 {
                    ms200.push(t0.elapsed().as_secs_f64() * 1e3);
                }
                let unit: Vec<i64> = chain.unit.iter().map(|&x| i64::from(x)).collect();
                let c = coil::coil(&chain.positions, &unit).unwrap();
                ratio += c.ratio();
                rg2.push(c.gyration * c.gyration);
                built += 1;
            }
            let k = f64::from(built.max(1));
            stats.push((ratio / k, rg2));
        }
        let (nu, nu_error) = coil::exponent_over_seeds(50, &stats[0].1, 200, &stats[1].1);
        ms200.sort_by(f64::total_cmp);
        println!(
            "{}",
            json!({"monomer": name, "set": u["set"], "refusals": refusals, "worstJunctionDeviation": (worst * 1e4).round() / 1e4,
                   "contacts": contact_count, "ratio50": (stats[0].0 * 100.0).round() / 100.0, "ratio200": (stats[1].0 * 100.0).round() / 100.0,
                   "nu": (nu * 1000.0).round() / 1000.0, "nuError": (nu_error * 1000.0).round() / 1000.0, "ms200": ms200.get(ms200.len() / 2).map(|m| (m * 10.0).round() / 10.0)})
        );
    }
}

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let shared = format!("{root}/tests/fixtures");
    let smoke = !std::env::args().any(|a| a == "--bench");
    let repeat: usize = std::env::var("OFFLINE_BENCH_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if smoke { 1 } else { 20 });
    let control = PackControl::default();
    let water =
        json!({"name": "water", "molblock": read(&format!("{shared}/molecules/water.mol"))});
    let caffeine = read(&format!("{shared}/molecules/caffeine.mol"));
    let caffeine = megane_builder_client::chem::molblock::parse_molblock(&caffeine).unwrap();
    let solute = json!({
        "elements": caffeine.elements,
        "positions": caffeine.positions.iter().flat_map(|p| p.map(|x| x + 10.0)).collect::<Vec<f64>>(),
        "cell": [20.0, 0, 0, 0, 20.0, 0, 0, 0, 20.0],
        "bonds": caffeine.bonds.iter().map(|&(i, j)| [i, j]).collect::<Vec<_>>(),
    });
    let tiny: Vec<(&str, &str, Value)> = vec![
        (
            "tiny-5-water",
            "liquid_box",
            json!({"components": [{"molecule": water, "count": 5}], "seed": 1}),
        ),
        (
            "small-solvate-caffeine-20A",
            "solvate",
            json!({"document": solute, "solvent": water, "seed": 1}),
        ),
    ];
    for (case, tool, args) in &tiny {
        let (ms, response) = median_ms(repeat, || call_tool(tool, args, &control));
        assert_eq!(response["isError"], false, "{case}: {response}");
        let atoms = response["structuredContent"]["structure"]["elements"]
            .as_array()
            .unwrap()
            .len();
        println!(
            "{}",
            json!({"case": case, "tool": tool, "atoms": atoms, "ms": ms})
        );
    }
    let units: &[usize] = if smoke { &[10] } else { &[10, 100, 200, 1000] };
    for name in ["ethylene", "styrene"] {
        let monomer =
            json!({"name": name, "molblock": read(&format!("{root}/tests/fixtures/{name}.mol"))});
        for &length in units {
            let args =
                json!({"monomer": monomer, "head": 0, "tail": 1, "seed": 1, "length": length});
            // Through the tool (argument check included) where the schema allows the length (≤ 200).
            let (ms, response) = if length <= 200 {
                median_ms(repeat, || call_tool("polymer_chain", &args, &control))
            } else {
                median_ms(repeat.min(5), || {
                    polymer::run(
                        &args,
                        &control,
                        megane_builder_client::offline::Place::Worker,
                    )
                    .unwrap()
                    .to_value()
                })
            };
            assert_eq!(response["isError"], false, "{name} {length}: {response}");
            let structure = &response["structuredContent"]["structure"];
            let atoms = structure["elements"].as_array().unwrap().len();
            println!(
                "{}",
                json!({"case": format!("polymer-{name}-{length}"), "tool": "polymer_chain", "atoms": atoms, "ms": ms, "contacts": contacts(structure)})
            );
        }
    }
    monomer_table(root, smoke);
}
