//! The exported functions of the JavaScript API for tools, forms and arguments (§3–§4, §6–§8): the
//! toolbox, a form's values and arguments, their checks, the call's timing, launch links, server
//! URLs, provenance records and library molecules. Each is a thin wrapper: read the arguments
//! (interop), call the contract core, convert the answer. Results are [`super::results`], the
//! offline tools [`super::offline`].

use js_sys::Object;
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::document::{read_context, split_document};
use super::interop::{
    failure, from_js, from_js_json, json_from_js_or_default, set, success, to_js, to_js_json,
    ButtonRef,
};
use super::results::BuilderResultHandle;
use super::toolbox::toolbox_from_js;
use crate::chem::molblock::{self, Dimension, Molecule};
use crate::contract::discovery;
use crate::contract::launch;
use crate::contract::provenance::{self, ServerIdentity};
use crate::contract::validate::{
    validate_arguments as validate_against_schema, validate_with_document,
};
use crate::contract::values::{self, FormContext};
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
