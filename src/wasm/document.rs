//! §4.3: the open document taken once, for the JavaScript API (`buildArguments` on every
//! keystroke, `validateArguments`, the offline tools' arguments). Converting a 300 000-atom
//! document from JavaScript each time (one call into JavaScript per number through
//! serde-wasm-bindgen) was most of a keystroke's cost. Its plain arrays are copied by JavaScript
//! loops (`src/js/snippets/document.js`) straight into the vectors of a Structure (typed arrays
//! the host has are used as they are), checked by the typed §5.1 validator, and only the outcome
//! is kept; which document is the last one again is [`crate::contract::document`]'s rule. A
//! document with other fields, or values the loops do not take (not a whole number, out of
//! range), goes through the exact serde path, whose errors name the field.

use std::cell::RefCell;

use js_sys::{Array, Float64Array, Object, Uint32Array, Uint8Array};
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::interop::{from_js, get, json_from_js_or_default};
use crate::contract::document::LastDocument;
use crate::contract::structure::Structure;
use crate::contract::validate::DocumentCheck;
use crate::contract::values::FormContext;

#[wasm_bindgen(module = "/src/js/snippets/document.js")]
extern "C" {
    /// `[elements, positions, bonds, bondOrders]` lengths (−1: no bond orders) of a document the
    /// fast copy may take, else `null`.
    #[wasm_bindgen(js_name = documentLengths)]
    fn document_lengths(document: &JsValue) -> JsValue;
    /// Fills the views from the document: 0 not taken, 1 taken (no cell), 2 taken with the cell.
    #[wasm_bindgen(js_name = fillStructure)]
    fn fill_structure(
        document: &JsValue,
        elements: &Uint8Array,
        positions: &Float64Array,
        bonds: &Uint32Array,
        orders: &JsValue,
        cell: &Float64Array,
    ) -> u32;
    /// A shallow copy of `object` without `key`.
    #[wasm_bindgen(js_name = withoutKey)]
    fn without_key(object: &JsValue, key: &str) -> JsValue;
    /// `object[key].length`, or −1.
    #[wasm_bindgen(js_name = arrayLength)]
    fn array_length(object: &JsValue, key: &str) -> f64;
}

thread_local! {
    /// The last document taken ([`LastDocument`]: the rule is the contract's), by the host's
    /// object (compared by identity) and its `documentVersion`.
    static LAST_DOCUMENT: RefCell<LastDocument<JsValue, JsValue>> = const { RefCell::new(LastDocument::new()) };
}

/// §4.3: the typed §5.1 check of the open document, taken once ([`LastDocument`]: with a
/// `version` (not `undefined`), the same version and array lengths mean the same document even in
/// a new object; without one, the same object does).
pub fn take_document(document: &JsValue, version: &JsValue) -> DocumentCheck {
    let lengths = [
        array_length(document, "elements"),
        array_length(document, "positions"),
    ];
    let version = (!version.is_undefined()).then(|| version.clone());
    let found = LAST_DOCUMENT.with(|last| last.borrow_mut().find(document, &version, lengths));
    if let Some(check) = found {
        return check;
    }
    // Checked with the slot released: reading the host's document runs its code.
    let check = check_document(document);
    LAST_DOCUMENT.with(|last| {
        last.borrow_mut()
            .keep(document.clone(), version, lengths, check.clone())
    });
    check
}

/// A zeroed vector of `n` items, or `None` when the memory cannot be had.
fn zeroed<T: Copy + Default>(n: f64) -> Option<Vec<T>> {
    let n = usize::try_from(n as i64).ok()?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    v.resize(n, T::default());
    Some(v)
}

/// The fast copy: the document's arrays written by JavaScript straight into the structure's
/// vectors (views of wasm memory), with no typed arrays in between; `None` when the document is
/// not one it takes (the caller then takes the serde path).
fn fill_document(document: &JsValue) -> Option<Structure> {
    let lengths: Vec<f64> = document_lengths(document)
        .dyn_into::<Array>()
        .ok()?
        .iter()
        .filter_map(|n| n.as_f64())
        .collect();
    let [n_elements, n_positions, n_bonds, n_orders] = lengths[..] else {
        return None;
    };
    let mut elements: Vec<u8> = zeroed(n_elements)?;
    let mut positions: Vec<f64> = zeroed(n_positions)?;
    let mut bonds: Vec<[u32; 2]> = zeroed(n_bonds)?;
    let mut orders: Option<Vec<u8>> = if n_orders < 0.0 {
        None
    } else {
        Some(zeroed(n_orders)?)
    };
    let mut cell = [0.0f64; 9];
    // SAFETY: the views cover exactly the vectors above, which live until after the call; no
    // wasm memory is allocated between making the views and the end of the JavaScript call
    // (which does not call into wasm), so the memory cannot grow and the views stay valid.
    let taken = unsafe {
        let orders_view = match orders.as_mut() {
            Some(o) => JsValue::from(Uint8Array::view_mut_raw(o.as_mut_ptr(), o.len())),
            None => JsValue::NULL,
        };
        fill_structure(
            document,
            &Uint8Array::view_mut_raw(elements.as_mut_ptr(), elements.len()),
            &Float64Array::view_mut_raw(positions.as_mut_ptr(), positions.len()),
            &Uint32Array::view_mut_raw(bonds.as_mut_ptr().cast::<u32>(), 2 * bonds.len()),
            &orders_view,
            &Float64Array::view_mut_raw(cell.as_mut_ptr(), cell.len()),
        )
    };
    if taken == 0 {
        return None;
    }
    Some(Structure {
        elements,
        positions,
        cell: (taken == 2).then_some(cell),
        bonds,
        bond_orders: orders,
        ..Structure::default()
    })
}

/// Converts (fast copy, else the exact serde path) and checks a document.
fn check_document(document: &JsValue) -> DocumentCheck {
    let keys: Vec<String> = if document.is_object() && !Array::is_array(document) {
        Object::keys(document.unchecked_ref::<Object>())
            .iter()
            .filter_map(|k| k.as_string())
            .collect()
    } else {
        Vec::new()
    };
    if let Some(structure) = fill_document(document) {
        return DocumentCheck::of_structure(&structure, keys);
    }
    let deserializer = serde_wasm_bindgen::Deserializer::from(document.clone());
    match Structure::deserialize(deserializer) {
        Ok(structure) => DocumentCheck::of_structure(&structure, keys),
        Err(e) => DocumentCheck::unreadable(&e.to_string(), keys),
    }
}

/// A `FormContext` from JavaScript with the document taken once ([`take_document`]), never
/// converted as a whole; also returns the document object itself, which the arguments carry.
pub fn read_context(context: JsValue) -> Result<(FormContext, Option<JsValue>), JsError> {
    if context.is_undefined() || context.is_null() {
        return Ok((FormContext::default(), None));
    }
    let document = get(&context, "document");
    if document.is_undefined() || document.is_null() {
        return Ok((from_js(context, "context")?, None));
    }
    let version = get(&context, "documentVersion");
    let mut form_context: FormContext = from_js(without_key(&context, "document"), "context")?;
    form_context.document_check = Some(take_document(&document, &version));
    Ok((form_context, Some(document)))
}

/// Arguments without their document, and the document's check.
pub type SplitArguments = (serde_json::Map<String, Value>, DocumentCheck);

/// Arguments from JavaScript whose `document_property` holds an object: that object taken once
/// ([`take_document`]) and the rest converted; `None` when there is no such object.
pub fn split_document(
    args: &JsValue,
    document_property: &str,
) -> Result<Option<SplitArguments>, JsError> {
    if !args.is_object() {
        return Ok(None);
    }
    let document = get(args, document_property);
    if !document.is_object() {
        return Ok(None);
    }
    let rest = json_from_js_or_default(without_key(args, document_property), "args")?;
    let Value::Object(rest) = rest else {
        return Ok(None);
    };
    Ok(Some((rest, take_document(&document, &JsValue::UNDEFINED))))
}
