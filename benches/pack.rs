//! Packing benchmark: our `pack::pack`, molcrafts-molpack 0.4.0 (a dev-dependency, in this
//! process) and packmol 21.2.3 (PyPI, an optional peer run by the project's driver,
//! `benches/support/packmol.rs`) on the same boxes in one run, interleaved: each round runs every
//! engine once per case, in an order that turns each round, so load on the machine falls on all
//! alike. The cases are the packmol baseline's (benches/packmol-baseline/README.md) and the small
//! cases of the wasm bench (benches/pack_wasm/cases.mjs): `t5w` 5 water and `t5c` 5 chloroform at
//! 1 g/cm³, `sala` alanine dipeptide fixed at the centre of a 20 Å cell with 263 water and `stst`
//! testosterone in a 24 Å cell with 452 water (1 g/cm³ in the cell minus the solute's vdW spheres,
//! the offline `solvate` tool's count). Every result is judged by the project's judge
//! (`offline::judged`): pairs below the tolerance, rigid copies, S_max over the molecule centres
//! against issue 32's line, ⟨P2⟩/⟨P4⟩ — ours and the peers' alike.
//!
//! `cargo bench --bench pack` (std harness; under `cargo test --benches` only a quick smoke run
//! happens). Environment:
//! - `PACK_BENCH_CASES` (default `a,b,c,d,e`; add `f` for 100 000 water; `g` = 500 benzene),
//! - `PACK_BENCH_ENGINES` (default `ours,molpack,packmol`),
//! - `PACK_BENCH_ROUNDS` (default 3): rounds of every engine on every case (medians reported),
//! - `PACK_BENCH_TOL` (default `2.0` Å), `PACK_BENCH_SEEDS` (default `1`),
//! - `PACK_BENCH_MAXIT` (default 20 000): our iteration budget,
//! - `PACK_BENCH_SMALL_REPEAT` (default 100): runs per timing of a small case (the clock's
//!   resolution; every repeat of ours must give the identical result),
//! - `PACK_MOLECULES` (default `<crate>/tests/fixtures/molecules`),
//! - `PYTHON` (default `python3`): the interpreter whose `packmol` package gives the binary
//!   (`PACKMOL` names it directly),
//! - `PACK_BENCH_OUT` (default `<crate>/target/bench-pack`): each engine's first structure of a
//!   case (Structure JSON), `results.jsonl` (one record per run) and packmol's work folders.
//!
//! CPU time: ours and molpack's are this process's user + system time (`getrusage(RUSAGE_SELF)`,
//! every rayon thread counted), packmol's the reaped child's (`RUSAGE_CHILDREN`), both in
//! microseconds.

#[path = "support/packmol.rs"]
mod packmol;

use std::path::{Path, PathBuf};
use std::time::Instant;

use std::io::Write;

use megane_builder_client::contract::structure::Structure;
use megane_builder_client::offline::judged::{judge_structure, report_json};
use megane_builder_client::pack::judge::report::Criteria;
use megane_builder_client::pack::{pack, PackControl, PackProblem, Species, Template};
use molpack::PackEngine;
use serde_json::{json, Value};

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

/// CPU seconds (user + system) of this process so far, every thread counted (getrusage; the
/// kernel's precise per-thread accounting, not the scheduler tick: a 5-water box is microseconds).
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
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
    // Rounded to 4 decimals, as the packmol baseline's inputs (benches/packmol-baseline/inputs).
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
    // Molecules tests/fixtures/molecules lacks (chloroform, testosterone) are in tests/fixtures.
    let fixture = |name: &str| {
        let common = dir.join(format!("{name}.mol"));
        if common.exists() {
            read_mol(&common)
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
    // in the free volume (the baseline's count: the cell less caffeine's Bondi vdW spheres).
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

/// The box as a §5.1 Structure: `molecules` numbered in order, the cell.
fn structure(elements: &[u8], positions: &[[f64; 3]], molecules: &[u32], l: f64) -> Structure {
    Structure {
        elements: elements.to_vec(),
        positions: positions.iter().flatten().copied().collect(),
        cell: Some([l, 0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, l]),
        molecules: Some(molecules.to_vec()),
        ..Structure::default()
    }
}

/// One engine's outcome on a case.
struct Outcome {
    cpu: f64,
    wall: f64,
    converged: Option<bool>,
    positions: Vec<[f64; 3]>,
    note: String,
}

impl Outcome {
    /// A run that gave no structure, with why.
    fn failed(cpu: f64, wall: f64, note: String) -> Outcome {
        Outcome {
            cpu,
            wall,
            converged: None,
            note,
            positions: Vec::new(),
        }
    }
}

/// Runs one engine once on the case (a small case `repeat` times for its timing, the first result
/// kept). `None`: the engine cannot run here (packmol not installed).
#[allow(clippy::too_many_arguments)]
fn run_engine(
    engine: &str,
    case: &Case,
    natoms: usize,
    seed: u64,
    tol: f64,
    maxit: usize,
    repeat: usize,
    work: &Path,
    packmol_bin: Option<&Path>,
) -> Option<Outcome> {
    let l = case.side;
    let fixed_pos: Vec<[f64; 3]> = case
        .fixed
        .as_ref()
        .map(|f| f.positions.clone())
        .unwrap_or_default();
    let (c0, w0) = (cpu_seconds(), Instant::now());
    let mut runs = 0;
    let timed = |runs: usize, c0: f64, w0: Instant| {
        (
            (cpu_seconds() - c0) / runs as f64,
            w0.elapsed().as_secs_f64() / runs as f64,
        )
    };
    match engine {
        "ours" => {
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
                fixed: fixed_pos,
                tolerance: tol,
                seed,
                max_iterations: maxit,
            };
            let res = pack(&problem, &PackControl::default());
            runs += 1;
            while runs < repeat {
                let again = pack(&problem, &PackControl::default());
                assert_eq!(again, res, "non-deterministic result");
                runs += 1;
            }
            let (cpu, wall) = timed(runs, c0, w0);
            Some(match res {
                Ok(o) => Outcome {
                    cpu,
                    wall,
                    converged: Some(o.converged),
                    note: format!("{} it", o.iterations),
                    positions: o.positions,
                },
                Err(e) => Outcome::failed(cpu, wall, e.to_string()),
            })
        }
        "molpack" => {
            let r = tol / 2.0;
            let mut targets: Vec<molpack::Target> = case
                .species
                .iter()
                .map(|(t, n)| {
                    molpack::Target::from_coords(&t.positions, &vec![r; t.positions.len()], *n)
                })
                .collect();
            if let Some(fx) = &case.fixed {
                targets.push(
                    molpack::Target::from_coords(&fx.positions, &vec![r; fx.positions.len()], 1)
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
            let res = engine().run(&targets, 200);
            runs += 1;
            while runs < repeat {
                let _ = engine().run(&targets, 200);
                runs += 1;
            }
            let (cpu, wall) = timed(runs, c0, w0);
            Some(match res {
                Ok(st) => {
                    let mut positions = st.positions();
                    positions.truncate(natoms);
                    Outcome {
                        cpu,
                        wall,
                        converged: Some(st.converged),
                        note: String::new(),
                        positions,
                    }
                }
                Err(e) => Outcome::failed(cpu, wall, e.to_string()),
            })
        }
        "packmol" => {
            let bin = packmol_bin?;
            let dir = work.join(format!("packmol-{}-s{seed}", case.name));
            let mut first: Option<Result<packmol::Run, String>> = None;
            let (mut cpu, mut wall) = (0.0, 0.0);
            for _ in 0..repeat {
                let r = packmol::run(
                    bin,
                    &dir,
                    &case.species,
                    case.fixed.as_ref(),
                    [l; 3],
                    tol,
                    seed,
                );
                if let Ok(run) = &r {
                    cpu += run.cpu_s;
                    wall += run.wall_s;
                }
                runs += 1;
                let failed = r.is_err();
                if first.is_none() {
                    first = Some(r);
                }
                if failed {
                    break;
                }
            }
            Some(match first? {
                Ok(run) => Outcome {
                    cpu: cpu / runs as f64,
                    wall: wall / runs as f64,
                    converged: Some(run.success),
                    note: String::new(),
                    positions: run.positions,
                },
                Err(e) => Outcome::failed(f64::NAN, f64::NAN, e),
            })
        }
        other => panic!("unknown engine {other}"),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mol_dir = std::env::var("PACK_MOLECULES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("tests/fixtures/molecules"));
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --benches` (dev profile, no `--bench` flag): a quick smoke run only.
        let w = read_mol(&mol_dir.join("water.mol"));
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
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let out = PathBuf::from(env(
        "PACK_BENCH_OUT",
        &root.join("target/bench-pack").to_string_lossy(),
    ));
    std::fs::create_dir_all(&out).expect("output dir");
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out.join("results.jsonl"))
        .expect("results.jsonl");
    let wanted = env("PACK_BENCH_CASES", "a,b,c,d,e");
    let engines: Vec<String> = env("PACK_BENCH_ENGINES", "ours,molpack,packmol")
        .split(',')
        .map(|e| e.trim().to_string())
        .collect();
    let seeds: Vec<u64> = env("PACK_BENCH_SEEDS", "1")
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let num = |k: &str, d: f64| env(k, "").parse::<f64>().unwrap_or(d);
    let tol = num("PACK_BENCH_TOL", 2.0);
    let maxit = num("PACK_BENCH_MAXIT", 20_000.0) as usize;
    let rounds = num("PACK_BENCH_ROUNDS", 3.0) as usize;
    let small_repeat = num("PACK_BENCH_SMALL_REPEAT", 100.0) as usize;
    let packmol_bin = if engines.iter().any(|e| e == "packmol") {
        let b = packmol::binary(&env("PYTHON", "python3"));
        if b.is_none() {
            println!("packmol not found (pip install packmol==21.2.3, or PACKMOL=path): skipped");
        }
        b
    } else {
        None
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "threads: {}, tolerance {tol} Å, {rounds} rounds, load average {}",
        rayon::current_num_threads(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("| case | seed | round | engine | atoms | cpu s | wall s | converged | note |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut summary = Vec::new();
    for case in cases(&mol_dir) {
        if !wanted.split(',').any(|w| w.trim() == case.name) {
            continue;
        }
        let l = case.side;
        let mut elements = Vec::new();
        let mut molecules = Vec::new();
        let mut m = 0u32;
        for (t, n) in &case.species {
            for _ in 0..*n {
                elements.extend_from_slice(&t.elements);
                molecules.extend(std::iter::repeat_n(m, t.elements.len()));
                m += 1;
            }
        }
        let natoms = elements.len();
        let fixed_doc = case.fixed.as_ref().map(|f| Structure {
            elements: f.elements.clone(),
            positions: f.positions.iter().flatten().copied().collect(),
            cell: Some([l, 0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, l]),
            ..Structure::default()
        });
        if let Some(doc) = &fixed_doc {
            let f = out.join(format!("{}_fixed.json", case.name));
            std::fs::write(&f, serde_json::to_string(doc).expect("json")).expect("write document");
        }
        let repeat = if case.small { small_repeat.max(1) } else { 1 };
        for &seed in &seeds {
            let mut cpu: Vec<(String, Vec<f64>)> =
                engines.iter().map(|e| (e.clone(), Vec::new())).collect();
            let mut judged: Vec<(String, Value)> = Vec::new();
            for round in 0..rounds {
                for k in 0..engines.len() {
                    let engine = &engines[(k + round) % engines.len()];
                    let Some(o) = run_engine(
                        engine,
                        &case,
                        natoms,
                        seed,
                        tol,
                        maxit,
                        repeat,
                        &out,
                        packmol_bin.as_deref(),
                    ) else {
                        continue;
                    };
                    if let Some(c) = cpu.iter_mut().find(|c| &c.0 == engine) {
                        c.1.push(o.cpu);
                    }
                    let mut check = Value::Null;
                    if !judged.iter().any(|j| &j.0 == engine) && o.positions.len() == natoms {
                        let s = structure(&elements, &o.positions, &molecules, l);
                        let f = out.join(format!("{}_s{seed}_{engine}.json", case.name));
                        std::fs::write(&f, serde_json::to_string(&s).expect("json"))
                            .expect("write structure");
                        check = match judge_structure(&s, fixed_doc.as_ref(), &Criteria::at(tol)) {
                            Ok(r) => report_json(&r),
                            Err(e) => json!({"error": e}),
                        };
                        judged.push((engine.clone(), check.clone()));
                    }
                    println!(
                        "| {} | {seed} | {round} | {engine} | {natoms} | {:.5} | {:.5} | {} | {} |",
                        case.name,
                        o.cpu,
                        o.wall,
                        o.converged.map_or("error".into(), |c| c.to_string()),
                        o.note
                    );
                    let rec = json!({
                        "case": case.name, "seed": seed, "round": round, "engine": engine,
                        "atoms": natoms, "cpu_s": o.cpu, "wall_s": o.wall, "converged": o.converged,
                        "note": o.note, "check": check,
                    });
                    writeln!(log, "{rec}").expect("write results.jsonl");
                }
            }
            summary.push((case.name, seed, natoms, cpu, judged));
        }
    }
    println!("\nMedians over the rounds (CPU seconds); S_max over the molecule centres against issue 32's line; orientation: the largest |<P2>|, |<P4>| of a species of >= 500 copies.\n");
    println!("| case | atoms | ours cpu s | molpack cpu s | packmol cpu s | molpack/ours | packmol/ours | S_max ours | S_max molpack | S_max packmol | line | P2/P4 ours; molpack; packmol | pass ours; molpack; packmol |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, seed, natoms, cpu, judged) in summary {
        let med = |e: &str| {
            cpu.iter()
                .find(|c| c.0 == e)
                .map_or(f64::NAN, |c| median(c.1.clone()))
        };
        let field = |e: &str, f: &str| -> String {
            judged
                .iter()
                .find(|j| j.0 == e)
                .map(|j| match &j.1[f] {
                    Value::Number(n) => format!("{:.2}", n.as_f64().unwrap_or(f64::NAN)),
                    Value::Bool(b) => b.to_string(),
                    _ => "-".into(),
                })
                .unwrap_or_else(|| "-".into())
        };
        let (o, m, p) = (med("ours"), med("molpack"), med("packmol"));
        let line = judged
            .first()
            .and_then(|j| j.1["s_threshold"].as_f64())
            .map_or("-".into(), |t| format!("{t:.1}"));
        println!(
            "| {name} (seed {seed}) | {natoms} | {o:.5} | {m:.5} | {p:.5} | {:.1}x | {:.1}x | {} | {} | {} | {line} | {}; {}; {} | {}; {}; {} |",
            m / o,
            p / o,
            field("ours", "s_max"),
            field("molpack", "s_max"),
            field("packmol", "s_max"),
            field("ours", "orientation_worst"),
            field("molpack", "orientation_worst"),
            field("packmol", "orientation_worst"),
            field("ours", "pass"),
            field("molpack", "pass"),
            field("packmol", "pass"),
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\nload average at the end: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
}
