//! Offline-tool benchmark, natively: whole `offline::call_tool` calls (argument check, tool,
//! result JSON) on tiny and small cases, where the per-call fixed cost shows, and `polymer_chain`
//! of 10, 100 and 1 000 units of ethylene and styrene (`tests/fixtures`).
//!
//! `cargo bench --bench offline` (std harness off; under `cargo test --benches` a smoke run only).
//! Prints one JSON line per case: median wall milliseconds over `OFFLINE_BENCH_REPEAT` (default
//! 20) calls, and for chains the non-bonded contacts below the bound (brute force, f32-rounded),
//! which must be 0. The wasm figures come from `benches/pack_wasm/run.mjs`; packmol's from
//! `scripts/bench-pack.sh` / `bench-pack-wasm.sh` in the same run; the reference server's
//! `polymer_chain` times are in `tests/fixtures/reference-server/http-polymer/`.

use std::time::Instant;

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
/// on f32-rounded positions.
fn contacts(structure: &Value) -> usize {
    let elements: Vec<u8> = serde_json::from_value(structure["elements"].clone()).unwrap();
    let flat: Vec<f64> = serde_json::from_value(structure["positions"].clone()).unwrap();
    let bonds: Vec<[usize; 2]> = serde_json::from_value(structure["bonds"].clone()).unwrap();
    let unit: Vec<i64> = serde_json::from_value(structure["residueIds"].clone()).unwrap();
    let n = elements.len();
    let p: Vec<[f64; 3]> = flat
        .chunks(3)
        .map(|c| [c[0] as f32 as f64, c[1] as f32 as f64, c[2] as f32 as f64])
        .collect();
    let mut nb = vec![Vec::new(); n];
    for [i, j] in bonds {
        nb[i].push(j);
        nb[j].push(i);
    }
    let mut bad = 0;
    for i in 0..n {
        let mut near = nb[i].clone();
        for &j in &nb[i] {
            near.extend(&nb[j]);
        }
        for j in i + 1..n {
            if unit[i] == unit[j] || near.contains(&j) {
                continue;
            }
            let d = (0..3)
                .map(|k| (p[i][k] - p[j][k]).powi(2))
                .sum::<f64>()
                .sqrt();
            if d < polymer::contact_bound(elements[i], elements[j]) {
                bad += 1;
            }
        }
    }
    bad
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
    let units: &[usize] = if smoke { &[10] } else { &[10, 100, 1000] };
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
}
