//! Hostile `tools/call` results (§5.1, §6, §9): every broken result is refused as a whole with one
//! line that names the field, nothing panics, and our BuilderResult schema agrees with the typed
//! validator wherever JSON Schema can state the rule. A proptest feeds arbitrary bytes and
//! arbitrary mutations of a valid result to `interpret_call_bytes` and `plan_apply`.
#![cfg(not(target_arch = "wasm32"))]
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::chem::molblock::parse_molblock;
use megane_builder_client::contract::apply::plan_apply;
use megane_builder_client::contract::launch::parse_launch_fragment;
use megane_builder_client::contract::marker::{Apply, Category, DocumentUse, Marker};
use megane_builder_client::contract::result::{
    interpret_call_bytes, interpret_call_value, ResultLimits, BUILDER_RESULT_SCHEMA,
};
use megane_builder_client::contract::structure::Structure;
use proptest::prelude::*;
use serde_json::{json, Value};

const LIQUID_BOX: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/megane-recorded/call-liquid_box.json"
));
const SOLVATE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/megane-recorded/call-solvate.json"
));

fn marker(apply: Apply) -> Marker {
    Marker {
        contract: 1,
        category: Category::Bulk,
        apply,
        document: DocumentUse::Optional,
        stochastic: true,
        expected_seconds: Some(20.0),
    }
}

/// The recorded liquid_box CallToolResult (300 atoms, valid).
fn valid_result() -> Value {
    serde_json::from_str::<Value>(LIQUID_BOX).unwrap()["result"].clone()
}

fn sc(result: &mut Value) -> &mut Value {
    &mut result["structuredContent"]
}

fn st(result: &mut Value) -> &mut Value {
    &mut result["structuredContent"]["structure"]
}

fn arr(v: &mut Value) -> &mut Vec<Value> {
    v.as_array_mut().unwrap()
}

fn obj(v: &mut Value) -> &mut serde_json::Map<String, Value> {
    v.as_object_mut().unwrap()
}

/// A broken result: how to break it, the field its error must name, and whether our JSON Schema
/// can state the violated rule.
struct Case {
    name: &'static str,
    field: &'static str,
    schema_states_it: bool,
    breaks: fn(&mut Value),
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "element 0",
            field: "structure.elements[0]",
            schema_states_it: true,
            breaks: |r| st(r)["elements"][0] = json!(0),
        },
        Case {
            name: "element 119",
            field: "structure.elements[5]",
            schema_states_it: true,
            breaks: |r| st(r)["elements"][5] = json!(119),
        },
        Case {
            name: "element 300",
            field: "structure.elements[7]",
            schema_states_it: true,
            breaks: |r| st(r)["elements"][7] = json!(300),
        },
        Case {
            name: "element a string",
            field: "structure.elements[1]",
            schema_states_it: true,
            breaks: |r| st(r)["elements"][1] = json!("H"),
        },
        Case {
            name: "element a fraction",
            field: "structure.elements[2]",
            schema_states_it: true,
            breaks: |r| st(r)["elements"][2] = json!(1.5),
        },
        Case {
            name: "elements missing",
            field: "structure.elements",
            schema_states_it: true,
            breaks: |r| {
                obj(st(r)).remove("elements");
            },
        },
        Case {
            name: "3N-1 positions",
            field: "structure.positions",
            schema_states_it: false,
            breaks: |r| {
                arr(&mut st(r)["positions"]).pop();
            },
        },
        Case {
            name: "3N+1 positions",
            field: "structure.positions",
            schema_states_it: false,
            breaks: |r| arr(&mut st(r)["positions"]).push(json!(0.0)),
        },
        Case {
            name: "position a string",
            field: "structure.positions[4]",
            schema_states_it: true,
            breaks: |r| st(r)["positions"][4] = json!("x"),
        },
        Case {
            name: "positions null",
            field: "structure.positions",
            schema_states_it: true,
            breaks: |r| st(r)["positions"] = Value::Null,
        },
        Case {
            name: "cell of 8",
            field: "structure.cell",
            schema_states_it: true,
            breaks: |r| {
                arr(&mut st(r)["cell"]).pop();
            },
        },
        Case {
            name: "cell of 10",
            field: "structure.cell",
            schema_states_it: true,
            breaks: |r| arr(&mut st(r)["cell"]).push(json!(1.0)),
        },
        Case {
            name: "cell a string",
            field: "structure.cell",
            schema_states_it: true,
            breaks: |r| st(r)["cell"] = json!("cubic"),
        },
        Case {
            name: "cell missing",
            field: "structure.cell",
            schema_states_it: true,
            breaks: |r| {
                obj(st(r)).remove("cell");
            },
        },
        Case {
            name: "self bond",
            field: "structure.bonds[3]",
            schema_states_it: false,
            breaks: |r| st(r)["bonds"][3] = json!([4, 4]),
        },
        Case {
            name: "duplicate bond reversed",
            field: "structure.bonds[200]",
            schema_states_it: false,
            breaks: |r| arr(&mut st(r)["bonds"]).push(json!([1, 0])),
        },
        Case {
            name: "bond out of range",
            field: "structure.bonds[7]",
            schema_states_it: false,
            breaks: |r| st(r)["bonds"][7] = json!([0, 300]),
        },
        Case {
            name: "bond negative",
            field: "structure.bonds[0]",
            schema_states_it: true,
            breaks: |r| st(r)["bonds"][0] = json!([-1, 2]),
        },
        Case {
            name: "bond of three atoms",
            field: "structure.bonds[0]",
            schema_states_it: true,
            breaks: |r| st(r)["bonds"][0] = json!([0, 1, 2]),
        },
        Case {
            name: "bond fractional",
            field: "structure.bonds[1]",
            schema_states_it: true,
            breaks: |r| st(r)["bonds"][1] = json!([0.5, 1]),
        },
        Case {
            name: "bond order 5",
            field: "structure.bondOrders[9]",
            schema_states_it: true,
            breaks: |r| {
                let mut o = vec![json!(1); 200];
                o[9] = json!(5);
                st(r)["bondOrders"] = Value::Array(o);
            },
        },
        Case {
            name: "bond orders too short",
            field: "structure.bondOrders",
            schema_states_it: false,
            breaks: |r| st(r)["bondOrders"] = json!(vec![1; 199]),
        },
        Case {
            name: "contract 2",
            field: "contract",
            schema_states_it: false,
            breaks: |r| sc(r)["contract"] = json!(2),
        },
        Case {
            name: "contract a string",
            field: "contract",
            schema_states_it: true,
            breaks: |r| sc(r)["contract"] = json!("1"),
        },
        Case {
            name: "contract missing",
            field: "contract",
            schema_states_it: true,
            breaks: |r| {
                obj(sc(r)).remove("contract");
            },
        },
        Case {
            name: "structure missing",
            field: "structure",
            schema_states_it: true,
            breaks: |r| {
                obj(sc(r)).remove("structure");
            },
        },
        Case {
            name: "structure an array",
            field: "structure",
            schema_states_it: true,
            breaks: |r| *st(r) = json!([1, 2]),
        },
        Case {
            name: "chain id of two characters",
            field: "structure.chainIds[2]",
            schema_states_it: true,
            breaks: |r| {
                let mut c = vec![json!("A"); 300];
                c[2] = json!("AB");
                st(r)["chainIds"] = Value::Array(c);
            },
        },
        Case {
            name: "chain id empty",
            field: "structure.chainIds[0]",
            schema_states_it: true,
            breaks: |r| {
                let mut c = vec![json!("A"); 300];
                c[0] = json!("");
                st(r)["chainIds"] = Value::Array(c);
            },
        },
        Case {
            name: "chain ids too short",
            field: "structure.chainIds",
            schema_states_it: false,
            breaks: |r| st(r)["chainIds"] = json!(vec!["A"; 3]),
        },
        Case {
            name: "scalars of wrong length",
            field: "structure.scalars.q",
            schema_states_it: false,
            breaks: |r| st(r)["scalars"] = json!({"q": [0.1, 0.2]}),
        },
        Case {
            name: "scalars not numbers",
            field: "structure.scalars.q[0]",
            schema_states_it: true,
            breaks: |r| st(r)["scalars"] = json!({"q": ["a"]}),
        },
        Case {
            name: "scalars an array",
            field: "structure.scalars",
            schema_states_it: true,
            breaks: |r| st(r)["scalars"] = json!([1.0]),
        },
        Case {
            name: "molecules too long",
            field: "structure.molecules",
            schema_states_it: false,
            breaks: |r| arr(&mut st(r)["molecules"]).push(json!(1)),
        },
        Case {
            name: "molecule index negative",
            field: "structure.molecules[0]",
            schema_states_it: true,
            breaks: |r| st(r)["molecules"][0] = json!(-1),
        },
        Case {
            name: "residue names numbers",
            field: "structure.residueNames[0]",
            schema_states_it: true,
            breaks: |r| st(r)["residueNames"][0] = json!(7),
        },
        Case {
            name: "residue ids too short",
            field: "structure.residueIds",
            schema_states_it: false,
            breaks: |r| {
                arr(&mut st(r)["residueIds"]).pop();
            },
        },
        Case {
            name: "formal charge huge",
            field: "structure.formalCharges[0]",
            schema_states_it: false,
            breaks: |r| {
                let mut c = vec![json!(0); 300];
                c[0] = json!(1e10 as i64);
                st(r)["formalCharges"] = Value::Array(c);
            },
        },
        Case {
            name: "structuredContent an array",
            field: "structuredContent",
            schema_states_it: true,
            breaks: |r| *sc(r) = json!([1, 2, 3]),
        },
        Case {
            name: "structuredContent a string",
            field: "structuredContent",
            schema_states_it: true,
            breaks: |r| *sc(r) = json!("{}"),
        },
        Case {
            name: "structuredContent missing",
            field: "structuredContent",
            schema_states_it: false,
            breaks: |r| {
                obj(r).remove("structuredContent");
            },
        },
        Case {
            name: "name a number",
            field: "name",
            schema_states_it: true,
            breaks: |r| sc(r)["name"] = json!(42),
        },
        Case {
            name: "warnings a string",
            field: "warnings",
            schema_states_it: true,
            breaks: |r| sc(r)["warnings"] = json!("oops"),
        },
        Case {
            name: "provenance an array",
            field: "provenance",
            schema_states_it: true,
            breaks: |r| sc(r)["provenance"] = json!(["rdkit"]),
        },
        Case {
            name: "isError a string",
            field: "isError",
            schema_states_it: false,
            breaks: |r| r["isError"] = json!("true"),
        },
        Case {
            name: "content not an array",
            field: "content",
            schema_states_it: false,
            breaks: |r| r["content"] = json!({"text": "x"}),
        },
    ]
}

fn interpret(result: &Value, limits: &ResultLimits) -> Result<(), String> {
    let bytes = serde_json::to_vec(result).unwrap();
    interpret_call_bytes("liquid_box", &marker(Apply::NewDocument), &bytes, limits).map(|_| ())
}

fn assert_one_line_naming(err: &str, field: &str, case: &str) {
    assert!(
        !err.contains('\n') && !err.contains('\r'),
        "{case}: two lines: {err:?}"
    );
    assert!(
        err.starts_with(&format!("{field}: ")),
        "{case}: {err:?} does not start with {field}"
    );
}

#[test]
fn the_valid_result_passes() {
    interpret(&valid_result(), &ResultLimits::default()).unwrap();
}

#[test]
fn every_broken_result_is_refused_with_one_line_naming_the_field() {
    let cases = cases();
    assert!(cases.len() >= 25);
    for case in &cases {
        let mut result = valid_result();
        (case.breaks)(&mut result);
        let err = interpret(&result, &ResultLimits::default()).expect_err(case.name);
        assert_one_line_naming(&err, case.field, case.name);
        // The JavaScript-object path gives the same verdict.
        let err2 = interpret_call_value("liquid_box", &marker(Apply::NewDocument), &result)
            .expect_err(case.name);
        assert_one_line_naming(&err2, case.field, case.name);
    }
}

#[test]
fn schema_agrees_wherever_it_can_state_the_rule() {
    let schema: Value = serde_json::from_str(BUILDER_RESULT_SCHEMA).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    assert!(validator.is_valid(&valid_result()["structuredContent"]));
    for case in cases() {
        let mut result = valid_result();
        (case.breaks)(&mut result);
        let structured = &result["structuredContent"];
        if case.schema_states_it {
            assert!(
                !validator.is_valid(structured),
                "{}: the schema accepts it",
                case.name
            );
        } else if !structured.is_null() && case.field != "isError" && case.field != "content" {
            // Rules beyond JSON Schema: the schema passes, only the typed validator refuses.
            assert!(
                validator.is_valid(structured),
                "{}: the schema should not see this",
                case.name
            );
        }
    }
}

/// Replaces the first number `123456.5` in the serialised result by `replacement`.
fn with_raw_number(path: fn(&mut Value) -> &mut Value, replacement: &str) -> Vec<u8> {
    let mut result = valid_result();
    *path(&mut result) = json!(123456.5);
    let text = serde_json::to_string(&result).unwrap();
    text.replacen("123456.5", replacement, 1).into_bytes()
}

#[test]
fn infinity_and_nan_via_huge_exponents_are_refused() {
    let limits = ResultLimits::default();
    let m = marker(Apply::NewDocument);
    for (what, bytes, field) in [
        (
            "position 1e999",
            with_raw_number(
                |r| &mut r["structuredContent"]["structure"]["positions"][4],
                "1e999",
            ),
            "structure.positions[4]",
        ),
        (
            "position -1e999",
            with_raw_number(
                |r| &mut r["structuredContent"]["structure"]["positions"][0],
                "-1e999",
            ),
            "structure.positions[0]",
        ),
        (
            "cell 1e999",
            with_raw_number(
                |r| &mut r["structuredContent"]["structure"]["cell"][3],
                "1e999",
            ),
            "structure.cell[3]",
        ),
        (
            "scalar 1e400",
            {
                let mut r = valid_result();
                r["structuredContent"]["structure"]["scalars"] = json!({"q": vec![123456.5; 300]});
                serde_json::to_string(&r)
                    .unwrap()
                    .replacen("123456.5", "1e400", 1)
                    .into_bytes()
            },
            "structure.scalars.q[0]",
        ),
    ] {
        let err = interpret_call_bytes("liquid_box", &m, &bytes, &limits)
            .map(|_| ())
            .expect_err(what);
        assert_one_line_naming(&err, field, what);
    }
}

#[test]
fn non_finite_numbers_from_a_javascript_object_are_refused_by_validation() {
    let mut s: Structure =
        serde_json::from_value(valid_result()["structuredContent"]["structure"].clone()).unwrap();
    s.positions[5] = f64::NAN;
    assert_eq!(
        s.validate().unwrap_err(),
        "structure.positions[5]: not a finite number"
    );
    s.positions[5] = 0.0;
    s.cell = Some([f64::INFINITY; 9]);
    assert_eq!(
        s.validate().unwrap_err(),
        "structure.cell[0]: not a finite number"
    );
}

#[test]
fn more_than_500000_atoms_are_refused() {
    let n = 500_001;
    let result = json!({
        "content": [],
        "structuredContent": {
            "contract": 1,
            "name": "big",
            "structure": {"elements": vec![18; n], "positions": vec![0.5; 3 * n], "cell": null, "bonds": []}
        }
    });
    let err = interpret(&result, &ResultLimits::default()).unwrap_err();
    assert_eq!(
        err,
        "structure.elements: 500001 atoms; Builder accepts at most 500000 per result"
    );
}

#[test]
fn oversize_bytes_are_refused_before_parsing() {
    let limits = ResultLimits { max_bytes: 1000 };
    // Not even JSON: the cap is checked first.
    let err = interpret_call_bytes(
        "liquid_box",
        &marker(Apply::NewDocument),
        &[b'x'; 1001],
        &limits,
    )
    .unwrap_err();
    assert_eq!(
        err,
        "result: 1001 bytes is more than the 1000 bytes Builder accepts"
    );
}

#[test]
fn deep_nesting_and_junk_are_clean_errors() {
    let limits = ResultLimits::default();
    let m = marker(Apply::NewDocument);
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let nested_warning = format!(
        r#"{{"structuredContent":{{"contract":1,"structure":{{"elements":[],"positions":[],"cell":null,"bonds":[]}},"warnings":[{}{}]}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let nested_unknown = format!(
        r#"{{"structuredContent":{{"contract":1,"structure":{{"elements":[],"positions":[],"cell":null,"bonds":[],"x":{}1{}}}}}}}"#,
        "{\"a\":".repeat(10_000),
        "}".repeat(10_000)
    );
    for (what, bytes) in [
        ("deep array", deep.as_bytes()),
        ("empty", b"".as_slice()),
        ("not JSON", b"<html>502 Bad Gateway</html>".as_slice()),
        ("truncated", br#"{"structuredContent":{"contract":1,"#.as_slice()),
        ("invalid UTF-8", b"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}".as_slice()),
        ("duplicate elements", br#"{"structuredContent":{"contract":1,"structure":{"elements":[1],"elements":[1],"positions":[0,0,0],"cell":null,"bonds":[]}}}"#.as_slice()),
    ] {
        let err = interpret_call_bytes("liquid_box", &m, bytes, &limits).map(|_| ()).expect_err(what);
        assert!(!err.contains('\n'), "{what}: {err}");
        assert!(
            ["result: ", "structure", "content: "].iter().any(|p| err.starts_with(p)),
            "{what}: {err}"
        );
    }
    // Deep nesting where the contract says "ignore" or "drop" is refused too: the skipper bounds
    // its depth for every deserializer, including JavaScript objects.
    for (what, bytes, field) in [
        ("deep warning", nested_warning, "warnings[0]"),
        ("deep unknown field", nested_unknown, "structure.x"),
    ] {
        let err = interpret_call_bytes("liquid_box", &m, bytes.as_bytes(), &limits)
            .map(|_| ())
            .expect_err(what);
        assert_one_line_naming(&err, field, what);
    }
    // The same through a parsed value (what a JavaScript object is like): built iteratively,
    // as no JSON parser would hand over 10 000 levels.
    let mut deep = json!(1);
    for _ in 0..10_000 {
        deep = Value::Array(vec![deep]);
    }
    for (what, field) in [
        ("deep warning value", "warnings[0]"),
        ("deep unknown value", "structure.x"),
    ] {
        let mut result = valid_result();
        if field == "warnings[0]" {
            result["structuredContent"]["warnings"] = Value::Array(vec![Value::Null]);
            std::mem::swap(&mut result["structuredContent"]["warnings"][0], &mut deep);
        } else {
            result["structuredContent"]["structure"]["x"] = Value::Null;
            std::mem::swap(
                &mut result["structuredContent"]["structure"]["x"],
                &mut deep,
            );
        }
        let err = interpret_call_value("liquid_box", &m, &result)
            .map(|_| ())
            .expect_err(what);
        assert_one_line_naming(&err, field, what);
        // Take the deep value back out so that it is dropped once, without recursion, below.
        let slot = if field == "warnings[0]" {
            &mut result["structuredContent"]["warnings"][0]
        } else {
            &mut result["structuredContent"]["structure"]["x"]
        };
        std::mem::swap(slot, &mut deep);
    }
    // Dropping 10 000 nested arrays recurses; the test process does not need the memory back.
    std::mem::forget(deep);
}

#[test]
fn envelopes_and_tool_errors() {
    let m = marker(Apply::NewDocument);
    let limits = ResultLimits::default();
    let rpc_error =
        br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"boom\nstack trace"}}"#;
    assert_eq!(
        interpret_call_bytes("liquid_box", &m, rpc_error, &limits).unwrap_err(),
        "The server failed: boom"
    );
    let tool_error =
        br#"{"content":[{"type":"text","text":"<b>Bad</b> density\nmore"}],"isError":true}"#;
    assert_eq!(
        interpret_call_bytes("liquid_box", &m, tool_error, &limits).unwrap_err(),
        "<b>Bad</b> density"
    );
    // A tool error with a structuredContent that is no BuilderResult is still the tool error.
    let odd = br#"{"content":[{"type":"text","text":"Error executing tool liquid_box: Too dense."}],"structuredContent":{"error":"x"},"isError":true}"#;
    assert_eq!(
        interpret_call_bytes("liquid_box", &m, odd, &limits).unwrap_err(),
        "Too dense."
    );
    let odd_value: Value = serde_json::from_slice(odd).unwrap();
    assert_eq!(
        interpret_call_value("liquid_box", &m, &odd_value).unwrap_err(),
        "Too dense."
    );
    let silent = br#"{"content":[],"isError":true}"#;
    assert!(!interpret_call_bytes("liquid_box", &m, silent, &limits)
        .unwrap_err()
        .is_empty());
    let mut wrapped = json!({"jsonrpc": "2.0", "id": 1, "result": valid_result()});
    let bytes = serde_json::to_vec(&wrapped).unwrap();
    assert!(interpret_call_bytes("liquid_box", &m, &bytes, &limits).is_ok());
    wrapped["result"]["result"] = json!({});
    let bytes = serde_json::to_vec(&wrapped).unwrap();
    assert!(interpret_call_bytes("liquid_box", &m, &bytes, &limits)
        .unwrap_err()
        .starts_with("result: "));
}

#[test]
fn lenient_where_the_contract_allows() {
    let mut result = valid_result();
    result["structuredContent"]["name"] = json!("   ");
    result["structuredContent"]["warnings"] = json!(["kept", 3, null, {"a": 1}]);
    result["structuredContent"]["provenance"] =
        json!({"seed": 1, "ok": true, "list": [1], "none": null, "v": "2"});
    result["structuredContent"]["futureField"] = json!({"x": 1});
    result["structuredContent"]["structure"]["futureChannel"] = json!([1, 2]);
    result["structuredContent"]["structure"]["bondOrders"] = Value::Null;
    let done = interpret_call_value("liquid_box", &marker(Apply::NewDocument), &result).unwrap();
    assert_eq!(done.result.name, "result");
    assert_eq!(done.warnings, vec!["kept".to_string()]);
    assert_eq!(
        Value::Object(done.result.provenance.clone()),
        json!({"seed": 1, "ok": "true", "v": "2"})
    );
}

#[test]
fn javascript_inputs_for_plan_apply_are_read_and_checked() {
    use megane_builder_client::contract::result::{read_builder_result, read_document};
    let solvate: Value = serde_json::from_str(SOLVATE).unwrap();
    let document = read_document(&solvate["arguments"]["document"]).unwrap();
    assert_eq!(document.n_atoms(), 3);
    let err =
        read_document(json!({"elements": [8], "positions": [0, 0], "cell": null, "bonds": []}))
            .unwrap_err();
    assert_eq!(
        err,
        "document: structure.positions: has 2 numbers; 1 atoms need 3 (x, y, z each)"
    );
    let err = read_document(json!([1])).unwrap_err();
    assert!(err.starts_with("document: invalid type"), "{err}");
    let structured = &solvate["result"]["structuredContent"];
    let result = read_builder_result(&marker(Apply::Insert), structured).unwrap();
    assert_eq!(result.structure.n_atoms(), 798);
    let mut broken = structured.clone();
    broken["structure"]["bonds"][0] = json!([0, 0]);
    let err = read_builder_result(&marker(Apply::Insert), &broken).unwrap_err();
    assert_eq!(err, "structure.bonds[0]: bonds atom 0 to itself");
}

#[test]
fn a_broken_document_is_refused_by_plan_apply() {
    let solvate: Value = serde_json::from_str(SOLVATE).unwrap();
    let done = interpret_call_value("solvate", &marker(Apply::Insert), &solvate["result"]).unwrap();
    let mut document: Structure =
        serde_json::from_value(solvate["arguments"]["document"].clone()).unwrap();
    document.positions.pop();
    let err = plan_apply(&marker(Apply::Insert), &done.result, Some(&document), &[]).unwrap_err();
    assert_eq!(
        err,
        "document: structure.positions: has 8 numbers; 3 atoms need 9 (x, y, z each)"
    );
    document.positions.push(f64::NAN);
    let err = plan_apply(&marker(Apply::Insert), &done.result, Some(&document), &[]).unwrap_err();
    assert_eq!(err, "document: structure.positions[8]: not a finite number");
    // A result of another contract is refused by plan_apply too.
    let mut other = done.result.clone().into_inner();
    other.contract = 2;
    assert!(plan_apply(&marker(Apply::NewDocument), &other, None, &[])
        .unwrap_err()
        .starts_with("contract: "));
}

// --------------------------------------------------------------------------------------------
// Property tests.
// --------------------------------------------------------------------------------------------

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|v| json!(v)),
        (-1000i64..1000).prop_map(|v| json!(v)),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| json!(v)),
        "[a-zA-Z0-9 \\n]{0,8}".prop_map(Value::String),
        // Line breaks, other controls, bidi overrides and the Unicode separators.
        "[a-z \\n\\r\\t\\x00-\\x1f\\x7f\\u{85}\\u{2028}\\u{2029}\\u{202e}]{0,12}"
            .prop_map(Value::String),
        extreme_number(),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Huge and tiny numbers: the ends of f64, subnormals, negative zero, the ends of i64 and u64.
fn extreme_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(f64::MAX)),
        Just(json!(f64::MIN)),
        Just(json!(f64::MIN_POSITIVE)),
        Just(json!(5e-324)),
        Just(json!(-0.0)),
        Just(json!(1e300)),
        Just(json!(i64::MIN)),
        Just(json!(i64::MAX)),
        Just(json!(u64::MAX)),
        Just(json!(u32::MAX as u64 + 1)),
        Just(json!(256)),
        Just(json!(-1)),
    ]
}

/// Where a mutation lands, relative to the CallToolResult.
const PATHS: &[&[&str]] = &[
    &["isError"],
    &["content"],
    &["structuredContent"],
    &["structuredContent", "contract"],
    &["structuredContent", "name"],
    &["structuredContent", "warnings"],
    &["structuredContent", "provenance"],
    &["structuredContent", "structure"],
    &["structuredContent", "structure", "elements"],
    &["structuredContent", "structure", "elements", "#"],
    &["structuredContent", "structure", "positions"],
    &["structuredContent", "structure", "positions", "#"],
    &["structuredContent", "structure", "cell"],
    &["structuredContent", "structure", "cell", "#"],
    &["structuredContent", "structure", "bonds"],
    &["structuredContent", "structure", "bonds", "#"],
    &["structuredContent", "structure", "bondOrders"],
    &["structuredContent", "structure", "molecules", "#"],
    &["structuredContent", "structure", "residueNames", "#"],
    &["structuredContent", "structure", "residueIds"],
    &["structuredContent", "structure", "chainIds"],
    &["structuredContent", "structure", "scalars"],
];

/// Sets (or, with `None`, removes) the value at `path`; `#` picks the element `index % len`.
fn mutate(root: &mut Value, path: &[&str], index: usize, value: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = root;
    for key in parents {
        node = match node {
            Value::Object(map) => match map.get_mut(*key) {
                Some(next) => next,
                None => return,
            },
            _ => return,
        };
    }
    match (node, *last, value) {
        (Value::Array(items), "#", Some(v)) if !items.is_empty() => {
            let i = index % items.len();
            items[i] = v;
        }
        (Value::Array(items), "#", None) if !items.is_empty() => {
            let i = index % items.len();
            items.remove(i);
        }
        (Value::Object(map), key, Some(v)) => {
            map.insert(key.to_string(), v);
        }
        (Value::Object(map), key, None) => {
            map.remove(key);
        }
        _ => {}
    }
}

fn document() -> Structure {
    let solvate: Value = serde_json::from_str(SOLVATE).unwrap();
    serde_json::from_value(solvate["arguments"]["document"].clone()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        for apply in [Apply::NewDocument, Apply::Insert] {
            if let Err(e) = interpret_call_bytes("t", &marker(apply), &bytes, &ResultLimits::default()) {
                prop_assert!(!e.contains('\n') && !e.is_empty());
            }
        }
    }

    #[test]
    fn arbitrary_json_text_never_panics(text in "[\\[\\]{}\",:0-9a-zA-Z.eE+-]{0,200}") {
        let wrapped = format!(r#"{{"structuredContent":{{"contract":1,"structure":{text}}}}}"#);
        for bytes in [text.as_bytes(), wrapped.as_bytes()] {
            if let Err(e) = interpret_call_bytes("t", &marker(Apply::NewDocument), bytes, &ResultLimits::default()) {
                prop_assert!(!e.contains('\n'));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn mutated_results_never_panic_and_errors_are_one_line(
        mutations in proptest::collection::vec((0..PATHS.len(), any::<usize>(), proptest::option::weighted(0.85, arb_json())), 1..4),
        insert in any::<bool>(),
    ) {
        let mut result = valid_result();
        for (path, index, value) in mutations {
            mutate(&mut result, PATHS[path], index, value);
        }
        let m = marker(if insert { Apply::Insert } else { Apply::NewDocument });
        let bytes = serde_json::to_vec(&result).unwrap();
        let by_bytes = interpret_call_bytes("liquid_box", &m, &bytes, &ResultLimits::default());
        let by_value = interpret_call_value("liquid_box", &m, &result);
        // Differential: the bytes path and the parsed-object path read the same result.
        prop_assert_eq!(by_bytes.is_ok(), by_value.is_ok());
        if let (Ok(a), Ok(b)) = (&by_bytes, &by_value) {
            prop_assert_eq!(a, b);
        }
        if let Err(e) = &by_value {
            prop_assert!(!e.contains('\n') && !e.is_empty(), "{}", e);
        }
        match by_bytes {
            Ok(done) => {
                let doc = document();
                for document in [None, Some(&doc)] {
                    if let Err(e) = plan_apply(&m, &done.result, document, &[]) {
                        prop_assert!(!e.contains('\n'), "{}", e);
                    }
                }
            }
            Err(e) => prop_assert!(!e.contains('\n') && !e.is_empty(), "{}", e),
        }
    }
}

const CAFFEINE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/molecules/caffeine.mol"
));

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// The mol block reader never panics, and its errors are one line naming a line number.
    #[test]
    fn molblock_reader_never_panics(
        edits in proptest::collection::vec((any::<usize>(), any::<char>()), 0..6),
        cut in any::<usize>(),
        junk in "\\PC{0,300}",
    ) {
        let mut chars: Vec<char> = CAFFEINE.chars().collect();
        for (at, c) in edits {
            let i = at % chars.len();
            chars[i] = c;
        }
        chars.truncate(cut % (chars.len() + 1));
        let mutated: String = chars.into_iter().collect();
        for text in [mutated.as_str(), junk.as_str()] {
            if let Err(e) = parse_molblock(text) {
                prop_assert!(e.starts_with("line ") && !e.contains('\n'), "{}", e);
            }
        }
    }

    /// Launch fragments: never a panic, errors one line, and no token left behind.
    #[test]
    fn launch_fragments_never_panic(hash in "#?[a-z=&%0-9A-F:/.]{0,60}") {
        match parse_launch_fragment(&hash) {
            Ok(Some(launch)) => {
                let rest = launch.remaining_fragment.trim_start_matches('#');
                prop_assert!(rest
                    .split('&')
                    .all(|p| !p.starts_with("token=") && !p.starts_with("tools=")));
            }
            Ok(None) => {}
            Err(e) => prop_assert!(!e.contains('\n')),
        }
    }
}

// --------------------------------------------------------------------------------------------
// The repeat check (§5.2) against a brute-force minimum-image search.
// --------------------------------------------------------------------------------------------

fn structure(positions: Vec<f64>, cell: Option<[f64; 9]>) -> Structure {
    Structure {
        elements: vec![8; positions.len() / 3],
        positions,
        cell,
        ..Structure::default()
    }
}

/// Smallest distance between `a` and any periodic image of `b` (images −2..2 per axis), in Å.
fn brute_force_distance(a: &[f64], b: &[f64], cell: Option<&[f64; 9]>) -> f64 {
    let range: &[f64] = if cell.is_some() {
        &[-2.0, -1.0, 0.0, 1.0, 2.0]
    } else {
        &[0.0]
    };
    let c = cell.copied().unwrap_or([0.0; 9]);
    let mut best = f64::INFINITY;
    for &i in range {
        for &j in range {
            for &k in range {
                let shift = [0, 1, 2].map(|x| i * c[x] + j * c[3 + x] + k * c[6 + x]);
                let d: f64 = (0..3)
                    .map(|x| (a[x] - b[x] - shift[x]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                best = best.min(d);
            }
        }
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn repeat_check_matches_brute_force(
        lengths in proptest::array::uniform3(3.0f64..12.0),
        tilt in proptest::array::uniform3(-1.5f64..1.5),
        periodic in any::<bool>(),
        doc in proptest::collection::vec(proptest::array::uniform3(0.0f64..1.0), 1..20),
        picks in proptest::collection::vec((any::<usize>(), proptest::array::uniform3(-0.12f64..0.12), proptest::array::uniform3(-1i32..=1)), 1..10),
    ) {
        let cell = [lengths[0], 0.0, 0.0, tilt[0], lengths[1], 0.0, tilt[1], tilt[2], lengths[2]];
        let to_cartesian = |s: [f64; 3]| [0, 1, 2].map(|x| s[0] * cell[x] + s[1] * cell[3 + x] + s[2] * cell[6 + x]);
        let doc_positions: Vec<f64> = doc.iter().flat_map(|s| to_cartesian(*s)).collect();
        // Result atoms near document atoms, some moved by whole cell vectors.
        let mut added = Vec::new();
        for (pick, offset, image) in &picks {
            let base = &doc_positions[3 * (pick % doc.len())..][..3];
            let shift = to_cartesian(image.map(f64::from));
            added.extend((0..3).map(|x| base[x] + offset[x] + shift[x]));
        }
        let doc_cell = periodic.then_some(cell);
        let closest = added
            .chunks_exact(3)
            .flat_map(|a| doc_positions.chunks_exact(3).map(move |b| (a, b)))
            .map(|(a, b)| brute_force_distance(a, b, doc_cell.as_ref()))
            .fold(f64::INFINITY, f64::min);
        prop_assume!((closest - 0.1).abs() > 1e-9);
        let result = megane_builder_client::contract::result::BuilderResult {
            contract: 1,
            name: "probe".into(),
            structure: structure(added, doc_cell),
            warnings: vec![],
            provenance: Default::default(),
        };
        let document = structure(doc_positions, doc_cell);
        let outcome = plan_apply(&marker(Apply::Insert), &result, Some(&document), &[]);
        prop_assert_eq!(outcome.is_err(), closest < 0.1, "closest {} → {:?}", closest, outcome.err());
    }
}

/// A plain tool's result (no Builder marker) that the tool declares an `outputSchema` for: hostile
/// bodies (too large, too deep, not an object, a two-line error, an envelope's error) are each
/// one line and nothing panics; SSE framing is read as for Builder results. (Faults a real server
/// does not send; the conforming and non-conforming results of a real one are in `mcp_live`.)
#[test]
fn plain_tool_results_are_capped_and_checked_against_their_output_schema() {
    use megane_builder_client::contract::result::interpret_plain_bytes;
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let read = |body: &[u8], limits: &ResultLimits| {
        interpret_plain_bytes("count", Some(&schema), body, limits)
    };
    let defaults = ResultLimits::default();
    let good = br#"{"content":[{"type":"text","text":"Counted."}],"structuredContent":{"n":3}}"#;
    let ok = read(good, &defaults).unwrap();
    assert_eq!(ok.summary, "Counted.");
    assert_eq!(ok.raw["structuredContent"]["n"], 3);
    // The cap is the Builder results' cap, checked before parsing.
    let small = ResultLimits {
        max_bytes: good.len() - 1,
    };
    let err = read(good, &small).unwrap_err();
    assert!(err.contains("bytes is more than the"), "{err}");
    // SSE-framed, after a progress notification: the same outcome.
    let framed = format!(
        "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":1,\"progress\":1}}}}\n\nevent: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}}\n\n",
        std::str::from_utf8(good).unwrap()
    );
    assert_eq!(read(framed.as_bytes(), &defaults).unwrap(), ok);
    let deep = format!(
        "{{\"structuredContent\":{}1{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (deep.into_bytes(), "result: not valid JSON: recursion limit exceeded"),
        (b"[1, 2]".to_vec(), "result: a CallToolResult must be a JSON object"),
        (b"{\"content\": [".to_vec(), "result: not valid JSON: EOF while parsing"),
        (
            br#"{"structuredContent": null}"#.to_vec(),
            "The result does not match the tool's outputSchema: The result must be a group of values.",
        ),
        (
            br#"{"structuredContent": {"n": 1.5, "extra": "x\ny"}}"#.to_vec(),
            "The result does not match the tool's outputSchema: n must be a whole number.",
        ),
        (
            "{\"isError\": true, \"content\": [{\"type\": \"text\", \"text\": \"Error executing tool count: bad\\u202e input\\nsecond line\"}]}"
                .as_bytes()
                .to_vec(),
            "bad input",
        ),
        (
            br#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "boom\nstack"}}"#.to_vec(),
            "The server failed: boom",
        ),
        (
            br#"{"jsonrpc": "2.0", "id": 1, "result": "text"}"#.to_vec(),
            "result: a CallToolResult must be a JSON object",
        ),
    ];
    for (body, line) in cases {
        let err = read(&body, &defaults).unwrap_err();
        assert!(err.starts_with(line), "{err:?} should start with {line:?}");
        assert!(!err.contains('\n') && !err.contains('\u{202e}'), "{err:?}");
    }
    // A tool without an outputSchema: its result is not checked.
    let free = interpret_plain_bytes("count", None, br#"{"structuredContent": 5}"#, &defaults);
    assert!(free.is_ok());
}
