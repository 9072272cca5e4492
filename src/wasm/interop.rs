//! Conversions between JavaScript values and the crate's Rust types that every binding uses:
//! serde both ways (plain objects, numbers as numbers; large plain data through JSON text), the
//! plain-data walk of JSON-value arguments, `{ok, …}` outcomes, the buttons the host hands back,
//! and the elicitation hook's values. The snapshot ([`super::snapshot`]), the §4.3 document
//! ([`super::document`]) and the toolbox ([`super::toolbox`]) have their own files.

use js_sys::{Array, Object, Reflect};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::contract::form::Form;
use crate::contract::marker::Marker;

/// Serialises to plain JavaScript objects (not `Map`s), numbers as numbers. A server may send an
/// integer beyond 2^53 (a schema's `maximum`, a provenance value), which the direct conversion
/// refuses; such values go through JSON text and `JSON.parse`, which rounds them as JavaScript does.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsError> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value.serialize(&serializer).or_else(|direct| {
        serde_json::to_string(value)
            .ok()
            .and_then(|text| js_sys::JSON::parse(&text).ok())
            .ok_or_else(|| JsError::new(&format!("cannot convert to JavaScript: {direct}")))
    })
}

/// Reads a large plain-data JavaScript value (a tools/list result) through JSON text: one
/// `JSON.stringify` and one `serde_json` parse cost a fraction of serde-wasm-bindgen's call into
/// JavaScript per value. A value JSON cannot carry (a cycle, a `BigInt`) goes the direct way.
pub fn from_js_json<T: DeserializeOwned>(value: JsValue, what: &str) -> Result<T, JsError> {
    let text = js_sys::JSON::stringify(&value)
        .ok()
        .and_then(|t| t.as_string());
    match text.and_then(|t| serde_json::from_str(&t).ok()) {
        Some(parsed) => Ok(parsed),
        None => from_js(value, what),
    }
}

/// Serialises a large value (a toolbox) through JSON text and `JSON.parse`: plain objects and
/// numbers, as [`to_js`] gives, at a fraction of the cost.
pub fn to_js_json<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsError> {
    match serde_json::to_string(value)
        .ok()
        .and_then(|text| js_sys::JSON::parse(&text).ok())
    {
        Some(parsed) => Ok(parsed),
        None => to_js(value),
    }
}

/// Reads a JavaScript value into a Rust type; `what` names the argument in the error.
pub fn from_js<T: DeserializeOwned>(value: JsValue, what: &str) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(value).map_err(|e| JsError::new(&format!("{what}: {e}")))
}

/// Reads an optional argument: `undefined` and `null` give `T::default()`.
pub fn from_js_or_default<T: DeserializeOwned + Default>(
    value: JsValue,
    what: &str,
) -> Result<T, JsError> {
    if value.is_undefined() || value.is_null() {
        Ok(T::default())
    } else {
        from_js(value, what)
    }
}

/// Reads an optional argument into a JSON value (`undefined` and `null` give `null`), exactly as
/// [`from_js_or_default`] reads it through serde-wasm-bindgen, but plain data (what `JSON.parse`
/// gives) is walked here with a few calls into JavaScript per value instead of a dozen (issue 12:
/// the conversion was ~11 % of a tiny offline call's wasm). Anything else (a `BigInt`, a typed
/// array, an `ArrayBuffer`, a `Map` or other iterable object, a function) goes the
/// serde-wasm-bindgen way, with its outcome and its error.
pub fn json_from_js_or_default(value: JsValue, what: &str) -> Result<Value, JsError> {
    match plain_json(&value, 0) {
        Some(parsed) => Ok(parsed),
        None => from_js_or_default(value, what),
    }
}

/// The key serde_json's `raw_value` feature reserves in a map (`serde_json::value::RawValue`).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Nesting past which [`plain_json`] hands the value to serde-wasm-bindgen (a cycle recurses
/// there as it always did).
const PLAIN_DEPTH: usize = 64;

/// serde-wasm-bindgen's `deserialize_any` into a [`Value`] for plain data: nullish → `null`; a
/// boolean; a number (a safe integer as an integer, else a float, non-finite → `null`); a string;
/// an array (holes → `null`); an object without `Symbol.iterator` → its `Object.entries` in
/// order. `None` for anything else.
fn plain_json(value: &JsValue, depth: usize) -> Option<Value> {
    if value.is_undefined() || value.is_null() {
        return Some(Value::Null);
    }
    if let Some(b) = value.as_bool() {
        return Some(Value::Bool(b));
    }
    if let Some(x) = value.as_f64() {
        let safe = x.is_finite() && x.trunc() == x && x.abs() <= 9_007_199_254_740_991.0;
        return Some(if safe {
            Value::from(x as i64)
        } else {
            Value::from(x)
        });
    }
    if let Some(s) = value.as_string() {
        return Some(Value::String(s));
    }
    if depth >= PLAIN_DEPTH || !value.is_object() {
        return None;
    }
    if Array::is_array(value) {
        let array: &Array = value.unchecked_ref();
        let mut items = Vec::with_capacity(array.length() as usize);
        for i in 0..array.length() {
            items.push(plain_json(&array.get(i), depth + 1)?);
        }
        return Some(Value::Array(items));
    }
    if value.has_type::<js_sys::ArrayBuffer>() || js_sys::Symbol::iterator().js_in(value) {
        return None;
    }
    let entries = Object::entries(value.unchecked_ref());
    let mut map = serde_json::Map::with_capacity(entries.length() as usize);
    for i in 0..entries.length() {
        let pair: Array = entries.get(i).unchecked_into();
        let key = pair.get(0).as_string()?;
        // serde_json's raw-value marker key is read differently by its map visitor.
        if key == RAW_VALUE_TOKEN {
            return None;
        }
        map.insert(key, plain_json(&pair.get(1), depth + 1)?);
    }
    Some(Value::Object(map))
}

/// Sets `key` on a JavaScript object.
pub fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    // Reflect.set on a plain, extensible object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), &value.into());
}

/// `object[key]` (`undefined` when it cannot be read).
pub fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// `{ok: false, error}`.
pub fn failure(error: &str) -> JsValue {
    let object = Object::new();
    set(&object, "ok", false);
    set(&object, "error", error);
    object.into()
}

/// `{ok: true, <key>: value}`.
pub fn success(key: &str, value: JsValue) -> JsValue {
    let object = Object::new();
    set(&object, "ok", true);
    set(&object, key, value);
    object.into()
}

/// How an error names a button argument that is not one.
const BUTTON_ARGUMENT: &str = "button (pass a button from parseToolList)";

/// What the API needs of a button the host hands back: its name, marker and input schema. The
/// form is rebuilt from the schema, so a host cannot bypass the checks by editing a descriptor.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ButtonRef {
    pub name: String,
    pub marker: Marker,
    #[serde(default)]
    pub input_schema: Value,
}

impl ButtonRef {
    /// Reads a button object as returned by `parseToolList`.
    pub fn from_js(value: JsValue) -> Result<ButtonRef, JsError> {
        from_js(value, BUTTON_ARGUMENT)
    }

    /// The button's form; `Err` is the `Builder cannot build a form: …` reason.
    ///
    /// The schema was compiled once when the toolbox was made; here the form is only rebuilt (a
    /// schema that does not compile still gives a problem when arguments are validated).
    pub fn form(&self) -> Result<Form, String> {
        if !self.input_schema.is_object() {
            return Err("Builder cannot build a form: the tool has no input schema".to_string());
        }
        crate::contract::validate::schema_entry(&self.input_schema)
            .form(&self.input_schema)
            .clone()
            .map_err(|e| format!("Builder cannot build a form: {e}"))
    }
}

/// What `interpretCall` and `planApply` need of a button: its name and marker. Its input schema
/// is not read: converting that object tree into wasm was most of a tiny offline result's
/// `interpretCall` (issue 12).
#[derive(Debug, Clone, Deserialize)]
pub struct ButtonHead {
    pub name: String,
    pub marker: Marker,
}

impl ButtonHead {
    /// Reads a button object as returned by `parseToolList`.
    pub fn from_js(value: JsValue) -> Result<ButtonHead, JsError> {
        from_js(value, BUTTON_ARGUMENT)
    }
}

/// A JavaScript array of strings.
pub fn string_array(items: &[String]) -> Array {
    items.iter().map(|s| JsValue::from_str(s)).collect()
}

/// An elicitation form for the host's `onElicitation` hook: `{mode: "form", message, requestedSchema,
/// content}` (`content`: the initial values, the schema's defaults).
pub fn elicitation_to_js(form: &crate::mcp::elicit::Form) -> JsValue {
    let object = Object::new();
    set(&object, "mode", "form");
    set(&object, "message", form.message.as_str());
    set(
        &object,
        "requestedSchema",
        to_js(&form.requested_schema).unwrap_or(JsValue::NULL),
    );
    set(
        &object,
        "content",
        to_js(&form.content).unwrap_or(JsValue::NULL),
    );
    object.into()
}

/// The hook's answer `{action: "accept" | "decline" | "cancel", content?}`; anything else declines.
pub fn elicit_action_from_js(value: &JsValue) -> crate::mcp::elicit::Action {
    use crate::mcp::elicit::Action;
    let action = js_sys::Reflect::get(value, &JsValue::from_str("action"))
        .ok()
        .and_then(|a| a.as_string());
    match action.as_deref() {
        Some("accept") => {
            let content = js_sys::Reflect::get(value, &JsValue::from_str("content"))
                .ok()
                .filter(|c| !c.is_undefined() && !c.is_null())
                .and_then(|c| serde_wasm_bindgen::from_value(c).ok())
                .unwrap_or(serde_json::Value::Null);
            Action::Accept(content)
        }
        Some("cancel") => Action::Cancel,
        _ => Action::Decline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    #[wasm_bindgen(module = "/tests/wasm/plain_values.js")]
    extern "C" {
        /// `[source, value, walked]` for each case (see the module).
        #[wasm_bindgen(js_name = plainValueCases)]
        fn plain_value_cases() -> Array;
    }

    /// The plain-data walk reads every value as serde-wasm-bindgen does: the same JSON value,
    /// integers and floats told apart the same way (exact floats, -0, 2^53, 2^60, non-finite),
    /// `undefined` as null (a property kept, an array hole), order kept; and what is not plain
    /// data (a BigInt, a typed array, an `ArrayBuffer`, a `Map`, a function) gives
    /// serde-wasm-bindgen's own outcome or error. The values are made by a JavaScript module
    /// (`tests/wasm/plain_values.js`), not evaluated from text here.
    #[wasm_bindgen_test]
    fn plain_json_reads_as_serde_wasm_bindgen() {
        let cases = plain_value_cases();
        assert!(cases.length() >= 26, "{}", cases.length());
        let (mut walked, mut handed_on) = (0, 0);
        for case in cases.iter() {
            let case: Array = case.unchecked_into();
            let code = case.get(0).as_string().unwrap();
            let value = case.get(1);
            let ours = json_from_js_or_default(value.clone(), "args").map_err(JsValue::from);
            let theirs = from_js_or_default::<Value>(value.clone(), "args").map_err(JsValue::from);
            match (ours, theirs) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{code}");
                    // Same representation, not only equal numbers (an integer stays one).
                    assert_eq!(a.to_string(), b.to_string(), "{code}");
                }
                (Err(a), Err(b)) => {
                    let text =
                        |e: &JsValue| Reflect::get(e, &"message".into()).unwrap().as_string();
                    assert_eq!(text(&a), text(&b), "{code}");
                }
                (a, b) => panic!("{code}: {a:?} vs {b:?}"),
            }
            // The walk itself reads plain data (so the comparison above is the walk's), and
            // hands on what it must.
            match case.get(2).as_bool() {
                Some(true) => {
                    walked += 1;
                    assert!(plain_json(&value, 0).is_some(), "{code}");
                }
                Some(false) => {
                    handed_on += 1;
                    assert!(plain_json(&value, 0).is_none(), "{code}");
                }
                None => {}
            }
        }
        assert_eq!((walked, handed_on), (9, 8));
    }
}
