//! Conversions between JavaScript values and the crate's Rust types, gathered in one place.

use js_sys::{
    Array, Float32Array, Float64Array, Int32Array, Object, Reflect, Uint32Array, Uint8Array,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::contract::apply::{ApplyPlan, Snapshot};
use crate::contract::form::Form;
use crate::contract::marker::Marker;
use crate::contract::structure::{StringColumn, Structure};
use std::borrow::Cow;
use std::sync::Arc;

use crate::contract::discovery::{self, ToolSchemas};
use crate::contract::validate::{schema_entry_for_text, Compiled, DocumentCheck};
use crate::contract::values::FormContext;

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

fn opt_u8(values: Option<&[u8]>) -> JsValue {
    values
        .map(|v| Uint8Array::from(v).into())
        .unwrap_or(JsValue::NULL)
}

// Lazy per-atom string arrays. Building 500 000 JavaScript strings from wasm costs one
// `TextDecoder` call each (about 1 µs) and used to be ~70 % of `planApply` on a 500 000-atom
// result. The snapshot instead carries each string channel as a small table of distinct strings
// plus a `Uint32Array` of indices, and `labels`, `residueNames`, `atomNames` and `residueIds` are
// getters that build the plain array (`string[]`, `number[]`) on first read, then replace
// themselves with an ordinary writable data property holding it: a consumer reads exactly what
// it read before (also through spread, `JSON.stringify`, `structuredClone` / `postMessage`, all
// of which read the getter). On a snapshot frozen before the first read (e.g. by a state store)
// the getter keeps returning the one array it built, and assignment throws as it would on a
// frozen data property. Written as a module snippet (no `eval` / `new Function`: CSP-safe).
#[wasm_bindgen(inline_js = r#"
function lazy(target, key, build) {
  let built = false;
  let value;
  const settle = () => {
    // Once built, an ordinary data property (unless the object was frozen meanwhile).
    if (Object.getOwnPropertyDescriptor(target, key)?.configurable) {
      Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
    }
    return value;
  };
  Object.defineProperty(target, key, {
    get() {
      if (!built) {
        value = build();
        built = true;
      }
      return settle();
    },
    set(next) {
      if (!Object.getOwnPropertyDescriptor(target, key)?.configurable) {
        throw new TypeError(`Cannot assign to read only property '${key}' of object`);
      }
      value = next;
      built = true;
      settle();
    },
    enumerable: true,
    configurable: true,
  });
}
export function lazyStrings(target, key, table, index) {
  lazy(target, key, () => {
    const out = new Array(index.length);
    for (let i = 0; i < index.length; i++) out[i] = table[index[i]];
    return out;
  });
}
export function lazyLabels(target, key, table, index, ids) {
  lazy(target, key, () => {
    const out = new Array(index.length);
    for (let i = 0; i < index.length; i++) out[i] = table[index[i]] + ids[i];
    return out;
  });
}
export function lazyNumbers(target, key, values) {
  lazy(target, key, () => Array.from(values));
}
// The toolbox of parseToolList (see `toolbox_from_js`); a button's form is parsed on first read.
const enumerable = Object.prototype.propertyIsEnumerable;
const own = (o, k) => (enumerable.call(o, k) ? o[k] : undefined);
const asSent = (v) => (v === undefined || typeof v === "function" || typeof v === "symbol" ? null : v);
const plain = (o) => {
  const p = Object.getPrototypeOf(o);
  return (p === Object.prototype || p === null) && typeof o.toJSON !== "function";
};
const encoder = new TextEncoder(), NONE = 0xffffffff;
// Of a tool's plain `annotations` object discovery reads only `title`: the rest (the hints) is not sent.
const titleOf = (a) => (a !== null && typeof a === "object" && !Array.isArray(a) && plain(a) ? { title: own(a, "title") } : a);
export function packTools(list) {
  try {
    const holders = [], descriptions = [], copies = [];
    const reduce = (tool) => {
      if (tool === null || typeof tool !== "object" || Array.isArray(tool)) return tool;
      if (!plain(tool)) throw new TypeError("not a plain object");
      const copy = {};
      let description;
      for (const key of Object.keys(tool)) {
        if (key === "description") description = tool[key];
        else if (key === "annotations") copy[key] = titleOf(tool[key]);
        else if (key !== "inputSchema" && key !== "outputSchema") copy[key] = tool[key];
      }
      copy.inputSchema = holders.length;
      holders.push(tool);
      descriptions.push(typeof description === "string" ? description : null);
      copies.push(copy);
      return copy;
    };
    const tools = (a) => (Array.isArray(a) ? a.map(reduce) : a);
    let root;
    if (Array.isArray(list)) {
      root = list.map((item) => {
        const r = reduce(item);
        if (r !== item && Array.isArray(r.tools)) r.tools = tools(r.tools);
        return r;
      });
    } else if (list !== null && typeof list === "object" && plain(list)) {
      root = Object.assign({}, list);
      if ("tools" in root) root.tools = tools(root.tools);
    } else {
      return null;
    }
    // The list's text and each description as UTF-8 in one buffer (native encoding, no escaping).
    const text = JSON.stringify(root);
    let units = text.length;
    for (const d of descriptions) {
      if (d === null) continue;
      if (d.isWellFormed?.() === false) return null;
      units += d.length;
    }
    const bytes = new Uint8Array(3 * units), lengths = new Uint32Array(descriptions.length + 1);
    let at = (lengths[0] = encoder.encodeInto(text, bytes).written);
    descriptions.forEach((d, i) => {
      lengths[i + 1] = d === null ? NONE : encoder.encodeInto(d, bytes.subarray(at)).written;
      if (d !== null) at += lengths[i + 1];
    });
    return { bytes: bytes.subarray(0, at), lengths, holders, descriptions, copies };
  } catch {
    return null;
  }
}
// connect()'s toolbox: every tool through `attach`, every button then through `button` (its lazy parts).
function finishToolbox(box, attach, button) {
  box.buttons.forEach((b, i) => {
    attach(b);
    button(b, i);
  });
  box.plainTools.forEach(attach);
  box.ok = true;
  return box;
}
// A deferred button's form, disabledReason and notices: made together on the first read of any of
// them by `resolve` (Rust) from the schema, label and marker the button had when it was made. The
// same as `lazy` (an ordinary data property once read; on a frozen button the one value built),
// with accessors shared by every button and the state in a non-enumerable symbol property, so a
// toolbox costs no closures per button (and its buttons share their shapes). The buttons of one
// toolbox share `seen`: schema text → the serial of its cache entry and its form's text, so a
// schema whose text an earlier button sent is named by its serial and its form text comes back
// once (see `deferred_part`).
const DEFERRED = Symbol("deferred");
const resolvePart = (s) => {
  let text;
  try {
    text = JSON.stringify(s.schema);
  } catch {}
  const known = typeof text === "string" ? s.seen.get(text) : undefined;
  const p = s.resolve(known === undefined ? text : known.serial, s.schema, s.label, JSON.stringify(s.marker));
  if (p[1] === true) p[1] = known.form;
  else if (p[0] !== null && typeof text === "string") s.seen.set(text, { serial: p[0], form: p[1] });
  return p;
};
const partOf = (s) => (s.part ??= resolvePart(s));
const deferredProperty = (key, build) => ({
  get() {
    const s = this[DEFERRED];
    if (s[key] === undefined) s[key] = build(s);
    if (Object.getOwnPropertyDescriptor(this, key)?.configurable) {
      Object.defineProperty(this, key, { value: s[key], writable: true, enumerable: true, configurable: true });
    }
    return s[key];
  },
  set(next) {
    if (!Object.getOwnPropertyDescriptor(this, key)?.configurable) {
      throw new TypeError(`Cannot assign to read only property '${key}' of object`);
    }
    Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
  },
  enumerable: true,
  configurable: true,
});
const deferredProperties = {
  form: deferredProperty("form", (s) => { const p = partOf(s); return p[1] === null ? null : JSON.parse(p[1]); }),
  disabledReason: deferredProperty("disabledReason", (s) => partOf(s)[2]),
  notices: deferredProperty("notices", (s) => JSON.parse(partOf(s)[3])),
};
// Each button is made afresh in one order (the general way's key order), its lazy parts added as
// new accessors (never a data property redefined, which sends V8 to slow dictionary objects), so
// every button of every toolbox shares one shape. `text` is the toolbox as Rust wrote it for the
// page (`PageToolbox`): a tool is named by its index `k` among the host's tools, whose name it
// keeps; its tooltip and description are made by the §3 rule at parseToolList, each a string or
// `[start, end]`, the slice of the host's description it is (UTF-16 units). Each button's marker
// is a fresh object; the deferred part reads the one it was made from (never handed out), so a
// later change to the button's marker object does not reach its form, disabledReason or notices.
const lazyHead = { form: deferredProperties.form, disabledReason: deferredProperties.disabledReason };
export function assembleToolbox(text, packed, resolve) {
  const { holders, descriptions, copies } = packed;
  const page = JSON.parse(text);
  const serverId = page.serverId, markers = page.markers;
  const made = (k, t) => (typeof t === "string" ? t : descriptions[k].slice(t[0], t[1]));
  const seen = new Map();
  const buttons = page.buttons.map(([k, label, m, icon, tooltip, description]) => {
    const h = holders[k], sent = markers[m];
    const inputSchema = asSent(own(h, "inputSchema"));
    const marker = { ...sent };
    const b = { serverId, name: copies[k].name, label, tooltip: made(k, tooltip), description: made(k, description),
      category: sent.category, marker, icon };
    Object.defineProperties(b, lazyHead);
    b.inputSchema = inputSchema;
    b.outputSchema = asSent(own(h, "outputSchema"));
    Object.defineProperty(b, "notices", deferredProperties.notices);
    Object.defineProperty(b, DEFERRED, { value: { resolve, seen, schema: inputSchema, label, marker: sent,
      part: undefined, form: undefined, disabledReason: undefined, notices: undefined } });
    return b;
  });
  const plainTools = page.plainTools.map(([k, label, tooltip, description]) => ({ name: copies[k].name, label,
    tooltip: made(k, tooltip), description: made(k, description), inputSchema: asSent(own(holders[k], "inputSchema")),
    outputSchema: asSent(own(holders[k], "outputSchema")) }));
  const server = page.notices;
  const box = { serverId, buttons, categories: page.categories, unsupportedContract: page.unsupportedContract,
    unknownApply: page.unknownApply, malformed: page.malformed, plainTools, notices: server, ok: true };
  // The server's notices, then each button's (as parse_tool_list orders them).
  lazy(box, "notices", () => server.concat(...buttons.map((b) => b.notices)));
  return box;
}
// connect()'s toolbox (see `listed_toolbox_to_js`): schemas and forms parsed on first read.
export function assembleListed(text, forms, formIndex, schemas) {
  const box = JSON.parse(text);
  const attach = (tool) => {
    const k = tool.inputSchema;
    lazy(tool, "inputSchema", () => JSON.parse(schemas[k]));
    const o = tool.outputSchema;
    if (o !== null) lazy(tool, "outputSchema", () => JSON.parse(schemas[o]));
  };
  const button = (b, i) => {
    if (formIndex[i] >= 0) lazy(b, "form", () => JSON.parse(forms[formIndex[i]]));
  };
  return finishToolbox(box, attach, button);
}
// interpretCall's `{ok: true, summary, warnings, result}` in one call (four Reflect.set calls
// from wasm were ~15 % of a tiny result's interpretCall).
export function okOutcome(summary, warnings, result) {
  return { ok: true, summary, warnings, result };
}
"#)]
extern "C" {
    /// `{ok: true, summary, warnings, result}`.
    #[wasm_bindgen(js_name = okOutcome)]
    pub(super) fn ok_outcome(summary: &str, warnings: JsValue, result: JsValue) -> JsValue;
    /// `target[key]`: `index.map(i => table[i])`, built on first read (`index`: a typed array).
    #[wasm_bindgen(js_name = lazyStrings)]
    fn lazy_strings(target: &Object, key: &str, table: &Array, index: &JsValue);
    /// `target[key]`: `index.map((t, i) => table[t] + ids[i])`, built on first read.
    #[wasm_bindgen(js_name = lazyLabels)]
    fn lazy_labels(target: &Object, key: &str, table: &Array, index: &JsValue, ids: &JsValue);
    /// `target[key]`: `Array.from(values)`, built on first read.
    #[wasm_bindgen(js_name = lazyNumbers)]
    fn lazy_numbers(target: &Object, key: &str, values: &JsValue);
    /// `{bytes, lengths, holders: object[], descriptions: (string | null)[], copies: object[]}`
    /// (see above and [`packed_texts`]), or `null`.
    #[wasm_bindgen(js_name = packTools)]
    fn pack_tools(list: &JsValue) -> JsValue;
    /// The toolbox object from `text` ([`PageToolbox`] as JSON) and `packed`: the host's names,
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

/// A dictionary-encoded column as JavaScript sees it: its table, and its indices (a `Uint8Array`
/// for a table of at most 256 strings, as a result's residue and atom names are, else a
/// `Uint32Array`). The indices stay inside the lazy getters, which only look strings up with
/// them; a quarter of the bytes is less fresh JavaScript memory to touch (issue 10: `planApply`
/// in Chromium was mostly the first touches of its new typed arrays, ~0.7 ms per MB).
#[derive(Clone)]
struct ColumnJs {
    table: Array,
    index: JsValue,
}

impl ColumnJs {
    fn new(column: &StringColumn) -> ColumnJs {
        let index = column.indices();
        let index = if column.table().len() <= 0x100 {
            let narrow: Vec<u8> = index.iter().map(|&i| i as u8).collect();
            Uint8Array::from(narrow.as_slice()).into()
        } else {
            Uint32Array::from(index).into()
        };
        ColumnJs {
            table: string_array(column.table()),
            index,
        }
    }

    /// `target[key]`: the column's `string[]`, built on first read.
    fn lazy_strings(&self, target: &Object, key: &str) {
        lazy_strings(target, key, &self.table, &self.index);
    }
}

/// Largest integer a JavaScript number holds exactly (2^53 − 1).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Residue ids as an `Int32Array` (a `Float64Array` when some id does not fit in 32 bits), or
/// `None` when some id is beyond ±(2^53 − 1). Each element prints (`String(x)`) exactly as Rust
/// prints the `i64`.
fn ids_to_js(ids: &[i64]) -> Option<JsValue> {
    if let Some(small) = megane_structure_scan::checks::to_i32(ids) {
        return Some(Int32Array::from(small.as_slice()).into());
    }
    if ids.iter().all(|id| id.abs() <= MAX_SAFE_INTEGER) {
        let wide: Vec<f64> = ids.iter().map(|&id| id as f64).collect();
        return Some(Float64Array::from(wide.as_slice()).into());
    }
    None
}

/// §5.2 `new_document`: the snapshot with typed arrays in Megane's shape.
pub fn snapshot_to_js(snapshot: &Snapshot) -> Result<JsValue, JsError> {
    let object = Object::new();
    set(&object, "nAtoms", snapshot.n_atoms as u32);
    set(&object, "nBonds", snapshot.n_bonds as u32);
    // Megane's Snapshot: every bond of a tool result is a file bond (asserted by the tool, §5.1);
    // a result has no box origin and no B-factors.
    set(&object, "nFileBonds", snapshot.n_bonds as u32);
    set(
        &object,
        "positions",
        Float32Array::from(snapshot.positions.as_slice()),
    );
    set(
        &object,
        "elements",
        Uint8Array::from(&snapshot.elements[..]),
    );
    set(&object, "bonds", Uint32Array::from(&snapshot.bonds[..]));
    set(
        &object,
        "bondOrders",
        opt_u8(snapshot.bond_orders.as_deref()),
    );
    let cell = snapshot
        .box_
        .map(|b| JsValue::from(Float32Array::from(&b[..])))
        .unwrap_or(JsValue::NULL);
    set(&object, "box", cell);
    set(&object, "boxOrigin", JsValue::NULL);
    set(
        &object,
        "atomChainIds",
        opt_u8(snapshot.atom_chain_ids.as_deref()),
    );
    set(&object, "atomBFactors", JsValue::NULL);
    let ids = snapshot.residue_ids.as_deref().and_then(ids_to_js);
    // The residue names go to JavaScript once, for `residueNames` and for `labels` (made of them).
    let residue_names = snapshot.residue_names.as_deref().map(ColumnJs::new);
    let label_names =
        |names: &StringColumn| match (&residue_names, snapshot.residue_names.as_deref()) {
            (Some(js), Some(column)) if std::ptr::eq(column, names) => js.clone(),
            _ => ColumnJs::new(names),
        };
    match (&snapshot.labels, &ids) {
        (None, _) => set(&object, "labels", JsValue::NULL),
        (Some(labels), _) if labels.residue_ids().is_none() => {
            label_names(labels.residue_names()).lazy_strings(&object, "labels")
        }
        (Some(labels), Some(ids)) => {
            let names = label_names(labels.residue_names());
            lazy_labels(&object, "labels", &names.table, &names.index, ids);
        }
        // Residue ids beyond ±2^53 cannot be JavaScript numbers: the strings are built here.
        (Some(labels), None) => set(&object, "labels", to_js(labels)?),
    }
    set(&object, "fileName", snapshot.file_name.as_str());
    let molecules = snapshot
        .molecules
        .as_deref()
        .map(|m| JsValue::from(Uint32Array::from(m)))
        .unwrap_or(JsValue::NULL);
    set(&object, "molecules", molecules);
    let charges = snapshot
        .formal_charges
        .as_deref()
        .map(|c| JsValue::from(Int32Array::from(c)))
        .unwrap_or(JsValue::NULL);
    set(&object, "formalCharges", charges);
    match &snapshot.atom_names {
        Some(names) => ColumnJs::new(names).lazy_strings(&object, "atomNames"),
        None => set(&object, "atomNames", JsValue::NULL),
    }
    match &residue_names {
        Some(names) => names.lazy_strings(&object, "residueNames"),
        None => set(&object, "residueNames", JsValue::NULL),
    }
    match (&snapshot.residue_ids, &ids) {
        (Some(_), Some(ids)) => lazy_numbers(&object, "residueIds", ids),
        // `null`, or ids beyond ±2^53 (refused by `to_js`, as before).
        (residue_ids, _) => set(&object, "residueIds", to_js(residue_ids)?),
    }
    let scalars = match &snapshot.scalars {
        Some(channels) => {
            let object = Object::new();
            for (name, values) in channels.iter() {
                set(&object, name, Float64Array::from(values.as_slice()));
            }
            object.into()
        }
        None => JsValue::NULL,
    };
    set(&object, "scalars", scalars);
    Ok(object.into())
}

/// §5.2: the plan as `{mode: "new_document", snapshot}` or `{mode: "insert", ops, select}`.
pub fn plan_to_js(plan: &ApplyPlan) -> Result<JsValue, JsError> {
    let object = Object::new();
    match plan {
        ApplyPlan::NewDocument(snapshot) => {
            set(&object, "mode", "new_document");
            set(&object, "snapshot", snapshot_to_js(snapshot)?);
        }
        ApplyPlan::Insert(insert) => {
            set(&object, "mode", "insert");
            set(&object, "ops", to_js(&insert.ops)?);
            set(
                &object,
                "select",
                Uint32Array::from(insert.select.as_slice()),
            );
        }
    }
    Ok(object.into())
}

/// A JavaScript array of strings.
pub fn string_array(items: &[String]) -> Array {
    items.iter().map(|s| JsValue::from_str(s)).collect()
}

// §4.3: the open document is taken once. A form calls `buildArguments` on every keystroke with
// the same document; converting a 300 000-atom document from JavaScript each time (one call
// into JavaScript per number through serde-wasm-bindgen) was most of a keystroke's cost. The
// document's plain arrays are copied into typed arrays by a JavaScript loop (typed arrays the
// host already has are used as they are; positions by one of two copies of the loop, below),
// checked by the typed §5.1 validator, and only the outcome is kept, keyed by the object (or by
// the host's `documentVersion`). A document with other fields, or values the loop does not take
// (not a whole number, out of range), goes through the exact serde path, whose errors name the
// field.
//
// Positions: a plain array of numbers is held by V8 either unboxed (a double array: JSON.parse,
// arrays built in JavaScript) or as boxed numbers (structuredClone, postMessage). A loop that has
// read both kinds is compiled for both and boxes every number it reads from an unboxed array (14
// MB of garbage for 300 000 atoms, whose collection also moves the host's young document):
// copying the positions of a JSON.parse-made document took 30-100 ms after a structuredClone-made
// one had been read, 2-6 ms otherwise. So the same loop exists twice, as two function literals
// with their own type feedback (two closures made from one literal share it: checked, the copy is
// on purpose). `copyUnboxed` is given only long arrays for which `includes(null)` returned at
// once, timed with `performance.now()`: V8 answers it without a scan for an unboxed array (which
// cannot hold null) and scans a boxed one (≥ 0.3 ns per item). Everything else goes to
// `copyBoxed`. The route decides speed only: both copies take and refuse the same values, and a
// null refuses the array either way. A boxed array sent to `copyUnboxed` (a clock far coarser
// than `fillDoubles` assumes) only brings back the one loop's slowness.
#[wasm_bindgen(inline_js = r#"
const FIELDS = new Set(["elements", "positions", "cell", "bonds", "bondOrders"]);
// Each fill writes a document array into `out` (a view of wasm memory of the length `lengths`
// gave) and says whether it could.
function fillBytes(a, out) {
  if (a instanceof Uint8Array) return a.length === out.length && (out.set(a), true);
  if (!Array.isArray(a) || a.length !== out.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (typeof x !== "number" || !Number.isInteger(x) || x < 0 || x > 255) return false;
    out[i] = x;
  }
  return true;
}
// Positions: two copies of one loop, each with its own type feedback (see above).
const isNumber = (x) => typeof x === "number";
function copyUnboxed(a, out) {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (!isNumber(x)) return false;
    out[i] = x;
  }
  return true;
}
function copyBoxed(a, out) {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (!isNumber(x)) return false;
    out[i] = x;
  }
  return true;
}
// Below this many items no probe: a boxed array's scan could be shorter than a coarse clock tick
// (100 µs in a page that is not cross-origin isolated).
const PROBED = 1 << 19;
function fillDoubles(a, out) {
  if (a instanceof Float64Array || a instanceof Float32Array) return a.length === out.length && (out.set(a), true);
  if (!Array.isArray(a) || a.length !== out.length) return false;
  if (a.length < PROBED) return copyBoxed(a, out);
  const t0 = performance.now();
  if (a.includes(null)) return false;
  // At once: under 0.05 ns per item (45 µs for 900 000), a sixth of the fastest scan.
  if (performance.now() - t0 < a.length * 5e-8) return copyUnboxed(a, out);
  return copyBoxed(a, out);
}
function fillPairs(a, out) {
  if (!Array.isArray(a) || 2 * a.length !== out.length) return false;
  for (let k = 0; k < a.length; k++) {
    const b = a[k];
    if (!Array.isArray(b) || b.length !== 2) return false;
    for (let j = 0; j < 2; j++) {
      const x = b[j];
      if (typeof x !== "number" || !Number.isInteger(x) || x < 0 || x > 4294967295) return false;
      out[2 * k + j] = x;
    }
  }
  return true;
}
const length = (a, typed) => (Array.isArray(a) || typed.some((t) => a instanceof t) ? a.length : -1);
// [elements, positions, bond pairs, bondOrders (−1: none)] lengths of a document the fast copy
// may take, or null.
export function documentLengths(doc) {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return null;
  for (const key of Object.keys(doc)) if (!FIELDS.has(key)) return null;
  if (!("cell" in doc)) return null;
  const out = [length(doc.elements, [Uint8Array]), length(doc.positions, [Float64Array, Float32Array]),
    Array.isArray(doc.bonds) ? doc.bonds.length : -1, doc.bondOrders == null ? -1 : length(doc.bondOrders, [Uint8Array])];
  if (out[0] < 0 || out[1] < 0 || out[2] < 0 || (doc.bondOrders != null && out[3] < 0)) return null;
  return out;
}
// Fills the views (`cell`: 9 numbers) from the document; 0: not taken, 1: taken, no cell,
// 2: taken with its cell.
export function fillStructure(doc, elements, positions, bonds, orders, cell) {
  if (!fillBytes(doc.elements, elements) || !fillDoubles(doc.positions, positions) || !fillPairs(doc.bonds, bonds)) return 0;
  if (orders !== null && !fillBytes(doc.bondOrders, orders)) return 0;
  if (doc.cell === null) return 1;
  return fillDoubles(doc.cell, cell) ? 2 : 0;
}
export function withoutKey(object, key) {
  const copy = Object.assign({}, object);
  delete copy[key];
  return copy;
}
export function arrayLength(object, key) {
  const a = object?.[key];
  return a != null && typeof a.length === "number" ? a.length : -1;
}
"#)]
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

/// The last document taken: the object, the host's version (or `undefined`), a cheap fingerprint
/// (lengths of elements and positions) and the typed check.
struct TakenDocument {
    object: JsValue,
    version: JsValue,
    fingerprint: (f64, f64),
    check: DocumentCheck,
}

thread_local! {
    static LAST_DOCUMENT: std::cell::RefCell<Option<TakenDocument>> = const { std::cell::RefCell::new(None) };
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// §4.3: the typed §5.1 check of the open document, taken once. With a `version` (not
/// `undefined`), the same version (and the same array lengths) means the same document even in a
/// new object; without one, the same object does.
pub fn take_document(document: &JsValue, version: &JsValue) -> DocumentCheck {
    let fingerprint = (
        array_length(document, "elements"),
        array_length(document, "positions"),
    );
    let hit = LAST_DOCUMENT.with(|slot| {
        let mut slot = slot.borrow_mut();
        let taken = slot.as_mut()?;
        let same = if version.is_undefined() {
            taken.object == *document
        } else {
            taken.version == *version && taken.fingerprint == fingerprint
        };
        if !same {
            return None;
        }
        taken.object = document.clone();
        Some(taken.check.clone())
    });
    if let Some(check) = hit {
        return check;
    }
    let check = check_document(document);
    LAST_DOCUMENT.with(|slot| {
        *slot.borrow_mut() = Some(TakenDocument {
            object: document.clone(),
            version: version.clone(),
            fingerprint,
            check: check.clone(),
        })
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

// §3 parseToolList without moving every tool definition into wasm and back (issue 15). The
// host's tools/list crosses as one JSON text with each tool's `inputSchema`, `outputSchema` and
// `description` taken out (and of a plain `annotations` object only its `title` kept): a tool
// carries `inputSchema: holder` instead, its index among the host's tool objects. Rust classifies the tools with the one `discovery` code without reading
// any schema (the buttons' schema parts are deferred). The descriptions cross with it, each as
// its own UTF-8 text in the same buffer (only the §3 text rules read them; `TextEncoder` writes
// them, no JSON escaping and no copy loop), and every tool's tooltip and description are
// made at once by the one rule (`discovery::tool_texts`); a text the rules leave as a slice of
// the host's description comes back as that slice's bounds in UTF-16 units ([`PageText`]), so
// it is not copied. The toolbox comes back as one compact JSON text ([`PageToolbox`]: a tool is
// named by its holder, markers once each) that the page parses and makes its objects from, in
// the general way's key order. `inputSchema` / `outputSchema` are the host's own objects. A
// button's `form`, `disabledReason` and `notices` (and the toolbox's `notices`) are lazy
// properties: on the first read of any of them, the button's schema is stringified
// ([`deferred_part`]; the shared cache finds it by its text, so a schema seen before is neither
// parsed nor compiled again). Within one toolbox a distinct schema text crosses into wasm, and
// its form (made once per distinct schema) crosses back as text, once: a later button with the
// same text sends the cache entry's serial instead and gets only its own disabled reason and
// notices. The form text is parsed for each button (a fresh object per button). Tool objects at
// the places `discovery` reads tools from are copied shallowly; anything that is not a plain
// object there (a class instance, a `toJSON`), or that `JSON.stringify` refuses (a cycle, a
// `BigInt`), or a description that is not well-formed UTF-16 (a lone surrogate), makes
// `packTools` return `null`: the caller then takes the list the general way. The JavaScript half
// (`packTools`, `assembleToolbox`) is in the lazy-property snippet above.

/// The schemas of a packed tools/list: `inputSchema: holder` in each definition; discovery
/// leaves every button's schema part to [`deferred_part`].
struct HostSchemas;

impl ToolSchemas for HostSchemas {
    fn carried(&mut self, input_schema: Option<&Value>) -> Value {
        input_schema.cloned().unwrap_or(Value::Null)
    }

    fn entry(&mut self, _input_schema: Option<&Value>) -> Option<Compiled> {
        None
    }

    fn deferred(&self) -> bool {
        true
    }
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

/// §3/§4 a deferred button's schema part ([`discovery::schema_part`]), for the first read of its
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
    let known = key
        .as_f64()
        .and_then(|n| crate::contract::validate::schema_entry_by_serial(n as u64));
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
    let part = match serde_json::from_str::<Marker>(&marker) {
        Ok(marker) => match entry {
            Ok(entry) => {
                let part = discovery::schema_part(entry.as_deref(), &label, &marker);
                let form = match (&part.disabled_reason, &entry) {
                    (None, Some(e)) => e.form_json().map(|text| {
                        if by_serial {
                            (JsValue::NULL, JsValue::TRUE)
                        } else {
                            (JsValue::from(e.serial() as f64), JsValue::from_str(text))
                        }
                    }),
                    _ => None,
                };
                Ok((form, part))
            }
            Err(why) => Err(format!("the input schema cannot be read: {why}")),
        },
        Err(_) => Err("the button's marker cannot be read".to_string()),
    };
    let (form, part) = part.unwrap_or_else(|why| {
        let reason = crate::wire::text::one_line(&format!("Builder cannot build a form: {why}"));
        (
            None,
            discovery::SchemaPart {
                disabled_reason: Some(reason),
                notices: Vec::new(),
            },
        )
    });
    let notices = serde_json::to_string(&part.notices).unwrap_or_else(|_| "[]".to_string());
    let (serial, form) = form.unwrap_or((JsValue::NULL, JsValue::NULL));
    let out = Array::new_with_length(4);
    out.set(0, serial);
    out.set(1, form);
    out.set(
        2,
        part.disabled_reason
            .map_or(JsValue::NULL, |r| JsValue::from_str(&r)),
    );
    out.set(3, JsValue::from_str(&notices));
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
    let (text, descriptions) = packed_texts(std::str::from_utf8(&bytes).ok()?, &lengths.to_vec())?;
    let (toolbox, _) =
        match discovery::parse_tool_list_text(text, server_id, &mut HostSchemas, |_| {})? {
            Ok(done) => done,
            Err(error) => return Some(Err(error)),
        };
    let page = serde_json::to_string(&PageToolbox::of(&toolbox, &descriptions)?).ok()?;
    let resolve = RESOLVE.with(|r| r.as_ref().clone());
    Some(Ok(assemble_toolbox(&page, &packed, &resolve)))
}

/// The texts `packTools` encodes into one buffer, `all`, cut at `lengths` (UTF-8 bytes): the
/// reduced list's JSON text, then each tool's description (`u32::MAX`: none, or not text).
/// `None` when the lengths do not cut `all` into whole texts.
fn packed_texts<'a>(all: &'a str, lengths: &[u32]) -> Option<(&'a str, Vec<Option<&'a str>>)> {
    let (&first, rest) = lengths.split_first()?;
    let mut at = first as usize;
    let text = all.get(..at)?;
    let mut descriptions = Vec::with_capacity(rest.len());
    for &n in rest {
        descriptions.push(if n == u32::MAX {
            None
        } else {
            let end = at.checked_add(n as usize)?;
            let description = all.get(at..end)?;
            at = end;
            Some(description)
        });
    }
    (at == all.len()).then_some((text, descriptions))
}

/// A tooltip or description as the page makes it ([`discovery::tool_texts`] of the host's
/// description): `[start, end]`, the slice of the host's text it is (in UTF-16 units, as
/// JavaScript's `slice` counts), or the text itself when the rules changed it.
#[derive(Serialize)]
#[serde(untagged)]
enum PageText<'a> {
    Slice(usize, usize),
    Text(Cow<'a, str>),
}

impl<'a> PageText<'a> {
    /// `made` as a slice of `host` when it borrows from it, else as text.
    fn of(host: Option<&str>, made: Cow<'a, str>) -> PageText<'a> {
        if let (Some(host), Cow::Borrowed(part)) = (host, &made) {
            let start = (part.as_ptr() as usize).wrapping_sub(host.as_ptr() as usize);
            if start <= host.len() && part.len() <= host.len() - start {
                let begin = utf16_len(&host[..start]);
                return PageText::Slice(begin, begin + utf16_len(part));
            }
        }
        PageText::Text(made)
    }

    /// A tool's `(tooltip, description)` from its host description.
    fn pair(host: Option<&'a str>) -> (PageText<'a>, PageText<'a>) {
        let (tooltip, description) = discovery::tool_texts(host);
        (PageText::of(host, tooltip), PageText::of(host, description))
    }
}

/// The length of `text` in UTF-16 units.
fn utf16_len(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().map(char::len_utf16).sum()
    }
}

/// A button for the page: holder, label, marker (index into [`PageToolbox::markers`]), icon,
/// tooltip, description.
type PageButton<'a> = (
    u32,
    &'a str,
    usize,
    &'a Option<String>,
    PageText<'a>,
    PageText<'a>,
);

/// parseToolList's toolbox as the page's `assembleToolbox` reads it (see above): the buttons and
/// plain tools named by their holders (the page takes their names from the host's tools, which
/// discovery keeps exactly), each distinct marker once; the rest as the toolbox has it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PageToolbox<'a> {
    server_id: Option<&'a str>,
    buttons: Vec<PageButton<'a>>,
    markers: Vec<&'a Marker>,
    /// Holder, label, tooltip, description.
    plain_tools: Vec<(u32, &'a str, PageText<'a>, PageText<'a>)>,
    categories: &'a [discovery::CategoryGroup],
    unsupported_contract: &'a [discovery::HiddenTool],
    unknown_apply: &'a [discovery::HiddenTool],
    malformed: &'a [discovery::HiddenTool],
    notices: &'a [String],
}

impl<'a> PageToolbox<'a> {
    /// `None` when a tool carries no holder (the list was not packed as `packTools` packs it).
    fn of(
        toolbox: &'a discovery::Toolbox,
        descriptions: &[Option<&'a str>],
    ) -> Option<PageToolbox<'a>> {
        let texts = |holder: &Value| {
            let k = u32::try_from(holder.as_u64()?).ok()?;
            let host = *descriptions.get(k as usize)?;
            Some((k, PageText::pair(host)))
        };
        let mut markers: Vec<&Marker> = Vec::new();
        let mut buttons = Vec::with_capacity(toolbox.buttons.len());
        for b in &toolbox.buttons {
            let (k, (tooltip, description)) = texts(&b.input_schema)?;
            let m = match markers.iter().position(|m| **m == b.marker) {
                Some(m) => m,
                None => {
                    markers.push(&b.marker);
                    markers.len() - 1
                }
            };
            buttons.push((k, b.label.as_str(), m, &b.icon, tooltip, description));
        }
        let plain_tools = toolbox
            .plain_tools
            .iter()
            .map(|t| {
                let (k, (tooltip, description)) = texts(&t.input_schema)?;
                Some((k, t.label.as_str(), tooltip, description))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(PageToolbox {
            server_id: toolbox.server_id.as_deref(),
            buttons,
            markers,
            plain_tools,
            categories: &toolbox.categories,
            unsupported_contract: &toolbox.unsupported_contract,
            unknown_apply: &toolbox.unknown_apply,
            malformed: &toolbox.malformed,
            notices: &toolbox.notices,
        })
    }
}

/// Each distinct form of the buttons' cache entries as JSON text, and for each button the index
/// of its form (−1: a disabled button); `None` when a form cannot be written.
fn distinct_forms(entries: &[Option<Compiled>]) -> Option<(Array, Vec<i32>)> {
    let forms = Array::new();
    let mut distinct: Vec<&Compiled> = Vec::new();
    let mut form_index: Vec<i32> = Vec::with_capacity(entries.len());
    for entry in entries {
        let Some(entry) = entry else {
            form_index.push(-1);
            continue;
        };
        let k = match distinct.iter().position(|d| Arc::ptr_eq(d, entry)) {
            Some(k) => k,
            None => {
                forms.push(&JsValue::from_str(entry.form_json()?));
                distinct.push(entry);
                distinct.len() - 1
            }
        };
        form_index.push(k as i32);
    }
    Some((forms, form_index))
}

/// Every tool's `(inputSchema, outputSchema)` in `toolbox`, buttons first, then plain tools: the
/// one order in which [`listed_toolbox_to_js`] takes the schemas out and puts them back.
fn schema_slots(
    toolbox: &mut discovery::Toolbox,
) -> impl Iterator<Item = (&mut Value, &mut Option<Value>)> {
    toolbox
        .buttons
        .iter_mut()
        .map(|b| (&mut b.input_schema, &mut b.output_schema))
        .chain(
            toolbox
                .plain_tools
                .iter_mut()
                .map(|t| (&mut t.input_schema, &mut t.output_schema)),
        )
}

/// §3: connect()'s toolbox for the page, made the way parseToolList's fast way makes its own
/// (its tools arrive in Rust, from the server): the toolbox crosses as JSON text without forms
/// and schemas, each distinct form and each distinct schema (input or output) crosses once as
/// text, and each is parsed on a tool's first read (a lazy property: a fresh object per tool, as
/// `JSON.parse` of the whole toolbox gave). `toolbox` comes from
/// [`discovery::parse_tool_list_with`] (forms left out; `entries` its buttons' cache entries) and
/// is given back unchanged.
pub fn listed_toolbox_to_js(
    toolbox: &mut discovery::Toolbox,
    entries: &[Option<Compiled>],
) -> Result<JsValue, JsError> {
    let conversion = || JsError::new("The tool list could not be converted for the page.");
    let (forms, form_index) = distinct_forms(entries).ok_or_else(conversion)?;
    let schemas = Array::new();
    let mut known: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    let mut index = |schema: &Value| -> Result<Value, JsError> {
        let text = serde_json::to_string(schema).map_err(|_| conversion())?;
        let next = known.len() as u32;
        let k = *known.entry(text).or_insert_with_key(|text| {
            schemas.push(&JsValue::from_str(text));
            next
        });
        Ok(Value::from(k))
    };
    // The schemas are taken out while the text is written, then put back.
    let mut taken: Vec<(Value, Option<Value>)> = Vec::new();
    let tools = schema_slots(toolbox);
    let mut failed = None;
    for (input, output) in tools {
        let replaced = index(input).and_then(|i| {
            let o = output.as_ref().map(&mut index).transpose()?;
            Ok((i, o))
        });
        match replaced {
            Ok((i, o)) => taken.push((std::mem::replace(input, i), std::mem::replace(output, o))),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let text = serde_json::to_string(&*toolbox);
    let mut taken = taken.into_iter();
    let tools = schema_slots(toolbox);
    for ((input, output), (i, o)) in tools.zip(&mut taken) {
        *input = i;
        *output = o;
    }
    if let Some(e) = failed {
        return Err(e);
    }
    let text = text.map_err(|_| conversion())?;
    Ok(assemble_listed(
        &text,
        &forms,
        &Int32Array::from(&form_index[..]),
        &schemas,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    /// The plain-data walk reads every value as serde-wasm-bindgen does: the same JSON value,
    /// integers and floats told apart the same way (exact floats, -0, 2^53, 2^60, non-finite),
    /// `undefined` as null (a property kept, an array hole), order kept; and what is not plain
    /// data (a BigInt, a typed array, an `ArrayBuffer`, a `Map`, a function) gives
    /// serde-wasm-bindgen's own outcome or error.
    #[wasm_bindgen_test]
    fn plain_json_reads_as_serde_wasm_bindgen() {
        let eval = |code: &str| {
            js_sys::Function::new_no_args(code)
                .call0(&JsValue::NULL)
                .unwrap()
        };
        let cases = [
            "return {seed: 7, tolerance: 2.0000000000000004, density: 0.1 + 0.2, n: -3, z: -0}",
            "return {a: undefined, b: null, c: [1, , 3, undefined], d: true, e: 'x\\u00e9\\ud83d\\ude00'}",
            "return {big: 9007199254740991, past: 9007199254740992, huge: 1152921504606846976, e: 1e300}",
            "return {nan: NaN, inf: Infinity, ninf: -Infinity, frac: 5e-324, neg: -1.5}",
            "return {z: 1, a: {y: [{}, [], [[0.30000000000000004]]], b: 'q'}, m: 2}",
            "const o = Object.create(null); o.k = 1; return {o}",
            "return {bi: 10n}",
            "return {bytes: new Uint8Array([1, 2])}",
            "return {buffer: new ArrayBuffer(2)}",
            "return {map: new Map([['a', 1]])}",
            "return {set: new Set([1])}",
            "return {f: () => 1}",
            "return {'$serde_json::private::RawValue': '1'}",
            "return [1, 'two', {three: 3}]",
            "return {lone: 'a\\ud800b', pair: '\\ud83d\\ude00'}",
            "return {date: new Date(0), n: new Number(3)}",
            "return {j: {toJSON() { return 5; }, k: 1}}",
            "return {c: new (class { constructor() { this.x = [1, undefined]; } })()}",
            "return {g: Object.defineProperty({}, 'v', {get() { return 2; }, enumerable: true})}",
            "const o = {a: 1}; o[Symbol.iterator] = function* () {}; return {o}",
            "let v = 1; for (let i = 0; i < 70; i++) v = [v]; return {deep: v}",
            "return {big: [9007199254740993, -9007199254740992, 1e21, 2 ** 64]}",
            "return 'text'",
            "return 12.5",
            "return undefined",
            "return null",
        ];
        for code in cases {
            let value = eval(code);
            let ours = json_from_js_or_default(value.clone(), "args").map_err(JsValue::from);
            let theirs = from_js_or_default::<Value>(value, "args").map_err(JsValue::from);
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
        }
        // The walk itself reads plain data (so the comparison above is the walk's), and hands on
        // what it must.
        for code in [
            cases[0], cases[1], cases[2], cases[3], cases[4], cases[5], cases[13],
        ] {
            assert!(plain_json(&eval(code), 0).is_some(), "{code}");
        }
        for code in [
            "return {c: new (class { constructor() { this.x = [1, undefined]; } })()}",
            "return {date: new Date(0), n: new Number(3)}",
        ] {
            assert!(plain_json(&eval(code), 0).is_some(), "{code}");
        }
        for code in [
            "return {bi: 10n}",
            "return {bytes: new Uint8Array([1, 2])}",
            "return {map: new Map([['a', 1]])}",
            "return {f: () => 1}",
            "return {'$serde_json::private::RawValue': '1'}",
            "return {j: {toJSON() { return 5; }, k: 1}}",
            "const o = {a: 1}; o[Symbol.iterator] = function* () {}; return {o}",
            "let v = 1; for (let i = 0; i < 70; i++) v = [v]; return {deep: v}",
        ] {
            assert!(plain_json(&eval(code), 0).is_none(), "{code}");
        }
    }
}
