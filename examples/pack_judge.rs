//! The packing judge on the command line, for the bench scripts: judges a packed box (a §5.1
//! Structure or BuilderResult JSON file) and prints one JSON object (`offline::judged::report_json`).
//!
//! `cargo run --release --example pack_judge -- FILE [--fixed DOCUMENT.json] [--tolerance 2.0]
//!  [--target-density RHO] [--density-of all|packed] [--density-rtol 0.01]`
//! Exit status: 0 when the box passes (no pair below the tolerance, rigid copies, density on
//! target), 1 when it does not, 2 on bad input. Order (S_max, ⟨P2⟩/⟨P4⟩) is reported, not judged
//! in the exit status: a bench reports it for every engine alike.

use megane_builder_client::contract::structure::Structure;
use megane_builder_client::offline::judged::{judge_structure, report_json};
use megane_builder_client::pack::judge::report::Criteria;

fn read(path: &str) -> Result<Structure, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    // A BuilderResult or a CallToolResult holds the Structure deeper down.
    let inner = value
        .pointer("/structuredContent/structure")
        .or_else(|| value.get("structure"))
        .unwrap_or(&value);
    serde_json::from_value(inner.clone()).map_err(|e| format!("{path}: {e}"))
}

fn run() -> Result<bool, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut file = None;
    let mut fixed = None;
    let mut criteria = Criteria::at(2.0);
    let mut i = 0;
    let number = |i: usize| -> Result<f64, String> {
        args.get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{} needs a number", args[i]))
    };
    while i < args.len() {
        match args[i].as_str() {
            "--fixed" => {
                fixed = Some(args.get(i + 1).ok_or("--fixed needs a file")?.clone());
                i += 1;
            }
            "--tolerance" => {
                criteria.tolerance = number(i)?;
                i += 1;
            }
            "--target-density" => {
                criteria.target_density = Some(number(i)?);
                i += 1;
            }
            "--density-rtol" => {
                criteria.density_rtol = number(i)?;
                i += 1;
            }
            "--density-of" => {
                criteria.density_of_packed = args.get(i + 1).map(String::as_str) == Some("packed");
                i += 1;
            }
            other if file.is_none() && !other.starts_with("--") => file = Some(other.to_string()),
            other => return Err(format!("unknown argument {other}")),
        }
        i += 1;
    }
    let packed = read(&file.ok_or("no file to judge")?)?;
    let fixed = fixed.as_deref().map(read).transpose()?;
    let report = judge_structure(&packed, fixed.as_ref(), &criteria)?;
    println!("{}", report_json(&report));
    Ok(report.pass)
}

fn main() {
    match run() {
        Ok(pass) => std::process::exit(if pass { 0 } else { 1 }),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
