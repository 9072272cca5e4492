//! The structure files the demo page opens and saves (issue 33, `contract::files` over the `chem` formats): every format
//! round-trips (Save → Open: positions within 1e-3 Å — `.gro` within 5e-4 Å, 4 decimals of nm in
//! its standard 8 columns —, the cell where the format has one, the bonds: listed by mol and PDB, found
//! again from distances for XYZ and `.gro`), the committed golden files in `tests/fixtures/golden`
//! are what the package writes today, and RDKit, ASE and gemmi (the Python test peers, `.venv`)
//! read them back with the same atoms, cell and bonds (`tests/peers/read_golden.py`).
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use megane_builder_client::contract::files::{read_structure, write_structure, Format};
use megane_builder_client::contract::structure::Structure;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn golden_dir() -> PathBuf {
    root().join("tests/fixtures/golden")
}

/// A structure file of the fixtures, read by the package.
fn open(relative: &str) -> Structure {
    let path = root().join("tests/fixtures").join(relative);
    let text = std::fs::read_to_string(&path).unwrap();
    read_structure(relative, &text).unwrap().structure
}

fn sorted(bonds: &[[u32; 2]]) -> Vec<[u32; 2]> {
    let mut b: Vec<[u32; 2]> = bonds.iter().map(|&[i, j]| [i.min(j), i.max(j)]).collect();
    b.sort_unstable();
    b
}

/// Save → Open in `format`: the same elements, positions within `tolerance`, the cell where the
/// format has one, and the same bonds.
fn round_trip(s: &Structure, format: Format, tolerance: f64) -> Structure {
    let text = write_structure(s, format, "round trip").unwrap();
    let back = read_structure(&format!("saved.{}", format.extension()), &text)
        .unwrap()
        .structure;
    assert_eq!(back.elements, s.elements, "{format:?}");
    let worst = s
        .positions
        .iter()
        .zip(&back.positions)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst <= tolerance, "{format:?}: a position moved {worst} Å");
    match (format, s.cell, back.cell) {
        (Format::Mol, _, back) => assert_eq!(back, None, "a mol file has no cell"),
        (_, Some(a), Some(b)) => {
            for k in 0..9 {
                assert!((a[k] - b[k]).abs() < 1e-3, "{format:?}: cell {a:?} → {b:?}");
            }
        }
        (_, a, b) => assert_eq!(a.is_some(), b.is_some(), "{format:?}: cell"),
    }
    assert_eq!(sorted(&back.bonds), sorted(&s.bonds), "{format:?}: bonds");
    back
}

#[test]
fn a_packed_water_ethanol_box_round_trips_in_every_format() {
    let s = open("packed/water900_ethanol100_rho0.95_tol2.0_packmol21.2.3_seed1.json");
    assert_eq!((s.n_atoms(), s.bonds.len()), (3600, 2600));
    round_trip(&s, Format::Xyz, 1e-7);
    let pdb = round_trip(&s, Format::Pdb, 5e-4 + 1e-9);
    assert_eq!(
        pdb.residue_ids.as_ref().unwrap()[3599],
        1000,
        "one residue per molecule"
    );
    // 3600 atoms and 2600 bonds: beyond V2000's 999, so V3000.
    round_trip(&s, Format::Mol, 5e-5 + 1e-9);
    // The standard 8-column .gro fields, with 4 decimals of nm.
    round_trip(&s, Format::Gro, 5e-4 + 1e-9);
}

#[test]
fn a_polymer_chain_without_a_cell_round_trips_in_every_format() {
    // The reference server's 5-unit chain, as recorded (the Structure inside the call's result).
    let call: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            root().join("tests/fixtures/megane-recorded/call-polymer_chain.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let structure = &call["result"]["structuredContent"]["structure"];
    let s = read_structure("chain.json", &structure.to_string())
        .unwrap()
        .structure;
    assert_eq!(s.cell, None);
    for (format, tolerance) in [
        (Format::Xyz, 1e-7),
        (Format::Pdb, 5e-4 + 1e-9),
        (Format::Mol, 5e-5 + 1e-9),
        (Format::Gro, 5e-4 + 1e-9),
    ] {
        round_trip(&s, format, tolerance);
    }
}

#[test]
fn mol_keeps_bond_orders_and_charges() {
    let s = open("molecules/caffeine.mol");
    assert!(s.bond_orders.as_ref().unwrap().contains(&2));
    let back = round_trip(&s, Format::Mol, 5e-5 + 1e-9);
    assert_eq!(back.bond_orders, s.bond_orders);
}

/// The golden files: a small water–ethanol box with its cell and residues in every format,
/// caffeine (bond orders) as mol and PDB, and 1 020 atoms of water as a V3000 mol file.
fn goldens() -> Vec<(String, String)> {
    let box_ = open("golden/box.json");
    let caffeine = open("molecules/caffeine.mol");
    let water = open("golden/water340.json");
    let mut out = Vec::new();
    for format in Format::ALL {
        let name = format!("box.{}", format.extension());
        out.push((
            name,
            write_structure(&box_, format, "water-ethanol box").unwrap(),
        ));
    }
    for format in [Format::Mol, Format::Pdb] {
        let name = format!("caffeine.{}", format.extension());
        out.push((
            name,
            write_structure(&caffeine, format, "caffeine").unwrap(),
        ));
    }
    out.push((
        "water340.mol".into(),
        write_structure(&water, Format::Mol, "340 water").unwrap(),
    ));
    out
}

/// The committed golden files are what the package writes today (`MEGANE_WRITE_GOLDEN=1` writes
/// them again after a deliberate change of a writer).
#[test]
fn the_golden_files_are_what_the_package_writes() {
    for (name, text) in goldens() {
        let path = golden_dir().join(&name);
        if std::env::var_os("MEGANE_WRITE_GOLDEN").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let committed =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            committed, text,
            "{name} differs from what the package writes"
        );
    }
}

/// RDKit, ASE and gemmi read the golden files back with the same atoms, cell and bonds as the
/// structures they were written from (`tests/peers/read_golden.py`, the `.venv` of
/// `tests/peers/setup.sh`, or `MCP_PEER_PYTHON`).
#[test]
fn rdkit_ase_and_gemmi_read_the_golden_files() {
    let python = std::env::var("MCP_PEER_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join(".venv/bin/python"));
    let output = std::process::Command::new(&python)
        .arg(root().join("tests/peers/read_golden.py"))
        .arg(golden_dir())
        .arg(root().join("tests/fixtures/molecules/caffeine.mol"))
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run tests/peers/setup.sh (RDKit, ASE, gemmi)",
                python.display()
            )
        });
    let report = String::from_utf8_lossy(&output.stdout);
    println!("{report}");
    assert!(
        output.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Every file was read by every peer that reads its format.
    for line in [
        "box.xyz: ASE ok",
        "box.xyz: RDKit ok",
        "box.pdb: RDKit ok",
        "box.pdb: ASE ok",
        "box.pdb: gemmi ok",
        "box.mol: RDKit ok",
        "box.gro: ASE ok",
        "caffeine.mol: RDKit ok",
        "caffeine.pdb: RDKit ok",
        "caffeine.pdb: gemmi ok",
        "water340.mol: RDKit ok",
    ] {
        assert!(
            report.lines().any(|l| l == line),
            "{line} missing:\n{report}"
        );
    }
}
