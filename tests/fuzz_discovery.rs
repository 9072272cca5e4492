//! Property tests: tool-list parsing, form generation, initial values and argument building never
//! panic on arbitrary JSON or on random mutations of the recorded reference tools, and every error
//! or reason they produce is one line.
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::contract::discovery::parse_tool_list;
use megane_builder_client::contract::values::{
    build_arguments, initial_values, FormContext, LibraryMolecule,
};
use proptest::prelude::*;
use serde_json::{json, Value};

const TOOLS_LIST: &str = include_str!("fixtures/megane-recorded/tools-list.json");
const WATER: &str = include_str!("fixtures/molecules/water.mol");

/// Arbitrary JSON biased towards the keywords and shapes a tool list uses.
fn arb_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("type".to_string()),
        Just("properties".to_string()),
        Just("items".to_string()),
        Just("x-megane-widget".to_string()),
        Just("x-megane-of".to_string()),
        Just("x-megane-unit".to_string()),
        Just("$ref".to_string()),
        Just("$defs".to_string()),
        Just("required".to_string()),
        Just("enum".to_string()),
        Just("minItems".to_string()),
        Just("maxItems".to_string()),
        Just("anyOf".to_string()),
        Just("default".to_string()),
        Just("name".to_string()),
        Just("_meta".to_string()),
        Just("inputSchema".to_string()),
        Just("title".to_string()),
        "[a-z]{1,6}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(|x| json!(x)),
        prop_oneof![
            Just("object"),
            Just("array"),
            Just("number"),
            Just("integer"),
            Just("string"),
            Just("boolean"),
            Just("molecule"),
            Just("atom"),
            Just("cell"),
            Just("seed"),
            Just("document"),
            Just("selection"),
            Just("element"),
            Just("#/$defs/A"),
            Just("angstrom"),
            Just("insert"),
            Just("new_document"),
        ]
        .prop_map(|s| Value::String(s.to_string())),
        ".{0,12}".prop_map(Value::String),
        // Titles and descriptions with line breaks, controls, bidi overrides and separators.
        "[A-Za-z \\n\\r\\t\\x00-\\x1f\\x7f\\u{85}\\u{2028}\\u{202e}]{0,16}".prop_map(Value::String),
        // Huge and tiny numbers (bounds, defaults, examples, minItems).
        prop_oneof![
            Just(json!(f64::MAX)),
            Just(json!(f64::MIN)),
            Just(json!(f64::MIN_POSITIVE)),
            Just(json!(5e-324)),
            Just(json!(-0.0)),
            Just(json!(i64::MIN)),
            Just(json!(u64::MAX)),
            Just(json!(1e15)),
            Just(json!(usize::MAX as f64)),
        ],
    ];
    leaf.prop_recursive(6, 96, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..7)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn context() -> FormContext {
    FormContext {
        library: vec![LibraryMolecule {
            name: "water".into(),
            molblock: Some(WATER.into()),
            smiles: None,
        }],
        random_seed: Some(1),
        ..FormContext::default()
    }
}

/// Runs the whole discovery → form → values → arguments path and checks every message.
fn exercise(list: &Value, values: Option<&Value>) {
    let Ok(toolbox) = parse_tool_list(list, Some("fuzz")) else {
        return;
    };
    for hidden in toolbox
        .malformed
        .iter()
        .chain(&toolbox.unknown_apply)
        .chain(&toolbox.unsupported_contract)
    {
        assert!(!hidden.reason.contains(['\n', '\r']), "{}", hidden.reason);
    }
    let ctx = context();
    for button in &toolbox.buttons {
        if let Some(reason) = &button.disabled_reason {
            assert!(!reason.contains(['\n', '\r']), "{reason}");
        }
        let Some(form) = &button.form else { continue };
        let initial = initial_values(form, &ctx);
        for input in [Some(&initial), values].into_iter().flatten() {
            if let Err(problems) =
                build_arguments(&button.marker, form, &button.input_schema, input, &ctx)
            {
                for p in problems {
                    assert!(!p.message.contains(['\n', '\r']), "{}", p.message);
                }
            }
        }
    }
}

/// Replaces the value at a random place of `value` by `replacement`.
fn mutate(value: &mut Value, mut choice: usize, replacement: Value) {
    let mut current = value;
    loop {
        let children: usize = match current {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if children == 0 || choice % 7 == 0 {
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics(list in arb_json(), values in arb_json()) {
        exercise(&list, Some(&values));
        exercise(&json!({"tools": [list]}), Some(&values));
    }

    #[test]
    fn mutated_reference_tools_never_panic(choices in prop::collection::vec((any::<usize>(), arb_json()), 1..4), values in arb_json()) {
        let mut list: Value = serde_json::from_str(TOOLS_LIST).unwrap();
        for (choice, replacement) in choices {
            mutate(&mut list, choice, replacement);
        }
        exercise(&list, Some(&values));
    }
}
