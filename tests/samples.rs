//! The demo page's committed samples (`www/samples/`, issue 14): every library molecule is a V2000
//! mol block with explicit hydrogens and 3D coordinates; the copies of the shared fixtures still
//! match them; the ethylene monomer's example head and tail atoms are its carbons; and forms filled
//! from that library (and from an empty one) behave as the page needs.
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::chem::molblock::{parse_molblock, Dimension, Molecule};
use megane_builder_client::contract::discovery::{parse_tool_list, ToolButton};
use megane_builder_client::contract::values::{
    build_arguments, initial_values, FormContext, LibraryMolecule,
};
use serde_json::{json, Value};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/www/samples");
const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The page's library, in the page's order (`LIBRARY` in www/js/main.js).
const PAGE_LIBRARY: [&str; 8] = [
    "water",
    "methanol",
    "ethanol",
    "acetonitrile",
    "benzene",
    "caffeine",
    "alanine_dipeptide",
    "ethylene",
];

fn sample(name: &str) -> String {
    std::fs::read_to_string(format!("{SAMPLES}/molecules/{name}.mol")).unwrap()
}

fn molecule(name: &str) -> Molecule {
    parse_molblock(&sample(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn library() -> Vec<LibraryMolecule> {
    PAGE_LIBRARY
        .iter()
        .map(|name| LibraryMolecule {
            name: name.to_string(),
            molblock: Some(sample(name)),
            smiles: None,
        })
        .collect()
}

fn button(name: &str) -> ToolButton {
    let text = std::fs::read_to_string(format!("{SAMPLES}/tools-list.json")).unwrap();
    let list: Value = serde_json::from_str(&text).unwrap();
    let toolbox = parse_tool_list(&list, Some("sample")).unwrap();
    toolbox
        .buttons
        .into_iter()
        .find(|b| b.name == name)
        .unwrap()
}

fn build(b: &ToolButton, values: &Value, ctx: &FormContext) -> Result<Value, Vec<String>> {
    build_arguments(
        &b.marker,
        b.form.as_ref().unwrap(),
        &b.input_schema,
        values,
        ctx,
    )
    .map_err(|ps| ps.into_iter().map(|p| p.message).collect())
}

#[test]
fn every_library_molecule_is_v2000_3d_with_explicit_hydrogens() {
    let mut files: Vec<String> = std::fs::read_dir(format!("{SAMPLES}/molecules"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let mut expected: Vec<String> = PAGE_LIBRARY.iter().map(|n| format!("{n}.mol")).collect();
    expected.sort();
    assert_eq!(
        files, expected,
        "the page's library is exactly the committed files"
    );
    for name in PAGE_LIBRARY {
        let text = sample(name);
        assert!(text.lines().nth(3).unwrap().ends_with("V2000"), "{name}");
        let m = molecule(name);
        assert_eq!(m.dimension, Dimension::ThreeD, "{name}");
        // Explicit hydrogens: every carbon has four bonds' worth of neighbours in the file
        // (bond orders counted), so no hydrogen is implicit.
        for (i, &z) in m.elements.iter().enumerate() {
            if z != 6 {
                continue;
            }
            let valence: u32 = m
                .bonds
                .iter()
                .zip(&m.bond_orders)
                .filter(|((a, b), _)| *a as usize == i || *b as usize == i)
                .map(|(_, &order)| u32::from(order))
                .sum();
            assert_eq!(valence, 4, "{name}: carbon {i} has implicit hydrogens");
        }
        assert!(m.elements.contains(&1), "{name}: no hydrogen atoms");
        let flat = m.positions.iter().all(|p| p[2] == 0.0);
        assert!(
            !flat || m.elements.len() <= 3,
            "{name}: coordinates are flat"
        );
    }
}

#[test]
fn fixture_copies_match_the_shared_fixtures() {
    for name in PAGE_LIBRARY.iter().filter(|n| **n != "ethylene") {
        let shared = std::fs::read_to_string(format!("{SHARED}/molecules/{name}.mol")).unwrap();
        assert_eq!(sample(name), shared, "{name}.mol differs from the fixture");
    }
    let list = std::fs::read(format!("{SAMPLES}/tools-list.json")).unwrap();
    let recorded = std::fs::read(format!("{SHARED}/megane-recorded/tools-list.json")).unwrap();
    assert_eq!(list, recorded, "tools-list.json differs from the recording");
}

#[test]
fn ethylene_monomer_geometry_and_junction_atoms() {
    let m = molecule("ethylene");
    assert_eq!(m.elements, vec![6, 6, 1, 1, 1, 1, 1, 1]);
    let d = |a: usize, b: usize| {
        let (p, q) = (m.positions[a], m.positions[b]);
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    };
    assert!((d(0, 1) - 1.535).abs() < 0.01, "C–C {}", d(0, 1));
    for (c, hs) in [(0usize, [2usize, 3, 4]), (1, [5, 6, 7])] {
        for h in hs {
            assert!((d(c, h) - 1.094).abs() < 0.01, "C{c}–H{h} {}", d(c, h));
            assert!(m.bonds.contains(&(c as u32, h as u32)), "bond {c}–{h}");
        }
    }
    // No two non-bonded atoms closer than 1.7 Å (H…H across the C–C bond in staggered ethane is 2.5).
    for a in 2..8 {
        for b in a + 1..8 {
            assert!(d(a, b) > 1.7, "H{a}…H{b} {}", d(a, b));
        }
    }
    let centre: Vec<f64> = (0..3)
        .map(|k| m.positions.iter().map(|p| p[k]).sum::<f64>() / 8.0)
        .collect();
    assert!(centre.iter().all(|c| c.abs() < 1e-3), "centred: {centre:?}");
}

#[test]
fn polymer_chain_starts_from_the_ethylene_monomer_with_its_carbons_as_head_and_tail() {
    let b = button("polymer_chain");
    let ctx = FormContext {
        library: library(),
        random_seed: Some(7),
        ..FormContext::default()
    };
    let values = initial_values(b.form.as_ref().unwrap(), &ctx);
    assert_eq!(
        values["monomer"], "ethylene",
        "the library molecule named like the schema's example"
    );
    let m = molecule("ethylene");
    for key in ["head", "tail"] {
        let i = values[key].as_u64().unwrap() as usize;
        assert_eq!(m.elements[i], 6, "{key} is a carbon");
    }
    let args = build(&b, &values, &ctx).unwrap();
    assert_eq!(args["monomer"]["name"], "ethylene");
    assert_eq!(args["monomer"]["molblock"], json!(sample("ethylene")));
    // liquid_box has no example molecule: the first library molecule, water.
    let lb = button("liquid_box");
    let values = initial_values(lb.form.as_ref().unwrap(), &ctx);
    assert_eq!(values["components"][0]["molecule"], "water");
}

#[test]
fn an_empty_library_says_how_to_add_a_molecule_and_run_stays_disabled() {
    let ctx = FormContext {
        random_seed: Some(7),
        ..FormContext::default()
    };
    for (tool, path) in [
        ("liquid_box", &["components", "0", "molecule"][..]),
        ("polymer_chain", &["monomer"][..]),
    ] {
        let b = button(tool);
        let values = initial_values(b.form.as_ref().unwrap(), &ctx);
        let mut v = &values;
        for key in path {
            v = match key.parse::<usize>() {
                Ok(i) => &v[i],
                Err(_) => &v[*key],
            };
        }
        assert!(
            v.is_null(),
            "{tool}: no molecule name the library lacks: {v}"
        );
        let problems = build(&b, &values, &ctx).unwrap_err();
        assert!(
            problems
                .iter()
                .any(|m| m.contains("library is empty") && m.contains("import a .mol file")),
            "{tool}: {problems:?}"
        );
    }
}
