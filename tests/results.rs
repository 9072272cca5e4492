//! §5/§5.2/§6/§7 on every recorded `tools/call` result: the megane fixtures, the reference
//! server's make-fixtures output and the tools/call responses of its HTTP recordings.
#![cfg(not(target_arch = "wasm32"))]
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use megane_builder_client::contract::apply::{plan_apply, ApplyPlan, EditOp};
use megane_builder_client::contract::marker::{Apply, Category, DocumentUse, Marker};
use megane_builder_client::contract::provenance::{provenance_record, ServerIdentity};
use megane_builder_client::contract::result::{
    interpret_call_bytes, interpret_call_value, Interpreted, ResultLimits, BUILDER_RESULT_SCHEMA,
};
use megane_builder_client::contract::structure::Structure;
use serde_json::{json, Value};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn files(dir: &str, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(Path::new(FIXTURES).join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.starts_with(prefix) && name.ends_with(".json")
        })
        .collect();
    out.sort();
    out
}

/// The markers of the reference tools (from tools-list.json).
fn marker_for(tool: &str) -> Marker {
    let (category, apply, document) = match tool {
        "solvate" => (Category::Solvation, Apply::Insert, DocumentUse::Required),
        "polymer_chain" => (Category::Polymer, Apply::NewDocument, DocumentUse::None),
        _ => (Category::Bulk, Apply::NewDocument, DocumentUse::None),
    };
    Marker {
        contract: 1,
        category,
        apply,
        document,
        stochastic: true,
        expected_seconds: Some(20.0),
    }
}

/// A recorded call: tool name, arguments, raw response (bare result or JSON-RPC message).
struct Call {
    source: String,
    tool: String,
    arguments: Value,
    response: Value,
}

fn recorded_calls() -> Vec<Call> {
    let mut calls = Vec::new();
    for dir in ["megane-recorded", "reference-server/make-fixtures"] {
        for path in files(dir, "call-") {
            let v = read_json(&path);
            calls.push(Call {
                source: path.display().to_string(),
                tool: v["name"].as_str().unwrap().to_string(),
                arguments: v["arguments"].clone(),
                response: v["result"].clone(),
            });
        }
    }
    let server_dir = Path::new(FIXTURES).join("reference-server");
    let mut http_dirs: Vec<PathBuf> = std::fs::read_dir(&server_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("http-")
        })
        .collect();
    http_dirs.sort();
    for dir in http_dirs {
        let rel = dir
            .strip_prefix(FIXTURES)
            .unwrap()
            .to_string_lossy()
            .to_string();
        for path in files(&rel, "") {
            let v = read_json(&path);
            let body = &v["request"]["body"];
            if body["method"] != "tools/call" {
                continue;
            }
            let Some(last) = v["messages"].as_array().and_then(|m| m.last()) else {
                continue;
            };
            calls.push(Call {
                source: path.display().to_string(),
                tool: body["params"]["name"].as_str().unwrap().to_string(),
                arguments: body["params"]["arguments"].clone(),
                response: last.clone(),
            });
        }
    }
    calls
}

fn interpret(call: &Call) -> Result<Interpreted, String> {
    let bytes = serde_json::to_vec(&call.response).unwrap();
    interpret_call_bytes(
        &call.tool,
        &marker_for(&call.tool),
        &bytes,
        &ResultLimits::default(),
    )
}

/// What the fixture says the outcome must be: `Ok(())` or the error line.
fn expected_outcome(call: &Call) -> Result<(), String> {
    let r = &call.response;
    if let Some(message) = r["error"]["message"].as_str() {
        return Err(format!("The server failed: {message}"));
    }
    let result = if r.get("result").is_some() {
        &r["result"]
    } else {
        r
    };
    if result["isError"] == json!(true) {
        let text = result["content"][0]["text"].as_str().unwrap();
        let first = text.lines().next().unwrap();
        let prefix = format!("Error executing tool {}: ", call.tool);
        return Err(first.strip_prefix(&prefix).unwrap_or(first).to_string());
    }
    Ok(())
}

#[test]
fn every_recorded_call_interprets_as_recorded() {
    let calls = recorded_calls();
    assert!(
        calls.len() >= 17,
        "found only {} recorded calls",
        calls.len()
    );
    let mut errors = 0;
    for call in &calls {
        let outcome = interpret(call);
        match (expected_outcome(call), outcome) {
            (Ok(()), Ok(done)) => {
                let structured = structured_content(&call.response);
                let n = structured["structure"]["elements"]
                    .as_array()
                    .unwrap()
                    .len();
                assert_eq!(done.result.structure.n_atoms(), n, "{}", call.source);
                assert_eq!(done.result.name, structured["name"].as_str().unwrap());
                let text = result_of(&call.response)["content"][0]["text"]
                    .as_str()
                    .unwrap();
                assert_eq!(done.summary, text, "{}", call.source);
            }
            (Err(want), Err(got)) => {
                errors += 1;
                assert_eq!(got, want, "{}", call.source);
                assert!(!got.contains('\n'));
            }
            (want, got) => panic!(
                "{}: expected {want:?}, got {:?}",
                call.source,
                got.map(|_| ())
            ),
        }
    }
    assert!(
        errors >= 7,
        "expected the recorded tool errors, saw {errors}"
    );
}

fn result_of(response: &Value) -> &Value {
    if response.get("result").is_some() {
        &response["result"]
    } else {
        response
    }
}

fn structured_content(response: &Value) -> &Value {
    &result_of(response)["structuredContent"]
}

fn megane_call(tool: &str) -> Call {
    let path = Path::new(FIXTURES).join(format!("megane-recorded/call-{tool}.json"));
    let v = read_json(&path);
    Call {
        source: path.display().to_string(),
        tool: tool.to_string(),
        arguments: v["arguments"].clone(),
        response: v["result"].clone(),
    }
}

#[test]
fn liquid_box_becomes_a_new_document_of_300_atoms_in_a_14_4088_cube() {
    let call = megane_call("liquid_box");
    let done = interpret(&call).unwrap();
    let plan = plan_apply(&marker_for("liquid_box"), &done.result, None, &[]).unwrap();
    let ApplyPlan::NewDocument(snapshot) = plan else {
        panic!("expected a new document");
    };
    assert_eq!(snapshot.n_atoms, 300);
    assert_eq!(snapshot.positions.len(), 900);
    assert_eq!(snapshot.n_bonds, 200);
    assert_eq!(snapshot.bonds.len(), 400);
    let cell = snapshot.box_.unwrap();
    for (i, v) in cell.iter().enumerate() {
        let want = if i % 4 == 0 { 14.4088 } else { 0.0 };
        assert!((f64::from(*v) - want).abs() < 1e-4, "box[{i}] = {v}");
    }
    assert_eq!(snapshot.file_name, "water");
    let labels = snapshot.labels.unwrap();
    assert_eq!(labels[0], "WATE1");
    assert_eq!(labels[299], "WATE100");
    assert_eq!(snapshot.molecules.as_ref().unwrap()[299], 99);
    assert_eq!(snapshot.elements[..3], [8, 1, 1]);
    // The columns Megane takes as they are are the result's own, not copies (issue 10).
    let s = &done.result.structure;
    assert_eq!(snapshot.elements.as_ptr(), s.elements.as_ptr());
    assert_eq!(snapshot.bonds.as_ptr(), s.bonds.as_ptr().cast::<u32>());
    let molecules = snapshot.molecules.as_deref().unwrap();
    assert_eq!(molecules.as_ptr(), s.molecules.as_deref().unwrap().as_ptr());
    let ids = snapshot.residue_ids.as_deref().unwrap();
    assert_eq!(ids.as_ptr(), s.residue_ids.as_deref().unwrap().as_ptr());
}

fn solvate_document(call: &Call) -> Structure {
    serde_json::from_value(call.arguments["document"].clone()).unwrap()
}

#[test]
fn solvate_becomes_one_add_fragment_of_798_atoms_without_set_cell() {
    let call = megane_call("solvate");
    let done = interpret(&call).unwrap();
    let document = solvate_document(&call);
    assert_eq!(document.cell.unwrap()[0], 20.0);
    let plan = plan_apply(&marker_for("solvate"), &done.result, Some(&document), &[]).unwrap();
    let ApplyPlan::Insert(insert) = plan else {
        panic!("expected an insert");
    };
    assert_eq!(insert.ops.len(), 1);
    let EditOp::AddFragment {
        id,
        elements,
        positions,
        bonds,
        bond_orders,
    } = &insert.ops[0]
    else {
        panic!("expected add_fragment");
    };
    assert_eq!(id, "water-solvent");
    assert_eq!(elements.len(), 798);
    assert_eq!(positions.len(), 3 * 798);
    assert_eq!(bonds.len(), 532);
    assert_eq!(*bond_orders, None);
    assert_eq!(insert.select, (3..801).collect::<Vec<u32>>());
    // Absolute positions, exactly as sent.
    let sent = &structured_content(&call.response)["structure"]["positions"];
    assert_eq!(positions[0], sent[0].as_f64().unwrap());
    assert_eq!(positions[2393], sent[2393].as_f64().unwrap());
    let op = serde_json::to_value(&insert.ops[0]).unwrap();
    let keys: Vec<&str> = op.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["op", "id", "elements", "positions", "bonds"]);
    assert_eq!(op["op"], "add_fragment");
    assert_eq!(op["bonds"][0], json!([0, 1]));
}

#[test]
fn solvate_pushes_set_cell_first_against_a_document_without_a_cell() {
    let call = megane_call("solvate");
    let done = interpret(&call).unwrap();
    let mut document = solvate_document(&call);
    document.cell = None;
    let taken = vec!["water-solvent".to_string()];
    let ApplyPlan::Insert(insert) = plan_apply(
        &marker_for("solvate"),
        &done.result,
        Some(&document),
        &taken,
    )
    .unwrap() else {
        panic!("expected an insert");
    };
    assert_eq!(insert.ops.len(), 2);
    let first = serde_json::to_value(&insert.ops[0]).unwrap();
    assert_eq!(
        first,
        json!({"op": "set_cell", "box": [20.0, 0.0, 0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 20.0], "scaleAtoms": false})
    );
    let second = serde_json::to_value(&insert.ops[1]).unwrap();
    assert_eq!(second["op"], "add_fragment");
    assert_eq!(second["id"], "water-solvent-2");
}

#[test]
fn a_cell_differing_by_more_than_1e_4_pushes_set_cell() {
    let call = megane_call("solvate");
    let done = interpret(&call).unwrap();
    let mut document = solvate_document(&call);
    let mut cell = document.cell.unwrap();
    cell[8] = 20.00009;
    document.cell = Some(cell);
    let plan = plan_apply(&marker_for("solvate"), &done.result, Some(&document), &[]).unwrap();
    assert!(matches!(&plan, ApplyPlan::Insert(p) if p.ops.len() == 1));
    cell[8] = 20.0002;
    document.cell = Some(cell);
    let plan = plan_apply(&marker_for("solvate"), &done.result, Some(&document), &[]).unwrap();
    assert!(matches!(&plan, ApplyPlan::Insert(p) if p.ops.len() == 2));
}

#[test]
fn insert_without_a_document_is_refused() {
    let call = megane_call("solvate");
    let done = interpret(&call).unwrap();
    let err = plan_apply(&marker_for("solvate"), &done.result, None, &[]).unwrap_err();
    assert!(err.starts_with("Open a document first: "), "{err}");
}

#[test]
fn an_insert_that_repeats_the_document_is_refused_with_minimum_image() {
    let call = megane_call("solvate");
    let done = interpret(&call).unwrap();
    let marker = marker_for("solvate");
    // The result itself as the document: every atom repeats.
    let same = done.result.structure.clone();
    let err = plan_apply(&marker, &done.result, Some(&same), &[]).unwrap_err();
    assert!(
        err.starts_with("structure.positions: atom 0 is within 0.1 Å"),
        "{err}"
    );
    // One atom shifted by a whole cell vector: still the same atom in the periodic cell.
    let mut shifted = done.result.structure.clone();
    let keep = 3 * 5;
    shifted.elements.truncate(5);
    shifted.positions.truncate(keep);
    shifted.positions[12] += 20.0;
    shifted.bonds.clear();
    shifted.molecules = None;
    shifted.residue_names = None;
    shifted.residue_ids = None;
    shifted.elements.drain(..4);
    shifted.positions.drain(..12);
    let err = plan_apply(&marker, &done.result, Some(&shifted), &[]).unwrap_err();
    assert!(err.contains("within 0.1 Å of document atom 0"), "{err}");
    // Without a cell the shifted atom is 20 Å away: accepted.
    shifted.cell = None;
    assert!(plan_apply(&marker, &done.result, Some(&shifted), &[]).is_ok());
}

#[test]
fn reference_server_solvate_inserts_against_its_methane_document() {
    let path =
        Path::new(FIXTURES).join("reference-server/http-stateful/09-call-solvate-methane-12A.json");
    let v = read_json(&path);
    let response = v["messages"].as_array().unwrap().last().unwrap().clone();
    let done = interpret_call_value("solvate", &marker_for("solvate"), &response).unwrap();
    let document: Structure =
        serde_json::from_value(v["request"]["body"]["params"]["arguments"]["document"].clone())
            .unwrap();
    let ApplyPlan::Insert(insert) =
        plan_apply(&marker_for("solvate"), &done.result, Some(&document), &[]).unwrap()
    else {
        panic!("expected an insert");
    };
    assert_eq!(insert.select.first(), Some(&5));
    assert_eq!(insert.select.len(), 168);
}

#[test]
fn json_text_instead_of_structured_content_is_read() {
    let call = megane_call("polymer_chain");
    let structured = structured_content(&call.response).clone();
    let response =
        json!({"content": [{"type": "text", "text": structured.to_string()}], "isError": false});
    let done =
        interpret_call_value("polymer_chain", &marker_for("polymer_chain"), &response).unwrap();
    assert_eq!(done.result.structure.n_atoms(), 62);
    assert_eq!(done.result.structure.cell, None);
    let plain = json!({"content": [{"type": "text", "text": "Built it."}], "isError": false});
    let err =
        interpret_call_value("polymer_chain", &marker_for("polymer_chain"), &plain).unwrap_err();
    assert!(err.starts_with("structuredContent: missing"), "{err}");
}

#[test]
fn provenance_record_of_the_solvate_call_hashes_the_document() {
    let call = megane_call("solvate");
    let done = interpret(&call).unwrap();
    let server = ServerIdentity {
        id: "megane-builder-tools".into(),
        name: "megane-builder-tools".into(),
        version: "0.1.0".into(),
        url: None,
    };
    let record = provenance_record(
        &server,
        "solvate",
        &call.arguments,
        Some("document"),
        &done.result,
        798,
    );
    assert_eq!(record.arguments["document"]["atoms"], 3);
    assert_eq!(
        record.arguments["document"]["sha256"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    assert_eq!(record.arguments["seed"], 1);
    assert_eq!(record.provenance["packmol"], "21.2.3");
    let text = serde_json::to_string(&record).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["atoms"],
        798
    );
}

#[test]
fn schema_and_typed_validator_accept_every_recorded_result() {
    let schema: Value = serde_json::from_str(BUILDER_RESULT_SCHEMA).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let mut checked = 0;
    for call in recorded_calls() {
        let structured = structured_content(&call.response);
        if structured.is_null() {
            continue;
        }
        assert!(validator.is_valid(structured), "{}", call.source);
        assert!(interpret(&call).is_ok(), "{}", call.source);
        checked += 1;
    }
    assert!(checked >= 10, "{checked}");
}

/// §10: only the tool's own refusal (`isError`) or the server's JSON-RPC -32602 is a refusal of
/// the arguments; other errors and unparseable bodies are not.
#[test]
fn a_refusal_is_the_tools_is_error_or_invalid_params_only() {
    use megane_builder_client::contract::result::{is_refusal_bytes, is_refusal_from};
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/megane-recorded/call-liquid_box.json"
        ))
        .unwrap(),
    )
    .unwrap();
    assert!(
        !is_refusal_from(&recorded["result"]),
        "a result is no refusal"
    );
    let refusals = [
        r#"{"content":[{"type":"text","text":"components: required"}],"isError":true}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params"}}"#,
    ];
    for text in refusals {
        assert!(is_refusal_bytes(text.as_bytes()), "{text}");
        let value: Value = serde_json::from_str(text).unwrap();
        assert!(is_refusal_from(&value), "{text}");
    }
    for text in [
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"Request timed out"}}"#,
        r#"{"content":[],"isError":false}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#,
        "<html>502 Bad Gateway</html>",
        "",
    ] {
        assert!(!is_refusal_bytes(text.as_bytes()), "{text}");
    }
}

/// `interpretCall` on the recorded SSE bodies (`rawBody`, CRLF frames with progress
/// notifications before the response) gives exactly what the same response as JSON gives.
#[test]
fn recorded_sse_bodies_interpret_like_their_json_response() {
    let mut seen = 0;
    let mut ok = 0;
    for call in recorded_calls() {
        if !call.source.contains("/http-") {
            continue;
        }
        let v = read_json(Path::new(&call.source));
        if v["response"]["contentType"] != "text/event-stream" {
            continue;
        }
        let raw = v["response"]["rawBody"].as_str().unwrap();
        assert!(
            raw.starts_with("event: message\r\ndata: "),
            "{}",
            call.source
        );
        let framed = interpret_call_bytes(
            &call.tool,
            &marker_for(&call.tool),
            raw.as_bytes(),
            &ResultLimits::default(),
        );
        let plain = interpret(&call);
        match (&framed, &plain) {
            (Ok(a), Ok(b)) => {
                ok += 1;
                assert_eq!(a, b, "{}", call.source);
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{}", call.source),
            _ => panic!("{}: SSE {framed:?} but JSON {plain:?}", call.source),
        }
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} recorded SSE call bodies");
    assert!(ok >= 4, "only {ok} recorded SSE bodies were results");
}

/// An SSE body cut after its progress notifications has no response: a one-line error, and a
/// body that is neither JSON nor SSE keeps the JSON error.
#[test]
fn sse_bodies_without_a_response_are_refused_in_one_line() {
    let path = Path::new(FIXTURES)
        .join("reference-server/http-stateful/07-call-liquid_box-water-molblock.json");
    let v = read_json(&path);
    let raw = v["response"]["rawBody"].as_str().unwrap();
    let cut = &raw[..raw.rfind("event: message").unwrap()];
    let marker = marker_for("liquid_box");
    let limits = ResultLimits::default();
    let err = interpret_call_bytes("liquid_box", &marker, cut.as_bytes(), &limits).unwrap_err();
    assert!(!err.contains('\n'), "{err}");
    assert!(err.starts_with("structuredContent: missing"), "{err}");
    let err = interpret_call_bytes("liquid_box", &marker, b"hello", &limits).unwrap_err();
    assert!(err.starts_with("result: not valid JSON"), "{err}");
    // The SSE-framed body counts against the same byte cap, framing included.
    let small = ResultLimits {
        max_bytes: raw.len() - 1,
    };
    let err = interpret_call_bytes("liquid_box", &marker, raw.as_bytes(), &small).unwrap_err();
    assert!(err.contains("more than the"), "{err}");
}

/// One byte cap on every path: the transport's default is the result cap, and a body, an
/// SSE-framed body and an already-parsed value are all refused one byte past it (the value by
/// the exact length of its compact JSON) and accepted at it.
#[test]
fn one_byte_cap_on_bytes_sse_and_parsed_values() {
    use megane_builder_client::mcp::client::Config;
    use megane_builder_client::wire::caps::MAX_RESPONSE_BYTES;
    use megane_builder_client::wire::caps::MAX_RESULT_BYTES;
    assert_eq!(MAX_RESPONSE_BYTES, MAX_RESULT_BYTES as u64);
    assert_eq!(
        Config::new("http://127.0.0.1:1/mcp").max_response_bytes,
        MAX_RESPONSE_BYTES
    );
    assert_eq!(ResultLimits::default().max_bytes, MAX_RESULT_BYTES);
    let marker = marker_for("liquid_box");
    // A tool error padded to an exact JSON length (with a non-ASCII character and an escape, so
    // the count must follow JSON's encoding).
    let response = |len: usize| {
        let shell = json!({"isError": true, "content": [{"type": "text", "text": "bad é\t"}]});
        let pad = len - serde_json::to_vec(&shell).unwrap().len();
        let text = format!("bad é\t{}", "x".repeat(pad));
        let v = json!({"isError": true, "content": [{"type": "text", "text": text}]});
        assert_eq!(serde_json::to_vec(&v).unwrap().len(), len);
        v
    };
    let at = response(MAX_RESULT_BYTES);
    let err = interpret_call_value("liquid_box", &marker, &at).unwrap_err();
    assert!(err.starts_with("bad é"), "{}", &err[..40]);
    let bytes = serde_json::to_vec(&at).unwrap();
    drop(at);
    let err =
        interpret_call_bytes("liquid_box", &marker, &bytes, &ResultLimits::default()).unwrap_err();
    assert!(err.starts_with("bad é"), "{}", &err[..40]);
    drop(bytes);
    let over = response(MAX_RESULT_BYTES + 1);
    let want = format!(
        "result: {} bytes is more than the {MAX_RESULT_BYTES} bytes Builder accepts",
        MAX_RESULT_BYTES + 1
    );
    assert_eq!(
        interpret_call_value("liquid_box", &marker, &over).unwrap_err(),
        want
    );
    let bytes = serde_json::to_vec(&over).unwrap();
    drop(over);
    assert_eq!(
        interpret_call_bytes("liquid_box", &marker, &bytes, &ResultLimits::default()).unwrap_err(),
        want
    );
    let mut framed = b"event: message\r\ndata: ".to_vec();
    framed.extend_from_slice(&bytes[..MAX_RESULT_BYTES - 20]);
    framed.extend_from_slice(b"\r\n\r\n");
    assert!(framed.len() > MAX_RESULT_BYTES);
    let err =
        interpret_call_bytes("liquid_box", &marker, &framed, &ResultLimits::default()).unwrap_err();
    assert!(err.contains("more than the"), "{err}");
}

/// A checked result plans the same without a second §5.1 pass (what the JavaScript API's
/// read-only handle uses); the public planner still refuses a result changed after checking.
#[test]
fn a_checked_result_plans_the_same_without_validating_again() {
    use megane_builder_client::contract::apply::plan_apply_checked;
    for tool in ["liquid_box", "solvate", "polymer_chain"] {
        let call = megane_call(tool);
        let done = interpret(&call).unwrap();
        let marker = marker_for(tool);
        let document = (tool == "solvate").then(|| solvate_document(&call));
        let checked = plan_apply_checked(&marker, &done.result, document.as_ref(), &[], None);
        let full = plan_apply(&marker, &done.result, document.as_ref(), &[]);
        assert_eq!(checked.unwrap(), full.unwrap(), "{tool}");
    }
    let mut changed = interpret(&megane_call("liquid_box"))
        .unwrap()
        .result
        .into_inner();
    changed.structure.elements[0] = 0;
    let err = plan_apply(&marker_for("liquid_box"), &changed, None, &[]).unwrap_err();
    assert!(err.starts_with("structure.elements[0]"), "{err}");
}

/// §5.1 once, and only by the one check: a structure the check refuses reaches no plan by any
/// public path. Every reader (JSON bytes, SSE bytes, a parsed value, the unmarked reader, the
/// JavaScript inputs) refuses it with the same line as `Structure::validate`; the planners that
/// take a plain `BuilderResult` validate it; `plan_apply_checked` takes only a `CheckedResult`,
/// which only those checks make (its field is private: a doc test of `CheckedResult` shows that
/// forging one does not compile).
#[test]
fn a_refused_structure_reaches_no_plan_by_any_public_path() {
    use megane_builder_client::contract::apply::plan_apply_as;
    use megane_builder_client::contract::result::{
        check_builder_result, interpret_unmarked_bytes, read_builder_result, BuilderResult,
    };
    for tool in ["liquid_box", "solvate", "polymer_chain"] {
        let call = megane_call(tool);
        let marker = marker_for(tool);
        let document = (tool == "solvate").then(|| solvate_document(&call));
        let mut response = call.response.clone();
        let result = if response.get("result").is_some() {
            &mut response["result"]
        } else {
            &mut response
        };
        result["structuredContent"]["structure"]["bonds"][0] = json!([1, 1]);
        let structured = result["structuredContent"].clone();
        let broken: Structure = serde_json::from_value(structured["structure"].clone()).unwrap();
        let expected = broken.validate().unwrap_err();
        assert_eq!(expected, "structure.bonds[0]: bonds atom 1 to itself");

        let json = serde_json::to_vec(&response).unwrap();
        let mut sse = b"event: message\ndata: ".to_vec();
        sse.extend_from_slice(&json);
        sse.extend_from_slice(b"\n\n");
        let limits = ResultLimits::default();
        let refusals = [
            interpret_call_bytes(tool, &marker, &json, &limits).map(|_| ()),
            interpret_call_bytes(tool, &marker, &sse, &limits).map(|_| ()),
            interpret_call_value(tool, &marker, &response).map(|_| ()),
            interpret_unmarked_bytes(&json, &limits).map(|_| ()),
            read_builder_result(&marker, &structured).map(|_| ()),
        ];
        for (path, outcome) in refusals.into_iter().enumerate() {
            assert_eq!(outcome, Err(expected.clone()), "{tool}, reader {path}");
        }
        // The same result made by hand (not through a check): the plain planners validate it.
        let raw: BuilderResult = {
            let good = interpret(&call).unwrap().result.into_inner();
            BuilderResult {
                structure: broken,
                ..good
            }
        };
        let planned = [
            plan_apply(&marker, &raw, document.as_ref(), &[]),
            plan_apply_as(&marker, &raw, document.as_ref(), &[], Some("f")),
        ];
        for outcome in planned {
            assert_eq!(outcome.unwrap_err(), expected, "{tool}");
        }
        // The one way to the unvalidated planner is the check, which refuses it.
        assert_eq!(
            check_builder_result(&marker, raw).unwrap_err(),
            expected,
            "{tool}"
        );
    }
}

/// §10: the page's server check validates the result as Builder read it (`BuilderResult`, what
/// `toJSON` gives) against the tool's declared `outputSchema`. On the reference server's
/// recorded tools and calls that passes, as the raw `structuredContent` does: the check raises no
/// false problem there. A result missing a required field of the declared schema fails it.
#[test]
fn recorded_results_as_read_conform_to_the_recorded_output_schemas() {
    use megane_builder_client::contract::validate::validate_arguments;
    let list = read_json(&Path::new(FIXTURES).join("megane-recorded/tools-list.json"));
    let mut checked = 0;
    for tool in list["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let schema = &tool["outputSchema"];
        assert_eq!(schema["type"], "object", "{name}");
        let call = megane_call(name);
        let raw = structured_content(&call.response);
        assert_eq!(validate_arguments(schema, None, raw), vec![], "{name}");
        let read = serde_json::to_value(&interpret(&call).unwrap().result).unwrap();
        assert_eq!(validate_arguments(schema, None, &read), vec![], "{name}");
        let mut broken = read.clone();
        broken["structure"]
            .as_object_mut()
            .unwrap()
            .remove("elements");
        assert!(
            !validate_arguments(schema, None, &broken).is_empty(),
            "{name}"
        );
        checked += 1;
    }
    assert_eq!(checked, 3);
}
