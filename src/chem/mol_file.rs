//! mol and SD files as Structures: the first record of an SD file, read as V2000
//! ([`super::molblock`]) or V3000 ([`super::v3000`]) by its header, a 2D drawing refused; a
//! Structure written as V2000, or V3000 beyond 999 atoms or bonds (bond orders and formal charges
//! kept; a mol file has no cell).

use super::molblock::{self, Dimension, Molecule};
use super::read::Read;
use super::structure::Structure;
use super::v3000;

/// The first molecule of a mol or SD file, V2000 or V3000 (by the header's version); a 2D
/// drawing is refused.
pub fn read(text: &str) -> Result<Read, String> {
    let record = text.split("\n$$$$").next().unwrap_or(text);
    let more = text
        .split("\n$$$$")
        .filter(|r| !r.trim().is_empty())
        .count();
    let v3000 = record.lines().nth(3).is_some_and(|l| l.contains("V3000"));
    let m = if v3000 {
        v3000::read(record)?
    } else {
        molblock::parse_molblock(record)?
    };
    if m.dimension == Dimension::TwoD {
        return Err(
            "this is a 2D drawing (header code 2D); open a file with 3D coordinates".to_string(),
        );
    }
    let mut read = Read::with_capacity(0);
    read.title = m.name.clone();
    read.bonds_listed = true;
    if more > 1 {
        read.note = Some(format!(
            "The file holds {more} molecules; the first was opened."
        ));
    }
    let s = &mut read.structure;
    s.elements = m.elements;
    s.positions = m.positions.into_iter().flatten().collect();
    s.bonds = m.bonds.into_iter().map(|(a, b)| [a, b]).collect();
    s.bond_orders = m
        .bond_orders
        .iter()
        .any(|&o| o != 1)
        .then_some(m.bond_orders);
    let charges: Vec<i32> = m.formal_charges.iter().map(|&c| i32::from(c)).collect();
    s.formal_charges = charges.iter().any(|&c| c != 0).then_some(charges);
    Ok(read)
}

/// `s` as a mol block titled `title`: V2000 when it fits (at most 999 atoms and 999 bonds), else
/// V3000.
pub fn write(s: &Structure, title: &str) -> String {
    let m = molecule(s, title);
    let v2000 = m.elements.len() <= 999 && m.bonds.len() <= 999;
    match v2000.then(|| molblock::write_molblock(&m)) {
        Some(Ok(text)) => text,
        _ => v3000::write(&m),
    }
}

/// A structure as a mol block carries it (bond orders and charges kept).
fn molecule(s: &Structure, title: &str) -> Molecule {
    Molecule {
        name: title.to_string(),
        elements: s.elements.clone(),
        positions: s
            .positions
            .chunks_exact(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect(),
        bonds: s.bonds.iter().map(|b| (b[0], b[1])).collect(),
        bond_orders: s
            .bond_orders
            .clone()
            .unwrap_or_else(|| vec![1; s.bonds.len()]),
        formal_charges: s
            .formal_charges
            .as_ref()
            .map(|c| c.iter().map(|&q| q.clamp(-15, 15) as i8).collect())
            .unwrap_or_default(),
        dimension: Dimension::ThreeD,
    }
}
