//! Conversions between JavaScript values and the crate's Rust types, gathered in one place.

use js_sys::{
    Array, Float32Array, Float64Array, Int32Array, Object, Reflect, Uint32Array, Uint8Array,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::contract::apply::{ApplyPlan, Snapshot};
use crate::contract::discovery::form_for;
use crate::contract::form::Form;
use crate::contract::marker::Marker;

/// Serialises to plain JavaScript objects (not `Map`s), numbers as numbers.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsError> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value
        .serialize(&serializer)
        .map_err(|e| JsError::new(&format!("cannot convert to JavaScript: {e}")))
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
        from_js(value, "button (pass a button from parseToolList)")
    }

    /// The button's form; `Err` is the `Builder cannot build a form: …` reason.
    pub fn form(&self) -> Result<Form, String> {
        form_for(&self.input_schema).map_err(|e| format!("Builder cannot build a form: {e}"))
    }
}

fn opt_u8(values: &Option<Vec<u8>>) -> JsValue {
    values
        .as_deref()
        .map(|v| Uint8Array::from(v).into())
        .unwrap_or(JsValue::NULL)
}

/// §5.2 `new_document`: the snapshot with typed arrays in Megane's shape.
pub fn snapshot_to_js(snapshot: &Snapshot) -> Result<JsValue, JsError> {
    let object = Object::new();
    set(&object, "nAtoms", snapshot.n_atoms as u32);
    set(&object, "nBonds", snapshot.n_bonds as u32);
    set(
        &object,
        "positions",
        Float32Array::from(snapshot.positions.as_slice()),
    );
    set(
        &object,
        "elements",
        Uint8Array::from(snapshot.elements.as_slice()),
    );
    set(
        &object,
        "bonds",
        Uint32Array::from(snapshot.bonds.as_slice()),
    );
    set(&object, "bondOrders", opt_u8(&snapshot.bond_orders));
    let cell = snapshot
        .box_
        .map(|b| JsValue::from(Float32Array::from(&b[..])))
        .unwrap_or(JsValue::NULL);
    set(&object, "box", cell);
    set(&object, "atomChainIds", opt_u8(&snapshot.atom_chain_ids));
    set(&object, "labels", to_js(&snapshot.labels)?);
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
    set(&object, "atomNames", to_js(&snapshot.atom_names)?);
    set(&object, "residueNames", to_js(&snapshot.residue_names)?);
    set(&object, "residueIds", to_js(&snapshot.residue_ids)?);
    let scalars = match &snapshot.scalars {
        Some(channels) => {
            let object = Object::new();
            for (name, values) in channels {
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
