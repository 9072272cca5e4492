//! §4/§6: initial values and form values → arguments for the reference tools, validated against
//! their recorded `inputSchema`s with the library water and a small document.
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::contract::discovery::{parse_tool_list, ToolButton};
use megane_builder_client::contract::validate::validate_arguments;
use megane_builder_client::contract::values::{
    build_arguments, initial_values, FormContext, LibraryMolecule, DEFAULT_CELL,
};
use serde_json::{json, Value};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn read(relative: &str) -> String {
    std::fs::read_to_string(format!("{SHARED}/{relative}")).unwrap()
}

fn buttons() -> Vec<ToolButton> {
    let list: Value = serde_json::from_str(&read("megane-recorded/tools-list.json")).unwrap();
    parse_tool_list(&list, Some("ref")).unwrap().buttons
}

fn button(name: &str) -> ToolButton {
    buttons().into_iter().find(|b| b.name == name).unwrap()
}

fn library() -> Vec<LibraryMolecule> {
    ["water", "ethanol", "benzene"]
        .iter()
        .map(|name| LibraryMolecule {
            name: name.to_string(),
            molblock: Some(read(&format!("molecules/{name}.mol"))),
            smiles: None,
        })
        .collect()
}

/// One water in a 20 Å cell, the document of the recorded solvate call.
fn document() -> Value {
    let call: Value = serde_json::from_str(&read("megane-recorded/call-solvate.json")).unwrap();
    call["arguments"]["document"].clone()
}

fn context(document: Option<Value>) -> FormContext {
    FormContext {
        document,
        library: library(),
        random_seed: Some(4242),
        ..FormContext::default()
    }
}

fn build(
    b: &ToolButton,
    values: &Value,
    ctx: &FormContext,
) -> Result<Value, Vec<megane_builder_client::contract::validate::Problem>> {
    build_arguments(
        &b.marker,
        b.form.as_ref().unwrap(),
        &b.input_schema,
        values,
        ctx,
    )
}

#[test]
fn liquid_box_initial_values_with_library_water_build_valid_arguments() {
    let b = button("liquid_box");
    let ctx = context(None);
    let values = initial_values(b.form.as_ref().unwrap(), &ctx);
    assert_eq!(values["seed"], 4242);
    assert_eq!(
        values["components"],
        json!([{"molecule": "water", "count": 100}])
    );
    assert_eq!(values["density"], 1.0);
    let args = build(&b, &values, &ctx).unwrap();
    assert_eq!(args["components"][0]["molecule"]["name"], "water");
    assert!(args["components"][0]["molecule"]["molblock"]
        .as_str()
        .unwrap()
        .contains("V2000"));
    assert_eq!(args["components"][0]["count"], 100);
    assert_eq!(args["seed"], 4242);
    assert!(validate_arguments(&b.input_schema, b.form.as_ref(), &args).is_empty());
}

#[test]
fn polymer_chain_checks_atom_indices_against_the_chosen_molecule() {
    let b = button("polymer_chain");
    let ctx = context(None);
    let mut values = initial_values(b.form.as_ref().unwrap(), &ctx);
    assert_eq!(values["monomer"], "water");
    assert_eq!(
        (values["head"].clone(), values["tail"].clone()),
        (json!(0), json!(1))
    );
    let args = build(&b, &values, &ctx).unwrap();
    assert!(validate_arguments(&b.input_schema, b.form.as_ref(), &args).is_empty());
    values["tail"] = json!(7);
    let problems = build(&b, &values, &ctx).unwrap_err();
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].path, "tail");
    assert!(
        problems[0].message.contains("3 atoms"),
        "{}",
        problems[0].message
    );
}

/// Issue 33: head = tail is caught before Run, on the second of the two atom fields.
#[test]
fn two_atom_fields_of_one_molecule_must_name_different_atoms() {
    let b = button("polymer_chain");
    let ctx = context(None);
    let mut values = initial_values(b.form.as_ref().unwrap(), &ctx);
    values["tail"] = json!(0);
    let problems = build(&b, &values, &ctx).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].path, "tail");
    assert_eq!(
        problems[0].message,
        "Tail atom: the same atom as Head atom; choose a different atom."
    );
}

/// Issue 33: the schema's example monomer `{name: "ethylene", smiles: "CC"}` starts the form on the
/// library molecule with that SMILES when the library names it for what it is (ethane).
#[test]
fn a_molecule_example_finds_the_library_molecule_by_its_smiles() {
    let b = button("polymer_chain");
    let mut ctx = context(None);
    ctx.library.push(LibraryMolecule {
        name: "ethane (polyethylene repeat unit)".into(),
        molblock: Some(read("molecules/ethanol.mol")),
        smiles: Some("CC".into()),
    });
    let values = initial_values(b.form.as_ref().unwrap(), &ctx);
    assert_eq!(values["monomer"], "ethane (polyethylene repeat unit)");
    let args = build(&b, &values, &ctx).unwrap();
    assert_eq!(args["monomer"]["smiles"], "CC");
}

#[test]
fn atom_examples_start_only_when_they_are_atoms_of_the_initial_molecule() {
    // The reference polymer_chain with examples head 0, tail 5: water (3 atoms) is the first
    // library molecule, so tail starts blank; with benzene (12 atoms) both examples are kept.
    let mut b = button("polymer_chain");
    b.input_schema["properties"]["tail"]["examples"] = json!([5]);
    let b = parse_tool_list(
        &json!([{"name": b.name, "inputSchema": b.input_schema,
                 "_meta": {"io.github.megane-labs/builder": {"contract": 1, "category": "polymer", "apply": "new_document", "document": "none", "stochastic": true}}}]),
        None,
    )
    .unwrap()
    .buttons
    .remove(0);
    let ctx = context(None);
    let values = initial_values(b.form.as_ref().unwrap(), &ctx);
    assert_eq!(values["monomer"], "water");
    assert_eq!(values["head"], 0);
    assert!(values.get("tail").is_none(), "{values}");
    let problems = build(&b, &values, &ctx).unwrap_err();
    assert_eq!(problems[0].path, "tail");
    let benzene_first = FormContext {
        library: library().into_iter().rev().collect(),
        ..context(None)
    };
    let values = initial_values(b.form.as_ref().unwrap(), &benzene_first);
    assert_eq!(values["monomer"], "benzene");
    assert_eq!(
        (values["head"].clone(), values["tail"].clone()),
        (json!(0), json!(5))
    );
    assert!(build(&b, &values, &benzene_first).is_ok());
}

#[test]
fn solvate_needs_an_open_editable_document_and_sends_it() {
    let b = button("solvate");
    let no_doc = context(None);
    let values = initial_values(b.form.as_ref().unwrap(), &no_doc);
    let problems = build(&b, &values, &no_doc).unwrap_err();
    assert!(
        problems
            .iter()
            .any(|p| p.message.starts_with("Open a document first")),
        "{problems:?}"
    );

    let mut read_only = context(Some(document()));
    read_only.document_editable = Some(false);
    assert!(build(&b, &values, &read_only).unwrap_err()[0]
        .message
        .contains("cannot be edited"));

    let ctx = context(Some(document()));
    let values = initial_values(b.form.as_ref().unwrap(), &ctx);
    let args = build(&b, &values, &ctx).unwrap();
    assert_eq!(args["document"], document());
    assert_eq!(args["solvent"]["name"], "water");
    assert!(validate_arguments(&b.input_schema, b.form.as_ref(), &args).is_empty());
}

#[test]
fn solvate_on_a_structure_without_a_cell_is_refused_before_run() {
    let b = button("solvate");
    let mut no_cell = document();
    no_cell["cell"] = Value::Null;
    let ctx = context(Some(no_cell));
    let values = initial_values(b.form.as_ref().unwrap(), &ctx);
    let problems = build(&b, &values, &ctx).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].path, "document");
    assert!(
        problems[0].message.contains("has no cell") && problems[0].message.contains("set a cell"),
        "{}",
        problems[0].message
    );
    // liquid_box (bulk, no document) is not concerned.
    let lb = button("liquid_box");
    let values = initial_values(lb.form.as_ref().unwrap(), &ctx);
    assert!(build(&lb, &values, &ctx).is_ok());
}

#[test]
fn problems_speak_to_a_chemist_and_name_the_field() {
    let b = button("liquid_box");
    let ctx = context(None);
    let mut values = initial_values(b.form.as_ref().unwrap(), &ctx);
    values["components"][0]["count"] = json!(0);
    values["density"] = json!("7");
    values["tolerance"] = json!("abc");
    values["shape"] = json!("spherical");
    let problems = build(&b, &values, &ctx).unwrap_err();
    let by_path = |p: &str| {
        problems
            .iter()
            .find(|x| x.path == p)
            .map(|x| x.message.clone())
            .unwrap_or_else(|| panic!("no problem at {p}: {problems:?}"))
    };
    assert_eq!(by_path("tolerance"), "Minimum distance: enter a number.");
    values["tolerance"] = json!(0.5);
    let problems = build(&b, &values, &ctx).unwrap_err();
    let by_path = |p: &str| {
        problems
            .iter()
            .find(|x| x.path == p)
            .map(|x| x.message.clone())
            .unwrap_or_else(|| panic!("no problem at {p}: {problems:?}"))
    };
    assert_eq!(
        by_path("components/0/count"),
        "Components, row 1: Count must be at least 1."
    );
    assert_eq!(by_path("density"), "Density must be at most 5 g/cm³.");
    assert_eq!(
        by_path("tolerance"),
        "Minimum distance must be at least 1 Å."
    );
    assert_eq!(
        by_path("shape"),
        "Box shape must be one of: cubic, orthorhombic."
    );
}

#[test]
fn empty_optional_fields_are_omitted_not_zeroed() {
    let b = button("liquid_box");
    let ctx = context(None);
    let mut values = initial_values(b.form.as_ref().unwrap(), &ctx);
    values["density"] = json!("");
    values["aspect"] = Value::Null;
    let args = build(&b, &values, &ctx).unwrap();
    assert!(
        args.get("density").is_none() && args.get("aspect").is_none(),
        "{args}"
    );
}

#[test]
fn missing_required_values_and_unknown_molecules() {
    let b = button("liquid_box");
    let ctx = context(None);
    let problems = build(
        &b,
        &json!({"components": [{"molecule": "unobtainium", "count": 5}]}),
        &ctx,
    )
    .unwrap_err();
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert!(messages.contains(&"Seed is required."), "{messages:?}");
    assert!(
        messages
            .iter()
            .any(|m| m.contains("`unobtainium` is not in the library")),
        "{messages:?}"
    );
}

fn widget_tool() -> ToolButton {
    let tool = json!({
        "name": "crystal", "description": "Builds a crystal.",
        "inputSchema": {"type": "object", "properties": {
            "metal": {"type": "integer", "minimum": 1, "maximum": 118, "x-megane-widget": "element", "default": 26},
            "cell": {"type": "array", "items": {"type": "number"}, "minItems": 9, "maxItems": 9, "x-megane-widget": "cell"},
            "temperature": {"type": "number", "x-megane-unit": "kelvin", "exclusiveMinimum": 0},
            "ratio": {"type": "number", "multipleOf": 0.25},
            "label": {"type": "string", "pattern": "^[A-Z][a-z]*$", "maxLength": 6},
            "selection": {"type": "array", "items": {"type": "integer", "minimum": 0}, "x-megane-widget": "selection"},
            "document": {"$ref": "#/$defs/S", "x-megane-widget": "document"}
        }, "required": ["metal", "cell"],
        "$defs": {"S": {"type": "object", "properties": {"elements": {}, "positions": {}, "cell": {}, "bonds": {}}}}},
        "_meta": {"io.github.megane-labs/builder": {"contract": 1, "category": "surface", "apply": "new_document", "document": "optional"}}
    });
    parse_tool_list(&json!([tool]), None)
        .unwrap()
        .buttons
        .remove(0)
}

#[test]
fn element_cell_units_and_string_rules() {
    let b = widget_tool();
    assert!(b.disabled_reason.is_none(), "{:?}", b.disabled_reason);
    let ctx = FormContext {
        selection: vec![0, 2],
        ..context(Some(document()))
    };
    let values = initial_values(b.form.as_ref().unwrap(), &ctx);
    assert_eq!(
        values["metal"], 26,
        "the element widget starts from the atomic number"
    );
    assert_eq!(
        values["cell"],
        json!([20.0, 0.0, 0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 20.0]),
        "document cell"
    );
    let args = build(
        &b,
        &json!({"metal": "Cu", "cell": {"a": 3.6, "b": 3.6, "c": 7.2}}),
        &ctx,
    )
    .unwrap();
    assert_eq!(args["metal"], 29);
    assert_eq!(
        args["cell"],
        json!([3.6, 0.0, 0.0, 0.0, 3.6, 0.0, 0.0, 0.0, 7.2])
    );
    assert_eq!(args["selection"], json!([0, 2]));
    assert_eq!(args["document"], document());
    let args = build(
        &b,
        &json!({"metal": 8, "cell": [5, 0, 0, 0, 5, 0, 0, 0, 5]}),
        &ctx,
    )
    .unwrap();
    assert_eq!(args["metal"], 8);

    let bad = build(
        &b,
        &json!({"metal": "Xx", "cell": [1, 2], "ratio": 0.3, "label": "abc", "temperature": -4}),
        &ctx,
    )
    .unwrap_err();
    let messages: Vec<String> = bad
        .iter()
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("metal: ") && m.contains("`Xx` is not an element")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("cell: ") && m.contains("9 numbers")),
        "{messages:?}"
    );
    let bad = build(&b, &json!({"metal": 8, "cell": [5, 0, 0, 0, 5, 0, 0, 0, 5], "ratio": 0.3, "label": "abc", "temperature": -4}), &ctx).unwrap_err();
    let messages: Vec<String> = bad
        .iter()
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect();
    assert!(
        messages.contains(&"ratio: Ratio must be a multiple of 0.25.".to_string()),
        "{messages:?}"
    );
    assert!(
        messages.contains(&"label: Label is not in the expected format.".to_string()),
        "{messages:?}"
    );
    assert!(
        messages.contains(&"temperature: Temperature must be greater than 0 K.".to_string()),
        "{messages:?}"
    );

    let no_doc = context(None);
    let values = initial_values(b.form.as_ref().unwrap(), &no_doc);
    assert_eq!(values["cell"], json!(DEFAULT_CELL));
    let args = build(&b, &values, &no_doc).unwrap();
    assert!(
        args.get("document").is_none(),
        "an optional document is omitted when none is open"
    );
}

/// Found by the property below: a 64-bit seed above `i64::MAX` was refused as "enter a whole
/// number" although it is one and the schema (`integer`, `minimum: 0`) accepts it.
#[test]
fn a_seed_above_i64_max_is_a_whole_number() {
    let b = button("liquid_box");
    let mut ctx = context(None);
    ctx.random_seed = Some(u64::MAX);
    let values = initial_values(b.form.as_ref().unwrap(), &ctx);
    let args = build(&b, &values, &ctx).unwrap();
    assert_eq!(args["seed"], json!(u64::MAX));
}

/// Values a person or a broken page can put in a field: huge and tiny numbers, text with line
/// breaks and control characters, and the wrong types.
fn odd_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    prop_oneof![
        Just(json!(f64::MAX)),
        Just(json!(f64::MIN_POSITIVE)),
        Just(json!(5e-324)),
        Just(json!(-0.0)),
        Just(json!(1e300)),
        Just(json!(-1e-300)),
        Just(json!(i64::MIN)),
        Just(json!(u64::MAX)),
        Just(json!(0)),
        Just(json!(-1)),
        any::<i32>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(|x| json!(x)),
        "[a-z0-9 .\\n\\r\\t\\x00-\\x1f\\u{2028}\\u{202e}]{0,10}".prop_map(Value::String),
        Just(json!("water")),
        Just(json!("ethanol")),
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        Just(json!([])),
        Just(json!({})),
    ]
}

/// Replaces the value at a random place of `value` (a leaf or a whole subtree) by `replacement`.
fn replace_somewhere(value: &mut Value, mut choice: usize, replacement: Value) {
    let mut current = value;
    loop {
        let children = match current {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if children == 0 || choice % 5 == 0 {
            *current = replacement;
            return;
        }
        let index = choice % children;
        choice /= 3;
        current = match current {
            Value::Object(m) => m.values_mut().nth(index).unwrap(),
            Value::Array(a) => &mut a[index],
            _ => unreachable!(),
        };
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 400, ..Default::default() })]

    /// Differential: whatever `buildArguments` accepts (initial values with any seed, library and
    /// document, then edited with odd values) is valid for `jsonschema` against the tool's own
    /// `inputSchema` (the §4.3 document included, which our typed validator checks instead);
    /// whatever it refuses, it refuses in one-line messages.
    #[test]
    fn arguments_that_build_accepts_pass_jsonschema(
        tool in 0usize..16,
        seed in proptest::prelude::any::<u64>(),
        rotate in 0usize..3,
        with_document in proptest::prelude::any::<bool>(),
        edits in proptest::collection::vec((proptest::prelude::any::<usize>(), odd_value()), 0..4),
    ) {
        let buttons = buttons();
        let b = &buttons[tool % buttons.len()];
        let mut ctx = context(with_document.then(document));
        ctx.random_seed = Some(seed);
        ctx.library.rotate_left(rotate);
        let form = b.form.as_ref().unwrap();
        let mut values = initial_values(form, &ctx);
        let untouched = edits.is_empty();
        for (choice, replacement) in edits {
            replace_somewhere(&mut values, choice, replacement);
        }
        match build(b, &values, &ctx) {
            Ok(args) => {
                let validator = jsonschema::validator_for(&b.input_schema).unwrap();
                let errors: Vec<String> =
                    validator.iter_errors(&args).map(|e| e.to_string()).collect();
                proptest::prop_assert!(errors.is_empty(), "{}: {:?} accepted but {:?}", b.name, args, errors);
            }
            Err(problems) => {
                for p in &problems {
                    proptest::prop_assert!(!p.message.contains(['\n', '\r']), "{}", p.message);
                }
                // Untouched initial values of a tool that needs no document are always accepted.
                proptest::prop_assert!(
                    !(untouched && b.form.as_ref().unwrap().document_property.is_none()),
                    "{}: initial values refused: {:?}", b.name, problems
                );
            }
        }
    }
}
