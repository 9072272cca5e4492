//! The coil exponent ν of `polymer_chain` over many seeds, for the 20 polymers issue 32 names:
//! the test (`tests/polymer.rs`) judges ν over seeds 1–20, where it is known to ±0.05 only; this
//! measures it to about ±0.01. Each unit of `tests/fixtures/monomers` (set `issue`) is built at 50
//! and 200 units with seeds 1…S through `build_chain` (the tool's own builder), and ν is read by
//! `coil::exponent_over_seeds`, the judge the test uses.
//!
//! `cargo run --profile coil --example coil_exponents -- [SEEDS]` (default 500; ~4 min on one core).
//! Prints one line per polymer: R²/((N−1)b²) at 50 and 200 units, ν ± its standard error.

use megane_builder_client::offline::molecule::read_molecule;
use megane_builder_client::offline::polymer::{build_chain, coil, Monomer};
use megane_builder_client::pack::PackControl;
use serde_json::{json, Value};

const MONOMERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/monomers");

/// Mean R²/((N−1)b²) and each seed's Rg² (Å²) of chains of `units` units over seeds 1…`seeds`.
fn over_seeds(monomer: &Monomer, units: usize, seeds: u64) -> Result<(f64, Vec<f64>), String> {
    let control = PackControl::default();
    let (mut ratio, mut rg2) = (0.0, Vec::new());
    for seed in 1..=seeds {
        let chain = build_chain(monomer, units, seed, &control).map_err(|e| format!("{e:?}"))?;
        let unit: Vec<i64> = chain.unit.iter().map(|&u| i64::from(u)).collect();
        let measured = coil::coil(&chain.positions, &unit).ok_or("no coil")?;
        ratio += measured.ratio();
        rg2.push(measured.gyration.powi(2));
    }
    Ok((ratio / seeds as f64, rg2))
}

fn main() -> Result<(), String> {
    let seeds: u64 = match std::env::args().nth(1) {
        Some(s) => s
            .parse()
            .map_err(|_| format!("{s}: not a number of seeds"))?,
        None => 500,
    };
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{MONOMERS}/monomers.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    for u in index["units"].as_array().ok_or("no units")? {
        if u["set"] != "issue" {
            continue;
        }
        let name = u["name"].as_str().ok_or("a unit without a name")?;
        let file = format!("{MONOMERS}/{}", u["file"].as_str().ok_or("no file")?);
        let molblock = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
        let end = |key: &str| u[key].as_u64().map(|v| v as usize).ok_or("no head or tail");
        let molecule = read_molecule(&json!({"name": name, "molblock": molblock}))?;
        let monomer = Monomer::new(molecule, end("head")?, end("tail")?)?;
        let (r50, rg2_50) = over_seeds(&monomer, 50, seeds)?;
        let (r200, rg2_200) = over_seeds(&monomer, 200, seeds)?;
        let (nu, sigma) = coil::exponent_over_seeds(50, &rg2_50, 200, &rg2_200);
        println!(
            "{name}: R²/((N−1)b²) {r50:.2} at 50, {r200:.2} at 200; ν {nu:.3} ± {sigma:.3} over seeds 1–{seeds}"
        );
    }
    Ok(())
}
