//! Megane Builder's tool seam on the recorded megane fixtures (`tests/fixtures/megane-recorded`):
//! the listing and its fields, interpreting a raw call without a tool, the snapshot, residue
//! labels, insert ops, fragment ids and names (Builder's file-name rule on random UTF-16), the §6
//! line of a failed call, and Builder's words for one (a tool error's whole block).
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::contract::apply::{
    insert_ops, new_fragment_id, plan_apply, plan_apply_as, residue_labels, sanitise_file_name,
    structure_snapshot, ApplyPlan, EditOp,
};
use megane_builder_client::contract::discovery::parse_tool_list;
use megane_builder_client::contract::form::build_form;
use megane_builder_client::contract::marker::{Apply, Category, DocumentUse, Marker};
use megane_builder_client::contract::result::{
    failure_kind, interpret_unmarked_value, BARE_TOOL_ERROR,
};
use megane_builder_client::contract::seam::{
    builder_failure, tool_listing, FieldKind, FieldSpec, ToolListing,
};
use megane_builder_client::contract::structure::Structure;
use megane_builder_client::mcp::errors::McpError;
use serde_json::{json, Value};

const RECORDED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/megane-recorded"
);

fn recorded(file: &str) -> Value {
    let path = format!("{RECORDED}/{file}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn listing_of(tools: &Value) -> ToolListing {
    tool_listing(&parse_tool_list(tools, None).unwrap())
}

fn field<'a>(fields: &'a [FieldSpec], key: &str) -> &'a FieldSpec {
    fields
        .iter()
        .find(|f| f.key == key)
        .unwrap_or_else(|| panic!("no field {key}"))
}

#[test]
fn the_recorded_tools_become_builders_listing() {
    let listing = listing_of(&recorded("tools-list.json"));
    let names: Vec<&str> = listing.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["liquid_box", "polymer_chain", "solvate"]);
    assert!(listing.unsupported.is_empty());
    let liquid = &listing.tools[0];
    assert_eq!(liquid.label, "Liquid box");
    assert_eq!(
        liquid.tooltip,
        "Fill a periodic box with molecules at a target density using packmol."
    );
    assert_eq!(
        (liquid.category, liquid.apply, liquid.document),
        (Category::Bulk, Apply::NewDocument, DocumentUse::None)
    );
    assert!(liquid.stochastic);
    assert_eq!(liquid.expected_seconds, Some(20.0));
    assert_eq!(liquid.form_error, None);
    let fields = liquid.fields.as_ref().unwrap();
    let density = field(fields, "density");
    assert_eq!(
        density.kind,
        FieldKind::Number {
            integer: false,
            min: Some(0.0),
            max: Some(5.0),
            exclusive_min: true,
            exclusive_max: false,
            unit: Some("g/cm3".into()),
        }
    );
    assert_eq!(density.default, Some(json!(1.0)));
    assert_eq!(density.example, None);
    assert_eq!(
        field(fields, "shape").kind,
        FieldKind::Enum {
            options: vec!["cubic".into(), "orthorhombic".into()]
        }
    );
    assert_eq!(
        field(fields, "aspect").kind,
        FieldKind::Vector {
            length: 3,
            integer: false,
            unit: None
        }
    );
    let seed = field(fields, "seed");
    assert!(seed.required);
    assert_eq!(
        seed.help.as_deref(),
        Some("Random seed; the same seed gives the same result.")
    );
    assert!(
        matches!(&seed.kind, FieldKind::Widget { widget, of: None, unit: None } if serde_json::to_value(widget).unwrap() == "seed")
    );
    let FieldKind::Table {
        columns,
        min_items,
        max_items,
    } = &field(fields, "components").kind
    else {
        panic!("components is a table");
    };
    assert_eq!((*min_items, *max_items), (1, Some(8)));
    let molecule = field(columns, "molecule");
    // `{"$ref": "#/$defs/Molecule", "x-megane-widget": …}`: the Molecule model's description is
    // about the type, not this field.
    assert_eq!(molecule.help, None);
    let count = field(columns, "count");
    assert_eq!(count.example, Some(json!(100)));
    assert!(
        matches!(&count.kind, FieldKind::Number { integer: true, min: Some(m), max: Some(x), unit: Some(u), .. } if *m == 1.0 && *x == 500000.0 && u == "count")
    );

    let polymer = &listing.tools[1];
    let head = field(polymer.fields.as_ref().unwrap(), "head");
    let as_json = serde_json::to_value(head).unwrap();
    assert_eq!(
        as_json,
        json!({"key": "head", "label": "Head atom", "help": null, "required": true, "example": 0,
               "kind": "widget", "widget": "atom", "of": "monomer", "unit": null})
    );
    let solvate = &listing.tools[2];
    let document = field(solvate.fields.as_ref().unwrap(), "document");
    assert_eq!(document.help, None);
    assert_eq!(solvate.apply, Apply::Insert);
}

#[test]
fn the_core_form_gives_a_ref_only_property_no_help_too() {
    let tools = recorded("tools-list.json");
    let solvate = &tools["tools"][2];
    let form = build_form(&solvate["inputSchema"]).unwrap();
    let solvent = form.fields.iter().find(|f| f.key == "solvent").unwrap();
    assert_eq!(solvent.help, None);
    // A $ref with a description of its own keeps that one.
    let schema = json!({"type": "object", "$defs": {"M": {"type": "string", "description": "the type"}},
        "properties": {"a": {"$ref": "#/$defs/M", "description": "the field"}, "b": {"$ref": "#/$defs/M"},
                       "c": {"type": "string", "description": "plain"}}});
    let form = build_form(&schema).unwrap();
    let help: Vec<Option<&str>> = form.fields.iter().map(|f| f.help.as_deref()).collect();
    assert_eq!(help, [Some("the field"), None, Some("plain")]);
}

#[test]
fn unmarked_and_unsupported_tools_are_sorted_out() {
    let mut tools = recorded("tools-list.json")["tools"].clone();
    let list = tools.as_array_mut().unwrap();
    let mut plain = list[0].clone();
    plain["name"] = json!("plain_tool");
    plain.as_object_mut().unwrap().remove("_meta");
    let mut future = list[0].clone();
    future["name"] = json!("future_box");
    future["_meta"]["io.github.megane-labs/builder"]["contract"] = json!(2);
    let mut odd = list[0].clone();
    odd["name"] = json!("replace_tool");
    odd["_meta"]["io.github.megane-labs/builder"]["apply"] = json!("replace");
    let mut formless = list[1].clone();
    formless["name"] = json!("formless");
    formless["inputSchema"]["properties"]["length"] = json!({"oneOf": [{"type": "integer"}]});
    list.extend([plain, future, odd, formless]);
    let listing = listing_of(&tools);
    let names: Vec<&str> = listing.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["liquid_box", "polymer_chain", "solvate", "formless"]
    );
    assert_eq!(listing.unsupported, ["future_box", "replace_tool"]);
    let formless = &listing.tools[3];
    assert_eq!(formless.fields, None);
    let error = formless.form_error.as_deref().unwrap();
    assert!(
        error.contains("length") && error.contains("oneOf"),
        "{error}"
    );
    assert!(!error.starts_with("Builder cannot build a form"), "{error}");
}

#[test]
fn a_raw_liquid_box_call_is_interpreted_without_a_tool() {
    let call = recorded("call-liquid_box.json");
    let done = interpret_unmarked_value(&call["result"]).unwrap();
    assert_eq!(done.result.structure.n_atoms(), 300);
    let cell = done.result.structure.cell.unwrap();
    assert!((cell[0] - 14.4088).abs() < 1e-4 && cell[4] == cell[0] && cell[8] == cell[0]);
    assert!(
        done.summary.starts_with("Liquid box: 100 water"),
        "{}",
        done.summary
    );
    // A JSON-RPC envelope too.
    let envelope = json!({"jsonrpc": "2.0", "id": 7, "result": call["result"]});
    assert_eq!(
        interpret_unmarked_value(&envelope)
            .unwrap()
            .result
            .structure
            .n_atoms(),
        300
    );
    let snapshot = structure_snapshot(&done.result.structure, &done.result.name).unwrap();
    assert_eq!((snapshot.n_atoms, snapshot.n_bonds), (300, 200));
    assert_eq!(snapshot.box_.unwrap()[0], cell[0] as f32);
    assert_eq!(snapshot.bond_orders, None);
    let labels = residue_labels(&done.result.structure).unwrap().to_vec();
    assert_eq!(&labels[..4], ["WATE1", "WATE1", "WATE1", "WATE2"]);
    assert_eq!(labels.len(), 300);
}

#[test]
fn raw_errors_are_one_line_as_builder_shows_them() {
    let bare = json!({"isError": true, "content": []});
    assert_eq!(
        interpret_unmarked_value(&bare).unwrap_err(),
        BARE_TOOL_ERROR
    );
    assert_eq!(BARE_TOOL_ERROR, "The tool reported an error.");
    let sdk = json!({"isError": true, "content": [{"type": "text", "text": "Error executing tool liquid_box: packmol did not converge\nmore"}]});
    assert_eq!(
        interpret_unmarked_value(&sdk).unwrap_err(),
        "packmol did not converge"
    );
    let rpc =
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "boom\nstack"}});
    assert_eq!(
        interpret_unmarked_value(&rpc).unwrap_err(),
        "The server failed: boom"
    );
    let mut future = recorded("call-liquid_box.json")["result"].clone();
    future["structuredContent"]["contract"] = json!(2);
    let err = interpret_unmarked_value(&future).unwrap_err();
    assert!(err.starts_with("contract:") && err.contains('2'), "{err}");
    let broken = json!({"structuredContent": {"contract": 1, "name": "x", "structure": {"elements": [0], "positions": [0, 0, 0], "cell": null, "bonds": []}}});
    let err = interpret_unmarked_value(&broken).unwrap_err();
    assert!(err.starts_with("structure.elements"), "{err}");
    // The marker-bound path says the same for a bare tool error.
    let marker = Marker {
        contract: 1,
        category: Category::Bulk,
        apply: Apply::NewDocument,
        document: DocumentUse::None,
        stochastic: false,
        expected_seconds: None,
    };
    let err = megane_builder_client::contract::result::interpret_call_value("x", &marker, &bare)
        .unwrap_err();
    assert_eq!(err, BARE_TOOL_ERROR);
}

fn solvate() -> (Structure, Structure) {
    let call = recorded("call-solvate.json");
    let done = interpret_unmarked_value(&call["result"]).unwrap();
    let document: Structure =
        serde_json::from_value(call["arguments"]["document"].clone()).unwrap();
    (done.result.into_inner().structure, document)
}

#[test]
fn solvate_becomes_one_add_fragment_of_798_atoms() {
    let (added, document) = solvate();
    let ops = insert_ops(&added, "water-solvent", document.cell.as_ref());
    assert_eq!(ops.len(), 1, "same cell: no set_cell");
    let EditOp::AddFragment {
        id,
        elements,
        positions,
        bonds,
        bond_orders,
    } = &ops[0]
    else {
        panic!("add_fragment expected");
    };
    assert_eq!(
        (id.as_str(), elements.len(), positions.len()),
        ("water-solvent", 798, 2394)
    );
    assert_eq!(bonds.len(), 532);
    assert_eq!(*bond_orders, None, "the result gives no orders");
    // Against a document without a cell: set_cell first, without scaling.
    let ops = insert_ops(&added, "w", None);
    assert_eq!(
        serde_json::to_value(&ops[0]).unwrap(),
        json!({"op": "set_cell", "box": [20.0, 0.0, 0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 20.0], "scaleAtoms": false})
    );
    // A Float32 copy of the same cell (Builder's snapshot.box) is the same cell.
    let f32_cell = document.cell.unwrap().map(|v| v as f32 as f64);
    assert_eq!(insert_ops(&added, "w", Some(&f32_cell)).len(), 1);
}

#[test]
fn bond_orders_are_kept_whenever_present() {
    let structure: Structure = serde_json::from_value(json!({
        "elements": [8, 1, 1], "positions": [0, 0, 0, 0.96, 0, 0, -0.24, 0.93, 0],
        "cell": null, "bonds": [[0, 1], [0, 2]], "bondOrders": [1, 1]
    }))
    .unwrap();
    let ops = insert_ops(&structure, "water", None);
    let op = serde_json::to_value(&ops[0]).unwrap();
    assert_eq!(op["bondOrders"], json!([1, 1]));
    assert_eq!(ops.len(), 1, "no cell: no set_cell");
}

#[test]
fn plan_apply_takes_a_chosen_fragment_id() {
    let call = recorded("call-solvate.json");
    let (_, document) = solvate();
    let marker = Marker {
        contract: 1,
        category: Category::Solvation,
        apply: Apply::Insert,
        document: DocumentUse::Required,
        stochastic: true,
        expected_seconds: Some(30.0),
    };
    let done = interpret_unmarked_value(&call["result"]).unwrap();
    let taken = vec!["water-solvent".to_string()];
    let plan = plan_apply_as(
        &marker,
        &done.result,
        Some(&document),
        &taken,
        Some("solvent-7"),
    )
    .unwrap();
    let ApplyPlan::Insert(insert) = plan else {
        panic!("insert expected")
    };
    assert!(matches!(&insert.ops[0], EditOp::AddFragment { id, .. } if id == "solvent-7"));
    let err = plan_apply_as(
        &marker,
        &done.result,
        Some(&document),
        &taken,
        Some("water-solvent"),
    )
    .unwrap_err();
    assert!(err.starts_with("fragmentId:"), "{err}");
    assert!(plan_apply_as(&marker, &done.result, Some(&document), &taken, Some(" ")).is_err());
    // Without a choice, the id is fresh as before.
    let ApplyPlan::Insert(insert) =
        plan_apply(&marker, &done.result, Some(&document), &taken).unwrap()
    else {
        panic!("insert expected")
    };
    assert!(matches!(&insert.ops[0], EditOp::AddFragment { id, .. } if id == "water-solvent-2"));
}

#[test]
fn names_and_fragment_ids() {
    assert_eq!(new_fragment_id("water-solvent", &[]), "water-solvent");
    let taken = vec!["water-solvent".to_string(), "water-solvent-2".to_string()];
    assert_eq!(new_fragment_id("Water Solvent", &taken), "water-solvent-3");
    assert_eq!(new_fragment_id("***", &[]), "result");
    assert_eq!(sanitise_file_name("water-ethanol"), "water-ethanol");
    assert_eq!(sanitise_file_name("water / ethanol"), "water-ethanol");
    assert_eq!(sanitise_file_name("a b/../c"), "a-b-..-c");
    assert_eq!(sanitise_file_name("  "), "result");
}

/// Builder's file-name rule, `(s.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") ||
/// "result").slice(0, 64)`, as JavaScript runs it: on UTF-16 code units.
fn builders_file_name(units: &[u16]) -> String {
    let allowed = |u: u16| {
        u < 0x80
            && (u8::try_from(u).unwrap().is_ascii_alphanumeric() || b"._-".contains(&(u as u8)))
    };
    let mut replaced: Vec<u16> = Vec::new();
    let mut run = false;
    for &u in units {
        if allowed(u) {
            replaced.push(u);
            run = false;
        } else if !run {
            replaced.push(u16::from(b'-'));
            run = true;
        }
    }
    let dash = u16::from(b'-');
    let start = replaced
        .iter()
        .position(|&u| u != dash)
        .unwrap_or(replaced.len());
    let end = replaced
        .iter()
        .rposition(|&u| u != dash)
        .map_or(start, |i| i + 1);
    let trimmed = &replaced[start..end.max(start)];
    let named: Vec<u16> = if trimmed.is_empty() {
        "result".encode_utf16().collect()
    } else {
        trimmed.to_vec()
    };
    String::from_utf16(&named[..named.len().min(64)]).unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// Random UTF-16 (ASCII, BMP, astral pairs, lone surrogates): the core's rule on the string
    /// wasm-bindgen hands it (lone surrogates as U+FFFD) is Builder's rule on the code units, and
    /// a new document's file name is the same.
    #[test]
    fn file_names_are_builders_on_any_utf16(units in proptest::collection::vec(
        proptest::prop_oneof![
            4 => proptest::sample::select(b"aZ09._- /*-".iter().map(|&b| u16::from(b)).collect::<Vec<_>>()),
            1 => 0u16..0x80,
            1 => 0x80u16..0xD800,
            1 => 0xD800u16..0xE000,
            1 => 0xE000u16..=0xFFFF,
        ],
        0..150,
    )) {
        let name = String::from_utf16_lossy(&units);
        let expected = builders_file_name(&units);
        proptest::prop_assert_eq!(sanitise_file_name(&name), expected.clone());
        let water: Structure = serde_json::from_value(json!({
            "elements": [8], "positions": [0, 0, 0], "cell": null, "bonds": []
        })).unwrap();
        proptest::prop_assert_eq!(structure_snapshot(&water, &name).unwrap().file_name, expected);
    }
}

#[test]
fn file_names_at_the_edges_of_builders_rule() {
    let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    for name in [
        "",
        "---",
        "a-/b",
        "\u{1F9EA} tube \u{1F9EA}",
        "café/thé",
        "..",
        &format!("{}\u{1F9EA}{}", "a".repeat(63), "b".repeat(10)),
        &format!("-{}", "x".repeat(70)),
    ] {
        assert_eq!(
            sanitise_file_name(name),
            builders_file_name(&units(name)),
            "{name:?}"
        );
    }
    // A lone surrogate, as wasm-bindgen hands it over.
    let lone = [u16::from(b'a'), 0xD800, u16::from(b'b')];
    assert_eq!(sanitise_file_name(&String::from_utf16_lossy(&lone)), "a-b");
    assert_eq!(builders_file_name(&lone), "a-b");
}

/// Builder's `interpretCall(raw)` error for a raw result, through the core's one line and the
/// kind of the response (what the `megane` entry does).
fn builders_error(raw: &Value) -> String {
    let line = interpret_unmarked_value(raw).unwrap_err();
    builder_failure(failure_kind(&serde_json::to_vec(raw).unwrap(), None), &line)
}

#[test]
fn builder_words_a_failed_call_as_its_own_interpret_call_does() {
    // Builder's own test: `{structuredContent: {contract: 1}}`.
    assert_eq!(
        builders_error(&json!({"structuredContent": {"contract": 1}})),
        "The tool returned an invalid result: structure is missing"
    );
    assert_eq!(
        builders_error(&json!({"isError": true, "content": [{"type": "text", "text": " nope "}]})),
        "nope"
    );
    assert_eq!(builders_error(&json!({"isError": true})), BARE_TOOL_ERROR);
    // The first text block counts, even when blank (Builder: `firstText` is then null).
    let blank = json!({"isError": true, "content": [{"type": "image", "data": "x"}, {"type": "text", "text": "  "}, {"type": "text", "text": "later"}]});
    assert_eq!(builders_error(&blank), BARE_TOOL_ERROR);
    let broken = json!({"structuredContent": {"contract": 1, "name": "x", "structure": {"elements": [0], "positions": [0, 0, 0], "cell": null, "bonds": []}}});
    assert_eq!(
        builders_error(&broken),
        "The tool returned an invalid result: structure.elements[0]: 0 is not an atomic number (1–118)"
    );
    let no_result = json!({"content": [{"type": "text", "text": "done"}]});
    assert_eq!(
        builders_error(&no_result),
        "The tool returned an invalid result: structuredContent is missing; the tool returned no BuilderResult"
    );
    // JSON-RPC failures stay the core's one line, without the traceback.
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "internal error\nTraceback (most recent call last):\n  File \"x.py\""}});
    assert_eq!(builders_error(&rpc), "The server failed: internal error");
}

#[test]
fn a_tool_error_is_its_whole_first_block_sanitised_and_bounded() {
    let error = |text: &str| {
        builders_error(&json!({"isError": true, "content": [{"type": "text", "text": text}]}))
    };
    // pydantic's validation error (FastMCP behind mcp-proxy): header, field, reason.
    let pydantic = "Error executing tool calculate_ph: 1 validation error for calculate_phArguments\nph\n  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='seven', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.11/v/float_parsing\n";
    assert_eq!(
        error(pydantic),
        "1 validation error for calculate_phArguments\nph\n  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='seven', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.11/v/float_parsing"
    );
    // The core API keeps its one line.
    let raw = json!({"isError": true, "content": [{"type": "text", "text": pydantic}]});
    assert_eq!(
        interpret_unmarked_value(&raw).unwrap_err(),
        "1 validation error for calculate_phArguments"
    );
    // HTML is text (shown as text, never markup), its lines kept, bounded.
    let html = format!(
        "<html>\r\n<body>\r\n<h1>502 Bad Gateway</h1>\r\n{}</body></html>",
        "<p>x</p>\n".repeat(40)
    );
    let shown = error(&html);
    assert!(
        shown.starts_with("<html>\n<body>\n<h1>502 Bad Gateway</h1>\n<p>x</p>"),
        "{shown}"
    );
    assert_eq!(shown.lines().count(), 20);
    assert!(shown.ends_with('…'));
    // Controls and direction overrides out, line breaks kept as \n, a tab as a space.
    assert_eq!(
        error("\u{1b}[31mred\u{1b}[0m\u{7}\r\n\u{202E}gnp.exe\u{2028}next\tcol\u{0}"),
        "[31mred[0m\ngnp.exe\nnext col"
    );
    let long = error(&"é".repeat(3000));
    assert_eq!(long.chars().count(), 2000);
    // Only the first text block.
    let two = json!({"isError": true, "content": [{"type": "text", "text": "first\nblock"}, {"type": "text", "text": "second"}]});
    assert_eq!(builders_error(&two), "first\nblock");
}

#[test]
fn a_failed_call_is_one_section_6_line() {
    assert_eq!(McpError::Cancelled.call_error_line(), "Cancelled.");
    assert_eq!(
        McpError::server("internal error").call_error_line(),
        "The server failed: internal error"
    );
    let network = McpError::Network {
        url: "http://127.0.0.1:9/mcp".into(),
        detail: "Failed to fetch".into(),
        origin: None,
    }
    .call_error_line();
    assert!(
        network.starts_with("The server failed: Could not reach"),
        "{network}"
    );
    assert!(!network.contains('\n'));
    // A URL is shown without its fragment (nor query or user info), where a secret may hide.
    let shown = McpError::Network {
        url: "http://127.0.0.1:9/mcp#token=s3cret".into(),
        detail: String::new(),
        origin: None,
    }
    .to_string();
    assert_eq!(
        shown,
        "Could not reach http://127.0.0.1:9/mcp: is the server running?"
    );
    let timeout = McpError::Timeout { seconds: 60 }.call_error_line();
    assert!(
        timeout.contains("timeout") && !timeout.starts_with("The server failed"),
        "{timeout}"
    );
}
