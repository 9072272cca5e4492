//! The offline tools under the contract: their tools/list passes the same discovery and form
//! checks as the reference server's, and each call's result passes result interpretation and
//! apply planning, with the packing judged independently (minimum image, rigidity, density).
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::contract::apply::{plan_apply, ApplyPlan, EditOp};
use megane_builder_client::contract::discovery::{parse_tool_list, ToolButton};
use megane_builder_client::contract::form::Control;
use megane_builder_client::contract::result::{interpret_call_value, BUILDER_RESULT_SCHEMA};
use megane_builder_client::contract::structure::Structure;
use megane_builder_client::contract::validate::validate_arguments;
use megane_builder_client::contract::values::{
    build_arguments, initial_values, FormContext, LibraryMolecule,
};
use megane_builder_client::offline::{call_tool, definitions};
use megane_builder_client::pack::PackControl;
use serde_json::{json, Value};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn molblock(name: &str) -> String {
    std::fs::read_to_string(format!("{SHARED}/molecules/{name}.mol")).unwrap()
}

/// A §5.1 document of one water molecule, its oxygen at (`at`, `at`, `at`) Å in a cubic cell of
/// `side` Å.
fn one_water(at: f64, side: f64) -> Value {
    json!({
        "elements": [8, 1, 1], "positions": [at, at, at, at + 0.96, at, at, at - 0.24, at + 0.93, at],
        "cell": [side, 0, 0, 0, side, 0, 0, 0, side], "bonds": [[0, 1], [0, 2]]
    })
}

fn buttons() -> Vec<ToolButton> {
    let toolbox = parse_tool_list(&definitions::tools_list(), Some("offline")).unwrap();
    assert!(toolbox.notices.is_empty(), "{:?}", toolbox.notices);
    toolbox.buttons
}

fn button(name: &str) -> ToolButton {
    buttons().into_iter().find(|b| b.name == name).unwrap()
}

fn library() -> Vec<LibraryMolecule> {
    ["water", "ethanol"]
        .iter()
        .map(|n| LibraryMolecule {
            name: n.to_string(),
            molblock: Some(molblock(n)),
            smiles: None,
        })
        .collect()
}

fn call(name: &str, args: &Value) -> Value {
    call_tool(name, args, &PackControl::default())
}

/// Form values → arguments → the offline call → the contract's interpretation, as the page does.
fn run(
    b: &ToolButton,
    values: &Value,
    ctx: &FormContext,
) -> (
    Value,
    Value,
    megane_builder_client::contract::result::Interpreted,
) {
    let args = build_arguments(
        &b.marker,
        b.form.as_ref().unwrap(),
        &b.input_schema,
        values,
        ctx,
    )
    .unwrap();
    let response = call(&b.name, &args);
    let interpreted = interpret_call_value(&b.name, &b.marker, &response)
        .unwrap_or_else(|e| panic!("{e}: {response}"));
    (args, response, interpreted)
}

/// Smallest distance between atoms of different molecules, minimum image, brute force, on
/// positions rounded to f32.
fn min_intermolecular(s: &Structure, fixed: &[[f64; 3]]) -> f64 {
    let cell = s.cell.unwrap();
    let l = [cell[0], cell[4], cell[8]];
    let molecules = s.molecules.as_ref().unwrap();
    // As Builder's snapshot keeps them: f32.
    let round = |c: &[f64]| [c[0] as f32 as f64, c[1] as f32 as f64, c[2] as f32 as f64];
    let p: Vec<[f64; 3]> = s.positions.chunks(3).map(round).collect();
    let fixed: Vec<[f64; 3]> = fixed.iter().map(|f| round(f)).collect();
    let dist = |a: [f64; 3], b: [f64; 3]| {
        (0..3)
            .map(|k| {
                let d = a[k] - b[k];
                let d = d - l[k] * (d / l[k]).round();
                d * d
            })
            .sum::<f64>()
            .sqrt()
    };
    let mut best = f64::INFINITY;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            if molecules[i] != molecules[j] {
                best = best.min(dist(p[i], p[j]));
            }
        }
        for f in &fixed {
            best = best.min(dist(p[i], *f));
        }
    }
    best
}

#[test]
fn offline_tools_are_buttons_like_the_reference_servers() {
    let b = buttons();
    assert_eq!(
        b.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
        ["liquid_box", "polymer_chain", "solvate"]
    );
    assert!(b.iter().all(|b| b.disabled_reason.is_none()));
    let liquid = &b[0];
    let components = &liquid.form.as_ref().unwrap().fields[0];
    let Control::Table {
        columns,
        min_rows,
        max_rows,
    } = &components.control
    else {
        panic!()
    };
    assert_eq!((*min_rows, *max_rows), (1, Some(8)));
    assert_eq!(columns[0].control, Control::Molecule);
    assert_eq!(columns[1].example, Some(json!(100)));
    assert_eq!(
        b[2].form.as_ref().unwrap().document_property.as_deref(),
        Some("document")
    );
}

/// The reference server's recorded `tools/list` (megane's fixture).
fn reference_tool(name: &str) -> Value {
    let text =
        std::fs::read_to_string(format!("{SHARED}/megane-recorded/tools-list.json")).unwrap();
    let list: Value = serde_json::from_str(&text).unwrap();
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
        .clone()
}

#[test]
fn polymer_chain_takes_the_reference_servers_arguments() {
    let ours = &definitions::tools_list()["tools"][1];
    let reference = reference_tool("polymer_chain");
    assert_eq!(ours["name"], "polymer_chain");
    for key in ["head", "tail", "length", "seed"] {
        assert_eq!(
            ours["inputSchema"]["properties"][key], reference["inputSchema"]["properties"][key],
            "{key}"
        );
    }
    let monomer = |t: &Value| {
        let mut m = t["inputSchema"]["properties"]["monomer"].clone();
        m.as_object_mut().unwrap().remove("$ref");
        m
    };
    assert_eq!(monomer(ours), monomer(&reference));
    assert_eq!(
        ours["inputSchema"]["required"],
        reference["inputSchema"]["required"]
    );
    let marker = "io.github.megane-labs/builder";
    for key in ["contract", "category", "apply", "document", "stochastic"] {
        assert_eq!(
            ours["_meta"][marker][key], reference["_meta"][marker][key],
            "{key}"
        );
    }
    assert_eq!(ours["annotations"], reference["annotations"]);
}

#[test]
fn liquid_box_of_water_and_ethanol_meets_the_tolerance() {
    let b = button("liquid_box");
    let ctx = FormContext {
        library: library(),
        random_seed: Some(11),
        ..FormContext::default()
    };
    let mut values = initial_values(b.form.as_ref().unwrap(), &ctx);
    values["components"] =
        json!([{"molecule": "water", "count": 20}, {"molecule": "ethanol", "count": 5}]);
    values["density"] = json!(0.9);
    let (args, response, interpreted) = run(&b, &values, &ctx);
    let s = &interpreted.result.structure;
    assert_eq!(s.elements.len(), 20 * 3 + 5 * 9);
    assert_eq!(interpreted.result.name, "water-ethanol");
    assert!(
        interpreted
            .summary
            .starts_with("Liquid box: 20 water and 5 ethanol in a "),
        "{}",
        interpreted.summary
    );
    assert_eq!(s.residue_names.as_ref().unwrap()[0], "WATE");
    assert_eq!(s.residue_names.as_ref().unwrap()[60], "ETHA");
    assert_eq!(s.residue_ids.as_ref().unwrap()[60], 21);
    assert_eq!(s.bonds.len(), 20 * 2 + 5 * 8);
    assert_eq!(interpreted.result.provenance["seed"], 11);
    // Density on target: mass / volume.
    let cell = s.cell.unwrap();
    let volume = cell[0] * cell[4] * cell[8];
    let mass = 20.0 * 18.015 + 5.0 * 46.069;
    assert!((mass / (volume * 0.602_214_076) - 0.9).abs() < 1e-3);
    let tolerance = 2.0;
    assert!(
        interpreted.warnings.is_empty(),
        "{:?}",
        interpreted.warnings
    );
    assert!(
        min_intermolecular(s, &[]) >= tolerance,
        "{}",
        min_intermolecular(s, &[])
    );
    match plan_apply(&b.marker, &interpreted.result, None, &[]).unwrap() {
        ApplyPlan::NewDocument(snapshot) => assert_eq!(snapshot.n_atoms, 105),
        other => panic!("{other:?}"),
    }
    // Same seed, same structure; another seed, another one. The Worker's bytes are the same JSON.
    assert_eq!(call("liquid_box", &args), response);
    let bytes = megane_builder_client::offline::call_tool_bytes(
        "liquid_box",
        &args,
        &PackControl::default(),
    );
    assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), response);
    let mut other = args.clone();
    other["seed"] = json!(12);
    assert_ne!(
        call("liquid_box", &other)["structuredContent"]["structure"]["positions"],
        response["structuredContent"]["structure"]["positions"]
    );
}

#[test]
fn solvate_adds_only_solvent_around_the_document() {
    let b = button("solvate");
    let document = one_water(6.0, 12.0);
    let ctx = FormContext {
        library: library(),
        random_seed: Some(3),
        document: Some(document.clone()),
        ..FormContext::default()
    };
    let values = initial_values(b.form.as_ref().unwrap(), &ctx);
    let (_, _, interpreted) = run(&b, &values, &ctx);
    let s = &interpreted.result.structure;
    // 1728 Å³ minus one water's spheres at 1 g/cm³: 57 waters (the reference gives 56 for methane).
    assert_eq!(s.elements.len() % 3, 0);
    let waters = s.elements.len() / 3;
    assert!((55..=58).contains(&waters), "{waters}");
    assert_eq!(interpreted.result.name, "water-solvent");
    let fixed = [[6.0, 6.0, 6.0], [6.96, 6.0, 6.0], [5.76, 6.93, 6.0]];
    assert!(min_intermolecular(s, &fixed) >= 2.0);
    let doc: Structure = serde_json::from_value(document).unwrap();
    match plan_apply(&b.marker, &interpreted.result, Some(&doc), &[]).unwrap() {
        ApplyPlan::Insert(plan) => {
            assert_eq!(plan.ops.len(), 1, "same cell: no set_cell");
            assert!(
                matches!(&plan.ops[0], EditOp::AddFragment { elements, .. } if elements.len() == waters * 3)
            );
            assert_eq!(plan.select[0], 3);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tool_errors_are_one_actionable_line() {
    let water = json!({"name": "water", "molblock": molblock("water")});
    let flat = json!({"name": "water", "molblock": molblock("water").replacen("3D", "2D", 1)});
    let smiles = json!({"name": "ethanol", "smiles": "CCO"});
    let doc_no_cell = json!({"elements": [6], "positions": [0, 0, 0], "cell": null, "bonds": []});
    let doc_skewed = json!({"elements": [6], "positions": [0, 0, 0], "cell": [10, 0, 0, 3, 10, 0, 0, 0, 10], "bonds": []});
    let cases = [
        (
            "liquid_box",
            json!({"components": [{"molecule": flat, "count": 10}], "seed": 1}),
            "2D drawing",
        ),
        (
            "liquid_box",
            json!({"components": [{"molecule": smiles, "count": 10}], "seed": 1}),
            "SMILES",
        ),
        (
            "liquid_box",
            json!({"components": [{"molecule": water, "count": 1}], "seed": 1}),
            "would be only",
        ),
        (
            "liquid_box",
            json!({"components": [{"molecule": water, "count": 0}], "seed": 1}),
            "at least 1",
        ),
        (
            "liquid_box",
            json!({"components": [{"molecule": water, "count": 200000}, {"molecule": water, "count": 200000}], "seed": 1}),
            "at most 500000",
        ),
        (
            "liquid_box",
            json!({"components": [{"molecule": water, "count": 10}]}),
            "Seed is required",
        ),
        (
            "solvate",
            json!({"document": doc_no_cell, "solvent": water, "seed": 1}),
            "periodic cell",
        ),
        (
            "solvate",
            json!({"document": doc_skewed, "solvent": water, "seed": 1}),
            "orthorhombic",
        ),
        ("no_such_tool", json!({}), "Unknown tool: no_such_tool"),
    ];
    for (tool, args, expected) in cases {
        let response = call(tool, &args);
        assert_eq!(response["isError"], true, "{tool} {args}");
        let text = response["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(expected), "{text} lacks {expected}");
        assert!(!text.contains('\n'));
    }
}

/// A test monomer of `tests/fixtures` (see its README): ethylene (`CC`) or styrene (`CC(c1ccccc1)`),
/// head 0 and tail 1 in both.
fn monomer(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}.mol", env!("CARGO_MANIFEST_DIR"));
    json!({"name": name, "molblock": std::fs::read_to_string(path).unwrap()})
}

/// Atom pairs of different units more than two bonds apart, closer than the chosen bound, on
/// positions rounded to f32 as the host's snapshot does. Brute force over all pairs, with the
/// bond graph of the result itself.
fn chain_contacts(s: &Structure) -> Vec<(usize, usize, f64)> {
    use megane_builder_client::offline::polymer::{contact_bound, HEAVY_MIN};
    let n = s.elements.len();
    let mut neighbours = vec![Vec::new(); n];
    for &[i, j] in &s.bonds {
        neighbours[i as usize].push(j as usize);
        neighbours[j as usize].push(i as usize);
    }
    let p: Vec<[f64; 3]> = s
        .positions
        .chunks(3)
        .map(|c| [c[0] as f32 as f64, c[1] as f32 as f64, c[2] as f32 as f64])
        .collect();
    let unit = s.residue_ids.as_ref().unwrap();
    let mut bad = Vec::new();
    for i in 0..n {
        let mut near: Vec<usize> = neighbours[i].clone();
        for &j in &neighbours[i] {
            near.extend(&neighbours[j]);
        }
        for j in i + 1..n {
            if unit[i] == unit[j] || near.contains(&j) {
                continue;
            }
            let d = (0..3)
                .map(|k| (p[i][k] - p[j][k]).powi(2))
                .sum::<f64>()
                .sqrt();
            let heavy = s.elements[i] > 1 && s.elements[j] > 1;
            if d < contact_bound(s.elements[i], s.elements[j], 3) || (heavy && d < HEAVY_MIN) {
                bad.push((i, j, d));
            }
        }
    }
    bad
}

fn distance(s: &Structure, i: usize, j: usize) -> f64 {
    let (a, b) = (s.position(i).unwrap(), s.position(j).unwrap());
    (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt()
}

#[test]
fn polymer_chain_of_ethylene_like_the_reference_servers() {
    let b = button("polymer_chain");
    let ethylene = monomer("ethylene");
    let ctx = FormContext {
        library: vec![
            LibraryMolecule {
                name: "water".into(),
                molblock: Some(molblock("water")),
                smiles: None,
            },
            LibraryMolecule {
                name: "ethylene".into(),
                molblock: ethylene["molblock"].as_str().map(String::from),
                smiles: None,
            },
        ],
        random_seed: Some(1),
        ..FormContext::default()
    };
    let mut values = initial_values(b.form.as_ref().unwrap(), &ctx);
    // The schema's example names ethylene: the form starts on it, not on the first molecule.
    assert_eq!(values["monomer"], "ethylene");
    assert_eq!((&values["head"], &values["tail"]), (&json!(0), &json!(1)));
    values["length"] = json!(5);
    let (args, response, interpreted) = run(&b, &values, &ctx);
    let s = &interpreted.result.structure;
    // The reference server's 5 ethylene units: 32 atoms, 31 bonds, one molecule, 5 residues.
    assert_eq!(
        interpreted.summary,
        "Polymer chain: 5 units of ethylene (32 atoms)."
    );
    assert_eq!(interpreted.result.name, "poly-ethylene");
    assert_eq!(interpreted.result.provenance["seed"], 1);
    assert_eq!(s.elements.len(), 32);
    assert_eq!(s.bonds.len(), 31);
    assert_eq!(s.cell, None);
    assert_eq!(s.bond_orders, None, "all single");
    assert!(s.molecules.as_ref().unwrap().iter().all(|&m| m == 0));
    let ids = s.residue_ids.as_ref().unwrap();
    let per_unit: Vec<usize> = (1..=5)
        .map(|u| ids.iter().filter(|&&i| i == u).count())
        .collect();
    assert_eq!(
        per_unit,
        [7, 6, 6, 6, 7],
        "the chain ends keep their hydrogens"
    );
    assert!(s
        .residue_names
        .as_ref()
        .unwrap()
        .iter()
        .all(|r| r == "ETHY"));
    let carbons = s.elements.iter().filter(|&&z| z == 6).count();
    assert_eq!(carbons, 10);
    // Junction bonds: the CH2–CH2 bond of butane, RDKit MMFF94 1.5274 Å
    // (tests/fixtures/monomers/monomers.json, polyethylene), not a sum of covalent radii.
    let junctions: Vec<[u32; 2]> = s
        .bonds
        .iter()
        .copied()
        .filter(|&[i, j]| ids[i as usize] != ids[j as usize])
        .collect();
    assert_eq!(junctions.len(), 4);
    for [i, j] in junctions {
        let d = distance(s, i as usize, j as usize);
        assert!((d - 1.5274).abs() < 0.03, "{d}");
    }
    assert_eq!(chain_contacts(s), []);
    match plan_apply(&b.marker, &interpreted.result, None, &[]).unwrap() {
        ApplyPlan::NewDocument(snapshot) => assert_eq!(snapshot.n_atoms, 32),
        other => panic!("{other:?}"),
    }
    // Same seed: the same chain, bit for bit, whatever the thread count; another seed differs.
    for threads in [1, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        assert_eq!(pool.install(|| call("polymer_chain", &args)), response);
    }
    let mut other = args.clone();
    other["seed"] = json!(2);
    assert_ne!(
        call("polymer_chain", &other)["structuredContent"]["structure"]["positions"],
        response["structuredContent"]["structure"]["positions"]
    );
}

#[test]
fn polymer_chain_of_100_styrene_units_keeps_its_units_and_is_free_of_contacts() {
    use megane_builder_client::offline::molecule::read_molecule;
    use megane_builder_client::offline::polymer::Monomer;
    let template = megane_builder_client::chem::molblock::parse_molblock(
        monomer("styrene")["molblock"].as_str().unwrap(),
    )
    .unwrap();
    let rule = Monomer::new(read_molecule(&monomer("styrene")).unwrap(), 0, 1).unwrap();
    let args =
        json!({"monomer": monomer("styrene"), "head": 0, "tail": 1, "seed": 7, "length": 100});
    let response = call("polymer_chain", &args);
    let b = button("polymer_chain");
    let interpreted = interpret_call_value(&b.name, &b.marker, &response)
        .unwrap_or_else(|e| panic!("{e}: {response}"));
    let s = &interpreted.result.structure;
    assert_eq!(s.elements.len(), 100 * 16 + 2);
    assert_eq!(chain_contacts(s), []);
    // The phenyl rings keep their Kekulé orders: 3 double bonds per unit.
    let orders = s.bond_orders.as_ref().unwrap();
    assert_eq!(orders.iter().filter(|&&o| o == 2).count(), 300);
    // Every bond of a unit keeps the monomer's length (a unit moves rigidly, or is relaxed with
    // its bonds held); every junction has the rule's length, within 0.03 Å of the C–C junction
    // of polystyrene's RDKit MMFF94 dimer (1.5454 Å, tests/fixtures/monomers).
    let ids = s.residue_ids.as_ref().unwrap();
    let internal: Vec<f64> = template
        .bonds
        .iter()
        .map(|&(i, j)| {
            let (a, b) = (
                template.positions[i as usize],
                template.positions[j as usize],
            );
            (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt()
        })
        .collect();
    for (k, &[i, j]) in s.bonds.iter().enumerate() {
        let d = distance(s, i as usize, j as usize);
        if ids[i as usize] == ids[j as usize] {
            assert!(
                internal.iter().any(|&x| (x - d).abs() < 2e-3),
                "bond {k}: {d} Å is none of the monomer's"
            );
        } else {
            assert!((d - rule.bond_length).abs() < 2e-3, "junction {k}: {d} Å");
            assert!((d - 1.5454).abs() < 0.03, "junction {k}: {d} Å");
        }
    }
    // The junction takes the side of the hydrogen it replaces and the rule's bond angle with the
    // tail's backbone neighbour (its own head, CH2): within 15° of it where a crowded
    // neighbourhood was relaxed.
    let expected = rule.tail_angle.unwrap();
    for &[i, j] in s
        .bonds
        .iter()
        .filter(|&&[i, j]| ids[i as usize] != ids[j as usize])
    {
        let (tail, head) = (i as usize, j as usize);
        // Chain atoms keep each unit's monomer order (heavy atoms first): the unit's own head is
        // the atom before its tail.
        let own = tail - 1;
        assert_eq!(ids[own], ids[tail]);
        let p = |a: usize| s.position(a).unwrap();
        let (c, h, o) = (p(tail), p(head), p(own));
        let u = [h[0] - c[0], h[1] - c[1], h[2] - c[2]];
        let v = [o[0] - c[0], o[1] - c[1], o[2] - c[2]];
        let dot: f64 = (0..3).map(|k| u[k] * v[k]).sum();
        let norm = |w: [f64; 3]| (0..3).map(|k| w[k] * w[k]).sum::<f64>().sqrt();
        let angle = (dot / (norm(u) * norm(v))).acos().to_degrees();
        assert!(
            (angle - expected).abs() < 15.0,
            "junction angle {angle:.1}°, rule {expected}°"
        );
    }
}

#[test]
fn polymer_chain_reports_its_repeat_units_then_the_writing() {
    use megane_builder_client::offline::call_tool_bytes;
    use std::sync::Mutex;
    let args =
        json!({"monomer": monomer("styrene"), "head": 0, "tail": 1, "seed": 7, "length": 100});
    let events = Mutex::new(Vec::new());
    let cb = |f: f64, m: &str| events.lock().unwrap().push((f, m.to_string()));
    let control = PackControl {
        cancel: None,
        progress: Some(&cb),
    };
    call_tool_bytes("polymer_chain", &args, &control);
    let events = events.into_inner().unwrap();
    let fractions: Vec<f64> = events.iter().map(|e| e.0).collect();
    assert!(fractions.windows(2).all(|w| w[0] <= w[1]), "{events:?}");
    assert!(
        events
            .iter()
            .any(|(f, m)| *f == 1.0 && m == "placing repeat unit 100 of 100"),
        "{events:?}"
    );
    assert_eq!(
        events.last(),
        Some(&(1.0, "writing 1 602 atoms".to_string())),
        "{events:?}"
    );
}

#[test]
fn polymer_chain_refusals_are_one_line_in_words() {
    use megane_builder_client::offline::polymer;
    let styrene = monomer("styrene");
    let water = json!({"name": "water", "molblock": molblock("water")});
    let cases = [
        (
            json!({"monomer": styrene, "head": 0, "tail": 2, "seed": 1}),
            "tail atom 2 (C) of styrene has no hydrogen",
        ),
        (
            json!({"monomer": styrene, "head": 2, "tail": 1, "seed": 1}),
            "head atom 2 (C) of styrene has no hydrogen",
        ),
        (
            json!({"monomer": styrene, "head": 1, "tail": 1, "seed": 1}),
            "The head and tail atoms must be different atoms.",
        ),
        (
            json!({"monomer": water, "head": 0, "tail": 1, "seed": 1}),
            "tail atom 1 (H) of water has no hydrogen",
        ),
        (
            json!({"monomer": {"name": "ethylene", "smiles": "CC"}, "head": 0, "tail": 1, "seed": 1}),
            "SMILES",
        ),
        (
            json!({"monomer": styrene, "head": 0, "tail": 1, "seed": 1, "length": 201}),
            "200",
        ),
        (
            json!({"monomer": styrene, "head": 0, "tail": 1}),
            "Seed is required.",
        ),
    ];
    for (args, expected) in cases {
        let response = call("polymer_chain", &args);
        assert_eq!(response["isError"], true, "{args}");
        let text = response["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(expected), "{text} lacks {expected}");
        assert!(!text.contains('\n'));
    }
    // Beyond the schema's 200 units (the library path, used by the benchmarks): the atom cap.
    let args =
        json!({"monomer": monomer("ethylene"), "head": 0, "tail": 1, "seed": 1, "length": 100_000});
    let message = polymer::run(
        &args,
        &PackControl::default(),
        megane_builder_client::offline::Place::Worker,
    )
    .unwrap_err();
    assert_eq!(
        message,
        "A chain of 100000 units of ethylene would have 600002 atoms; Builder accepts at most 500000. Use fewer units."
    );
    // An atom index beyond the monomer is caught by the argument check, before the tool runs.
    let args = json!({"monomer": styrene, "head": 0, "tail": 18, "seed": 1});
    let text = call("polymer_chain", &args)["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("18"), "{text}");
}

#[test]
fn a_dense_box_that_converged_says_so_in_the_summary_not_in_warnings() {
    let water = json!({"name": "water", "molblock": molblock("water")});
    let args =
        json!({"components": [{"molecule": water, "count": 64}], "seed": 2, "tolerance": 2.5});
    let response = call("liquid_box", &args);
    let b = button("liquid_box");
    let interpreted = interpret_call_value(&b.name, &b.marker, &response)
        .unwrap_or_else(|e| panic!("{e}: {response}"));
    assert_eq!(interpreted.warnings, Vec::<String>::new());
    assert!(
        interpreted.summary.contains(
            "Densely packed: spheres of half the minimum distance around the atoms fill 5"
        ),
        "{}",
        interpreted.summary
    );
    assert!(min_intermolecular(&interpreted.result.structure, &[]) >= 2.5);
    // A sparse box says nothing of density.
    let args = json!({"components": [{"molecule": water, "count": 64}], "seed": 2, "density": 0.5});
    let text = call("liquid_box", &args)["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!text.contains("Densely"), "{text}");
}

/// §5: every offline tool declares our one BuilderResult schema as its `outputSchema` (an object
/// schema, as MCP requires), discovery keeps it on the button, and the `structuredContent` of a
/// call of each tool conforms to it.
#[test]
fn offline_tools_declare_the_builder_result_schema_and_their_results_conform() {
    let ours: Value = serde_json::from_str(BUILDER_RESULT_SCHEMA).unwrap();
    assert_eq!(ours["type"], "object");
    let list = definitions::tools_list();
    let tools = list["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3);
    for tool in tools {
        assert_eq!(tool["outputSchema"], ours, "{}", tool["name"]);
    }
    for b in buttons() {
        assert_eq!(b.output_schema.as_ref(), Some(&ours), "{}", b.name);
    }

    let document = one_water(6.0, 12.0);
    let mut ethylene_library = library();
    ethylene_library.push(LibraryMolecule {
        name: "ethylene".into(),
        molblock: monomer("ethylene")["molblock"].as_str().map(String::from),
        smiles: None,
    });
    let cases = [
        (
            "liquid_box",
            json!({"components": [{"molecule": "water", "count": 10}]}),
            None,
        ),
        ("solvate", json!({}), Some(document)),
        (
            "polymer_chain",
            json!({"monomer": "ethylene", "head": 0, "tail": 1, "length": 3}),
            None,
        ),
    ];
    for (name, overrides, document) in cases {
        let b = button(name);
        let ctx = FormContext {
            library: ethylene_library.clone(),
            random_seed: Some(5),
            document,
            ..FormContext::default()
        };
        let mut values = initial_values(b.form.as_ref().unwrap(), &ctx);
        for (key, value) in overrides.as_object().unwrap() {
            values[key] = value.clone();
        }
        let (_, response, interpreted) = run(&b, &values, &ctx);
        assert!(!interpreted.result.structure.elements.is_empty(), "{name}");
        let structured = &response["structuredContent"];
        assert!(structured.is_object(), "{name}: {response}");
        let declared = b.output_schema.as_ref().unwrap();
        let problems = validate_arguments(declared, None, structured);
        assert!(problems.is_empty(), "{name}: {problems:?}");
        // The schema is not vacuous: a result without its structure does not conform.
        let mut broken = structured.clone();
        broken.as_object_mut().unwrap().remove("structure");
        assert!(
            !validate_arguments(declared, None, &broken).is_empty(),
            "{name}"
        );
    }
}

#[test]
fn the_bytes_path_reports_writing_the_result_and_matches_the_value_path() {
    use megane_builder_client::offline::call_tool_bytes;
    use std::sync::Mutex;
    let args = json!({"components": [{"molecule": {"name": "water", "molblock": molblock("water")}, "count": 40}], "seed": 3});
    let events = Mutex::new(Vec::new());
    let cb = |f: f64, m: &str| events.lock().unwrap().push((f, m.to_string()));
    let control = PackControl {
        cancel: None,
        progress: Some(&cb),
    };
    let bytes = call_tool_bytes("liquid_box", &args, &control);
    let from_bytes: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(from_bytes, call("liquid_box", &args));
    let events = events.into_inner().unwrap();
    let fractions: Vec<f64> = events.iter().map(|e| e.0).collect();
    assert!(fractions.windows(2).all(|w| w[0] <= w[1]), "{events:?}");
    // Writing is the last phase: announced, then repeated between the counting and writing passes.
    let tail: Vec<&(f64, String)> = events.iter().rev().take(2).collect();
    assert!(
        tail.iter()
            .all(|(f, m)| *f == 1.0 && m == "writing 120 atoms"),
        "{events:?}"
    );
}

/// What the offline Worker hands the page (`call_tool_transfer`: a successful result's typed parts
/// with the Structure's arrays as binary, a tool error as JSON) reads to the same outcome as the
/// CallToolResult's JSON bytes, for each tool and for a tool error, with the same progress reports.
#[test]
fn the_workers_transfer_reads_as_the_json_bytes_do() {
    use megane_builder_client::contract::result::{interpret_call_bytes, ResultLimits};
    use megane_builder_client::offline::{call_tool_bytes, call_tool_transfer, transfer};
    use std::sync::Mutex;
    let water = json!({"name": "water", "molblock": molblock("water")});
    let ethanol = json!({"name": "ethanol", "molblock": molblock("ethanol")});
    let document = one_water(6.0, 12.0);
    let cases = [
        (
            "liquid_box",
            json!({"components": [{"molecule": water, "count": 20}, {"molecule": ethanol, "count": 5}], "seed": 4}),
        ),
        (
            "solvate",
            json!({"document": document, "solvent": water, "seed": 2}),
        ),
        (
            "polymer_chain",
            json!({"monomer": monomer("styrene"), "head": 0, "tail": 1, "seed": 7, "length": 10}),
        ),
        (
            "liquid_box",
            json!({"components": [{"molecule": water, "count": 1}], "seed": 1}),
        ),
        // Tool errors: the box above is too small, and head = tail.
        (
            "polymer_chain",
            json!({"monomer": monomer("styrene"), "head": 0, "tail": 0, "seed": 7, "length": 10}),
        ),
    ];
    let limits = ResultLimits::default();
    for (k, (tool, args)) in cases.into_iter().enumerate() {
        let b = button(tool);
        let events = Mutex::new(Vec::new());
        let cb = |f: f64, m: &str| events.lock().unwrap().push((f, m.to_string()));
        let control = PackControl {
            cancel: None,
            progress: Some(&cb),
        };
        let bytes = call_tool_bytes(tool, &args, &control);
        let from_bytes = std::mem::take(&mut *events.lock().unwrap());
        let sent = call_tool_transfer(tool, &args, &control);
        assert_eq!(*events.lock().unwrap(), from_bytes, "{tool}");
        assert!(sent.len() <= bytes.len() + 16, "{tool}");
        let json = interpret_call_bytes(tool, &b.marker, &bytes, &limits);
        // The first three succeed; the last two are tool errors (a box too small, head = tail).
        assert_eq!(json.is_ok(), k < 3, "{tool}: {json:?}");
        let (outcome, refused) = transfer::interpret(tool, &b.marker, &sent.as_slice(), &limits);
        assert_eq!(refused, json.is_err(), "{tool}");
        assert_eq!(outcome, json, "{tool}");
    }
}

/// A small call on the page's thread (`call_tool_here`) hands the page exactly what the Worker
/// does, tool errors included; a structure above `HERE_MAX_ATOMS` is declined before any work
/// (no progress at all); a call cancelled through its control (the page's deadline) is given up.
#[test]
fn a_small_call_here_gives_the_workers_bytes_and_a_larger_one_is_declined_before_any_work() {
    use megane_builder_client::offline::{call_tool_here, call_tool_transfer, HERE_MAX_ATOMS};
    use std::sync::atomic::AtomicBool;
    use std::sync::Mutex;
    let water = json!({"name": "water", "molblock": molblock("water")});
    let document = one_water(5.0, 10.0);
    let small = [
        (
            "liquid_box",
            json!({"components": [{"molecule": water, "count": 5}], "seed": 3}),
        ),
        (
            "solvate",
            json!({"document": document, "solvent": water, "seed": 2}),
        ),
        (
            "polymer_chain",
            json!({"monomer": monomer("styrene"), "head": 0, "tail": 1, "seed": 7, "length": 10}),
        ),
        // A tool error is an answer, here as in the Worker.
        (
            "polymer_chain",
            json!({"monomer": monomer("styrene"), "head": 0, "tail": 0, "seed": 7, "length": 10}),
        ),
    ];
    for (tool, args) in &small {
        let events = Mutex::new(Vec::new());
        let cb = |f: f64, m: &str| events.lock().unwrap().push((f, m.to_string()));
        let control = PackControl {
            cancel: None,
            progress: Some(&cb),
        };
        let here = call_tool_here(tool, args, &control).expect("small enough for the page");
        let reported_here = std::mem::take(&mut *events.lock().unwrap());
        let there = call_tool_transfer(tool, args, &control);
        assert_eq!(here, there, "{tool}");
        assert_eq!(reported_here, *events.lock().unwrap(), "{tool}");
    }
    // 67 water (201 atoms), 13 units of styrene (210), a 201-atom document (at a density that
    // leaves no room for solvent: past the free volume it would be that error, not declined), and
    // a 3-atom one in a 20 Å cell (about 260 water): each over the page's limit.
    let (side, grid) = (20.0, 67);
    let crowd: Vec<f64> = (0..grid)
        .flat_map(|i| {
            let (x, y, z) = (
                (i % 5) as f64 * 3.5 + 1.0,
                (i / 5 % 5) as f64 * 3.5 + 1.0,
                (i / 25) as f64 * 3.5 + 1.0,
            );
            [x, y, z, x + 0.96, y, z, x - 0.24, y + 0.93, z]
        })
        .collect();
    let crowded = json!({
        "elements": (0..grid).flat_map(|_| [8, 1, 1]).collect::<Vec<_>>(), "positions": crowd,
        "cell": [side, 0, 0, 0, side, 0, 0, 0, side],
        "bonds": (0..grid).flat_map(|i| [[3 * i, 3 * i + 1], [3 * i, 3 * i + 2]]).collect::<Vec<_>>(),
    });
    let roomy = one_water(5.0, side);
    let over = [
        (
            "liquid_box",
            json!({"components": [{"molecule": water, "count": HERE_MAX_ATOMS / 3 + 1}], "seed": 3}),
        ),
        (
            "polymer_chain",
            json!({"monomer": monomer("styrene"), "head": 0, "tail": 1, "seed": 7, "length": 13}),
        ),
        (
            "solvate",
            json!({"document": crowded, "solvent": water, "seed": 2, "density": 0.001}),
        ),
        (
            "solvate",
            json!({"document": roomy, "solvent": water, "seed": 2}),
        ),
    ];
    for (tool, args) in &over {
        let events = Mutex::new(0);
        let cb = |_: f64, _: &str| *events.lock().unwrap() += 1;
        let control = PackControl {
            cancel: None,
            progress: Some(&cb),
        };
        assert_eq!(call_tool_here(tool, args, &control), None, "{tool}");
        assert_eq!(
            *events.lock().unwrap(),
            0,
            "{tool}: declined before any work"
        );
    }
    // The page's deadline has passed: the packer (and the chain's builder) stops at once and the
    // call is given up.
    let passed = AtomicBool::new(true);
    let control = PackControl {
        cancel: Some(&passed),
        progress: None,
    };
    assert_eq!(call_tool_here(small[0].0, &small[0].1, &control), None);
    assert_eq!(call_tool_here(small[2].0, &small[2].1, &control), None);
    // A deadline that passes once the packing is done (at its last report) leaves the answer whole.
    let late = AtomicBool::new(false);
    let at_the_end = |_: f64, m: &str| {
        if m == "converged" {
            late.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let control = PackControl {
        cancel: Some(&late),
        progress: Some(&at_the_end),
    };
    let whole = call_tool_here(small[0].0, &small[0].1, &control).expect("answered");
    assert!(late.load(std::sync::atomic::Ordering::Relaxed));
    assert_eq!(
        whole,
        call_tool_transfer(small[0].0, &small[0].1, &PackControl::default())
    );
}
