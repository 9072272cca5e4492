//! The JavaScript API end to end in headless Chromium (wasm-bindgen-test), on the recorded
//! reference-server fixtures: tools/list → buttons → initial values → arguments → call result →
//! apply plan → provenance record, all through the exported functions and their JS values.
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Float32Array, Object, Reflect, Uint32Array, Uint8Array, JSON};
use megane_builder_client::wasm::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const TOOLS_LIST: &str = include_str!("fixtures/megane-recorded/tools-list.json");
const CALL_LIQUID: &str = include_str!("fixtures/megane-recorded/call-liquid_box.json");
const CALL_SOLVATE: &str = include_str!("fixtures/megane-recorded/call-solvate.json");
const CALL_POLYMER: &str = include_str!("fixtures/megane-recorded/call-polymer_chain.json");
const TOOL_ERROR: &str = include_str!(
    "fixtures/reference-server/http-stateful/11-call-liquid_box-2d-molblock-tool-error.json"
);
const WATER: &str = include_str!("fixtures/molecules/water.mol");

fn parse(text: &str) -> JsValue {
    JSON::parse(text).unwrap()
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap()
}

fn get_path(target: &JsValue, path: &[&str]) -> JsValue {
    path.iter()
        .fold(target.clone(), |value, key| get(&value, key))
}

fn obj(pairs: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (k, v) in pairs {
        Reflect::set(&object, &JsValue::from_str(k), v).unwrap();
    }
    object.into()
}

fn button(name: &str) -> JsValue {
    let toolbox = parse_tool_list(parse(TOOLS_LIST), Some("ref".into())).unwrap();
    let buttons: Array = get(&toolbox, "buttons").unchecked_into();
    buttons
        .iter()
        .find(|b| get(b, "name").as_string().as_deref() == Some(name))
        .unwrap()
}

fn library_context(document: JsValue) -> JsValue {
    let water = obj(&[("name", "water".into()), ("molblock", WATER.into())]);
    obj(&[
        ("library", Array::of1(&water).into()),
        ("document", document),
        ("randomSeed", 7.into()),
    ])
}

#[wasm_bindgen_test]
fn tool_list_becomes_three_enabled_buttons() {
    let toolbox = parse_tool_list(parse(TOOLS_LIST), Some("ref".into())).unwrap();
    assert_eq!(get(&toolbox, "ok"), JsValue::TRUE);
    let buttons: Array = get(&toolbox, "buttons").unchecked_into();
    assert_eq!(buttons.length(), 3);
    for b in buttons.iter() {
        assert!(get(&b, "disabledReason").is_null());
    }
    let liquid = button("liquid_box");
    assert_eq!(get(&liquid, "label").as_string().unwrap(), "Liquid box");
    let fields: Array = get_path(&liquid, &["form", "fields"]).unchecked_into();
    let components = fields
        .iter()
        .find(|f| get(f, "key").as_string().as_deref() == Some("components"))
        .unwrap();
    assert_eq!(get(&components, "control").as_string().unwrap(), "table");
    let broken = parse_tool_list(JsValue::from_f64(3.0), None).unwrap();
    assert_eq!(get(&broken, "ok"), JsValue::FALSE);
}

#[wasm_bindgen_test]
fn initial_values_build_arguments_that_validate() {
    let liquid = button("liquid_box");
    let context = library_context(JsValue::NULL);
    let values = initial_values(liquid.clone(), context.clone()).unwrap();
    assert_eq!(get(&values, "seed").as_f64(), Some(7.0));
    let built = build_arguments(liquid.clone(), values, context).unwrap();
    assert_eq!(
        get(&built, "ok"),
        JsValue::TRUE,
        "{:?}",
        JSON::stringify(&built)
    );
    let args = get(&built, "arguments");
    assert_eq!(
        get_path(&args, &["components", "0", "molecule", "name"])
            .as_string()
            .unwrap(),
        "water"
    );
    let problems: Array = validate_arguments(liquid.clone(), args)
        .unwrap()
        .unchecked_into();
    assert_eq!(problems.length(), 0);

    let bad = obj(&[("seed", (-1).into()), ("components", Array::new().into())]);
    let problems: Array = validate_arguments(liquid, bad).unwrap().unchecked_into();
    assert!(problems.length() >= 2);
    let first = problems.get(0);
    assert!(get(&first, "path").is_string() && get(&first, "message").is_string());
}

#[wasm_bindgen_test]
fn liquid_box_result_from_bytes_becomes_a_typed_array_snapshot() {
    let liquid = button("liquid_box");
    let call = parse(CALL_LIQUID);
    let body = JSON::stringify(&get(&call, "result"))
        .unwrap()
        .as_string()
        .unwrap();
    let bytes = Uint8Array::from(body.as_bytes());
    let outcome = interpret_call(liquid.clone(), bytes.into(), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        get(&outcome, "ok"),
        JsValue::TRUE,
        "{:?}",
        get(&outcome, "error")
    );
    assert!(get(&outcome, "summary")
        .as_string()
        .unwrap()
        .contains("water"));
    let result: BuilderResultHandle = get(&outcome, "result")
        .unchecked_into::<JsValue>()
        .into_result();
    assert_eq!(result.atom_count(), 300);
    let planned =
        plan_apply_js(liquid.clone(), &result, JsValue::NULL, JsValue::UNDEFINED).unwrap();
    assert_eq!(
        get(&planned, "ok"),
        JsValue::TRUE,
        "{:?}",
        get(&planned, "error")
    );
    let plan = get(&planned, "plan");
    assert_eq!(get(&plan, "mode").as_string().unwrap(), "new_document");
    let snapshot = get(&plan, "snapshot");
    assert_eq!(get(&snapshot, "nAtoms").as_f64(), Some(300.0));
    let positions: Float32Array = get(&snapshot, "positions").dyn_into().unwrap();
    assert_eq!(positions.length(), 900);
    let cell: Float32Array = get(&snapshot, "box").dyn_into().unwrap();
    assert!(
        (cell.get_index(0) - 14.4088).abs() < 1e-3 && (cell.get_index(8) - 14.4088).abs() < 1e-3
    );
    assert!(get(&snapshot, "elements").is_instance_of::<Uint8Array>());
    assert!(get(&snapshot, "bonds").is_instance_of::<Uint32Array>());

    let record = provenance_record(
        obj(&[
            ("id", "ref".into()),
            ("name", "megane-builder-tools".into()),
            ("version", "0.1.0".into()),
        ]),
        liquid,
        get(&call, "arguments"),
        &result,
        300,
    )
    .unwrap();
    assert_eq!(get(&record, "tool").as_string().unwrap(), "liquid_box");
    assert_eq!(
        get(&record, "argumentsSha256").as_string().unwrap().len(),
        64
    );
    assert_eq!(get(&record, "atoms").as_f64(), Some(300.0));
}

#[wasm_bindgen_test]
fn solvate_result_object_becomes_one_add_fragment() {
    let solvate = button("solvate");
    let call = parse(CALL_SOLVATE);
    let document = get_path(&call, &["arguments", "document"]);
    let outcome =
        interpret_call(solvate.clone(), get(&call, "result"), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        get(&outcome, "ok"),
        JsValue::TRUE,
        "{:?}",
        get(&outcome, "error")
    );
    let result: BuilderResultHandle = get(&outcome, "result")
        .unchecked_into::<JsValue>()
        .into_result();
    let planned = plan_apply_js(
        solvate.clone(),
        &result,
        document.clone(),
        obj(&[("existingFragmentIds", Array::of1(&"water".into()).into())]),
    )
    .unwrap();
    let plan = get(&planned, "plan");
    assert_eq!(get(&plan, "mode").as_string().unwrap(), "insert");
    let ops: Array = get(&plan, "ops").unchecked_into();
    assert_eq!(ops.length(), 1);
    let op = ops.get(0);
    assert_eq!(get(&op, "op").as_string().unwrap(), "add_fragment");
    assert_ne!(get(&op, "id").as_string().unwrap(), "water");
    assert_eq!(Array::from(&get(&op, "elements")).length(), 798);
    let select: Uint32Array = get(&plan, "select").dyn_into().unwrap();
    assert_eq!(select.length(), 798);
    assert_eq!(
        select.get_index(0),
        3,
        "new atoms follow the document's 3 atoms"
    );

    let no_cell = JSON::parse(&JSON::stringify(&document).unwrap().as_string().unwrap()).unwrap();
    Reflect::set(&no_cell, &"cell".into(), &JsValue::NULL).unwrap();
    let planned = plan_apply_js(solvate.clone(), &result, no_cell, JsValue::UNDEFINED).unwrap();
    let ops: Array = get_path(&planned, &["plan", "ops"]).unchecked_into();
    assert_eq!(get(&ops.get(0), "op").as_string().unwrap(), "set_cell");
    assert_eq!(get(&ops.get(0), "scaleAtoms"), JsValue::FALSE);

    let without_document =
        plan_apply_js(solvate, &result, JsValue::NULL, JsValue::UNDEFINED).unwrap();
    assert_eq!(get(&without_document, "ok"), JsValue::FALSE);
}

#[wasm_bindgen_test]
fn polymer_result_and_tool_errors() {
    let polymer = button("polymer_chain");
    let call = parse(CALL_POLYMER);
    let outcome = interpret_call(
        polymer,
        JSON::stringify(&get(&call, "result")).unwrap().into(),
        JsValue::UNDEFINED,
    )
    .unwrap();
    assert_eq!(get(&outcome, "ok"), JsValue::TRUE);

    let liquid = button("liquid_box");
    let exchange = parse(TOOL_ERROR);
    let messages: Array = get(&exchange, "messages").unchecked_into();
    let response = messages.get(messages.length() - 1);
    let outcome = interpret_call(liquid.clone(), response, JsValue::UNDEFINED).unwrap();
    assert_eq!(get(&outcome, "ok"), JsValue::FALSE);
    let error = get(&outcome, "error").as_string().unwrap();
    assert!(error.contains("2D") && !error.contains('\n'), "{error}");

    let tiny = obj(&[("maxResultBytes", 100.into())]);
    let body = JSON::stringify(&get(&parse(CALL_LIQUID), "result"))
        .unwrap()
        .as_string()
        .unwrap();
    let outcome = interpret_call(
        liquid.clone(),
        Uint8Array::from(body.as_bytes()).into(),
        tiny.clone(),
    )
    .unwrap();
    assert_eq!(get(&outcome, "ok"), JsValue::FALSE);
    // The same cap on the same result as text and as an already-parsed object.
    for input in [JsValue::from_str(&body), get(&parse(CALL_LIQUID), "result")] {
        let outcome = interpret_call(liquid.clone(), input, tiny.clone()).unwrap();
        assert_eq!(get(&outcome, "ok"), JsValue::FALSE);
        let error = get(&outcome, "error").as_string().unwrap();
        assert!(error.contains("more than the 100 bytes"), "{error}");
    }
    let outcome = interpret_call(
        liquid,
        get(&parse(CALL_LIQUID), "result"),
        JsValue::UNDEFINED,
    )
    .unwrap();
    assert_eq!(get(&outcome, "ok"), JsValue::TRUE);
}

#[wasm_bindgen_test]
fn small_helpers() {
    assert_eq!(call_timeout_ms_js(Some(20.0), None), 100_000.0);
    assert_eq!(call_timeout_ms_js(None, None), 60_000.0);
    assert_eq!(call_timeout_ms_js(Some(1e9), None), 1_800_000.0);
    assert_eq!(progress_style_js(Some(20.0)), "bar");
    assert_eq!(progress_style_js(Some(1.0)), "spinner");
    let launch =
        parse_launch_fragment("#tools=http%3A%2F%2F127.0.0.1%3A8765%2Fmcp&token=abc&view=1")
            .unwrap();
    assert_eq!(
        get(&launch, "url").as_string().unwrap(),
        "http://127.0.0.1:8765/mcp"
    );
    assert_eq!(get(&launch, "token").as_string().unwrap(), "abc");
    assert!(parse_launch_fragment("#view=1").unwrap().is_null());
    let parsed = parse_molblock(WATER).unwrap();
    let molecule = get(&parsed, "molecule");
    assert_eq!(get(&molecule, "dimension").as_string().unwrap(), "3D");
    assert_eq!(Array::from(&get(&molecule, "elements")).length(), 3);
    let written = molecule_to_molblock(molecule).unwrap();
    let again = parse_molblock(&get(&written, "molblock").as_string().unwrap()).unwrap();
    assert_eq!(get(&again, "ok"), JsValue::TRUE);
    assert_eq!(
        get(&parse_molblock("garbage").unwrap(), "ok"),
        JsValue::FALSE
    );
}

trait IntoResult {
    fn into_result(self) -> BuilderResultHandle;
}

impl IntoResult for JsValue {
    /// The `result` of an `interpretCall` outcome as the exported class.
    fn into_result(self) -> BuilderResultHandle {
        use wasm_bindgen::convert::TryFromJsValue;
        BuilderResultHandle::try_from_js_value(self).unwrap()
    }
}

#[wasm_bindgen_test]
fn integers_beyond_two_to_the_53_neither_throw_nor_pass_silently() {
    // A schema maximum of u64::MAX (legal JSON Schema) must not make parseToolList throw.
    let list = parse(
        r#"{"tools": [{"name": "big", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 18446744073709551615}}},
            "_meta": {"io.github.megane-labs/builder": {"contract": 1, "apply": "new_document"}}}]}"#,
    );
    let toolbox = parse_tool_list(list, None).unwrap();
    assert_eq!(get(&toolbox, "ok"), JsValue::TRUE);
    let maximum = get_path(
        &toolbox,
        &["buttons", "0", "form", "fields", "0", "maximum"],
    );
    assert!(maximum.as_f64().unwrap() > 1.8e19);
    // A residue id JavaScript cannot hold exactly is refused as one line naming the field.
    let liquid = button("liquid_box");
    let result = r#"{"structuredContent": {"contract": 1, "name": "x", "structure": {"elements": [8], "positions": [0, 0, 0],
        "cell": null, "bonds": [], "residueIds": [9007199254740993]}}}"#;
    let outcome = interpret_call(liquid, JsValue::from_str(result), JsValue::UNDEFINED).unwrap();
    assert_eq!(get(&outcome, "ok"), JsValue::FALSE);
    assert!(get(&outcome, "error")
        .as_string()
        .unwrap()
        .starts_with("structure.residueIds[0]"));
}

/// Issue 15: the §4.3 document is taken once and carried as the host's own object; the typed
/// §5.1 check refuses a bad one at `document`; a new object or a new `documentVersion` is taken
/// again, and a new object under the same version is not.
#[wasm_bindgen_test]
fn the_document_is_taken_once_and_carried_as_the_hosts_object() {
    let solvate = button("solvate");
    let document = get(&get(&parse(CALL_SOLVATE), "arguments"), "document");
    let context = library_context(document.clone());
    let values = initial_values(solvate.clone(), context.clone()).unwrap();
    for _ in 0..3 {
        let built = build_arguments(solvate.clone(), values.clone(), context.clone()).unwrap();
        assert_eq!(
            get(&built, "ok"),
            JsValue::TRUE,
            "{:?}",
            JSON::stringify(&built)
        );
        let args = get(&built, "arguments");
        assert!(
            get(&args, "document") == document,
            "the arguments carry the host's object itself"
        );
        let problems: Array = validate_arguments(solvate.clone(), args)
            .unwrap()
            .unchecked_into();
        assert_eq!(problems.length(), 0);
    }
    // A new object with a bond to an atom that does not exist: refused at `document`.
    let bad = JSON::parse(&JSON::stringify(&document).unwrap().as_string().unwrap()).unwrap();
    Reflect::set(&bad, &"bonds".into(), &parse("[[0, 7]]")).unwrap();
    let built = build_arguments(
        solvate.clone(),
        values.clone(),
        library_context(bad.clone()),
    )
    .unwrap();
    assert_eq!(get(&built, "ok"), JsValue::FALSE);
    let first = Array::from(&get(&built, "errors")).get(0);
    assert_eq!(get(&first, "path").as_string().unwrap(), "document");
    assert!(get(&first, "message")
        .as_string()
        .unwrap()
        .contains("structure.bonds[0]"));
    let args = obj(&[
        ("document", bad.clone()),
        ("seed", 1.into()),
        (
            "solvent",
            obj(&[("name", "water".into()), ("molblock", WATER.into())]),
        ),
    ]);
    let problems: Array = validate_arguments(solvate.clone(), args)
        .unwrap()
        .unchecked_into();
    assert_eq!(
        get(&problems.get(0), "path").as_string().unwrap(),
        "document"
    );
    // Versions: the good document under version 1, then the bad object under version 2 (taken
    // again: refused), then a copy of the good one under version 2 (not taken again: the host
    // said nothing changed, so the check of version 2 stands).
    let versioned = |doc: &JsValue, version: u32| {
        let c = library_context(doc.clone());
        Reflect::set(&c, &"documentVersion".into(), &version.into()).unwrap();
        get(
            &build_arguments(solvate.clone(), values.clone(), c).unwrap(),
            "ok",
        )
    };
    assert_eq!(versioned(&document, 1), JsValue::TRUE);
    assert_eq!(versioned(&bad, 2), JsValue::FALSE);
    let copy = JSON::parse(&JSON::stringify(&document).unwrap().as_string().unwrap()).unwrap();
    assert_eq!(versioned(&copy, 2), JsValue::FALSE);
    assert_eq!(versioned(&copy, 3), JsValue::TRUE);
    // Typed arrays the host already has are taken as they are.
    let typed = obj(&[
        ("elements", Uint8Array::from(&[8u8, 1, 1][..]).into()),
        (
            "positions",
            js_sys::Float64Array::from(
                &[10.0, 10.0, 10.0, 10.96, 10.0, 10.0, 9.76, 10.93, 10.0][..],
            )
            .into(),
        ),
        ("cell", parse("[20, 0, 0, 0, 20, 0, 0, 0, 20]")),
        ("bonds", parse("[[0, 1], [0, 2]]")),
    ]);
    let built = build_arguments(solvate, values, library_context(typed)).unwrap();
    assert_eq!(
        get(&built, "ok"),
        JsValue::TRUE,
        "{:?}",
        JSON::stringify(&built)
    );
}
