//! The exported functions of the JavaScript API. Each is a thin wrapper: read the arguments
//! (interop), call the contract core, convert the answer.

use std::sync::atomic::{AtomicBool, Ordering};

use js_sys::{Object, Uint8Array};
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::interop::{
    failure, from_js, from_js_json, from_js_or_default, json_from_js_or_default, ok_outcome,
    plan_to_js, read_context, set, split_document, string_array, success, to_js, to_js_json,
    toolbox_from_js, ButtonHead, ButtonRef,
};
use crate::chem::molblock::{self, Dimension, Molecule};
use crate::contract::apply::plan_apply_checked;
use crate::contract::discovery;
use crate::contract::launch;
use crate::contract::provenance::{self, ServerIdentity};
use crate::contract::result::{self, ResultLimits};
use crate::contract::structure::Structure;
use crate::contract::validate::{
    validate_arguments as validate_against_schema, validate_with_document,
};
use crate::contract::values::{self, FormContext};
use crate::offline::here::HereDeadline;
use crate::offline::pace::ProgressPace;
use crate::offline::Place;
use crate::wire::timing::{call_deadline_ms, call_timeout_ms, progress_style, ProgressStyle};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");

/// §3: a `tools/list` result (one page, a list of pages, or a bare list of tools) → a toolbox
/// (`{ok: true, buttons, categories, unsupportedContract, unknownApply, malformed, plainTools,
/// notices}`), or `{ok: false, error}` when the input is not a tool list at all.
///
/// The tools' schemas stay in JavaScript: each distinct `inputSchema` crosses once as JSON text,
/// the buttons carry the host's own schema objects, and each form is parsed on first read
/// ([`toolbox_from_js`]); a list that is not plain data goes the general way.
#[wasm_bindgen(js_name = parseToolList, unchecked_return_type = "Toolbox | Failure")]
pub fn parse_tool_list(
    #[wasm_bindgen(js_name = listResultOrTools, unchecked_param_type = "unknown")] list: JsValue,
    #[wasm_bindgen(js_name = serverId)] server_id: Option<String>,
) -> Result<JsValue, JsError> {
    match toolbox_from_js(&list, server_id.as_deref()) {
        Some(Ok(toolbox)) => return Ok(toolbox),
        Some(Err(error)) => return Ok(failure(&error)),
        None => {}
    }
    let list: Value = from_js_json(list, "listResultOrTools")?;
    match discovery::parse_tool_list(&list, server_id.as_deref()) {
        Ok(toolbox) => {
            let value = to_js_json(&toolbox)?;
            set(value.unchecked_ref(), "ok", true);
            Ok(value)
        }
        Err(error) => Ok(failure(&error)),
    }
}

/// A fresh seed from the host's random source when the context gives none (§4.2 seed).
fn context_with_seed(context: JsValue) -> Result<FormContext, JsError> {
    let (mut context, _) = read_context(context)?;
    if context.random_seed.is_none() {
        context.random_seed = Some((js_sys::Math::random() * 2_147_483_647.0) as u64);
    }
    Ok(context)
}

/// §4.1/§4.2: the values a fresh form shows for `button` in `context` (`{document?, selection?,
/// library?, randomSeed?, documentEditable?}`). A disabled button gives `{}`.
#[wasm_bindgen(js_name = initialValues, unchecked_return_type = "FormValues")]
pub fn initial_values(
    #[wasm_bindgen(unchecked_param_type = "ToolButton")] button: JsValue,
    #[wasm_bindgen(unchecked_param_type = "FormContext | null | undefined")] context: JsValue,
) -> Result<JsValue, JsError> {
    let button = ButtonRef::from_js(button)?;
    let context = context_with_seed(context)?;
    match button.form() {
        Ok(form) => to_js(&values::initial_values(&form, &context)),
        Err(_) => Ok(Object::new().into()),
    }
}

/// §4–§6: form values → `{ok: true, arguments}` or `{ok: false, errors: [{path, message}]}`.
///
/// `context.document` is taken once per document object (or `documentVersion`) and checked by
/// the typed §5.1 validator; the arguments carry that same object, never a copy.
#[wasm_bindgen(js_name = buildArguments, unchecked_return_type = "BuildOutcome")]
pub fn build_arguments(
    #[wasm_bindgen(unchecked_param_type = "ToolButton")] button: JsValue,
    #[wasm_bindgen(js_name = values, unchecked_param_type = "FormValues")] form_values: JsValue,
    #[wasm_bindgen(unchecked_param_type = "FormContext | null | undefined")] context: JsValue,
) -> Result<JsValue, JsError> {
    let button = ButtonRef::from_js(button)?;
    let (context, document) = read_context(context)?;
    let form_values: Value = json_from_js_or_default(form_values, "values")?;
    let form = button.form();
    let outcome = form
        .as_ref()
        .map_err(|reason| vec![crate::contract::validate::Problem::new("", reason.clone())])
        .and_then(|form| {
            values::build_arguments(
                &button.marker,
                form,
                &button.input_schema,
                &form_values,
                &context,
            )
        });
    match outcome {
        Ok(arguments) => {
            let arguments = to_js(&arguments)?;
            // The document's stand-in is replaced by the host's own object.
            let property = form.ok().and_then(|f| f.document_property);
            if let (Some(property), Some(document)) = (property, document) {
                if js_sys::Reflect::has(&arguments, &JsValue::from_str(&property)).unwrap_or(false)
                {
                    set(arguments.unchecked_ref(), &property, document);
                }
            }
            Ok(success("arguments", arguments))
        }
        Err(problems) => {
            let object = Object::new();
            set(&object, "ok", false);
            set(&object, "errors", to_js(&problems)?);
            Ok(object.into())
        }
    }
}

/// §6: every problem of `args` against the button's `inputSchema`: `[{path, message}]`.
///
/// The complete check made once before Run. A §4.3 document object in `args` is checked by the
/// typed §5.1 validator (taken once: the object `buildArguments` put there is already checked)
/// and the rest against the schema.
#[wasm_bindgen(js_name = validateArguments, unchecked_return_type = "Problem[]")]
pub fn validate_arguments(
    #[wasm_bindgen(unchecked_param_type = "ToolButton")] button: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
) -> Result<JsValue, JsError> {
    let button = ButtonRef::from_js(button)?;
    let form = button.form().ok();
    if let Some(property) = form.as_ref().and_then(|f| f.document_property.clone()) {
        if let Some((rest, document)) = split_document(&args, &property)? {
            return to_js(&validate_with_document(
                &button.input_schema,
                form.as_ref(),
                &rest,
                &property,
                Some(&document),
            ));
        }
    }
    let args: Value = json_from_js_or_default(args, "args")?;
    to_js(&validate_against_schema(
        &button.input_schema,
        form.as_ref(),
        &args,
    ))
}

/// §10: every problem of `value` (plain data or a `BuilderResult` object) against a JSON Schema,
/// `[{path, message}]`, empty when it conforms; with the cached validator the forms use. The
/// page's server check validates a sample result against the tool's declared `outputSchema` with
/// it. A schema that does not compile is one problem saying so.
#[wasm_bindgen(js_name = validateAgainstSchema, unchecked_return_type = "Problem[]")]
pub fn validate_against_schema_js(
    #[wasm_bindgen(unchecked_param_type = "unknown")] schema: JsValue,
    #[wasm_bindgen(unchecked_param_type = "unknown")] value: JsValue,
) -> Result<JsValue, JsError> {
    // Through JSON text, so a `BuilderResult` object is read by its `toJSON`.
    let schema: Value = from_js_json(schema, "schema")?;
    let value: Value = from_js_json(value, "value")?;
    to_js(&validate_against_schema(&schema, None, &value))
}

/// §5: a validated BuilderResult, kept in wasm memory: large structures are not copied into
/// JavaScript until asked for (`toJSON()`), and `planApply` reads it directly.
#[wasm_bindgen(js_name = BuilderResult)]
pub struct BuilderResultHandle {
    tool: String,
    inner: result::CheckedResult,
}

#[wasm_bindgen(js_class = BuilderResult)]
impl BuilderResultHandle {
    /// The tool that produced the result.
    #[wasm_bindgen(getter)]
    pub fn tool(&self) -> String {
        self.tool.clone()
    }
    /// The sanitised-later suggested name (never blank; fallback `result`).
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.inner.name.clone()
    }
    /// Contract version of the result.
    #[wasm_bindgen(getter)]
    pub fn contract(&self) -> u32 {
        self.inner.contract as u32
    }
    /// Number of atoms in the structure.
    #[wasm_bindgen(getter, js_name = atomCount)]
    pub fn atom_count(&self) -> u32 {
        self.inner.structure.n_atoms() as u32
    }
    /// The result's warnings.
    #[wasm_bindgen(getter, unchecked_return_type = "string[]")]
    pub fn warnings(&self) -> js_sys::Array {
        string_array(&self.inner.warnings)
    }
    /// The result's provenance (strings and numbers).
    #[wasm_bindgen(getter, unchecked_return_type = "Record<string, string | number>")]
    pub fn provenance(&self) -> Result<JsValue, JsError> {
        to_js(&self.inner.provenance)
    }
    /// The whole result as a plain object `{contract, name, structure, warnings, provenance}`.
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "{contract: number; name: string; structure: Structure; warnings: string[]; provenance: Record<string, string | number>}")]
    pub fn to_json(&self) -> Result<JsValue, JsError> {
        to_js(&self.inner)
    }
}

/// Options of `interpretCall`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct InterpretOptions {
    max_result_bytes: Option<usize>,
}

/// §5/§6: a `tools/call` result (the response bytes as a `Uint8Array`, a JSON string, or an
/// already-parsed object; a bare CallToolResult or a JSON-RPC response; bytes and strings may be
/// SSE-framed, `event: message` / `data: …`, as a Streamable HTTP server sends them) →
/// `{ok: true, result: BuilderResult, summary, warnings}` or `{ok: false, error, refused?}`;
/// `refused: true` when the tool refused the arguments (`isError`) or the server answered
/// JSON-RPC -32602. The byte cap (`options.maxResultBytes`, default 64 MiB, `MAX_RESULT_BYTES`)
/// is checked before parsing, on objects too (their JSON text).
#[wasm_bindgen(js_name = interpretCall, unchecked_return_type = "InterpretOutcome")]
pub fn interpret_call(
    #[wasm_bindgen(unchecked_param_type = "ToolButton")] button: JsValue,
    #[wasm_bindgen(js_name = bytesOrObject, unchecked_param_type = "Uint8Array | string | object")]
    bytes_or_object: JsValue,
    #[wasm_bindgen(unchecked_param_type = "InterpretOptions | null | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let button = ButtonHead::from_js(button)?;
    let options: InterpretOptions = from_js_or_default(options, "options")?;
    let mut limits = ResultLimits::default();
    if let Some(max) = options.max_result_bytes {
        limits.max_bytes = max;
    }
    let source = bytes_or_object.clone();
    let outcome = if let Some(bytes) = bytes_or_object.dyn_ref::<Uint8Array>() {
        // The cap before copying the bytes into wasm memory (the same check runs again inside).
        result::interpret_call_pieces(&button.name, &button.marker, &JsBytes(bytes), &limits)
    } else if let Some(text) = bytes_or_object.as_string() {
        result::interpret_call_bytes(&button.name, &button.marker, text.as_bytes(), &limits)
    } else if bytes_or_object.is_object() {
        object_json(&bytes_or_object, &limits).and_then(|text| {
            result::interpret_call_bytes(&button.name, &button.marker, text.as_bytes(), &limits)
        })
    } else {
        Err("The server sent no result.".to_string())
    };
    // Only on the error path: is it the tool's (or the server's -32602) refusal of the arguments?
    let refused = outcome.is_err()
        && if let Some(bytes) = source.dyn_ref::<Uint8Array>() {
            (bytes.length() as usize) <= limits.max_bytes
                && result::is_refusal_bytes(&bytes.to_vec())
        } else if let Some(text) = source.as_string() {
            result::is_refusal_bytes(text.as_bytes())
        } else {
            source.is_object()
                && result::is_refusal_from(serde_wasm_bindgen::Deserializer::from(source))
        };
    Ok(interpreted_outcome(&button.name, outcome, refused))
}

/// The bytes of a `Uint8Array` as a result body in pieces: copied into wasm memory [`PIECE`]
/// bytes at a time, into one reused buffer, so only a body the scan does not read is copied
/// whole (issue 10: memory).
struct JsBytes<'a>(&'a Uint8Array);

/// The piece size of [`JsBytes`].
const PIECE: u32 = 256 * 1024;

impl result::BodyPieces for JsBytes<'_> {
    fn total(&self) -> usize {
        self.0.length() as usize
    }
    fn each_piece(&self, each: &mut dyn FnMut(&[u8])) {
        let len = self.0.length();
        let mut buf = vec![0; PIECE.min(len) as usize];
        let mut at = 0;
        while at < len {
            let end = len.min(at + PIECE);
            let piece = &mut buf[..(end - at) as usize];
            self.0.subarray(at, end).copy_to(piece);
            each(piece);
            at = end;
        }
    }
    fn whole(&self) -> std::borrow::Cow<'_, [u8]> {
        self.0.to_vec().into()
    }
}

/// An already-parsed result object as JSON text (`JSON.stringify`), so it takes the same bytes
/// path and the same byte cap as a body. Its UTF-16 length is never more than its UTF-8 length,
/// so an object over the cap is refused before the text is copied into wasm memory.
pub(super) fn object_json(object: &JsValue, limits: &ResultLimits) -> Result<String, String> {
    let text = js_sys::JSON::stringify(object)
        .map_err(|_| "result: the object cannot be written as JSON".to_string())?;
    result::check_result_size(text.length() as usize, limits)?;
    text.as_string()
        .ok_or_else(|| "The server sent no result.".to_string())
}

/// `{ok: true, result: BuilderResult, summary, warnings}` or `{ok: false, error}`.
pub(super) fn interpreted_outcome(
    tool: &str,
    outcome: Result<result::Interpreted, String>,
    refused: bool,
) -> JsValue {
    match outcome {
        Ok(interpreted) => {
            let handle = BuilderResultHandle {
                tool: tool.to_string(),
                inner: interpreted.result,
            };
            ok_outcome(
                &interpreted.summary,
                string_array(&interpreted.warnings).into(),
                handle.into(),
            )
        }
        Err(error) => refusal(failure(&error), refused),
    }
}

/// Marks a failure outcome `refused: true` (§10: the tool or the server refused the arguments).
pub(super) fn refusal(outcome: JsValue, refused: bool) -> JsValue {
    if refused {
        set(outcome.unchecked_ref(), "refused", true);
    }
    outcome
}

/// Options of `planApply`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PlanOptions {
    existing_fragment_ids: Vec<String>,
    /// The insert's fragment id, chosen by the host (default: fresh from the result's name).
    fragment_id: Option<String>,
}

/// §5.2: `{ok: true, plan}` where plan is `{mode: "new_document", snapshot}` (typed arrays in
/// Megane's Snapshot shape) or `{mode: "insert", ops, select}`; `{ok: false, error}` when the
/// result cannot be applied (an insert without an open document, atoms repeating the document).
/// `document` is the open structure as a §4.3 Structure payload, or null.
#[wasm_bindgen(js_name = planApply, unchecked_return_type = "PlanOutcome")]
pub fn plan_apply_js(
    #[wasm_bindgen(unchecked_param_type = "ToolButton")] button: JsValue,
    result: &BuilderResultHandle,
    #[wasm_bindgen(unchecked_param_type = "Structure | null")] document: JsValue,
    #[wasm_bindgen(unchecked_param_type = "PlanOptions | null | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let button = ButtonHead::from_js(button)?;
    let options: PlanOptions = from_js_or_default(options, "options")?;
    let document: Option<Structure> = if document.is_null() || document.is_undefined() {
        None
    } else {
        match serde_wasm_bindgen::from_value::<Structure>(document) {
            Ok(structure) => Some(structure),
            Err(e) => {
                return Ok(failure(&format!(
                    "The open document is not a valid structure: {e}"
                )))
            }
        }
    };
    // The handle holds a result checked by interpretCall and read-only since: §5.1 once.
    match plan_apply_checked(
        &button.marker,
        &result.inner,
        document.as_ref(),
        &options.existing_fragment_ids,
        options.fragment_id.as_deref(),
    ) {
        Ok(plan) => Ok(success("plan", plan_to_js(&plan)?)),
        Err(error) => Ok(failure(&error)),
    }
}

/// The tool names of a toolbox as `parseToolList` returned it (the rest is ignored).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct ListedNames {
    buttons: Vec<Named>,
    plain_tools: Vec<Named>,
    unsupported_contract: Vec<Named>,
    unknown_apply: Vec<Named>,
    malformed: Vec<Named>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Named {
    name: String,
}

/// §6: `{ok: false, error: "Unknown tool: <name>"}` when `toolbox` (from `parseToolList`) does not
/// list `name`, else `null`: the check a `ToolServer` makes before calling, remote or offline.
#[wasm_bindgen(js_name = refuseCall, unchecked_return_type = "Failure | null")]
pub fn refuse_call_js(
    #[wasm_bindgen(unchecked_param_type = "Toolbox")] toolbox: JsValue,
    name: String,
) -> Result<JsValue, JsError> {
    let listed: ListedNames = from_js(toolbox, "toolbox (pass the result of parseToolList)")?;
    let names = listed
        .buttons
        .iter()
        .chain(&listed.plain_tools)
        .chain(&listed.unsupported_contract)
        .chain(&listed.unknown_apply)
        .chain(&listed.malformed)
        .map(|n| n.name.as_str());
    Ok(match discovery::refuse_call(names, &name) {
        Some(error) => failure(&error),
        None => JsValue::NULL,
    })
}

/// §6: the call timeout in milliseconds: an explicit positive `timeoutMs`, else
/// max(60 s, 5 × expectedSeconds); at most 30 minutes either way.
#[wasm_bindgen(js_name = callTimeoutMs)]
pub fn call_timeout_ms_js(
    #[wasm_bindgen(js_name = expectedSeconds)] expected_seconds: Option<f64>,
    #[wasm_bindgen(js_name = timeoutMs)] timeout_ms: Option<f64>,
) -> f64 {
    call_timeout_ms(expected_seconds, timeout_ms) as f64
}

/// §6: when a call started at `startedAt` times out, given its last sign of life (start or
/// progress) at `lastActivity`: `lastActivity + timeoutMs`, never past 30 minutes after the start.
/// Times in milliseconds on one clock (e.g. `performance.now()`; fractions are dropped).
#[wasm_bindgen(js_name = callDeadlineMs)]
pub fn call_deadline_ms_js(
    #[wasm_bindgen(js_name = startedAt)] started_at: f64,
    #[wasm_bindgen(js_name = lastActivity)] last_activity: f64,
    #[wasm_bindgen(js_name = timeoutMs)] timeout_ms: f64,
) -> f64 {
    // `as u64` saturates: NaN and negatives become 0.
    call_deadline_ms(started_at as u64, last_activity as u64, timeout_ms as u64) as f64
}

/// §3/§6: `"bar"` when expectedSeconds > 2, else `"spinner"`.
#[wasm_bindgen(js_name = progressStyle, unchecked_return_type = "\"bar\" | \"spinner\"")]
pub fn progress_style_js(
    #[wasm_bindgen(js_name = expectedSeconds)] expected_seconds: Option<f64>,
) -> String {
    match progress_style(expected_seconds) {
        ProgressStyle::Bar => "bar".to_string(),
        ProgressStyle::Spinner => "spinner".to_string(),
    }
}

/// §8: `#tools=<url>&token=<token>` → `{ok: true, url, token, remainingFragment}`, `null` when
/// the hash has no `tools=` part, `{ok: false, error}` for a link that cannot be used.
#[wasm_bindgen(js_name = parseLaunchFragment, unchecked_return_type = "LaunchOutcome")]
pub fn parse_launch_fragment(hash: &str) -> Result<JsValue, JsError> {
    match launch::parse_launch_fragment(hash) {
        Ok(Some(launch)) => {
            let value = to_js(&launch)?;
            set(value.unchecked_ref(), "ok", true);
            Ok(value)
        }
        Ok(None) => Ok(JsValue::NULL),
        Err(error) => Ok(failure(&error)),
    }
}

/// §9: checks a tool server URL as `connect` will, before it is stored or confirmed: `https://`,
/// or `http://` to loopback; no `user:pass@`, no query (`?token=`). `{ok: true, url}` (the URL
/// trimmed) or `{ok: false, error}` (one line with a hint to use the token field; the URL is not
/// repeated).
#[wasm_bindgen(js_name = checkServerUrl, unchecked_return_type = "UrlCheck")]
pub fn check_server_url(url: &str) -> JsValue {
    match crate::wire::endpoint::Endpoint::parse(url) {
        Ok(endpoint) => success("url", JsValue::from_str(&endpoint.url)),
        Err(error) => failure(&error.to_string()),
    }
}

/// §7: the provenance record of an applied result: `{server {id, name, version, url}, tool,
/// contract, arguments (the document replaced by {atoms, sha256}), argumentsSha256, provenance,
/// atoms}`. `server` is `{id, name, version, url?}`; a token is never part of it.
#[wasm_bindgen(js_name = provenanceRecord, unchecked_return_type = "ProvenanceRecord")]
pub fn provenance_record(
    #[wasm_bindgen(unchecked_param_type = "ServerIdentity")] server: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ToolButton")] button: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
    result: &BuilderResultHandle,
    #[wasm_bindgen(js_name = atomsApplied)] atoms_applied: u32,
) -> Result<JsValue, JsError> {
    let server: ServerIdentity = from_js(server, "server ({id, name, version, url?})")?;
    let button = ButtonRef::from_js(button)?;
    let args: Value = json_from_js_or_default(args, "args")?;
    let document_property = button.form().ok().and_then(|f| f.document_property);
    let record = provenance::provenance_record(
        &server,
        &button.name,
        &args,
        document_property.as_deref(),
        &result.inner,
        atoms_applied as usize,
    );
    to_js(&record)
}

/// §4.2: a library molecule `{name, elements, positions: [[x,y,z]…], bonds: [[i,j]…],
/// bondOrders?, formalCharges?, dimension?: "3D"|"2D"}` → `{ok: true, molblock}` (V2000, explicit
/// H as given, dimension code in header columns 21–22) or `{ok: false, error}`.
#[wasm_bindgen(js_name = moleculeToMolblock, unchecked_return_type = "MolblockOutcome")]
pub fn molecule_to_molblock(
    #[wasm_bindgen(unchecked_param_type = "MoleculeData")] molecule: JsValue,
) -> Result<JsValue, JsError> {
    let molecule: JsMolecule = from_js(molecule, "molecule")?;
    match molblock::write_molblock(&molecule.into_molecule()) {
        Ok(text) => Ok(success("molblock", JsValue::from_str(&text))),
        Err(error) => Ok(failure(&error)),
    }
}

/// §4.2: a V2000 mol block → `{ok: true, molecule}` (the shape `moleculeToMolblock` takes, with
/// `dimension` read from the header, never guessed) or `{ok: false, error}`.
#[wasm_bindgen(js_name = parseMolblock, unchecked_return_type = "MoleculeOutcome")]
pub fn parse_molblock(text: &str) -> Result<JsValue, JsError> {
    match molblock::parse_molblock(text) {
        Ok(molecule) => Ok(success(
            "molecule",
            to_js(&JsMolecule::from_molecule(molecule))?,
        )),
        Err(error) => Ok(failure(&error)),
    }
}

/// The JavaScript shape of a molecule: dimension as `"3D"`/`"2D"`, optional orders and charges.
#[derive(Debug, serde::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsMolecule {
    #[serde(default)]
    name: String,
    elements: Vec<u8>,
    positions: Vec<[f64; 3]>,
    #[serde(default)]
    bonds: Vec<(u32, u32)>,
    #[serde(default)]
    bond_orders: Vec<u8>,
    #[serde(default)]
    formal_charges: Vec<i8>,
    #[serde(default)]
    dimension: Option<String>,
}

impl JsMolecule {
    fn into_molecule(self) -> Molecule {
        let bond_orders = if self.bond_orders.is_empty() {
            vec![1; self.bonds.len()]
        } else {
            self.bond_orders
        };
        Molecule {
            name: self.name,
            elements: self.elements,
            positions: self.positions,
            bonds: self.bonds,
            bond_orders,
            formal_charges: self.formal_charges,
            dimension: match self.dimension.as_deref() {
                Some("2D") | Some("2d") => Dimension::TwoD,
                _ => Dimension::ThreeD,
            },
        }
    }

    fn from_molecule(molecule: Molecule) -> JsMolecule {
        JsMolecule {
            name: molecule.name,
            elements: molecule.elements,
            positions: molecule.positions,
            bonds: molecule.bonds,
            bond_orders: molecule.bond_orders,
            formal_charges: molecule.formal_charges,
            dimension: Some(match molecule.dimension {
                Dimension::ThreeD => "3D".to_string(),
                Dimension::TwoD => "2D".to_string(),
            }),
        }
    }
}

/// The offline tools' `tools/list` result (`liquid_box`, `solvate`), for `parseToolList`.
#[wasm_bindgen(js_name = offlineToolsList, unchecked_return_type = "{tools: unknown[]}")]
pub fn offline_tools_list() -> Result<JsValue, JsError> {
    to_js(&crate::offline::definitions::tools_list())
}

/// Runs an offline tool here (call it inside a Worker: it blocks until packing ends) and returns
/// the CallToolResult for `interpretOfflineCall` on the page ([`crate::offline::transfer`]: its
/// typed parts with the §5.1 Structure's arrays as binary, about half the bytes of its JSON and
/// no numbers written as text; a tool error as JSON). `onProgress(fraction, message, last)` is
/// called as packing advances, paced by [`crate::offline::pace`]: none in the first 100 ms, then
/// at most once per 100 ms with `last` false, and once more just before returning, with `last`
/// true, with the last report not passed yet (if any). A tool error is an `isError` result, never
/// a throw.
#[wasm_bindgen(js_name = offlineCall)]
pub fn offline_call(
    name: &str,
    #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
    #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "((fraction: number, message: string, last: boolean) => void) | null | undefined")]
    on_progress: JsValue,
) -> Result<Uint8Array, JsError> {
    let bytes = run_offline(name, args, on_progress, Place::Worker)?;
    Ok(Uint8Array::from(bytes.unwrap_or_default().as_slice()))
}

/// `offlineCall` on the calling thread (the page's) for a small call (issue 12,
/// [`crate::offline::here`]): the same transfer, or `undefined` when the structure would exceed
/// [`crate::offline::HERE_MAX_ATOMS`] atoms (declined before packing; a call whose arguments alone
/// show it, before they are read) or its packing ran past its deadline
/// ([`crate::offline::here::HERE_MAX_MS`]; given up). Then run it with `offlineCall` in the
/// Worker, where the same seed gives the same structure. The first call on a page also compiles
/// the tool's argument schema (tens of ms, once; showing the tool's form does it too).
/// `onProgress` gets only the call's last report, with `last` true, and only for a call answered
/// here: one given up reports nothing.
#[wasm_bindgen(js_name = offlineCallHere)]
pub fn offline_call_here(
    name: &str,
    #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
    #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "((fraction: number, message: string, last: boolean) => void) | null | undefined")]
    on_progress: JsValue,
) -> Result<Option<Uint8Array>, JsError> {
    if atoms_at_least(name, &args) > crate::offline::HERE_MAX_ATOMS {
        return Ok(None);
    }
    let bytes = run_offline(name, args, on_progress, Place::Here)?;
    Ok(bytes.map(|b| Uint8Array::from(b.as_slice())))
}

/// A lower bound of the atoms an offline call builds, from its arguments as given (a few
/// property reads, none of them converted): a large call is declined before its arguments (a
/// solvate's whole document) are read into wasm and checked. The tools' own count
/// ([`crate::offline::here`]) decides the rest (`polymer_chain`'s units are capped by its schema
/// at what the page takes anyway). A value of the wrong type counts 0 (the tool then answers with
/// its error).
fn atoms_at_least(name: &str, args: &JsValue) -> usize {
    let get = |v: &JsValue, key: &str| js_sys::Reflect::get(v, &JsValue::from_str(key)).ok();
    let number = |v: Option<JsValue>| {
        v.and_then(|v| v.as_f64())
            .filter(|n| n.is_finite() && *n > 0.0)
            .map_or(0, |n| n.min(usize::MAX as f64) as usize)
    };
    let length = |v: &JsValue, key: &str| number(get(v, key).and_then(|a| get(&a, "length")));
    match name {
        // At least one atom per molecule (a molecule has one), read until past the page's limit.
        "liquid_box" => {
            let Some(components) = get(args, "components").filter(js_sys::Array::is_array) else {
                return 0;
            };
            let components = components.unchecked_ref::<js_sys::Array>();
            let mut atoms = 0usize;
            for i in 0..components.length() {
                atoms = atoms.saturating_add(number(get(&components.get(i), "count")));
                if atoms > crate::offline::HERE_MAX_ATOMS {
                    break;
                }
            }
            atoms
        }
        // The document's atoms, by either list.
        "solvate" => get(args, "document").map_or(0, |d| {
            length(&d, "elements").max(length(&d, "positions") / 3)
        }),
        _ => 0,
    }
}

/// `offlineCall` and `offlineCallHere`: the arguments read, the tool run with its reports passed
/// on and, [`Place::Here`], its deadline kept ([`HereDeadline`]: the packer stopped through its
/// cancel flag, the call given up, `None`) or its size refused (`None`).
fn run_offline(
    name: &str,
    args: JsValue,
    on_progress: JsValue,
    place: Place,
) -> Result<Option<Vec<u8>>, JsError> {
    let args: Value = json_from_js_or_default(args, "args")?;
    let callback = on_progress.dyn_into::<js_sys::Function>().ok();
    let reporting = match place {
        // Paced for the Worker's messages ([`crate::offline::pace`]).
        Place::Worker => Reporting::Paced(ProgressPace::new(performance_now())),
        // Held: only the last report reaches the host, with the result (the page's thread is
        // blocked meanwhile and cannot show any), and none of a call given up.
        Place::Here => Reporting::Here {
            deadline: HereDeadline::new(
                !HERE_STARTED.with(|started| started.borrow().iter().any(|t| t == name)),
            ),
            last: None,
        },
    };
    // A call made from within another's progress callback has the slot to itself meanwhile.
    let outer = PROGRESS.with(|slot| slot.replace(Some((callback, reporting))));
    let past_deadline = AtomicBool::new(false);
    let report = |fraction: f64, message: &str| {
        let (pass, passed) = PROGRESS.with(|slot| {
            let mut slot = slot.borrow_mut();
            let Some((f, reporting)) = slot.as_mut() else {
                return (None, false);
            };
            match reporting {
                Reporting::Paced(pace) => {
                    let pass = f
                        .as_ref()
                        .filter(|_| pace.offer(performance_now(), fraction, message));
                    (pass.cloned(), false)
                }
                Reporting::Here { deadline, last } => {
                    let held = last.get_or_insert_with(|| (0.0, String::new()));
                    held.0 = fraction;
                    held.1.clear();
                    held.1.push_str(message);
                    (None, deadline.passed(performance_now()))
                }
            }
        });
        if passed {
            past_deadline.store(true, Ordering::Relaxed);
        }
        if let Some(f) = pass {
            call_progress(&f, fraction, message, false);
        }
    };
    let control = crate::pack::PackControl {
        cancel: Some(&past_deadline),
        progress: Some(&report),
    };
    let bytes = match place {
        Place::Worker => Some(crate::offline::call_tool_transfer(name, &args, &control)),
        Place::Here => crate::offline::call_tool_here(name, &args, &control),
    };
    if let Some((f, reporting)) = PROGRESS.with(|slot| slot.replace(outer)) {
        let last = match reporting {
            Reporting::Paced(mut pace) => pace.finish().map(|(fr, m)| (fr, m.to_string())),
            Reporting::Here { last, deadline } => {
                // The tool's code has run here now (its first report came): compiled.
                if deadline.started() {
                    HERE_STARTED.with(|started| {
                        let mut started = started.borrow_mut();
                        if !started.iter().any(|t| t == name) {
                            started.push(name.to_string());
                        }
                    });
                }
                last.filter(|_| bytes.is_some())
            }
        };
        if let (Some(f), Some((fraction, message))) = (f, last) {
            call_progress(&f, fraction, &message, true);
        }
    }
    Ok(bytes)
}

/// How a running offline call's reports reach the host.
enum Reporting {
    /// The Worker's: paced.
    Paced(ProgressPace),
    /// The page's thread: the deadline, and the last report, held.
    Here {
        deadline: HereDeadline,
        last: Option<(f64, String)>,
    },
}

/// §5/§6: [`interpret_call`] for what `offlineCall` returned (in the offline Worker): the same
/// checks (§5.1 included) and the same outcome as `interpretCall` on the CallToolResult's JSON,
/// except that the §9 cap counts the transfer's bytes ([`crate::offline::transfer`]).
#[wasm_bindgen(js_name = interpretOfflineCall, unchecked_return_type = "InterpretOutcome")]
pub fn interpret_offline_call(
    #[wasm_bindgen(unchecked_param_type = "ToolButton")] button: JsValue,
    transfer: &Uint8Array,
) -> Result<JsValue, JsError> {
    let button = ButtonHead::from_js(button)?;
    let (outcome, refused) = crate::offline::transfer::interpret(
        &button.name,
        &button.marker,
        &JsBytes(transfer),
        &ResultLimits::default(),
    );
    Ok(interpreted_outcome(&button.name, outcome, refused))
}

impl crate::offline::transfer::Source for JsBytes<'_> {
    fn total(&self) -> usize {
        self.0.length() as usize
    }
    fn copy(&self, at: usize, out: &mut [u8]) {
        self.0
            .subarray(at as u32, (at + out.len()) as u32)
            .copy_to(out);
    }
}

/// `onProgress(fraction, message, last)`; what the callback throws is ignored (progress never
/// stops the work).
fn call_progress(f: &js_sys::Function, fraction: f64, message: &str, last: bool) {
    let _ = f.call3(
        &JsValue::NULL,
        &JsValue::from_f64(fraction),
        &JsValue::from_str(message),
        &JsValue::from_bool(last),
    );
}

#[wasm_bindgen]
extern "C" {
    /// `performance.now()` (ms, monotone; a Worker, a page and Node all have it).
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

thread_local! {
    /// The running offline call's JS progress callback (if any) and how its reports reach it. The
    /// packer's callback is a closure that reads this and captures only the cancel flag (an
    /// atomic), so it needs no `unsafe impl Sync` on a JS function; a call from any other thread
    /// finds nothing here and does nothing.
    static PROGRESS: std::cell::RefCell<Option<(Option<js_sys::Function>, Reporting)>> = const { std::cell::RefCell::new(None) };
    /// The offline tools whose code has run on this thread in a call here (a call reached its
    /// first report): their next calls get [`HereDeadline::new`]'s shorter deadline.
    static HERE_STARTED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}
