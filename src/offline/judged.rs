//! The packing judge ([`crate::pack::judge`]) on §5.1 Structures: molecules from `molecules`,
//! masses and van der Waals radii from the project's element table ([`crate::chem::elements`], the
//! radii `solvate` sizes its free volume with), so a box is judged as the tools made it. Used by the
//! tests and the benches (`examples/pack_judge.rs`); the tools' own order check calls the judge directly.

use serde_json::{json, Value};

use crate::chem::elements::{atomic_mass, vdw_radius, DEFAULT_VDW_RADIUS};
use crate::contract::structure::Structure;
use crate::pack::judge::report::{judge, Criteria, Input, Report};

/// Judges `packed` (a box; its `molecules`, or one molecule per atom without them) around the atoms
/// of `fixed` (a solvate's document), in `packed`'s orthorhombic cell. Errors in one line.
pub fn judge_structure(
    packed: &Structure,
    fixed: Option<&Structure>,
    criteria: &Criteria,
) -> Result<Report, String> {
    let cell = packed.cell.ok_or("the structure has no cell")?;
    if [cell[1], cell[2], cell[3], cell[5], cell[6], cell[7]]
        .iter()
        .any(|v| v.abs() > 1e-9)
    {
        return Err("only orthorhombic cells are judged".into());
    }
    let points = |s: &Structure| -> Vec<[f64; 3]> {
        s.positions
            .chunks_exact(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect()
    };
    let positions = points(packed);
    let molecule: Vec<i64> = match &packed.molecules {
        Some(m) => m.iter().map(|&v| i64::from(v)).collect(),
        None => (0..positions.len() as i64).collect(),
    };
    let (fixed_positions, fixed_elements) = match fixed {
        Some(f) => (points(f), f.elements.clone()),
        None => (Vec::new(), Vec::new()),
    };
    judge(
        &Input {
            elements: &packed.elements,
            positions: &positions,
            molecule: &molecule,
            box_lengths: [cell[0], cell[4], cell[8]],
            fixed: &fixed_positions,
            fixed_elements: &fixed_elements,
        },
        criteria,
        &atomic_mass,
        &|z| vdw_radius(z).unwrap_or(DEFAULT_VDW_RADIUS),
    )
}

/// The report as JSON (the benches' record of a box).
pub fn report_json(report: &Report) -> Value {
    let peak = &report.centres.peak;
    json!({
        "pass": report.pass,
        "molecules": report.molecules,
        "min_intermolecular_distance": report.closest.min_distance,
        "pairs_below_tolerance": report.closest.below_tolerance,
        "packmol_style_violations": report.closest.below_packmol_line,
        "density_g_cm3": report.density,
        "density_ok": report.density_ok,
        "free_volume_A3": report.free_volume,
        "rigid_max_internal_distance_dev": report.rigid_max_deviation,
        "non_rigid_molecules": report.non_rigid,
        "s_max": peak.s,
        "s_max_n": peak.n,
        "s_max_k": peak.k,
        "s_vectors": peak.vectors,
        "s_threshold": report.centres.threshold,
        "disordered": report.disordered(),
        "orientation_worst": report.orientations.iter().map(|o| o.order.worst()).fold(0.0f64, f64::max),
        "orientations_judged": report.orientations.len(),
        "orientations_uniform": report.orientations_uniform(),
    })
}
