//! The structure files the demo page opens and saves ([`crate::contract::files`]): thin wrappers.

use wasm_bindgen::prelude::*;

use super::interop::{failure, set, success, to_js};
use crate::contract::files::{self, Format};
use crate::contract::structure::Structure;

/// A structure file's text → `{ok: true, structure, format, title, notes}` (the format from the
/// file name's extension: `.xyz`, `.pdb`, `.mol`/`.sdf`, `.gro`, `.json`; bonds perceived from
/// distances where the file lists none, which `notes` then says) or `{ok: false, error}`, one
/// line starting with the file's name.
#[wasm_bindgen(js_name = readStructureFile, unchecked_return_type = "OpenedFileOutcome")]
pub fn read_structure_file(
    #[wasm_bindgen(js_name = fileName)] file_name: &str,
    text: &str,
) -> Result<JsValue, JsError> {
    match files::read_structure(file_name, text) {
        Ok(opened) => {
            let object = js_sys::Object::new();
            set(&object, "ok", true);
            set(&object, "structure", to_js(&opened.structure)?);
            set(&object, "format", opened.format);
            set(&object, "title", opened.title.as_str());
            set(&object, "notes", to_js(&opened.notes)?);
            Ok(object.into())
        }
        Err(error) => Ok(failure(&error)),
    }
}

/// A §5.1 structure → `{ok: true, text}` in `format` (`"xyz"`, `"pdb"`, `"mol"`, `"gro"`), titled
/// `title`, or `{ok: false, error}` (one line a chemist reads: a PDB beyond 99 999 atoms, a cell
/// GROMACS cannot hold, an invalid structure).
#[wasm_bindgen(js_name = writeStructureFile, unchecked_return_type = "SavedFileOutcome")]
pub fn write_structure_file(
    #[wasm_bindgen(unchecked_param_type = "Structure")] structure: JsValue,
    #[wasm_bindgen(unchecked_param_type = "SaveFormat")] format: &str,
    title: &str,
) -> JsValue {
    let Some(format) = Format::from_name(format) else {
        return failure(&format!(
            "Unknown file format {format:?}: use xyz, pdb, mol or gro."
        ));
    };
    let structure: Structure = match serde_wasm_bindgen::from_value(structure) {
        Ok(s) => s,
        Err(e) => return failure(&format!("structure: {e}")),
    };
    match files::write_structure(&structure, format, title) {
        Ok(text) => success("text", JsValue::from_str(&text)),
        Err(error) => failure(&error),
    }
}

/// The Save menu for a structure: `[{format, label, refusal, loses}]`, every format in the order
/// the page offers them; `refusal` says why this structure cannot be saved so (a PDB beyond
/// 99 999 atoms), `loses` what the format leaves out (a mol file's cell, an XYZ file's bonds).
#[wasm_bindgen(js_name = saveChoices, unchecked_return_type = "SaveChoice[]")]
pub fn save_choices(
    atoms: u32,
    #[wasm_bindgen(js_name = hasCell)] has_cell: bool,
    #[wasm_bindgen(js_name = hasBonds)] has_bonds: bool,
) -> Result<JsValue, JsError> {
    to_js(&files::save_choices(atoms as usize, has_cell, has_bonds))
}
