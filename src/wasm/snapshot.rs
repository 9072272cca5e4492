//! The §5.2 apply plan for the page's JavaScript: the plan object, and the `new_document`
//! snapshot with typed arrays in Megane's shape, its per-atom string channels lazy
//! (`src/js/snippets/lazy.js`: built on first read from a small table and indices).

use js_sys::{Array, Float32Array, Float64Array, Int32Array, Object, Uint32Array, Uint8Array};
use wasm_bindgen::prelude::*;

use super::interop::{set, string_array, to_js};
use crate::contract::apply::{ApplyPlan, Snapshot};
use crate::contract::structure::StringColumn;

#[wasm_bindgen(module = "/src/js/snippets/lazy.js")]
extern "C" {
    /// `target[key]`: `index.map(i => table[i])`, built on first read (`index`: a typed array).
    #[wasm_bindgen(js_name = lazyStrings)]
    fn lazy_strings(target: &Object, key: &str, table: &Array, index: &JsValue);
    /// `target[key]`: `index.map((t, i) => table[t] + ids[i])`, built on first read.
    #[wasm_bindgen(js_name = lazyLabels)]
    fn lazy_labels(target: &Object, key: &str, table: &Array, index: &JsValue, ids: &JsValue);
    /// `target[key]`: `Array.from(values)`, built on first read.
    #[wasm_bindgen(js_name = lazyNumbers)]
    fn lazy_numbers(target: &Object, key: &str, values: &JsValue);
}

fn opt_u8(values: Option<&[u8]>) -> JsValue {
    values
        .map(|v| Uint8Array::from(v).into())
        .unwrap_or(JsValue::NULL)
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
