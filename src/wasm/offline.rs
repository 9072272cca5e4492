//! The offline tools for the page's JavaScript (`src/js/offline.js` drives them): their
//! `tools/list`, a call in the offline Worker or on the page's thread (the policy is
//! [`crate::offline::run`]'s and [`crate::offline::here`]'s; this file reads the arguments and
//! hands over the clock and the host's callback), and the Worker's answer interpreted on the page.

use std::rc::Rc;

use js_sys::{Array, Reflect, Uint8Array};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::interop::{json_from_js_or_default, to_js, ButtonHead};
use super::results::{interpreted_outcome, JsBytes};
use crate::contract::result::ResultLimits;
use crate::offline::here::{self, ArgsView};
use crate::offline::run::{self, Progress};
use crate::offline::Place;

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
    let args: Value = json_from_js_or_default(args, "args")?;
    let bytes = run::run(
        name,
        &args,
        Place::Worker,
        performance_now,
        progress(on_progress),
    );
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
/// here: one given up reports nothing. The policy (the size rule, the deadline, the reports) is
/// [`crate::offline::here`]'s and [`crate::offline::run`]'s.
#[wasm_bindgen(js_name = offlineCallHere)]
pub fn offline_call_here(
    name: &str,
    #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
    #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "((fraction: number, message: string, last: boolean) => void) | null | undefined")]
    on_progress: JsValue,
) -> Result<Option<Uint8Array>, JsError> {
    if here::declined_unread(name, &JsArgs(args.clone())) {
        return Ok(None);
    }
    let args: Value = json_from_js_or_default(args, "args")?;
    let bytes = run::run(
        name,
        &args,
        Place::Here,
        performance_now,
        progress(on_progress),
    );
    Ok(bytes.map(|b| Uint8Array::from(b.as_slice())))
}

/// §5/§6: `interpretCall` for what `offlineCall` returned (in the offline Worker): the same
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

/// The host's `onProgress(fraction, message, last)`, when it is a function; what it throws is
/// ignored (progress never stops the work).
fn progress(on_progress: JsValue) -> Option<Progress> {
    let f = on_progress.dyn_into::<js_sys::Function>().ok()?;
    Some(Rc::new(move |fraction: f64, message: &str, last: bool| {
        let _ = f.call3(
            &JsValue::NULL,
            &JsValue::from_f64(fraction),
            &JsValue::from_str(message),
            &JsValue::from_bool(last),
        );
    }))
}

/// A call's arguments as the page holds them, read by [`here::atoms_at_least`] a property at a
/// time (`Reflect.get`: an error, on a value that is not an object, reads as nothing).
struct JsArgs(JsValue);

impl ArgsView for JsArgs {
    fn field(&self, key: &str) -> Option<Self> {
        Reflect::get(&self.0, &JsValue::from_str(key))
            .ok()
            .map(JsArgs)
    }
    fn number(&self) -> Option<f64> {
        self.0.as_f64()
    }
    fn length(&self) -> Option<f64> {
        self.field("length")?.number()
    }
    fn array_len(&self) -> Option<u32> {
        Array::is_array(&self.0).then(|| self.0.unchecked_ref::<Array>().length())
    }
    fn item(&self, i: u32) -> Option<Self> {
        Some(JsArgs(self.0.unchecked_ref::<Array>().get(i)))
    }
}

#[wasm_bindgen]
extern "C" {
    /// `performance.now()` (ms, monotone; a Worker, a page and Node all have it).
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}
