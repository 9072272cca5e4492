//! Packing benchmark: our `pack::pack` vs molpack 0.4.0 (same run, same inputs)
//! on the packmol baseline cases (see benches/packmol-baseline/README.md)
//! and the small cases of the wasm bench (benches/pack_wasm/cases.mjs, packmol through
//! benches/pack_wasm/packmol_small.py): `t5w` 5 water and `t5c` 5 chloroform at
//! 1 g/cm³, `sala` alanine dipeptide fixed at the centre of a 20 Å cell with 263
//! water and `stst` testosterone in a 24 Å cell with 452 water (1 g/cm³ in the
//! cell minus the solute's vdW spheres: packmol_small.py's count, and the offline
//! `solvate` tool's).
//!
//! `cargo bench --bench pack` (std harness; under `cargo test --benches` only a
//! quick smoke run happens). Environment:
//! - `PACK_BENCH_CASES` (default `a,b,c,d,e`; add `f` for 100 000 water),
//! - `PACK_BENCH_TOL` (default `2.0` Å; case `g` = 500 benzene for tolerance sweeps),
//! - `PACK_BENCH_REPEAT` (default 10; at least 100 on the small cases): each
//!   engine's runs are repeated (while under 2 s in total) and averaged,
//! - `PACK_BENCH_MAXIT` (default 20 000): our iteration budget,
//! - `PACK_BENCH_SEEDS` (default `1`), `PACK_BENCH_MOLPACK=0` to skip molpack,
//! - `PACK_MOLECULES` (default `<crate>/tests/fixtures/molecules`),
//! - `PACK_BENCH_OUT` (default `<crate>/target/bench-pack`): Structure JSON per
//!   run, judged with `python3 ../shared/tools/check_packing.py` (`PACK_CHECKER`).
//!
//! CPU time is the sum over the process's threads of their time on a CPU from
//! /proc/self/task/*/schedstat (Linux, nanoseconds; /proc/self/stat's 10 ms ticks
//! where schedstat is missing), so it counts every rayon thread.

use std::path::{Path, PathBuf};
use std::time::Instant;

use megane_builder_client::pack::{pack, PackControl, PackProblem, Species, Template};
use molpack::PackEngine;

const NA: f64 = 0.602214076;

fn mass(z: u8) -> f64 {
    match z {
        1 => 1.008,
        6 => 12.011,
        7 => 14.007,
        8 => 15.999,
        17 => 35.45,
        _ => panic!("no mass for Z={z} in the bench table"),
    }
}

fn read_mol(path: &Path) -> Template {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let lines: Vec<&str> = text.lines().collect();
    let nat: usize = lines[3][0..3].trim().parse().expect("atom count");
    let mut elements = Vec::new();
    let mut positions = Vec::new();
    for ln in &lines[4..4 + nat] {
        let x: f64 = ln[0..10].trim().parse().expect("x");
        let y: f64 = ln[10..20].trim().parse().expect("y");
        let z: f64 = ln[20..30].trim().parse().expect("z");
        let sym = ln[31..34].trim();
        elements.push(match sym {
            "H" => 1,
            "C" => 6,
            "N" => 7,
            "O" => 8,
            "Cl" => 17,
            s => panic!("element {s} not in the bench table"),
        });
        positions.push([x, y, z]);
    }
    Template {
        elements,
        positions,
    }
}

fn cpu_seconds() -> f64 {
    // Each thread's time on a CPU (schedstat's first field, ns); the threads are the main one
    // and rayon's pool, which live as long as the process.
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        let mut ns = 0u64;
        let mut read = false;
        for task in tasks.flatten() {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            if let Some(v) = stat
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
            {
                ns += v;
                read = true;
            }
        }
        if read {
            return ns as f64 * 1e-9;
        }
    }
    // utime + stime of the whole process (fields 14 and 15), in clock ticks.
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = s.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / 100.0
}

struct Case {
    name: &'static str,
    species: Vec<(Template, usize)>,
    side: f64,
    fixed: Option<Template>,
    /// A small case: at least 100 repeats.
    small: bool,
}

fn side(mass_total: f64, rho: f64) -> f64 {
    // Rounded to 4 decimals like packmol_bench.py.
    ((mass_total / (rho * NA)).cbrt() * 1e4).round() / 1e4
}

fn tmass(t: &Template) -> f64 {
    t.elements.iter().map(|&z| mass(z)).sum()
}

/// A template centred (mean of its positions) at (`l`/2, `l`/2, `l`/2).
fn centred(mut t: Template, l: f64) -> Template {
    let n = t.positions.len() as f64;
    let mut cen = [0.0; 3];
    for p in &t.positions {
        for k in 0..3 {
            cen[k] += p[k] / n;
        }
    }
    for p in t.positions.iter_mut() {
        for k in 0..3 {
            p[k] += l / 2.0 - cen[k];
        }
    }
    t
}

fn cases(dir: &Path) -> Vec<Case> {
    // Molecules the shared fixtures lack (chloroform, testosterone) are in tests/fixtures.
    let fixture = |name: &str| {
        let shared = dir.join(format!("{name}.mol"));
        if shared.exists() {
            read_mol(&shared)
        } else {
            read_mol(
                &Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{name}.mol")),
            )
        }
    };
    let w = read_mol(&dir.join("water.mol"));
    let e = read_mol(&dir.join("ethanol.mol"));
    let b = read_mol(&dir.join("benzene.mol"));
    let c = read_mol(&dir.join("caffeine.mol"));
    let (mw, me, mb) = (tmass(&w), tmass(&e), tmass(&b));
    let chloroform = fixture("chloroform");
    // Case e: caffeine centred at (20, 20, 20) in a 40 Å box; 2134 water = 1.00 g/cm³
    // in the free volume (packmol_bench.py's count).
    let caf = centred(c, 40.0);
    vec![
        Case {
            name: "a",
            species: vec![(w.clone(), 1000)],
            side: side(1000.0 * mw, 1.0),
            fixed: None,
            small: false,
        },
        Case {
            name: "b",
            species: vec![(w.clone(), 10000)],
            side: side(10000.0 * mw, 1.0),
            fixed: None,
            small: false,
        },
        Case {
            name: "c",
            species: vec![(w.clone(), 900), (e, 100)],
            side: side(900.0 * mw + 100.0 * me, 0.95),
            fixed: None,
            small: false,
        },
        Case {
            name: "d",
            species: vec![(b.clone(), 2000)],
            side: side(2000.0 * mb, 0.87),
            fixed: None,
            small: false,
        },
        Case {
            name: "e",
            species: vec![(w.clone(), 2134)],
            side: 40.0,
            fixed: Some(caf),
            small: false,
        },
        Case {
            name: "f",
            species: vec![(w.clone(), 100000)],
            side: side(100000.0 * mw, 1.0),
            fixed: None,
            small: false,
        },
        Case {
            name: "g",
            species: vec![(b, 500)],
            side: side(500.0 * mb, 0.87),
            fixed: None,
            small: false,
        },
        Case {
            name: "t5w",
            species: vec![(w.clone(), 5)],
            side: side(5.0 * mw, 1.0),
            fixed: None,
            small: true,
        },
        Case {
            name: "t5c",
            species: vec![(chloroform.clone(), 5)],
            side: side(5.0 * tmass(&chloroform), 1.0),
            fixed: None,
            small: true,
        },
        Case {
            name: "sala",
            species: vec![(w.clone(), 263)],
            side: 20.0,
            fixed: Some(centred(fixture("alanine_dipeptide"), 20.0)),
            small: true,
        },
        Case {
            name: "stst",
            species: vec![(w, 452)],
            side: 24.0,
            fixed: Some(centred(fixture("testosterone"), 24.0)),
            small: true,
        },
    ]
}

fn write_structure(
    path: &Path,
    elements: &[u8],
    positions: &[[f64; 3]],
    molecules: &[usize],
    l: f64,
) {
    let flat: Vec<f64> = positions.iter().flat_map(|p| p.iter().copied()).collect();
    let v = serde_json::json!({
        "elements": elements,
        "positions": flat,
        "cell": [l, 0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, l],
        "bonds": [],
        "molecules": molecules,
    });
    std::fs::write(path, serde_json::to_string(&v).expect("json")).expect("write structure");
}

/// Runs check_packing.py; returns a one-line summary and its JSON report.
fn judge(
    checker: &Path,
    file: &Path,
    fixed: Option<&Path>,
    tol: f64,
) -> (String, serde_json::Value) {
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(checker)
        .arg(file)
        .arg("--tolerance")
        .arg(tol.to_string())
        .arg("--json");
    if let Some(f) = fixed {
        cmd.arg("--fixed").arg(f);
    }
    let o = match cmd.output() {
        Ok(o) => o,
        Err(e) => return (format!("checker not run: {e}"), serde_json::Value::Null),
    };
    match serde_json::from_slice::<serde_json::Value>(&o.stdout) {
        Ok(mut v) => {
            if let Some(m) = v.as_object_mut() {
                m.remove("closest_pairs");
            }
            let pass = v["pass"].as_bool() == Some(true);
            let line = format!(
                "{} min d {:.4} pairs<tol {} rigid {:.1e}",
                if pass { "PASS" } else { "FAIL" },
                v["min_intermolecular_distance"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
                v["pairs_below_tolerance"],
                v["rigid_max_internal_distance_dev"]
                    .as_f64()
                    .unwrap_or(f64::NAN)
            );
            (line, v)
        }
        Err(_) => (
            format!(
                "checker failed: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            ),
            serde_json::Value::Null,
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn record(
    log: &mut std::fs::File,
    case: &str,
    seed: u64,
    engine: &str,
    atoms: usize,
    cpu: f64,
    wall: f64,
    converged: Option<bool>,
    check: &serde_json::Value,
    summary: &str,
) {
    use std::io::Write;
    println!(
        "| {case} | {seed} | {engine} | {atoms} | {cpu:.5} | {wall:.5} | {} | {summary} |",
        converged.map_or("error".to_string(), |c| c.to_string())
    );
    let v = serde_json::json!({
        "case": case, "seed": seed, "engine": engine, "atoms": atoms, "cpu_s": cpu, "wall_s": wall,
        "converged": converged, "summary": summary, "check": check,
    });
    writeln!(log, "{v}").expect("write results.jsonl");
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --benches` (dev profile, no `--bench` flag): a quick smoke run only.
        let dir = std::env::var("PACK_MOLECULES")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root.join("tests/fixtures/molecules"));
        let w = read_mol(&dir.join("water.mol"));
        let l = side(200.0 * tmass(&w), 1.0);
        let p = PackProblem {
            species: vec![Species {
                template: w,
                count: 200,
            }],
            box_lengths: [l; 3],
            fixed: vec![],
            tolerance: 2.0,
            seed: 1,
            max_iterations: 2000,
        };
        let o = pack(&p, &PackControl::default()).expect("smoke pack");
        assert!(o.converged, "smoke pack did not converge: {:?}", o.warnings);
        println!("pack bench smoke run: 200 water converged in {} iterations (run `cargo bench --bench pack` for the benchmark)", o.iterations);
        return;
    }
    let mol_dir = std::env::var("PACK_MOLECULES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("tests/fixtures/molecules"));
    let out = std::env::var("PACK_BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/bench-pack"));
    let checker = std::env::var("PACK_CHECKER")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("../shared/tools/check_packing.py"));
    std::fs::create_dir_all(&out).expect("output dir");
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out.join("results.jsonl"))
        .expect("results.jsonl");
    let wanted = std::env::var("PACK_BENCH_CASES").unwrap_or_else(|_| "a,b,c,d,e".into());
    let seeds: Vec<u64> = std::env::var("PACK_BENCH_SEEDS")
        .unwrap_or_else(|_| "1".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let tol: f64 = std::env::var("PACK_BENCH_TOL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let maxit: usize = std::env::var("PACK_BENCH_MAXIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let repeat: usize = std::env::var("PACK_BENCH_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let run_molpack = std::env::var("PACK_BENCH_MOLPACK")
        .map(|v| v != "0")
        .unwrap_or(true);
    println!(
        "threads: {}, tolerance {tol} Å",
        rayon::current_num_threads()
    );
    println!("| case | seed | engine | atoms | cpu s | wall s | converged | check_packing.py |");
    println!("|---|---|---|---|---|---|---|---|");
    for case in cases(&mol_dir) {
        if !wanted.split(',').any(|w| w.trim() == case.name) {
            continue;
        }
        let l = case.side;
        let fixed_pos: Vec<[f64; 3]> = case
            .fixed
            .as_ref()
            .map(|f| f.positions.clone())
            .unwrap_or_default();
        let mut elements = Vec::new();
        let mut molecules = Vec::new();
        let mut m = 0;
        for (t, n) in &case.species {
            for _ in 0..*n {
                elements.extend_from_slice(&t.elements);
                molecules.extend(std::iter::repeat_n(m, t.elements.len()));
                m += 1;
            }
        }
        let natoms = elements.len();
        let fixed_file = case.fixed.as_ref().map(|f| {
            let p = out.join(format!("{}_fixed.json", case.name));
            write_structure(&p, &f.elements, &f.positions, &vec![0; f.elements.len()], l);
            p
        });
        for &seed in &seeds {
            let problem = PackProblem {
                species: case
                    .species
                    .iter()
                    .map(|(t, n)| Species {
                        template: t.clone(),
                        count: *n,
                    })
                    .collect(),
                box_lengths: [l; 3],
                fixed: fixed_pos.clone(),
                tolerance: tol,
                seed,
                max_iterations: maxit,
            };
            // Repeat short runs so the 10 ms CPU clock resolution does not dominate;
            // every repeat must give the identical result (determinism).
            let repeat = if case.small { repeat.max(100) } else { repeat };
            let (c0, w0) = (cpu_seconds(), Instant::now());
            let res = pack(&problem, &PackControl::default());
            let mut runs = 1;
            while runs < repeat && w0.elapsed().as_secs_f64() < 2.0 {
                let again = pack(&problem, &PackControl::default());
                assert_eq!(again, res, "non-deterministic result");
                runs += 1;
            }
            let (cpu, wall) = (
                (cpu_seconds() - c0) / runs as f64,
                w0.elapsed().as_secs_f64() / runs as f64,
            );
            match res {
                Ok(o) => {
                    let f = out.join(format!("{}_s{seed}_ours.json", case.name));
                    write_structure(&f, &elements, &o.positions, &molecules, l);
                    let (q, v) = judge(&checker, &f, fixed_file.as_deref(), tol);
                    let q = format!("{q} ({} it)", o.iterations);
                    record(
                        &mut log,
                        case.name,
                        seed,
                        "ours",
                        natoms,
                        cpu,
                        wall,
                        Some(o.converged),
                        &v,
                        &q,
                    );
                }
                Err(e) => {
                    let q = e.to_string();
                    record(
                        &mut log,
                        case.name,
                        seed,
                        "ours",
                        natoms,
                        cpu,
                        wall,
                        None,
                        &serde_json::Value::Null,
                        &q,
                    );
                }
            }
            if run_molpack {
                let r = [tol / 2.0];
                let mut targets: Vec<molpack::Target> = case
                    .species
                    .iter()
                    .map(|(t, n)| {
                        molpack::Target::from_coords(
                            &t.positions,
                            &vec![r[0]; t.positions.len()],
                            *n,
                        )
                    })
                    .collect();
                if let Some(fx) = &case.fixed {
                    targets.push(
                        molpack::Target::from_coords(
                            &fx.positions,
                            &vec![r[0]; fx.positions.len()],
                            1,
                        )
                        .with_centering(molpack::CenteringMode::Off)
                        .fixed_at([0.0; 3]),
                    );
                }
                let engine = || {
                    molpack::GencanPack::new()
                        .with_tolerance(tol)
                        .with_seed(seed)
                        .with_periodic_box([0.0; 3], [l; 3], [true; 3])
                };
                // Repeated like ours (the same seed: the same run each time).
                let (c0, w0) = (cpu_seconds(), Instant::now());
                let res = engine().run(&targets, 200);
                let mut runs = 1;
                while runs < repeat && w0.elapsed().as_secs_f64() < 2.0 {
                    let _ = engine().run(&targets, 200);
                    runs += 1;
                }
                let (cpu, wall) = (
                    (cpu_seconds() - c0) / runs as f64,
                    w0.elapsed().as_secs_f64() / runs as f64,
                );
                match res {
                    Ok(st) => {
                        let mut pos = st.positions();
                        pos.truncate(natoms);
                        let f = out.join(format!("{}_s{seed}_molpack.json", case.name));
                        write_structure(&f, &elements, &pos, &molecules, l);
                        let (q, v) = judge(&checker, &f, fixed_file.as_deref(), tol);
                        record(
                            &mut log,
                            case.name,
                            seed,
                            "molpack",
                            natoms,
                            cpu,
                            wall,
                            Some(st.converged),
                            &v,
                            &q,
                        );
                    }
                    Err(e) => {
                        let q = e.to_string();
                        record(
                            &mut log,
                            case.name,
                            seed,
                            "molpack",
                            natoms,
                            cpu,
                            wall,
                            None,
                            &serde_json::Value::Null,
                            &q,
                        );
                    }
                }
            }
        }
    }
}
