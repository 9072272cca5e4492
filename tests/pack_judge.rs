//! The packing judge (`megane_builder_client::pack::judge`, on Structures through
//! `offline::judged`) gives `check_packing.py`'s verdicts on the recorded packmol boxes of
//! tests/fixtures/packed (their README lists what that script said of each), and judges what the
//! script cannot: a molecule longer than half the box, the order of the centres.

#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::contract::structure::Structure;
use megane_builder_client::offline::judged::judge_structure;
use megane_builder_client::pack::judge::report::Criteria;

fn packed(name: &str) -> Structure {
    let path = format!(
        "{}/tests/fixtures/packed/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn with_density(target: f64) -> Criteria {
    Criteria {
        target_density: Some(target),
        ..Criteria::at(2.0)
    }
}

#[test]
fn packmol_water_box_passes_as_check_packing_says() {
    let s = packed("water1000_rho1.0_tol2.0_packmol21.2.3_seed1.json");
    let r = judge_structure(&s, None, &with_density(1.0)).unwrap();
    assert!(r.pass, "{r:?}");
    assert_eq!(r.molecules, 1000);
    assert_eq!(r.closest.below_tolerance, 0);
    // check_packing.py: min d 2.08978 Å, density 1.0000016, rigid dev 1.45e-6 Å.
    assert!((r.closest.min_distance.unwrap() - 2.089778).abs() < 1e-5);
    assert!((r.density - 1.0).abs() < 1e-5, "{}", r.density);
    assert!(r.rigid_max_deviation < 1e-5 && r.rigid_max_deviation > 1e-7);
    // packmol starts from random positions: a liquid's S(k).
    assert!(r.disordered(), "{:?}", r.centres);
    assert!(r.centres.peak.s > 3.0, "{:?}", r.centres);
    // But not from uniform orientations: the water planes' normals lean towards z, ⟨P2⟩ = 0.242
    // (numpy on the file's own cross products gives the same), as random Euler angles drawn
    // uniformly would (packmol's start; a uniform rotation draws cos β, not β, uniformly).
    assert_eq!(r.orientations.len(), 1);
    let o = &r.orientations[0].order;
    assert!((o.p2[2][2] - 0.2418).abs() < 1e-3, "{o:?}");
    assert!(!r.orientations_uniform());
}

#[test]
fn packmol_mixture_passes_and_a_wrong_density_fails() {
    let s = packed("water900_ethanol100_rho0.95_tol2.0_packmol21.2.3_seed1.json");
    let r = judge_structure(&s, None, &with_density(0.95)).unwrap();
    assert!(r.pass, "{r:?}");
    assert!((r.closest.min_distance.unwrap() - 2.152049).abs() < 1e-5);
    assert!(r.disordered());
    // 900 water judged for orientations, 100 ethanol too few.
    assert_eq!(r.orientations.len(), 1);
    let wrong = judge_structure(&s, None, &with_density(1.0)).unwrap();
    assert!(!wrong.pass && !wrong.density_ok);
}

#[test]
fn packmol_solvate_passes_in_the_free_volume() {
    let solvent =
        packed("solvate_caffeine_water2134_box40_tol2.0_packmol21.2.3_seed1.solvent.json");
    let document = packed("solvate_caffeine_box40.document.json");
    let criteria = Criteria {
        density_of_packed: true,
        density_rtol: 0.02,
        ..with_density(1.0)
    };
    let r = judge_structure(&solvent, Some(&document), &criteria).unwrap();
    assert!(r.pass, "{r:?}");
    // check_packing.py: min d 2.1791 Å (solvent–solvent and solvent–solute), free-volume density
    // 1.00004 with Bondi radii; the project's (Alvarez) radii take a little more room.
    assert!((r.closest.min_distance.unwrap() - 2.179064).abs() < 1e-5);
    assert!((r.density - 1.0).abs() < 0.01, "{}", r.density);
    assert!(r.free_volume < 64_000.0 - 150.0 && r.free_volume > 64_000.0 - 250.0);
    assert!(r.disordered(), "{:?}", r.centres);
    // The solute moved onto a water's oxygen: judged against the fixed atoms.
    let shift: Vec<f64> = (0..3)
        .map(|k| solvent.positions[k] - document.positions[k])
        .collect();
    let moved = Structure {
        positions: document
            .positions
            .iter()
            .enumerate()
            .map(|(i, &x)| x + shift[i % 3])
            .collect(),
        ..document.clone()
    };
    let r = judge_structure(&solvent, Some(&moved), &criteria).unwrap();
    assert!(!r.pass && r.closest.below_tolerance > 0);
}

#[test]
fn packmol_box_without_pbc_fails_as_check_packing_says() {
    let s = packed("water1000_rho1.0_packmol20.14_margin_seed2_HAS_PBC_VIOLATIONS.json");
    let r = judge_structure(&s, None, &with_density(1.0)).unwrap();
    // check_packing.py: FAIL, 2 pairs across the periodic boundary at 1.940 Å.
    assert!(!r.pass);
    assert_eq!(r.closest.below_tolerance, 2);
    assert!((r.closest.min_distance.unwrap() - 1.940032).abs() < 1e-5);
    assert_eq!(r.non_rigid, 0);
}

/// Each copy against its template on raw coordinates: a chain longer than half the box is rigid
/// (check_packing.py's minimum-image distances call it distorted), a copy split across the
/// boundary is not, and a lattice of centres is told from a liquid.
#[test]
fn long_molecules_split_copies_and_lattices() {
    // Two 12-atom rods 14.3 Å long in a 20 Å box, whole.
    let rod = |x0: f64, y: f64| -> Vec<f64> {
        (0..12)
            .flat_map(|i| [x0 + 1.3 * i as f64, y, 10.0])
            .collect()
    };
    let mut s = Structure {
        elements: vec![6; 24],
        positions: [rod(2.0, 5.0), rod(3.0, 12.0)].concat(),
        cell: Some([20.0, 0.0, 0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 20.0]),
        molecules: Some([vec![0; 12], vec![1; 12]].concat()),
        ..Structure::default()
    };
    let r = judge_structure(&s, None, &Criteria::at(2.0)).unwrap();
    assert!(r.pass, "{r:?}");
    assert!(r.rigid_max_deviation < 1e-12);
    // The second rod's last atom wrapped to the other side of the box: a split copy.
    s.positions[3 * 23] -= 20.0;
    let r = judge_structure(&s, None, &Criteria::at(2.0)).unwrap();
    assert!(!r.pass && r.non_rigid == 1);
    // 512 atoms on a simple cubic lattice: S_max = N at the lattice's vectors.
    let lattice = Structure {
        elements: vec![18; 512],
        positions: (0..512)
            .flat_map(|i| [i % 8, i / 8 % 8, i / 64].map(|c| 4.0 * c as f64 + 2.0))
            .collect(),
        cell: Some([32.0, 0.0, 0.0, 0.0, 32.0, 0.0, 0.0, 0.0, 32.0]),
        ..Structure::default()
    };
    let r = judge_structure(&lattice, None, &Criteria::at(2.0)).unwrap();
    assert!(!r.disordered());
    assert!((r.centres.peak.s - 512.0).abs() < 5.0, "{:?}", r.centres);
}

/// The grid's S(k) against the plain sum over every judged vector on a real box of 1 000
/// molecules (packmol's water): the same largest value, at the same vector.
#[test]
fn grid_structure_factor_matches_the_direct_sum_on_a_packed_box() {
    use megane_builder_client::pack::judge::structure_factor::{s_max, s_max_direct, s_of};
    let s = packed("water1000_rho1.0_tol2.0_packmol21.2.3_seed1.json");
    let l = s.cell.unwrap()[0];
    let oxygens: Vec<[f64; 3]> = s
        .positions
        .chunks_exact(9)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    assert_eq!(oxygens.len(), 1000);
    let v = l * l * l;
    let grid = s_max(&oxygens, [l; 3], v);
    let direct = s_max_direct(&oxygens, [l; 3], v);
    assert_eq!(grid.vectors, direct.vectors);
    assert_eq!(
        grid.n.map(i64::abs),
        direct.n.map(i64::abs),
        "{grid:?} {direct:?}"
    );
    assert!(
        (grid.s - direct.s).abs() < 0.005 * direct.s,
        "{grid:?} {direct:?}"
    );
    assert!((s_of(&oxygens, [l; 3], direct.n) - direct.s).abs() < 1e-9);
}
