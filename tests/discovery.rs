//! §3/§4: discovery and form generation on every recorded `tools/list` of the reference server,
//! and on hostile tool lists of our own making.
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::contract::discovery::{parse_tool_list, ToolButton, Toolbox};
use megane_builder_client::contract::form::Control;
use megane_builder_client::contract::marker::{Apply, Category, DocumentUse};
use serde_json::{json, Value};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn read_json(relative: &str) -> Value {
    let path = format!("{SHARED}/{relative}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// Every recorded tools/list result: Megane's fixture and each HTTP recording's last message.
fn recorded_tool_lists() -> Vec<(String, Value)> {
    let mut lists = vec![
        (
            "megane-recorded/tools-list.json".to_string(),
            read_json("megane-recorded/tools-list.json"),
        ),
        (
            "reference-server/make-fixtures/tools-list.json".to_string(),
            read_json("reference-server/make-fixtures/tools-list.json"),
        ),
    ];
    for file in [
        "reference-server/http-stateful/06-tools-list.json",
        "reference-server/http-stateless/02-stateless-tools-list-no-session.json",
        "reference-server/http-modern-2026-07-28/02-modern-2026-07-28-tools-list.json",
    ] {
        let exchange = read_json(file);
        let last = exchange["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        lists.push((file.to_string(), last["result"].clone()));
    }
    lists
}

fn button<'a>(toolbox: &'a Toolbox, name: &str) -> &'a ToolButton {
    toolbox
        .buttons
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no button {name}"))
}

fn field<'a>(b: &'a ToolButton, key: &str) -> &'a megane_builder_client::contract::form::Field {
    b.form
        .as_ref()
        .unwrap()
        .fields
        .iter()
        .find(|f| f.key == key)
        .unwrap_or_else(|| panic!("no field {key}"))
}

#[test]
fn reference_tools_become_three_enabled_buttons() {
    for (source, list) in recorded_tool_lists() {
        let toolbox = parse_tool_list(&list, Some("megane-builder-tools")).unwrap();
        assert_eq!(toolbox.buttons.len(), 3, "{source}");
        for b in &toolbox.buttons {
            assert!(
                b.disabled_reason.is_none(),
                "{source}: {} disabled: {:?}",
                b.name,
                b.disabled_reason
            );
            assert!(b.form.is_some());
            assert_eq!(b.server_id.as_deref(), Some("megane-builder-tools"));
        }
        assert!(
            toolbox.unsupported_contract.is_empty()
                && toolbox.unknown_apply.is_empty()
                && toolbox.malformed.is_empty()
        );
        assert!(
            toolbox.notices.is_empty(),
            "{source}: {:?}",
            toolbox.notices
        );

        let liquid = button(&toolbox, "liquid_box");
        assert_eq!(liquid.label, "Liquid box");
        assert_eq!(liquid.category, Category::Bulk);
        assert_eq!(liquid.marker.apply, Apply::NewDocument);
        assert_eq!(liquid.marker.expected_seconds, Some(20.0));
        assert!(
            liquid.tooltip.ends_with('.') && !liquid.tooltip.contains(". "),
            "{}",
            liquid.tooltip
        );
        let components = field(liquid, "components");
        let Control::Table {
            columns,
            min_rows,
            max_rows,
        } = &components.control
        else {
            panic!("{source}: components is not a table")
        };
        assert_eq!((*min_rows, *max_rows), (1, Some(8)));
        assert_eq!(columns[0].key, "molecule");
        assert_eq!(columns[0].control, Control::Molecule);
        assert_eq!(columns[1].key, "count");
        let Control::Number { bounds } = &columns[1].control else {
            panic!("count is not a number")
        };
        assert!(bounds.integer);
        assert_eq!(bounds.unit.as_ref().unwrap().unit, "count");
        assert_eq!(columns[1].example, Some(json!(100)));
        assert_eq!(field(liquid, "seed").control, Control::Seed);
        let Control::Number { bounds } = &field(liquid, "tolerance").control else {
            panic!()
        };
        assert_eq!(bounds.unit.as_ref().unwrap().label, "Å");
        assert!(matches!(
            field(liquid, "aspect").control,
            Control::Vector { length: 3, .. }
        ));
        assert!(
            matches!(&field(liquid, "shape").control, Control::Select { options } if options.len() == 2)
        );

        let polymer = button(&toolbox, "polymer_chain");
        assert_eq!(polymer.category, Category::Polymer);
        assert_eq!(
            field(polymer, "head").control,
            Control::Atom {
                of: "monomer".into()
            }
        );
        assert_eq!(
            field(polymer, "tail").control,
            Control::Atom {
                of: "monomer".into()
            }
        );
        assert_eq!(field(polymer, "monomer").control, Control::Molecule);

        let solvate = button(&toolbox, "solvate");
        assert_eq!(solvate.marker.apply, Apply::Insert);
        assert_eq!(solvate.marker.document, DocumentUse::Required);
        let document = field(solvate, "document");
        assert_eq!(document.control, Control::Document);
        assert!(document.required);
        assert_eq!(
            solvate.form.as_ref().unwrap().document_property.as_deref(),
            Some("document")
        );
        assert_eq!(
            toolbox
                .categories
                .iter()
                .map(|c| c.label.as_str())
                .collect::<Vec<_>>(),
            ["Bulk", "Polymer", "Solvation"]
        );
    }
}

fn tool(name: &str, marker: Value) -> Value {
    json!({
        "name": name,
        "description": "Does a thing. Then more.",
        "inputSchema": {"type": "object", "properties": {"seed": {"type": "integer", "minimum": 0, "x-megane-widget": "seed"}}},
        "_meta": {"io.github.megane-labs/builder": marker}
    })
}

fn good_marker() -> Value {
    json!({"contract": 1, "category": "bulk", "apply": "new_document", "document": "none", "stochastic": true})
}

/// A hostile list → Ok toolbox; returns it for checks. Never panics.
fn parse(list: Value) -> Toolbox {
    parse_tool_list(&list, None).expect("a list of tools parses")
}

#[test]
fn hostile_markers_are_sorted_into_the_right_lists() {
    let toolbox = parse(json!({"tools": [
        tool("ok", good_marker()),
        tool("not_object", json!("yes")),
        tool("contract2", json!({"contract": 2, "apply": "new_document"})),
        tool("contract2b", json!({"contract": 2, "apply": "insert"})),
        tool("replace", json!({"contract": 1, "apply": "replace"})),
        tool("contract_text", json!({"contract": "1", "apply": "insert"})),
        tool("contract_negative", json!({"contract": -1, "apply": "insert"})),
        tool("no_apply", json!({"contract": 1})),
        tool("bad_document", json!({"contract": 1, "apply": "insert", "document": "sometimes"})),
        tool("bad_stochastic", json!({"contract": 1, "apply": "insert", "stochastic": "yes"})),
        tool("bad_seconds", json!({"contract": 1, "apply": "insert", "expectedSeconds": -3})),
        {"name": "plain", "inputSchema": {"type": "object"}},
        {"description": "no name"},
        "not even an object",
        tool("ok", good_marker()),
    ]}));
    let names = |list: &Vec<megane_builder_client::contract::discovery::HiddenTool>| {
        list.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
    };
    assert_eq!(
        toolbox
            .buttons
            .iter()
            .map(|b| b.name.as_str())
            .collect::<Vec<_>>(),
        ["ok"]
    );
    assert_eq!(
        names(&toolbox.unsupported_contract),
        ["contract2", "contract2b"]
    );
    assert_eq!(names(&toolbox.unknown_apply), ["replace"]);
    assert_eq!(
        names(&toolbox.malformed),
        [
            "not_object",
            "contract_text",
            "contract_negative",
            "no_apply",
            "bad_document",
            "bad_stochastic",
            "bad_seconds",
            "(tool #13)",
            "(tool #14)",
            "ok"
        ]
    );
    for hidden in toolbox
        .malformed
        .iter()
        .chain(&toolbox.unknown_apply)
        .chain(&toolbox.unsupported_contract)
    {
        assert!(
            !hidden.reason.is_empty() && !hidden.reason.contains('\n'),
            "{hidden:?}"
        );
    }
    assert_eq!(toolbox.plain_tools.len(), 1);
    let contract_notices: Vec<_> = toolbox
        .notices
        .iter()
        .filter(|n| n.contains("contract 2"))
        .collect();
    assert_eq!(
        contract_notices.len(),
        1,
        "one notice per server: {:?}",
        toolbox.notices
    );
}

#[test]
fn icons_are_only_allowed_data_uris() {
    let mut tools = Vec::new();
    for (i, src) in [
        "javascript:alert(1)",
        "https://evil.example/icon.png",
        "data:text/html;base64,PHNjcmlwdD4=",
        "file:///etc/passwd",
        "data:image/png;base64,iVBORw0KGgo=",
        "data:image/svg+xml;base64,PHN2Zy8+",
    ]
    .iter()
    .enumerate()
    {
        let mut t = tool(&format!("t{i}"), good_marker());
        t["icons"] = json!([{"src": src}]);
        tools.push(t);
    }
    let mut mismatched = tool("mismatch", good_marker());
    mismatched["icons"] = json!([{"src": "data:image/png;base64,AAAA", "mimeType": "text/html"}]);
    tools.push(mismatched);
    let toolbox = parse(json!({"tools": tools}));
    let icons: Vec<Option<&str>> = toolbox.buttons.iter().map(|b| b.icon.as_deref()).collect();
    assert_eq!(
        icons,
        [
            None,
            None,
            None,
            None,
            Some("data:image/png;base64,iVBORw0KGgo="),
            Some("data:image/svg+xml;base64,PHN2Zy8+"),
            None
        ]
    );
}

#[test]
fn html_in_titles_is_kept_as_plain_text() {
    let mut t = tool("x", good_marker());
    t["title"] = json!("<img src=x onerror=alert(1)>Box");
    t["description"] = json!("<b>Bold</b> claim. Rest");
    let toolbox = parse(json!([t]));
    let b = &toolbox.buttons[0];
    assert_eq!(b.label, "<img src=x onerror=alert(1)>Box");
    assert_eq!(b.tooltip, "<b>Bold</b> claim.");
}

#[test]
fn label_falls_back_to_annotations_then_name() {
    let mut a = tool("a_tool", good_marker());
    a["annotations"] = json!({"title": "From annotations"});
    let b = tool("b_tool", good_marker());
    let mut c = tool("c_tool", good_marker());
    c["title"] = json!("   ");
    c["annotations"] = json!({"title": "Annotated C"});
    let toolbox = parse(json!([a, b, c]));
    let labels: Vec<&str> = toolbox.buttons.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(labels, ["From annotations", "b_tool", "Annotated C"]);
}

#[test]
fn pages_are_joined_in_order() {
    let toolbox = parse(
        json!([{"tools": [tool("a", good_marker())], "nextCursor": "2"}, {"tools": [tool("b", good_marker())]}]),
    );
    assert_eq!(
        toolbox
            .buttons
            .iter()
            .map(|b| b.name.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
}

#[test]
fn unknown_category_is_other() {
    let mut marker = good_marker();
    marker["category"] = json!("crystals");
    let toolbox = parse(json!([tool("x", marker)]));
    assert_eq!(toolbox.buttons[0].category, Category::Other);
    assert_eq!(toolbox.categories[0].label, "Other");
}

#[test]
fn forms_builder_cannot_build_disable_the_button_naming_the_property() {
    let cases = [
        (
            json!({"type": "object", "properties": {"mode": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}),
            "`mode`",
        ),
        (
            json!({"type": "object", "properties": {"m": {"$ref": "https://example.org/schema.json"}}}),
            "`m`",
        ),
        (
            json!({"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object", "properties": {"inner": {"type": "array", "items": {"type": "object"}}}}}}}),
            "`rows[].inner`",
        ),
        (
            json!({"type": "object", "properties": {"x": {"type": ["string", "integer"]}}}),
            "`x`",
        ),
        (
            json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "(unclosed"}}}),
            "not valid JSON Schema",
        ),
        (json!("not a schema"), "no input schema"),
        (
            json!({"type": "object", "properties": {"d": {"type": "object", "x-megane-widget": "document", "properties": {}}}}),
            "`d`",
        ),
    ];
    for (schema, expected) in cases {
        let mut t = tool("x", good_marker());
        t["inputSchema"] = schema.clone();
        let toolbox = parse(json!([t]));
        let reason = toolbox.buttons[0]
            .disabled_reason
            .clone()
            .unwrap_or_else(|| panic!("enabled: {schema}"));
        assert!(
            reason.starts_with("Builder cannot build a form: "),
            "{reason}"
        );
        assert!(reason.contains(expected), "{reason} lacks {expected}");
        assert!(!reason.contains('\n'));
    }
}

#[test]
fn stochastic_without_seed_and_document_mismatch_are_notices() {
    let mut t = tool("noseed", good_marker());
    t["inputSchema"] = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let mut d = tool(
        "docmismatch",
        json!({"contract": 1, "apply": "insert", "document": "required", "stochastic": false}),
    );
    d["inputSchema"] = json!({"type": "object", "properties": {}});
    let toolbox = parse(json!([t, d]));
    assert!(toolbox.buttons.iter().all(|b| b.disabled_reason.is_none()));
    assert!(
        toolbox
            .notices
            .iter()
            .any(|n| n.contains("stochastic") && n.contains("seed")),
        "{:?}",
        toolbox.notices
    );
    assert!(
        toolbox
            .notices
            .iter()
            .any(|n| n.contains("document widget")),
        "{:?}",
        toolbox.notices
    );
}

#[test]
fn broken_list_shapes_are_one_line_errors() {
    for input in [
        json!(42),
        json!("tools"),
        json!({"tools": "many"}),
        json!({"no": "tools"}),
        json!([{"tools": 3}, {"tools": []}]),
    ] {
        let error = parse_tool_list(&input, None).unwrap_err();
        assert!(!error.is_empty() && !error.contains('\n'), "{error}");
    }
}

#[test]
fn deep_nesting_in_a_schema_does_not_panic() {
    let mut schema = json!({"type": "object"});
    for _ in 0..200 {
        schema = json!({"type": "object", "properties": {"p": schema}});
    }
    let mut t = tool("deep", good_marker());
    t["inputSchema"] = schema;
    let toolbox = parse(json!([t]));
    assert!(toolbox.buttons[0]
        .disabled_reason
        .as_deref()
        .unwrap()
        .contains("deeper than one level"));
}

/// The toolbox `connect()` keeps for calls holds no forms; the `megane` entry's listing puts
/// them back with `restore_forms`: the result is the toolbox `parse_tool_list` makes, on every
/// recorded list and on a list with a disabled button.
#[test]
fn restored_forms_equal_parse_tool_list() {
    use megane_builder_client::contract::discovery::{
        parse_tool_list_with, restore_forms, SentSchemas,
    };
    let mut broken = tool("broken", good_marker());
    broken["inputSchema"] =
        json!({"type": "object", "properties": {"x": {"type": ["string", "integer"]}}});
    let mut lists = recorded_tool_lists();
    lists.push((
        "disabled".into(),
        json!([tool("fine", good_marker()), broken]),
    ));
    for (name, list) in lists {
        let expected = parse_tool_list(&list, Some("s")).unwrap();
        let (mut toolbox, _) = parse_tool_list_with(&list, Some("s"), &mut SentSchemas).unwrap();
        assert!(toolbox.buttons.iter().all(|b| b.form.is_none()), "{name}");
        restore_forms(&mut toolbox);
        assert!(toolbox.buttons.iter().any(|b| b.form.is_some()), "{name}");
        assert_eq!(toolbox, expected, "{name}");
    }
}

/// The deferred way (parseToolList in the page: buttons first, each button's form, disabled
/// reason and notices when first read) gives, once completed, the toolbox `parse_tool_list`
/// makes, on every recorded list and on lists with disabled buttons, notices and hidden tools.
#[test]
fn deferred_schema_parts_equal_parse_tool_list() {
    use megane_builder_client::contract::discovery::{
        complete_deferred, parse_tool_list_with, ToolSchemas,
    };
    use megane_builder_client::contract::validate::Compiled;
    struct Deferred;
    impl ToolSchemas for Deferred {
        fn carried(&mut self, input_schema: Option<&Value>) -> Value {
            input_schema.cloned().unwrap_or(Value::Null)
        }
        fn entry(&mut self, _: Option<&Value>) -> Option<Compiled> {
            panic!("a deferred toolbox reads no schema")
        }
        fn deferred(&self) -> bool {
            true
        }
    }
    let mut broken = tool("broken", good_marker());
    broken["inputSchema"] =
        json!({"type": "object", "properties": {"x": {"type": ["string", "integer"]}}});
    let mut bad_pattern = tool("bad-pattern", good_marker());
    bad_pattern["inputSchema"] =
        json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "(unclosed"}}});
    let mut no_schema = tool("no-schema", good_marker());
    no_schema.as_object_mut().unwrap().remove("inputSchema");
    let mut stochastic = tool(
        "stochastic",
        json!({"contract": 1, "apply": "insert", "stochastic": true}),
    );
    stochastic["inputSchema"] = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let v2 = tool("v2", json!({"contract": 2, "apply": "new_document"}));
    let mut lists = recorded_tool_lists();
    lists.push((
        "disabled".into(),
        json!([
            v2,
            tool("fine", good_marker()),
            broken,
            bad_pattern,
            no_schema,
            stochastic
        ]),
    ));
    for (name, list) in lists {
        let expected = parse_tool_list(&list, Some("s")).unwrap();
        let (mut toolbox, entries) = parse_tool_list_with(&list, Some("s"), &mut Deferred).unwrap();
        assert!(entries.iter().all(Option::is_none), "{name}");
        assert!(
            toolbox
                .buttons
                .iter()
                .all(|b| b.form.is_none() && b.disabled_reason.is_none() && b.notices.is_empty()),
            "{name}"
        );
        complete_deferred(&mut toolbox);
        assert_eq!(toolbox, expected, "{name}");
    }
}

/// The typed reading of a tools/list text (parseToolList in the page) gives the toolbox the
/// `Value` reading gives, on every recorded list and on texts that test its reading: items that
/// are not objects, pages, keys written with escapes, duplicate keys (the last counts), values of
/// the wrong type where text or an object is read, `null` schemas, and refusals.
#[test]
fn typed_reading_of_the_text_equals_the_value_reading() {
    use megane_builder_client::contract::discovery::{
        parse_tool_list_text, parse_tool_list_with, SentSchemas,
    };
    let marker = r#"{"io.github.megane-labs/builder": {"contract": 1, "apply": "new_document", "category": "bulk"}}"#;
    let schema = r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#;
    let mut texts: Vec<(String, String)> = recorded_tool_lists()
        .into_iter()
        .map(|(name, list)| (name, serde_json::to_string_pretty(&list).unwrap()))
        .collect();
    let tools = format!(
        r#"[
        {{"name": "a", "title": 5, "annotations": {{"title": "  From \u0061nnotations "}}, "_meta": {marker}, "inputSchema": {schema}}},
        {{"n\u0061me": "escaped-key", "description": "Line one.\nTwo \u00e9", "_meta": {marker}, "inputSchema": {schema}, "outputSchema": null}},
        {{"name": "dup", "name": "dup-last", "title": "x", "title": null, "_meta": {marker}, "inputSchema": null}},
        {{"name": "meta-list", "_meta": [1, 2], "annotations": "no", "icons": {{"src": "data:image/png;base64,AA"}}}},
        {{"name": "meta-null", "_meta": null, "description": ["not", "text"], "inputSchema": 3}},
        {{"name": "icon", "_meta": {marker}, "icons": [{{"src": "data:image/png;base64,AA"}}, 7], "inputSchema": {schema}}},
        {{"name": "bad-marker", "_meta": {{"io.github.megane-labs/builder": [true]}}}},
        {{"name": 12}}, {{"title": "no name"}}, {{"name": ""}},
        {{"name": "nested", "tools": [{{"name": "inner"}}], "_meta": {{"x": {{"deep": [[[]]]}}}}}},
        42, null, "text", [1, {{"name": "in-array"}}], true, 1.5e300
    ]"#
    );
    texts.push(("tools".into(), tools.clone()));
    texts.push((
        "object".into(),
        format!(r#"{{"nextCursor": "c", "tools": {tools}}}"#),
    ));
    texts.push((
        "pages".into(),
        format!(r#"[{{"tools": {tools}}}, {{"tools": [{{"name": "p2"}}], "nextCursor": null}}]"#),
    ));
    texts.push((
        "dup-tools".into(),
        format!(r#"{{"tools": 1, "tools": {tools}}}"#),
    ));
    // Markers: more distinct texts than the reader remembers, each twice (in two rounds), the
    // same marker written with other spacing or escapes, one longer than the remembered texts.
    let long = "x".repeat(1100);
    let markers = [
        r#"{"contract": 1, "apply": "new_document"}"#.to_string(),
        r#"{"contract":1,"apply":"new_document"}"#.to_string(),
        r#"{"contract": 1, "appl\u0079": "insert", "category": "surface"}"#.to_string(),
        r#"{"contract": 2, "apply": "new_document"}"#.to_string(),
        r#"{"contract": 1, "apply": "explode"}"#.to_string(),
        r#"{"contract": 1, "apply": "insert", "stochastic": "yes"}"#.to_string(),
        r#"{"contract": 1, "apply": "insert", "stochastic": true, "document": "required"}"#
            .to_string(),
        r#"{"contract": 1, "apply": "insert", "expectedSeconds": 2.5, "apply": "new_document"}"#
            .to_string(),
        r#""not an object""#.to_string(),
        r#"{"contract": -1, "apply": "insert"}"#.to_string(),
        format!(r#"{{"contract": 1, "apply": "insert", "pad": "{long}"}}"#),
    ];
    let marked: Vec<String> = (0..2 * markers.len())
        .map(|i| {
            let m = &markers[i % markers.len()];
            format!(r#"{{"name": "m{i}", "_meta": {{"io.github.megane-labs/builder": {m}}}, "inputSchema": {schema}}}"#)
        })
        .collect();
    texts.push(("markers".into(), format!("[{}]", marked.join(","))));
    for (name, text) in [
        ("tools-not-list", r#"{"tools": {"name": "x"}}"#),
        ("no-tools", r#"{"result": []}"#),
        ("page-without-list", r#"[{"tools": []}, {"tools": null}]"#),
        (
            "not-pages",
            r#"[{"tools": [], "name": "x"}, {"tools": []}]"#,
        ),
        ("scalar", "7"),
        ("empty", "[]"),
    ] {
        texts.push((name.into(), text.into()));
    }
    for (name, text) in texts {
        let list: Value = serde_json::from_str(&text).unwrap();
        let by_value = parse_tool_list_with(&list, Some("s"), &mut SentSchemas);
        let mut seen = Vec::new();
        let by_text = parse_tool_list_text(&text, Some("s"), &mut SentSchemas, |d| {
            seen.push(d.name().map(str::to_string))
        })
        .expect("JSON");
        match (by_value, by_text) {
            (Ok((a, ea)), Ok((b, eb))) => {
                assert_eq!(a, b, "{name}");
                assert_eq!(ea.len(), eb.len(), "{name}");
                assert!(
                    ea.iter().zip(&eb).all(|(x, y)| match (x, y) {
                        (Some(x), Some(y)) => std::sync::Arc::ptr_eq(x, y),
                        (None, None) => true,
                        _ => false,
                    }),
                    "{name}"
                );
                assert!(!seen.is_empty() || a.names().next().is_none(), "{name}");
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{name}"),
            (a, b) => panic!("{name}: {:?} vs {:?}", a.err(), b.err()),
        }
    }
    assert!(
        parse_tool_list_text("{not json", None, &mut SentSchemas, |_| {}).is_none(),
        "not JSON"
    );
}

#[test]
fn a_schema_entry_is_found_again_by_its_serial() {
    use megane_builder_client::contract::validate::{schema_entry, schema_entry_by_serial};
    let a = schema_entry(
        &json!({"type": "object", "properties": {"n": {"type": "integer"}}, "$comment": "serial a"}),
    );
    let b = schema_entry(&json!({"$comment": "serial b", "type": "object"}));
    // Key order does not matter: the same canonical schema has the same entry and serial.
    let a2 = schema_entry(
        &json!({"$comment": "serial a", "properties": {"n": {"type": "integer"}}, "type": "object"}),
    );
    assert_eq!(a.serial(), a2.serial());
    assert_ne!(a.serial(), b.serial());
    assert_ne!(a.serial(), 0);
    let found = schema_entry_by_serial(a.serial()).expect("the entry is cached");
    assert!(std::sync::Arc::ptr_eq(&found, &a));
    assert!(schema_entry_by_serial(u64::MAX).is_none());
}
