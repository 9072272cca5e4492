//! The wasm side of the `megane` entry (`src/js/megane.js`): Megane Builder's tool seam over the
//! contract core. Each function is a thin wrapper over one core rule ([`crate::contract::seam`],
//! [`crate::contract::apply`], [`crate::contract::result`], [`crate::wire::endpoint`]); `megane.js`
//! only loads the wasm and shapes the connection.
//!
//! Functions that take a structure are given Builder's already-validated `result.structure`; an
//! invalid one is a programmer error and throws with the §5.1 one-line reason.

use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::connect::{builder_outcome, OutcomeShape, ToolServerHandle};
use super::interop::{failure, from_js, string_array, to_js};
use super::snapshot::snapshot_to_js;
use crate::contract::apply::{
    insert_ops, new_fragment_id, sanitise_file_name, structure_snapshot, Labels,
};
use crate::contract::discovery::parse_tool_list;
use crate::contract::result::{interpret_unmarked_bytes, ResultLimits};
use crate::contract::seam::{builder_failure, tool_listing};
use crate::contract::structure::Structure;
use crate::wire::endpoint::display_url;

/// A §5.1 structure from JavaScript, validated; the error is one line.
fn structure_from_js(structure: JsValue) -> Result<Structure, JsError> {
    let structure: Structure = from_js(structure, "structure")?;
    structure
        .validate()
        .map_err(|e| JsError::new(&format!("structure: {e}")))?;
    Ok(structure)
}

/// §3 Builder's `parseTools(tools)`: `{tools: BuilderToolInfo[], unsupported: string[]}` for a
/// list of MCP tools (or a `tools/list` result). Throws when the input is not a tool list.
#[wasm_bindgen(js_name = builderParseTools, unchecked_return_type = "unknown")]
pub fn builder_parse_tools(
    #[wasm_bindgen(unchecked_param_type = "unknown")] tools: JsValue,
) -> Result<JsValue, JsError> {
    let tools: Value = from_js(tools, "tools")?;
    let toolbox = parse_tool_list(&tools, None).map_err(|e| JsError::new(&e))?;
    to_js(&tool_listing(&toolbox))
}

/// §3 Builder's `listing` of a connected server: its toolbox as a `ToolListing`.
#[wasm_bindgen(js_name = builderListing, unchecked_return_type = "unknown")]
pub fn builder_listing(server: &ToolServerHandle) -> Result<JsValue, JsError> {
    to_js(&tool_listing(&server.toolbox_value()))
}

/// §5/§6 Builder's `interpretCall(raw)`: a raw CallToolResult (or JSON-RPC response) →
/// `{ok: true, result: {contract, name, structure, warnings, provenance}, summary: string | null}`
/// or `{ok: false, error}` in Builder's words (`connect::builder_outcome`). The result may carry any
/// supported contract.
#[wasm_bindgen(js_name = builderInterpretCall, unchecked_return_type = "unknown")]
pub fn builder_interpret_call(
    #[wasm_bindgen(unchecked_param_type = "unknown")] raw: JsValue,
) -> Result<JsValue, JsError> {
    if !raw.is_object() {
        return Ok(failure(crate::wire::messages::NO_RESULT));
    }
    let limits = ResultLimits::default();
    match super::results::object_json(&raw, &limits) {
        Ok(text) => {
            let outcome = interpret_unmarked_bytes(text.as_bytes(), &limits);
            builder_outcome(outcome, text.as_bytes(), None)
        }
        Err(error) => Ok(failure(&builder_failure(
            crate::contract::result::FailureKind::InvalidResult,
            &error,
        ))),
    }
}

/// §6 Builder's `ToolConnection.call(name, args, {onProgress, signal, timeoutMs})` on a connected
/// server: the core's call ([`ToolServerHandle::call`]), its outcome as `connect::builder_outcome`
/// shapes it; a transport failure is the core's line (`Cancelled.`, the timeout, `The server
/// failed: …`), a tool without the Builder marker a one-line refusal.
#[wasm_bindgen(js_name = builderCall, unchecked_return_type = "Promise<unknown>")]
pub fn builder_call(
    server: &ToolServerHandle,
    name: String,
    #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
    #[wasm_bindgen(unchecked_param_type = "unknown")] options: JsValue,
) -> js_sys::Promise {
    server.call_as(name, args, options, OutcomeShape::Builder)
}

/// §5.2 Builder's `structureToSnapshot(structure)`: the new-document snapshot (typed arrays,
/// `nFileBonds`, `boxOrigin: null`, `atomBFactors: null`, and the kept channels as `planApply`
/// gives them; `fileName` is `result`, the structure carrying no name).
#[wasm_bindgen(js_name = builderStructureToSnapshot, unchecked_return_type = "unknown")]
pub fn builder_structure_to_snapshot(
    #[wasm_bindgen(unchecked_param_type = "unknown")] structure: JsValue,
) -> Result<JsValue, JsError> {
    let structure = structure_from_js(structure)?;
    let snapshot = structure_snapshot(&structure, "").map_err(|e| JsError::new(&e))?;
    snapshot_to_js(&snapshot)
}

/// Only the residue channels of a structure.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResidueChannels {
    #[serde(default)]
    residue_names: Option<Vec<String>>,
    #[serde(default)]
    residue_ids: Option<Vec<i64>>,
}

/// §5.2 Builder's `residueLabels(structure)`: `RESNAME<resid>` per atom (the residue name when
/// there are no ids), or null when the structure has no residue names.
#[wasm_bindgen(js_name = builderResidueLabels, unchecked_return_type = "string[] | null")]
pub fn builder_residue_labels(
    #[wasm_bindgen(unchecked_param_type = "unknown")] structure: JsValue,
) -> Result<JsValue, JsError> {
    let channels: ResidueChannels = from_js(structure, "structure")?;
    let Some(names) = channels.residue_names else {
        return Ok(JsValue::NULL);
    };
    let labels = Labels::new(
        std::borrow::Cow::Owned(names.into()),
        channels.residue_ids.map(std::borrow::Cow::Owned),
    )
    .map_err(|e| JsError::new(&e))?;
    Ok(string_array(labels.as_slice()).into())
}

/// §5 Builder's `sanitizeName(name)`: the document file name for a result name.
#[wasm_bindgen(js_name = sanitizeName)]
pub fn sanitize_name(name: &str) -> String {
    sanitise_file_name(name)
}

/// §5.2 `newFragmentId(name, existingIds)`: the result name's stem, made unique among
/// `existingIds`, the fragment ids already in the document (`water`, `water-2`, …). The ids are
/// required: an id is unique only among the ids it is told of (Builder keeps its own ids, one
/// page-wide serial, and does not use this).
#[wasm_bindgen(js_name = newFragmentId)]
pub fn new_fragment_id_js(
    name: &str,
    #[wasm_bindgen(js_name = existingIds, unchecked_param_type = "readonly string[]")]
    existing: JsValue,
) -> Result<String, JsError> {
    if existing.is_null() || existing.is_undefined() {
        return Err(JsError::new(
            "newFragmentId(name, existingIds): existingIds is required (the fragment ids already in the document)",
        ));
    }
    let existing: Vec<String> = from_js(existing, "existingIds")?;
    Ok(new_fragment_id(name, &existing))
}

/// A server URL as an error message shows it ([`display_url`]: no query, fragment or user info;
/// one line): for Builder's own `Could not connect to <url>: ` prefix.
#[wasm_bindgen(js_name = displayUrl)]
pub fn display_url_js(url: &str) -> String {
    display_url(url)
}

/// §5.2 Builder's `insertOps(structure, fragmentId, documentCell)`: `set_cell` first when the
/// cells differ, then one `add_fragment` (bond orders kept whenever present). `documentCell` is
/// a plain array of 9 numbers or null.
#[wasm_bindgen(js_name = builderInsertOps, unchecked_return_type = "unknown")]
pub fn builder_insert_ops(
    #[wasm_bindgen(unchecked_param_type = "unknown")] structure: JsValue,
    #[wasm_bindgen(js_name = fragmentId)] fragment_id: &str,
    #[wasm_bindgen(js_name = documentCell, unchecked_param_type = "number[] | null")]
    document_cell: JsValue,
) -> Result<JsValue, JsError> {
    let structure = structure_from_js(structure)?;
    let cell: Option<[f64; 9]> = if document_cell.is_null() || document_cell.is_undefined() {
        None
    } else {
        Some(from_js(document_cell, "documentCell (9 numbers)")?)
    };
    to_js(&insert_ops(&structure, fragment_id, cell.as_ref()))
}
