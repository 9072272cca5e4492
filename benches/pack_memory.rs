//! Memory of an offline `liquid_box` call, natively, per phase: a counting global allocator (this
//! bench only, never the library) records the heap's high-water mark between the packer's progress
//! messages, so each phase — argument check, feasibility, placement, optimisation (L-BFGS, Verlet
//! rebuilds, movebad), the final distance check, and the result (structure and what the offline
//! Worker hands the page, `call_tool_transfer`) — gets its own peak, in bytes per atom.
//!
//! `cargo bench --bench pack_memory` (std harness off; under `cargo test --benches` a smoke run
//! only). Environment: `PACK_MEMORY_CASES` (default `water-100000,water-300000,mix8`;
//! `water-N` is N atoms of water, `mix8` 50 000 molecules of eight species, 193 100 atoms: the
//! issue's 9-species box as `liquid_box` takes it, at most eight components),
//! `PACK_MEMORY_OUT` (default `target/bench-pack-memory`): each result's structure is written there
//! and judged by the project's judge (`offline::judged`). Prints one JSON line per case. The wasm figures (memory size after the call, Node RSS)
//! come from `benches/pack_wasm/memory.mjs`; packmol's RSS from `scripts/bench-pack.sh`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use megane_builder_client::contract::structure::Structure;
use megane_builder_client::offline::judged::{judge_structure, report_json};
use megane_builder_client::offline::{call_tool_transfer, transfer};
use megane_builder_client::pack::judge::report::Criteria;
use megane_builder_client::pack::PackControl;
use serde_json::{json, Value};

/// The system allocator, counting the bytes live and their high-water mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // A moving realloc holds both blocks for a moment: count the new one first.
            grew(new_size);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peaks per phase (bytes above the call's starting heap), keyed by the first word of the
/// packer's progress message.
struct Phases {
    base: usize,
    current: String,
    peaks: BTreeMap<String, usize>,
    order: Vec<String>,
}

impl Phases {
    fn close(&mut self, next: &str) {
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(self.base);
        let current = std::mem::replace(&mut self.current, next.to_string());
        let slot = self.peaks.entry(current.clone()).or_insert(0);
        *slot = (*slot).max(peak);
        if !self.order.contains(&current) {
            self.order.push(current);
        }
        PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

fn phase_of(message: &str) -> String {
    match message.split_whitespace().next().unwrap_or("") {
        "checking" if message.contains("fit") => "feasibility",
        "checking" => "final-check",
        "placing" => "placement",
        "resolving" => "optimisation",
        "converged" | "not" => "result",
        _ => "other",
    }
    .to_string()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The components of a case: `(molecule name, count)`.
fn components(case: &str) -> Vec<(&'static str, usize)> {
    if let Some(n) = case.strip_prefix("water-") {
        let atoms: usize = n.parse().expect("water-<atoms>");
        return vec![("water", atoms / 3)];
    }
    match case {
        // 50 000 molecules of eight species, 193 100 atoms.
        "mix8" => vec![
            ("water", 43_300),
            ("methanol", 1_500),
            ("ethanol", 1_000),
            ("acetonitrile", 1_000),
            ("benzene", 1_500),
            ("chloroform", 1_000),
            ("caffeine", 400),
            ("alanine_dipeptide", 300),
        ],
        other => panic!("unknown case {other}"),
    }
}

fn molecule(root: &Path, name: &str) -> Value {
    let shared = root
        .join("tests/fixtures/molecules")
        .join(format!("{name}.mol"));
    let local = root.join("tests/fixtures").join(format!("{name}.mol"));
    let path = if shared.exists() { shared } else { local };
    json!({"name": name, "molblock": read(&path)})
}

/// The project's judge on the result's structure (after the figures are taken): its verdict,
/// closest pair, pairs below the tolerance, rigid copies and S_max.
fn judge(structured: &Value) -> Value {
    let structure: Structure = match serde_json::from_value(structured["structure"].clone()) {
        Ok(s) => s,
        Err(e) => return json!({"error": e.to_string()}),
    };
    match judge_structure(&structure, None, &Criteria::at(2.0)) {
        Ok(r) => {
            let mut v = report_json(&r);
            if let Some(m) = v.as_object_mut() {
                m.retain(|k, _| {
                    matches!(
                        k.as_str(),
                        "pass"
                            | "min_intermolecular_distance"
                            | "pairs_below_tolerance"
                            | "non_rigid_molecules"
                            | "s_max"
                            | "s_threshold"
                    )
                });
            }
            v
        }
        Err(e) => json!({"error": e}),
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let smoke = !std::env::args().any(|a| a == "--bench");
    let cases = if smoke {
        "water-3000".to_string()
    } else {
        std::env::var("PACK_MEMORY_CASES")
            .unwrap_or_else(|_| "water-100000,water-300000,mix8".into())
    };
    let out = std::env::var("PACK_MEMORY_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/bench-pack-memory"));
    std::fs::create_dir_all(&out).expect("output dir");
    for case in cases.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        let comps: Vec<Value> = components(case)
            .into_iter()
            .map(|(name, count)| json!({"molecule": molecule(&root, name), "count": count}))
            .collect();
        let args = json!({"components": comps, "seed": 1});
        let phases = Mutex::new(Phases {
            base: 0,
            current: "arguments".into(),
            peaks: BTreeMap::new(),
            order: Vec::new(),
        });
        let report = |_: f64, message: &str| {
            let next = phase_of(message);
            let mut p = phases.lock().unwrap();
            if p.current != next {
                p.close(&next);
            }
        };
        let control = PackControl {
            cancel: None,
            progress: Some(&report),
        };
        let base = LIVE.load(Ordering::Relaxed);
        phases.lock().unwrap().base = base;
        PEAK.store(base, Ordering::Relaxed);
        let t0 = Instant::now();
        let bytes = call_tool_transfer("liquid_box", &args, &control);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let mut p = phases.into_inner().unwrap();
        p.close("done");
        // What is still held when the call has returned: the result bytes.
        let held = LIVE.load(Ordering::Relaxed).saturating_sub(base);
        // The Worker's answer (a successful result's typed parts) as JSON.
        let response: Value = match transfer::decode(&bytes.as_slice()).expect("transfer") {
            transfer::Decoded::Json(json) => serde_json::from_slice(&json).expect("result JSON"),
            transfer::Decoded::Wire(wire) => json!({
                "isError": false,
                "structuredContent": serde_json::to_value(wire.structured_content).expect("result"),
            }),
        };
        assert_eq!(
            response["isError"], false,
            "{case}: {}",
            response["content"]
        );
        let structured = &response["structuredContent"];
        let atoms = structured["structure"]["elements"]
            .as_array()
            .map_or(0, Vec::len);
        let file = out.join(format!("{case}.json"));
        std::fs::write(&file, serde_json::to_vec(structured).unwrap()).expect("write structure");
        let check = judge(structured);
        let per_atom = |b: usize| (b as f64 / atoms.max(1) as f64).round() as u64;
        let peak = p.peaks.values().copied().max().unwrap_or(0);
        let phases: serde_json::Map<String, Value> = p
            .order
            .iter()
            .map(|k| (k.clone(), json!(per_atom(p.peaks[k]))))
            .collect();
        println!(
            "{}",
            json!({
                "case": case, "atoms": atoms, "ms": ms.round(),
                "peakBytesPerAtom": per_atom(peak), "peakMB": (peak as f64 / 1e6).round(),
                "phasePeakBytesPerAtom": phases,
                "resultBytesPerAtom": per_atom(bytes.len()), "heldAfterCallPerAtom": per_atom(held),
                "warnings": structured["warnings"], "check": check,
            })
        );
    }
}
