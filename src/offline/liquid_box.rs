//! §12.1 `liquid_box` in the page: size a periodic box from the density and the molar masses,
//! then pack the copies with [`crate::pack`].

use serde_json::Value;

use super::assemble::{
    call_result, one_decimal, packed_structure, plain_number, report_writing, ToolResult,
};
use super::here::{fits, Place};
use super::molecule::{read_molecule, PackMolecule};
use super::packing::{self, CommonArgs};
use crate::pack::{PackControl, Species};
use crate::wire::caps::MAX_ATOMS;

/// Avogadro's number × 1e-24 (cm³ per Å³): g/mol ÷ (g/cm³ × this) = Å³ per mole of molecules.
pub const AVOGADRO_PER_A3: f64 = 0.602_214_076;

/// Box edge lengths (Å) holding `mass` g/mol of molecules at `density` g/cm³, with edges in the
/// ratio `aspect` (a cube for `[1, 1, 1]`).
pub fn box_lengths(mass: f64, density: f64, aspect: [f64; 3]) -> [f64; 3] {
    let volume = mass / (density * AVOGADRO_PER_A3);
    let scale = (volume / (aspect[0] * aspect[1] * aspect[2])).cbrt();
    [aspect[0] * scale, aspect[1] * scale, aspect[2] * scale]
}

/// Runs the tool on already schema-checked arguments; `Err` is the one-line tool error.
pub fn run(args: &Value, control: &PackControl, place: Place) -> Result<ToolResult, String> {
    let common = CommonArgs::read(args)?;
    let (density, tolerance) = (common.density, common.tolerance);
    let aspect = match args.get("shape").and_then(Value::as_str) {
        Some("orthorhombic") => {
            let a: Vec<f64> = args
                .get("aspect")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            a.try_into().unwrap_or([1.0, 1.0, 1.0])
        }
        _ => [1.0, 1.0, 1.0],
    };
    let components = args
        .get("components")
        .and_then(Value::as_array)
        .ok_or("Components are required.")?;
    let mut molecules: Vec<PackMolecule> = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    for component in components {
        let molecule = read_molecule(component.get("molecule").unwrap_or(&Value::Null))?;
        let count = component.get("count").and_then(Value::as_u64).unwrap_or(0) as usize;
        molecules.push(molecule);
        counts.push(count);
    }
    let atoms: usize = molecules
        .iter()
        .zip(&counts)
        .map(|(m, c)| m.template.elements.len() * c)
        .sum();
    if atoms > MAX_ATOMS {
        return Err(format!("The box would hold {atoms} atoms; Builder accepts at most {MAX_ATOMS}. Lower the counts."));
    }
    fits(place, atoms)?;
    let mass: f64 = molecules
        .iter()
        .zip(&counts)
        .map(|(m, &c)| m.molar_mass * c as f64)
        .sum();
    let lengths = box_lengths(mass, density, aspect);
    let narrowest = lengths.iter().copied().fold(f64::INFINITY, f64::min);
    if narrowest < 2.0 * tolerance {
        return Err(format!(
            "The box would be only {} Å wide; add more molecules or lower the density.",
            one_decimal(narrowest)
        ));
    }
    let species = molecules
        .iter()
        .zip(&counts)
        .map(|(m, &count)| Species {
            template: m.template.clone(),
            count,
        })
        .collect();
    let mut outcome = common.pack(species, lengths, Vec::new(), control)?;
    let per_species: Vec<(usize, usize)> = molecules
        .iter()
        .zip(&counts)
        .map(|(m, &c)| (m.template.elements.len(), c))
        .collect();
    let volume = lengths[0] * lengths[1] * lengths[2];
    let ordered = packing::order_warning(
        &outcome.positions,
        &per_species,
        lengths,
        volume,
        outcome.packing_fraction,
    );
    let cell = [
        lengths[0], 0.0, 0.0, 0.0, lengths[1], 0.0, 0.0, 0.0, lengths[2],
    ];
    report_writing(control, outcome.positions.len());
    let structure = packed_structure(
        &molecules,
        &counts,
        std::mem::take(&mut outcome.positions),
        cell,
    );
    let mixture: Vec<String> = molecules
        .iter()
        .zip(&counts)
        .map(|(m, c)| format!("{c} {}", m.name))
        .collect();
    let summary = format!(
        "Liquid box: {} in a {} x {} x {} Å box ({} g/cm³, {atoms} atoms).",
        join_words(&mixture),
        one_decimal(lengths[0]),
        one_decimal(lengths[1]),
        one_decimal(lengths[2]),
        plain_number(density)
    );
    let name = molecules
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join("-");
    let summary = packing::summary_with_density(summary, &outcome);
    let mut warnings = packing::outcome_warnings(&outcome, tolerance);
    warnings.extend(ordered);
    Ok(call_result(
        &name,
        &summary,
        structure,
        &warnings,
        common.seed,
    ))
}

/// `a`, `a and b`, `a, b and c`.
fn join_words(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_box_for_100_water() {
        // 100 × 18.015 g/mol at 1 g/cm³: the reference server's 14.4088 Å cube.
        let mass = 100.0 * (2.0 * 1.008 + 15.999);
        let l = box_lengths(mass, 1.0, [1.0, 1.0, 1.0]);
        assert!((l[0] - 14.4088).abs() < 1e-3, "{l:?}");
        let o = box_lengths(mass, 1.0, [1.0, 1.0, 2.0]);
        assert!((o[2] / o[0] - 2.0).abs() < 1e-12);
        assert!((o[0] * o[1] * o[2] - l[0].powi(3)).abs() < 1e-6);
    }

    #[test]
    fn words() {
        assert_eq!(join_words(&["1 a".into()]), "1 a");
        assert_eq!(
            join_words(&["1 a".into(), "2 b".into(), "3 c".into()]),
            "1 a, 2 b and 3 c"
        );
    }
}
