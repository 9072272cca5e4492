//! §4.1–§4.4: form values. Initial values for a fresh form, and form values → tool arguments with
//! the context the host supplies (open document, selection, library molecules), then validation.
//!
//! Form values are canonical (§4.4): a form that offers other units converts before it hands
//! values here. A value is "empty" when it is missing, `null` or a blank string; empty optional
//! fields are omitted from the arguments, never sent as zeros.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::form::{Control, Field, Form};
use super::marker::{Apply, Category, Marker};
use super::validate::{format_f64, validate_with_document, DocumentCheck, Problem};
use crate::chem::elements;
use crate::wire::text::excerpt;

/// A molecule of the Builder library (§4.2): what a molecule widget chooses from.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LibraryMolecule {
    pub name: String,
    /// V2000 mol block, explicit H, 3D, Å.
    #[serde(default)]
    pub molblock: Option<String>,
    /// Optional SMILES, sent beside the mol block when the host has one.
    #[serde(default)]
    pub smiles: Option<String>,
}

/// What the host knows when it fills a form.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FormContext {
    /// §4.3: the open document as a Structure payload (elements, positions, cell, bonds, …), or
    /// `None` when nothing is open.
    pub document: Option<Value>,
    /// §4.3: the open document already checked by the typed §5.1 validator, for a caller that
    /// keeps the document itself (the JS API takes it once per document object). When set, it
    /// stands for the document and `document` is not read: the arguments then hold the
    /// document's stand-in ([`DocumentCheck::stand_in`]), which the caller replaces.
    #[serde(skip)]
    pub document_check: Option<DocumentCheck>,
    /// Whether the open document may be edited (false while History › Show original is on).
    pub document_editable: Option<bool>,
    /// §4.2: the atoms selected in the 3D view, indices into the document.
    pub selection: Vec<u64>,
    /// §4.2: the library the molecule widget offers, in menu order.
    pub library: Vec<LibraryMolecule>,
    /// §4.2 seed: a fresh random value from the host's random source.
    pub random_seed: Option<u64>,
}

/// The 20 Å cube a cell widget starts with when no document cell exists (§4.2).
pub const DEFAULT_CELL: [f64; 9] = [20.0, 0.0, 0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 20.0];

/// §4.1/§4.2: the values a fresh form shows: defaults, else the first example; a fresh seed; the
/// document's cell (else a 20 Å cube) for a cell widget; for a molecule widget the library
/// molecule named like the schema's example (else the first library molecule; nothing when the
/// library is empty, never a name the library does not have); tables start with
/// `max(minItems, 1)` rows.
pub fn initial_values(form: &Form, context: &FormContext) -> Value {
    Value::Object(initial_object(&form.fields, context))
}

fn initial_object(fields: &[Field], context: &FormContext) -> Map<String, Value> {
    let mut values = Map::new();
    for field in fields {
        if let Some(value) = initial_value(field, context) {
            values.insert(field.key.clone(), value);
        }
    }
    // §4.2 atom: an example index is kept only when it is an atom of the molecule the form starts
    // with (else the field starts blank and the user picks an atom).
    for field in fields {
        let Control::Atom { of } = &field.control else {
            continue;
        };
        let count = chosen_molblock(values.get(of), context)
            .as_deref()
            .and_then(molblock_atom_count);
        let fits = |v: &Value| {
            v.as_u64()
                .is_some_and(|i| count.is_none_or(|n| i < n as u64))
        };
        if values.get(&field.key).is_some_and(|v| !fits(v)) {
            values.remove(&field.key);
        }
    }
    values
}

fn initial_value(field: &Field, context: &FormContext) -> Option<Value> {
    let preset = field
        .default
        .clone()
        .or_else(|| field.example.clone())
        .filter(|v| !v.is_null());
    match &field.control {
        Control::Seed => context
            .random_seed
            .map(Value::from)
            .or(preset)
            .or(Some(json!(0))),
        Control::Cell => Some(json!(document_cell(context).unwrap_or(DEFAULT_CELL))),
        // The library molecule the schema's example names (`ethylene`) or whose SMILES it gives
        // (`CC`: the library may name it for what it is), else the first one; none with an empty
        // library (the form then says how to add one).
        Control::Molecule => {
            let example = preset.as_ref().and_then(|p| match p {
                Value::String(name) => Some(name.as_str()),
                other => other.get("name").and_then(Value::as_str),
            });
            let smiles = preset
                .as_ref()
                .and_then(|p| p.get("smiles"))
                .and_then(Value::as_str);
            context
                .library
                .iter()
                .find(|m| example.is_some_and(|name| m.name.eq_ignore_ascii_case(name)))
                .or_else(|| {
                    let smiles = smiles?;
                    context
                        .library
                        .iter()
                        .find(|m| m.smiles.as_deref() == Some(smiles))
                })
                .or_else(|| context.library.first())
                .map(|m| Value::String(m.name.clone()))
        }
        Control::Selection => Some(json!(context.selection)),
        Control::Document => None,
        Control::Table {
            columns, min_rows, ..
        } => match preset {
            Some(Value::Array(rows)) => Some(Value::Array(rows)),
            _ => {
                let rows = (*min_rows).clamp(1, 64) as usize;
                Some(Value::Array(
                    (0..rows)
                        .map(|_| Value::Object(initial_object(columns, context)))
                        .collect(),
                ))
            }
        },
        Control::Fieldset { fields } => match preset {
            Some(p @ Value::Object(_)) => Some(p),
            _ => Some(Value::Object(initial_object(fields, context))),
        },
        Control::Constant { value } => Some(value.clone()),
        // The wire value (an atomic number); the form shows the symbol beside it.
        Control::Element => preset,
        _ => preset,
    }
}

/// The open document's cell when it has one (9 finite numbers).
fn document_cell(context: &FormContext) -> Option<[f64; 9]> {
    if let Some(check) = &context.document_check {
        return check.cell.filter(|c| c.iter().all(|x| x.is_finite()));
    }
    let cell = context.document.as_ref()?.get("cell")?.as_array()?;
    let numbers: Vec<f64> = cell
        .iter()
        .filter_map(Value::as_f64)
        .filter(|x| x.is_finite())
        .collect();
    numbers.try_into().ok()
}

/// §4–§6: form values → tool arguments, validated against the tool's `inputSchema`.
///
/// Returns every problem (conversion and schema) with the field path; Run must stay disabled while
/// any remains. An `insert` tool needs an open, editable document (§5.2).
///
/// The §4.3 document is checked by the typed §5.1 validator (once per document when the caller
/// gives [`FormContext::document_check`]), never walked by `jsonschema`; the other arguments are
/// validated against the schema with a stand-in in the document's place.
pub fn build_arguments(
    marker: &Marker,
    form: &Form,
    input_schema: &Value,
    values: &Value,
    context: &FormContext,
) -> Result<Value, Vec<Problem>> {
    let computed;
    let document = match (&context.document_check, &context.document) {
        (Some(check), _) => Some(check),
        (None, Some(json)) => {
            computed = DocumentCheck::of_json(json);
            Some(&computed)
        }
        (None, None) => None,
    };
    let mut problems = Vec::new();
    if marker.apply == Apply::Insert {
        if document.is_none() {
            problems.push(Problem::new(
                "",
                "Open a document first: this tool adds atoms to the open structure.",
            ));
        } else if context.document_editable == Some(false) {
            problems.push(Problem::new(
                "",
                "The open document cannot be edited (turn off History › Show original): this tool adds atoms to it.",
            ));
        }
    }
    let empty = Map::new();
    let values = values.as_object().unwrap_or(&empty);
    let mut arguments = convert_object(&form.fields, values, "", context, &mut problems);
    let document_property = form.document_property.as_deref().unwrap_or_default();
    if problems.is_empty() {
        problems.extend(validate_with_document(
            input_schema,
            Some(form),
            &arguments,
            document_property,
            document,
        ));
    }
    // Last, so that a document the §5.1 check refuses is reported as such on every path.
    if problems.is_empty() {
        problems.extend(needs_a_cell(marker, form, context));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    if let (Some(slot), Some(check)) = (arguments.get_mut(document_property), document) {
        *slot = match (&context.document_check, &context.document) {
            (None, Some(json)) => json.clone(),
            _ => check.stand_in(),
        };
    }
    Ok(Value::Object(arguments))
}

fn convert_object(
    fields: &[Field],
    values: &Map<String, Value>,
    prefix: &str,
    context: &FormContext,
    problems: &mut Vec<Problem>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for field in fields {
        let path = if prefix.is_empty() {
            field.key.clone()
        } else {
            format!("{prefix}/{}", field.key)
        };
        let raw = values.get(&field.key).unwrap_or(&Value::Null);
        match convert_field(field, raw, &path, values, context) {
            Ok(Some(value)) => {
                out.insert(field.key.clone(), value);
            }
            Ok(None) => {
                if field.required {
                    problems.push(Problem::new(&path, missing_message(field, context)));
                }
            }
            Err(mut field_problems) => problems.append(&mut field_problems),
        }
    }
    problems.extend(same_atoms(fields, &out, prefix));
    out
}

/// §4.2: two atom fields of the same molecule (a polymer's head and tail) name two different
/// atoms; the second of a pair that names the same one is a problem before Run.
fn same_atoms(fields: &[Field], out: &Map<String, Value>, prefix: &str) -> Vec<Problem> {
    let atoms: Vec<(&Field, &String, &Value)> = fields
        .iter()
        .filter_map(|f| match &f.control {
            Control::Atom { of } => out.get(&f.key).map(|v| (f, of, v)),
            _ => None,
        })
        .collect();
    let mut problems = Vec::new();
    for (k, (field, of, value)) in atoms.iter().enumerate() {
        if let Some((first, ..)) = atoms[..k].iter().find(|(_, o, v)| o == of && v == value) {
            let path = if prefix.is_empty() {
                field.key.clone()
            } else {
                format!("{prefix}/{}", field.key)
            };
            problems.push(Problem::new(
                &path,
                format!(
                    "{}: the same atom as {}; choose a different atom.",
                    field.label, first.label
                ),
            ));
        }
    }
    problems
}

/// §12.3: a solvation tool fills the open structure's cell, so a structure without a cell (or
/// with one that is not 9 finite numbers) cannot be sent; the problem is on the document field.
fn needs_a_cell(marker: &Marker, form: &Form, context: &FormContext) -> Option<Problem> {
    let property = form.document_property.as_deref()?;
    (marker.category == Category::Solvation
        && (context.document.is_some() || context.document_check.is_some())
        && document_cell(context).is_none())
    .then(|| {
        Problem::new(
            property,
            "The open structure has no cell, and this tool fills the cell: set a cell (a, b, c in Å) first.",
        )
    })
}

/// The message for a required field left empty; an empty library says how to fill it.
fn missing_message(field: &Field, context: &FormContext) -> String {
    match field.control {
        Control::Molecule if context.library.is_empty() => format!(
            "{}: the molecule library is empty; import a .mol file (V2000, explicit H, 3D) into it first.",
            field.label
        ),
        Control::Molecule => format!("{}: choose a molecule from the library.", field.label),
        Control::Document => {
            "Open a document first: this tool works on the open structure.".to_string()
        }
        Control::Selection => format!("{}: select atoms in the view first.", field.label),
        _ => format!("{} is required.", field.label),
    }
}

type Converted = Result<Option<Value>, Vec<Problem>>;

fn convert_field(
    field: &Field,
    raw: &Value,
    path: &str,
    siblings: &Map<String, Value>,
    context: &FormContext,
) -> Converted {
    let one = |message: String| Err(vec![Problem::new(path, message)]);
    match &field.control {
        // A placeholder: `build_arguments` validates with the document's stand-in, then puts the
        // document (or the stand-in, for a caller that keeps the document) in its place.
        Control::Document => Ok(
            (context.document.is_some() || context.document_check.is_some()).then_some(Value::Null),
        ),
        Control::Selection => {
            Ok((!context.selection.is_empty() || field.required).then(|| json!(context.selection)))
        }
        Control::Constant { value } => Ok(Some(value.clone())),
        _ if is_empty(raw) => Ok(None),
        Control::Number { bounds } => match number_value(raw, bounds.integer) {
            Some(v) => Ok(Some(v)),
            None => one(format!(
                "{}: enter {}.",
                field.label,
                if bounds.integer {
                    "a whole number"
                } else {
                    "a number"
                }
            )),
        },
        Control::Seed => match number_value(raw, true) {
            Some(v) => Ok(Some(v)),
            None => one(format!("{}: enter a whole number.", field.label)),
        },
        Control::Atom { of } => atom_value(field, raw, path, siblings.get(of), context),
        Control::Element => element_value(field, raw, path),
        Control::Cell => cell_value(field, raw, path),
        Control::Vector { length, bounds } => {
            let items = raw.as_array().filter(|a| a.len() == *length);
            let numbers: Option<Vec<Value>> = items
                .map(|a| a.iter().map(|x| number_value(x, bounds.integer)).collect())
                .unwrap_or(None);
            match numbers {
                Some(numbers) => Ok(Some(Value::Array(numbers))),
                None => one(format!("{}: enter {length} numbers.", field.label)),
            }
        }
        Control::Checkbox => match raw {
            Value::Bool(_) => Ok(Some(raw.clone())),
            Value::String(s) if s == "true" || s == "false" => Ok(Some(Value::Bool(s == "true"))),
            _ => one(format!("{}: tick or untick the box.", field.label)),
        },
        Control::Select { options } => {
            let chosen = options.iter().find(|o| {
                *o == raw
                    || o.as_f64().is_some_and(|x| {
                        raw.as_str().and_then(|r| r.trim().parse::<f64>().ok()) == Some(x)
                    })
            });
            Ok(Some(chosen.cloned().unwrap_or_else(|| raw.clone())))
        }
        Control::Text { .. } => match raw {
            Value::String(_) => Ok(Some(raw.clone())),
            Value::Number(n) => Ok(Some(Value::String(n.to_string()))),
            _ => one(format!("{}: enter text.", field.label)),
        },
        Control::Molecule => molecule_value(field, raw, path, context),
        Control::Table { columns, .. } => {
            let Some(rows) = raw.as_array() else {
                return one(format!("{}: expected a list of rows.", field.label));
            };
            let mut problems = Vec::new();
            let mut out = Vec::new();
            for (i, row) in rows.iter().enumerate() {
                let empty = Map::new();
                let row = row.as_object().unwrap_or(&empty);
                out.push(Value::Object(convert_object(
                    columns,
                    row,
                    &format!("{path}/{i}"),
                    context,
                    &mut problems,
                )));
            }
            if problems.is_empty() {
                Ok(Some(Value::Array(out)))
            } else {
                Err(problems)
            }
        }
        Control::Fieldset { fields } => {
            let empty = Map::new();
            let inner = raw.as_object().unwrap_or(&empty);
            let mut problems = Vec::new();
            let out = convert_object(fields, inner, path, context, &mut problems);
            if !problems.is_empty() {
                Err(problems)
            } else if out.is_empty() && !field.required {
                Ok(None)
            } else {
                Ok(Some(Value::Object(out)))
            }
        }
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// A number from a number or a numeric string; integers must be whole (3.0 → 3).
fn number_value(raw: &Value, integer: bool) -> Option<Value> {
    let x = match raw {
        Value::Number(n) => {
            if integer {
                if let Some(i) = n.as_i64() {
                    return Some(json!(i));
                }
                // A whole number above i64::MAX (a 64-bit seed) is still a whole number.
                if let Some(u) = n.as_u64() {
                    return Some(json!(u));
                }
            }
            n.as_f64()?
        }
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    if !x.is_finite() {
        return None;
    }
    if integer {
        (x.fract() == 0.0 && x.abs() < 9.0e15).then(|| json!(x as i64))
    } else if x.fract() == 0.0
        && x.abs() < 9.0e15
        && matches!(raw, Value::Number(n) if n.is_i64() || n.is_u64())
    {
        Some(raw.clone())
    } else {
        Some(json!(x))
    }
}

/// §4.2 molecule: the library molecule named by the value (or an object already in wire shape).
fn molecule_value(field: &Field, raw: &Value, path: &str, context: &FormContext) -> Converted {
    if raw.is_object() {
        return Ok(Some(raw.clone()));
    }
    let Some(name) = raw.as_str() else {
        return Err(vec![Problem::new(
            path,
            format!("{}: choose a molecule from the library.", field.label),
        )]);
    };
    let Some(molecule) = context.library.iter().find(|m| m.name == name) else {
        return Err(vec![Problem::new(
            path,
            format!(
                "{}: `{}` is not in the library; choose another molecule.",
                field.label,
                excerpt(name)
            ),
        )]);
    };
    let mut out = Map::new();
    out.insert("name".into(), json!(molecule.name));
    if let Some(molblock) = &molecule.molblock {
        out.insert("molblock".into(), json!(molblock));
    }
    if let Some(smiles) = &molecule.smiles {
        out.insert("smiles".into(), json!(smiles));
    }
    Ok(Some(Value::Object(out)))
}

/// §4.2 atom: a 0-based index into the chosen molecule's atom block.
fn atom_value(
    field: &Field,
    raw: &Value,
    path: &str,
    molecule: Option<&Value>,
    context: &FormContext,
) -> Converted {
    let Some(index) = number_value(raw, true).and_then(|v| v.as_i64()) else {
        return Err(vec![Problem::new(
            path,
            format!("{}: enter an atom index.", field.label),
        )]);
    };
    let molblock = chosen_molblock(molecule, context);
    if let Some(count) = molblock.as_deref().and_then(molblock_atom_count) {
        if index < 0 || index as usize >= count {
            return Err(vec![Problem::new(
                path,
                format!(
                    "{}: the molecule has {count} atoms, numbered 0 to {}.",
                    field.label,
                    count.saturating_sub(1)
                ),
            )]);
        }
    }
    Ok(Some(json!(index)))
}

/// The mol block of a molecule field's value: a library molecule's (by name) or the wire object's.
fn chosen_molblock(molecule: Option<&Value>, context: &FormContext) -> Option<String> {
    match molecule {
        Some(Value::String(name)) => context
            .library
            .iter()
            .find(|m| &m.name == name)
            .and_then(|m| m.molblock.clone()),
        Some(Value::Object(m)) => m
            .get("molblock")
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

/// The atom count of a V2000 mol block, read with the crate's mol block reader.
fn molblock_atom_count(molblock: &str) -> Option<usize> {
    crate::chem::molblock::parse_molblock(molblock)
        .ok()
        .map(|m| m.elements.len())
}

/// §4.2 element: a symbol (`Fe`), an atomic number, or a numeric string → atomic number.
fn element_value(field: &Field, raw: &Value, path: &str) -> Converted {
    let z = match raw {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let s = s.trim();
            s.parse::<u64>()
                .ok()
                .or_else(|| elements::atomic_number(s).map(u64::from))
        }
        _ => None,
    };
    match z.filter(|z| (1..=118).contains(z)) {
        Some(z) => Ok(Some(json!(z))),
        None => Err(vec![Problem::new(
            path,
            format!(
                "{}: `{}` is not an element (give a symbol such as Fe or an atomic number 1–118).",
                field.label,
                display(raw)
            ),
        )]),
    }
}

/// §4.2 cell: a full row-major 3×3 (9 numbers), or the orthorhombic shortcut `{a, b, c}` or
/// `[a, b, c]`, which becomes a diagonal cell.
fn cell_value(field: &Field, raw: &Value, path: &str) -> Converted {
    let numbers = |items: &[Value]| -> Option<Vec<f64>> {
        items
            .iter()
            .map(|x| number_value(x, false).and_then(|v| v.as_f64()))
            .collect()
    };
    let cell: Option<Vec<f64>> = match raw {
        Value::Array(items) if items.len() == 9 => numbers(items),
        Value::Array(items) if items.len() == 3 => numbers(items).map(|abc| diagonal(&abc)),
        Value::Object(m) => ["a", "b", "c"]
            .iter()
            .map(|k| {
                m.get(*k)
                    .and_then(|x| number_value(x, false))
                    .and_then(|v| v.as_f64())
            })
            .collect::<Option<Vec<f64>>>()
            .map(|abc| diagonal(&abc)),
        _ => None,
    };
    match cell {
        Some(cell) if cell.iter().all(|x| x.is_finite()) => {
            let lengths_ok =
                (0..3).all(|r| cell[3 * r..3 * r + 3].iter().map(|x| x * x).sum::<f64>() > 0.0);
            if !lengths_ok {
                return Err(vec![Problem::new(
                    path,
                    format!(
                        "{}: every cell vector needs a length above 0 Å.",
                        field.label
                    ),
                )]);
            }
            Ok(Some(json!(cell)))
        }
        _ => Err(vec![Problem::new(
            path,
            format!(
                "{}: give 9 numbers (a 3×3 cell in Å) or a, b, c.",
                field.label
            ),
        )]),
    }
}

fn diagonal(abc: &[f64]) -> Vec<f64> {
    vec![abc[0], 0.0, 0.0, 0.0, abc[1], 0.0, 0.0, 0.0, abc[2]]
}

/// A user's value quoted in a message: one bounded line (§9: untrusted text).
fn display(value: &Value) -> String {
    match value {
        Value::String(s) => excerpt(s),
        Value::Number(n) => n.as_f64().map(format_f64).unwrap_or_else(|| n.to_string()),
        other => excerpt(&other.to_string()),
    }
}
