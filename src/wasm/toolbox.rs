//! §3: the toolbox for the page's JavaScript, both ways it is made: parseToolList's fast way
//! (the host's tools/list packed by `packTools`, classified without reading a schema, assembled
//! by `assembleToolbox` with each button's schema part made on first read) and connect()'s
//! (`assembleListed`). The encoding is [`crate::contract::discovery::page`]'s; the JavaScript half
//! is `src/js/snippets/toolbox.js`; this file moves the texts and arrays across and reads a
//! host's schema object when the page asks for a button's part.

use js_sys::{Array, Int32Array, Uint32Array, Uint8Array};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::interop::{from_js_json, get};
use crate::contract::discovery::{self, page};
use crate::contract::validate::{schema_entry_by_serial, schema_entry_for_text, Compiled};

#[wasm_bindgen(module = "/src/js/snippets/toolbox.js")]
extern "C" {
    /// `{bytes, lengths, holders: object[], descriptions: (string | null)[], copies: object[]}`
    /// ([`page::packed_texts`] cuts its buffer), or `null`.
    #[wasm_bindgen(js_name = packTools)]
    fn pack_tools(list: &JsValue) -> JsValue;
    /// The toolbox object from `text` ([`page::PageToolbox`] as JSON) and `packed`: the host's names,
    /// schemas and descriptions put in, each button's form, disabled reason and notices (and so
    /// the toolbox's notices) made by `resolve` ([`deferred_part`]) on first read, `ok: true`.
    #[wasm_bindgen(js_name = assembleToolbox)]
    fn assemble_toolbox(text: &str, packed: &JsValue, resolve: &JsValue) -> JsValue;
    /// connect()'s toolbox object: `text` parsed; each tool's `inputSchema` / `outputSchema`
    /// (an index into `schemas`) and each button's form (`formIndex` into `forms`) parsed on
    /// first read; `ok: true`.
    #[wasm_bindgen(js_name = assembleListed)]
    fn assemble_listed(
        text: &str,
        forms: &Array,
        form_index: &Int32Array,
        schemas: &Array,
    ) -> JsValue;
}

/// The cache entry of a host's `inputSchema` value: found by its JSON text `text` (the page's
/// `JSON.stringify` wrote it, so it is an object exactly when it starts with `{`); a value that
/// text does not carry (`None`: a `BigInt`, a cycle) or `serde_json` does not read (nesting
/// beyond serde_json's limit) goes the general way ([`from_js_json`]). `Ok(None)`: not an object
/// (no input schema); `Err`: not readable at all.
fn host_schema_entry(text: Option<String>, schema: &JsValue) -> Result<Option<Compiled>, String> {
    if let Some(text) = &text {
        if !text.starts_with('{') {
            return Ok(None);
        }
        if let Some(entry) = schema_entry_for_text(text) {
            return Ok(Some(entry));
        }
    }
    let value: Value = from_js_json(schema.clone(), "inputSchema").map_err(|e| {
        JsValue::from(e)
            .dyn_into::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .unwrap_or_default()
    })?;
    Ok(value
        .is_object()
        .then(|| crate::contract::validate::schema_entry(&value)))
}

/// §3/§4 a deferred button's schema part ([`page::deferred_part`]), for the first read of its
/// `form`, `disabledReason` or `notices`: `[serial | null, form, disabledReason | null, notices
/// JSON text]`. `key` is the schema's JSON text as the page's `JSON.stringify` wrote it
/// (`undefined` when it wrote none), or the serial number ([`SchemaEntry::serial`]) of the cache
/// entry an earlier button of the same toolbox with that text was given together with its form
/// text; `schema` is the host's `inputSchema`, `label` and `marker` (JSON text) the button's as
/// made. `form` is the form's JSON text, `null` (no form), or `true`: the form of the entry
/// `key` named, whose text the page has (so one distinct schema's text crosses in, and its form
/// crosses out, once per toolbox). `serial` is given with a form's text.
///
/// [`SchemaEntry::serial`]: crate::contract::validate::SchemaEntry::serial
fn deferred_part(key: JsValue, schema: JsValue, label: String, marker: String) -> Array {
    let known = key.as_f64().and_then(|n| schema_entry_by_serial(n as u64));
    let by_serial = known.is_some();
    let entry = match known {
        Some(entry) => Ok(Some(entry)),
        // A text, or a serial whose entry the cache dropped meanwhile: look the schema up again.
        None => {
            let text = match key.as_string() {
                Some(text) => Some(text),
                None if key.as_f64().is_some() => js_sys::JSON::stringify(&schema)
                    .ok()
                    .and_then(|t| t.as_string()),
                None => None,
            };
            host_schema_entry(text, &schema)
        }
    };
    let part = page::deferred_part(&entry, by_serial, &label, &marker);
    let (serial, form) = match part.form {
        Some(page::PartForm::Known) => (JsValue::NULL, JsValue::TRUE),
        Some(page::PartForm::New { serial, text }) => {
            (JsValue::from(serial as f64), JsValue::from_str(text))
        }
        None => (JsValue::NULL, JsValue::NULL),
    };
    let out = Array::new_with_length(4);
    out.set(0, serial);
    out.set(1, form);
    out.set(
        2,
        part.disabled_reason
            .map_or(JsValue::NULL, |r| JsValue::from_str(&r)),
    );
    out.set(3, JsValue::from_str(&part.notices));
    out
}

thread_local! {
    /// [`deferred_part`] as a JavaScript function, made once for every toolbox.
    static RESOLVE: Closure<dyn Fn(JsValue, JsValue, String, String) -> Array> =
        Closure::new(deferred_part);
}

/// §3: `parseToolList` of a JavaScript tools/list the fast way (see above): `Some(Ok(toolbox))`,
/// `Some(Err(why))` when the list is not a tool list, `None` when the list must be taken the
/// general way (`from_js_json` → [`discovery::parse_tool_list`]). No schema is read here: each
/// button's form, disabled reason and notices are made on their first read ([`deferred_part`]).
pub fn toolbox_from_js(list: &JsValue, server_id: Option<&str>) -> Option<Result<JsValue, String>> {
    let packed = pack_tools(list);
    if packed.is_null() {
        return None;
    }
    let bytes = get(&packed, "bytes")
        .dyn_into::<Uint8Array>()
        .ok()?
        .to_vec();
    let lengths = get(&packed, "lengths").dyn_into::<Uint32Array>().ok()?;
    let page = match page::page_toolbox(
        std::str::from_utf8(&bytes).ok()?,
        &lengths.to_vec(),
        server_id,
    )? {
        Ok(page) => page,
        Err(error) => return Some(Err(error)),
    };
    let resolve = RESOLVE.with(|r| r.as_ref().clone());
    Some(Ok(assemble_toolbox(&page, &packed, &resolve)))
}

/// §3: connect()'s toolbox for the page ([`page::listed_page`]: the toolbox as JSON text without
/// forms and schemas, each distinct form and schema once as text), made into the toolbox object by
/// `assembleListed`, each form and schema parsed on a tool's first read (a fresh object per tool,
/// as `JSON.parse` of the whole toolbox gave). `toolbox` comes from
/// [`discovery::parse_tool_list_with`] (forms left out; `entries` its buttons' cache entries) and
/// is given back unchanged.
pub fn listed_toolbox_to_js(
    toolbox: &mut discovery::Toolbox,
    entries: &[Option<Compiled>],
) -> Result<JsValue, JsError> {
    let listed = page::listed_page(toolbox, entries)
        .ok_or_else(|| JsError::new("The tool list could not be converted for the page."))?;
    let forms: Array = listed.forms.iter().map(|f| JsValue::from_str(f)).collect();
    let schemas: Array = listed
        .schemas
        .iter()
        .map(|s| JsValue::from_str(s))
        .collect();
    Ok(assemble_listed(
        &listed.text,
        &forms,
        &Int32Array::from(&listed.form_index[..]),
        &schemas,
    ))
}
