//! Issue 15: validators compiled once per distinct schema (bounded cache shared by discovery,
//! forms and the offline tools), and the §4.3 document checked by the typed §5.1 validator with a
//! stand-in in its place for `jsonschema`, accepting and refusing what the full check does.
#![cfg(not(target_arch = "wasm32"))]

use std::sync::Arc;

use megane_builder_client::contract::discovery::{parse_tool_list, ToolButton};
use megane_builder_client::contract::validate::{
    cached_validators, compiled, validate_arguments, validate_with_document, DocumentCheck,
    MAX_CACHED_VALIDATORS,
};
use megane_builder_client::contract::values::{
    build_arguments, initial_values, FormContext, LibraryMolecule,
};
use serde_json::{json, Map, Value};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn read(relative: &str) -> String {
    std::fs::read_to_string(format!("{SHARED}/{relative}")).unwrap()
}

fn recorded_tools() -> Value {
    serde_json::from_str(&read("megane-recorded/tools-list.json")).unwrap()
}

/// The recorded solvate and the offline one (their document subschemas differ).
fn solvate_buttons() -> Vec<ToolButton> {
    let recorded = parse_tool_list(&recorded_tools(), None).unwrap();
    let offline = parse_tool_list(
        &megane_builder_client::offline::definitions::tools_list(),
        None,
    )
    .unwrap();
    [recorded, offline]
        .into_iter()
        .map(|t| t.buttons.into_iter().find(|b| b.name == "solvate").unwrap())
        .collect()
}

fn context(document: Option<Value>) -> FormContext {
    FormContext {
        document,
        library: vec![LibraryMolecule {
            name: "water".into(),
            molblock: Some(read("molecules/water.mol")),
            smiles: None,
        }],
        random_seed: Some(7),
        ..FormContext::default()
    }
}

fn good_document() -> Value {
    json!({"elements": [8, 1, 1], "positions": [10.0, 10.0, 10.0, 10.96, 10.0, 10.0, 9.76, 10.93, 10.0],
           "cell": [20.0, 0, 0, 0, 20.0, 0, 0, 0, 20.0], "bonds": [[0, 1], [0, 2]]})
}

/// Documents a host could hand over, with `true` where only §5.1 refuses them (a loose server
/// subschema accepts them: a bond to atom −1 or 5 of 3, element 0): the typed check is §5.1.
fn documents() -> Vec<(Value, bool)> {
    let good = good_document();
    let with = |key: &str, value: Value| {
        let mut d = good.clone();
        d[key] = value;
        d
    };
    let mut no_cell = good.clone();
    no_cell.as_object_mut().unwrap().remove("cell");
    vec![
        (good.clone(), false),
        (with("cell", Value::Null), false),
        (with("bondOrders", json!([1, 1])), false),
        (with("name", json!("extra field")), false),
        (with("elements", json!([8, 1, "H"])), false),
        (with("elements", json!([8, 1, 1.5])), false),
        (with("elements", json!([8, 1, 0])), true),
        (
            with(
                "positions",
                json!([10.0, 10.0, "x", 10.96, 10.0, 10.0, 9.76, 10.93, 10.0]),
            ),
            false,
        ),
        (with("positions", json!("not a list")), false),
        (with("bonds", json!([[0, 1, 2]])), false),
        (with("bonds", json!([[0, -1]])), true),
        (with("bonds", json!([[0, 5]])), true),
        (with("bonds", json!("none")), false),
        (with("cell", json!([20.0, 0, 0])), true),
        (no_cell, false),
        (json!("a string"), false),
        (json!([1, 2, 3]), false),
    ]
}

#[test]
fn a_schema_repeated_under_many_names_is_compiled_once_and_key_order_does_not_matter() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}, "s": {"type": "string"}}, "$comment": "issue 15 repeated"});
    let reordered = json!({"$comment": "issue 15 repeated", "properties": {"s": {"type": "string"}, "n": {"minimum": 1, "type": "integer"}}, "type": "object"});
    let first = compiled(&schema);
    assert!(Arc::ptr_eq(&first, &compiled(&reordered)));
    let tools: Vec<Value> = (0..50)
        .map(|i| {
            json!({"name": format!("t{i}"), "inputSchema": schema,
            "_meta": {"io.github.megane-labs/builder": {"contract": 1, "apply": "new_document"}}})
        })
        .collect();
    let toolbox = parse_tool_list(&json!(tools), None).unwrap();
    assert_eq!(toolbox.buttons.len(), 50);
    assert!(toolbox.buttons.iter().all(|b| b.disabled_reason.is_none()));
    assert!(Arc::ptr_eq(&first, &compiled(&schema)), "recompiled");
}

#[test]
fn the_cache_is_bounded_and_drops_the_least_recently_used() {
    let schema = |i: usize| json!({"type": "object", "$comment": format!("bounded {i}")});
    let first = compiled(&schema(0));
    for i in 1..=MAX_CACHED_VALIDATORS {
        compiled(&schema(i));
        assert!(cached_validators() <= MAX_CACHED_VALIDATORS);
    }
    assert!(
        !Arc::ptr_eq(&first, &compiled(&schema(0))),
        "the least recently used schema was kept beyond the bound"
    );
    // A schema that does not compile is cached with its reason, and still disables its button.
    let bad =
        json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "(unclosed"}}});
    assert!(compiled(&bad).validator(&bad).is_err());
    let tool = json!({"name": "bad", "inputSchema": bad,
        "_meta": {"io.github.megane-labs/builder": {"contract": 1, "apply": "new_document"}}});
    let toolbox = parse_tool_list(&json!([tool]), None).unwrap();
    let reason = toolbox.buttons[0].disabled_reason.clone().unwrap();
    assert!(reason.contains("not valid JSON Schema"), "{reason}");
}

#[test]
fn a_checked_document_accepts_and_refuses_what_the_full_schema_check_does() {
    for button in solvate_buttons() {
        let form = button.form.clone().unwrap();
        let values = initial_values(&form, &context(None));
        for (document, only_by_5_1) in documents() {
            let json_context = context(Some(document.clone()));
            let from_json = build_arguments(
                &button.marker,
                &form,
                &button.input_schema,
                &values,
                &json_context,
            );
            let mut checked_context = context(None);
            checked_context.document_check = Some(DocumentCheck::of_json(&document));
            let from_check = build_arguments(
                &button.marker,
                &form,
                &button.input_schema,
                &values,
                &checked_context,
            );
            assert_eq!(from_json.is_ok(), from_check.is_ok(), "{document}");
            // The old verdict: the same arguments with this document, all through jsonschema.
            let mut old_args = match &from_json {
                Ok(args) => args.as_object().unwrap().clone(),
                Err(_) => {
                    let good_context = context(Some(good_document()));
                    build_arguments(
                        &button.marker,
                        &form,
                        &button.input_schema,
                        &values,
                        &good_context,
                    )
                    .unwrap()
                    .as_object()
                    .unwrap()
                    .clone()
                }
            };
            old_args.insert("document".into(), document.clone());
            let old_refuses =
                !validate_arguments(&button.input_schema, Some(&form), &Value::Object(old_args))
                    .is_empty();
            // A solvation tool also needs a cell (issue 11, item 13): a rule beyond the schema,
            // applied the same way on both paths.
            if document["cell"].is_null() && DocumentCheck::of_json(&document).problem.is_none() {
                for outcome in [&from_json, &from_check] {
                    let problems = outcome.as_ref().unwrap_err();
                    assert!(
                        problems.iter().any(|p| p.message.contains("no cell")),
                        "{problems:?}"
                    );
                }
            } else if document["cell"].is_null() {
                assert!(from_json.is_err() && from_check.is_err(), "{document}");
            } else if !only_by_5_1 || old_refuses {
                assert_eq!(
                    from_json.is_err(),
                    old_refuses,
                    "{document} for {:?}",
                    button.input_schema["$defs"]["Structure"]
                );
            }
            match (from_json, from_check) {
                (Ok(args), Ok(stand_in_args)) => {
                    assert_eq!(args["document"], document);
                    assert_eq!(
                        stand_in_args["document"],
                        DocumentCheck::of_json(&document).stand_in()
                    );
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a, b);
                    assert_eq!(a[0].path, "document", "{a:?}");
                    assert!(!a[0].message.contains('\n'));
                }
                _ => unreachable!(),
            }
        }
    }
}

#[test]
fn the_rest_of_the_arguments_is_still_checked_against_the_schema() {
    for button in solvate_buttons() {
        let form = button.form.clone().unwrap();
        let check = DocumentCheck::of_json(&good_document());
        let ctx = context(Some(good_document()));
        let values = initial_values(&form, &ctx);
        let good =
            build_arguments(&button.marker, &form, &button.input_schema, &values, &ctx).unwrap();
        let mut rest: Map<String, Value> = good.as_object().unwrap().clone();
        rest.remove("document");
        for (key, bad, path) in [
            ("density", json!(-1.0), "density"),
            ("density", json!("dense"), "density"),
            ("seed", json!(-3), "seed"),
            ("solvent", json!({"molblock": "x"}), "solvent/name"),
        ] {
            let mut args = rest.clone();
            args.insert(key.to_string(), bad.clone());
            let fast = validate_with_document(
                &button.input_schema,
                Some(&form),
                &args,
                "document",
                Some(&check),
            );
            let mut full = args.clone();
            full.insert("document".into(), good_document());
            let slow = validate_arguments(&button.input_schema, Some(&form), &Value::Object(full));
            assert_eq!(fast, slow, "{key} = {bad}");
            assert!(fast.iter().any(|p| p.path == path), "{fast:?}");
        }
        // Without the document at all, `required` still says so.
        let problems =
            validate_with_document(&button.input_schema, Some(&form), &rest, "document", None);
        assert!(
            problems.iter().any(|p| p.path == "document"),
            "{problems:?}"
        );
    }
}

#[test]
fn initial_values_take_the_cell_from_a_checked_document() {
    let tool = json!({"name": "slab", "inputSchema": {"type": "object", "properties": {
            "cell": {"type": "array", "items": {"type": "number"}, "minItems": 9, "maxItems": 9, "x-megane-widget": "cell"}}},
        "_meta": {"io.github.megane-labs/builder": {"contract": 1, "apply": "new_document"}}});
    let toolbox = parse_tool_list(&json!([tool]), None).unwrap();
    let form = toolbox.buttons[0].form.clone().unwrap();
    let mut document = good_document();
    document["cell"] = json!([30.0, 0, 0, 0, 31.0, 0, 0, 0, 32.0]);
    let mut ctx = context(None);
    ctx.document_check = Some(DocumentCheck::of_json(&document));
    let values = initial_values(&form, &ctx);
    assert_eq!(
        values["cell"],
        json!([30.0, 0.0, 0.0, 0.0, 31.0, 0.0, 0.0, 0.0, 32.0])
    );
    assert_eq!(values, initial_values(&form, &context(Some(document))));
}
