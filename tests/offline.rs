//! The offline tools under the contract: their tools/list passes the same discovery and form
//! checks as the reference server's, and each call's result passes result interpretation and
//! apply planning, with the packing judged independently (minimum image, rigidity, density).
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::contract::apply::{plan_apply, ApplyPlan, EditOp};
use megane_builder_client::contract::discovery::{parse_tool_list, ToolButton};
use megane_builder_client::contract::form::Control;
use megane_builder_client::contract::result::interpret_call_value;
use megane_builder_client::contract::structure::Structure;
use megane_builder_client::contract::values::{
    build_arguments, initial_values, FormContext, LibraryMolecule,
};
use megane_builder_client::offline::{call_tool, definitions};
use megane_builder_client::pack::PackControl;
use serde_json::{json, Value};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures");

fn molblock(name: &str) -> String {
    std::fs::read_to_string(format!("{SHARED}/molecules/{name}.mol")).unwrap()
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

/// Smallest distance between atoms of different molecules, minimum image, brute force.
fn min_intermolecular(s: &Structure, fixed: &[[f64; 3]]) -> f64 {
    let cell = s.cell.unwrap();
    let l = [cell[0], cell[4], cell[8]];
    let molecules = s.molecules.as_ref().unwrap();
    let p: Vec<[f64; 3]> = s.positions.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
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
        for f in fixed {
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
        ["liquid_box", "solvate"]
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
        b[1].form.as_ref().unwrap().document_property.as_deref(),
        Some("document")
    );
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
    // Same seed, same structure; another seed, another one.
    assert_eq!(call("liquid_box", &args), response);
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
    let document = json!({
        "elements": [8, 1, 1], "positions": [6.0, 6.0, 6.0, 6.96, 6.0, 6.0, 5.76, 6.93, 6.0],
        "cell": [12.0, 0, 0, 0, 12.0, 0, 0, 0, 12.0], "bonds": [[0, 1], [0, 2]]
    });
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
        ("polymer_chain", json!({}), "Unknown tool"),
    ];
    for (tool, args, expected) in cases {
        let response = call(tool, &args);
        assert_eq!(response["isError"], true, "{tool} {args}");
        let text = response["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(expected), "{text} lacks {expected}");
        assert!(!text.contains('\n'));
    }
}
