//! The project's packmol driver for the benches: packmol (21.2.3 from PyPI, `pip install
//! packmol==21.2.3`, an optional peer used only here) on the same box as ours, in pbc mode — the
//! input packmol's own documentation gives for a periodic box (`pbc 0 0 0 L L L`, one `structure`
//! per species, a solute `fixed` at the cell centre by its centre of mass) — timed by the kernel's
//! accounting of the reaped child (`getrusage(RUSAGE_CHILDREN)`: user + system CPU, microseconds)
//! and read back as positions for the judge.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use megane_builder_client::chem::elements::symbol;
use megane_builder_client::pack::Template;

/// One packmol run.
pub struct Run {
    /// CPU seconds (user + system) of the packmol process.
    pub cpu_s: f64,
    /// Wall seconds from spawn to reap.
    pub wall_s: f64,
    /// packmol printed "Success!".
    pub success: bool,
    /// Positions of the packed molecules (species in order, copies, atoms), the fixed solute left out.
    pub positions: Vec<[f64; 3]>,
}

/// The packmol binary the `packmol` package of `python` installs (`PACKMOL` overrides it).
pub fn binary(python: &str) -> Option<PathBuf> {
    if let Ok(p) = std::env::var("PACKMOL") {
        return Some(PathBuf::from(p));
    }
    let out = Command::new(python)
        .args([
            "-c",
            "from packmol.cli import get_binary_path; print(get_binary_path())",
        ])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    path.is_file().then_some(path)
}

fn write_xyz(path: &Path, t: &Template) {
    let mut s = format!("{}\nmolecule\n", t.elements.len());
    for (z, p) in t.elements.iter().zip(&t.positions) {
        s += &format!(
            "{:<2} {:14.6} {:14.6} {:14.6}\n",
            symbol(*z).unwrap_or("X"),
            p[0],
            p[1],
            p[2]
        );
    }
    std::fs::write(path, s).expect("write xyz");
}

/// CPU seconds (user + system) of the reaped children of this process so far.
fn children_cpu() -> f64 {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Runs packmol in `dir` on `species` (template, count) in an orthorhombic periodic box of
/// `box_lengths` Å around `fixed` (a solute packmol keeps with its centre of mass at the box's
/// centre: give it centred there), at `tolerance` Å with `seed`.
pub fn run(
    packmol: &Path,
    dir: &Path,
    species: &[(Template, usize)],
    fixed: Option<&Template>,
    box_lengths: [f64; 3],
    tolerance: f64,
    seed: u64,
) -> Result<Run, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let [a, b, c] = box_lengths;
    let mut input = format!(
        "tolerance {tolerance:.2}\nfiletype xyz\noutput out.xyz\nseed {seed}\npbc 0. 0. 0. {a:.4} {b:.4} {c:.4}\n\n"
    );
    if let Some(f) = fixed {
        write_xyz(&dir.join("fixed.xyz"), f);
        input += &format!(
            "structure fixed.xyz\n  number 1\n  fixed {:.4} {:.4} {:.4} 0. 0. 0.\n  centerofmass\nend structure\n\n",
            a / 2.0,
            b / 2.0,
            c / 2.0
        );
    }
    for (i, (t, n)) in species.iter().enumerate() {
        write_xyz(&dir.join(format!("species{i}.xyz")), t);
        input += &format!("structure species{i}.xyz\n  number {n}\nend structure\n\n");
    }
    std::fs::write(dir.join("input.inp"), &input).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(dir.join("out.xyz"));
    let stdin = std::fs::File::open(dir.join("input.inp")).map_err(|e| e.to_string())?;
    let log = std::fs::File::create(dir.join("packmol.log")).map_err(|e| e.to_string())?;
    let (cpu0, t0) = (children_cpu(), Instant::now());
    let status = Command::new(packmol)
        .current_dir(dir)
        .stdin(stdin)
        .stdout(log)
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", packmol.display()))?;
    let (cpu_s, wall_s) = (children_cpu() - cpu0, t0.elapsed().as_secs_f64());
    let text = std::fs::read_to_string(dir.join("packmol.log")).unwrap_or_default();
    let success = status.success() && text.contains("Success!");
    let out =
        std::fs::read_to_string(dir.join("out.xyz")).map_err(|e| format!("no out.xyz: {e}"))?;
    let skip = fixed.map_or(0, |f| f.elements.len());
    let positions: Vec<[f64; 3]> = out
        .lines()
        .skip(2 + skip)
        .filter_map(|l| {
            let v: Vec<f64> = l
                .split_whitespace()
                .skip(1)
                .filter_map(|x| x.parse().ok())
                .collect();
            (v.len() == 3).then(|| [v[0], v[1], v[2]])
        })
        .collect();
    Ok(Run {
        cpu_s,
        wall_s,
        success,
        positions,
    })
}
