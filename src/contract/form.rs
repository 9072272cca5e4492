//! §4.1/§4.2: form descriptors generated from a tool's `inputSchema`.
//!
//! A form is a list of [`Field`]s, one per property, each with a [`Control`] the host renders.
//! Anything outside the §4.1 subset makes the whole form fail with a reason naming the property; the
//! discovery step turns that into the disabled button's `Builder cannot build a form: …` tooltip.

use serde::Serialize;
use serde_json::{Map, Value};

use super::schema::{
    num_key, required_names, resolve, single_type, str_key, strip_nullable, uint_key,
    UNSUPPORTED_KEYWORDS,
};
use super::units::{unit_info, UnitInfo};
use crate::wire::text::{excerpt, one_line, plain_text};

/// §4.2: the widgets of contract version 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum WidgetKind {
    Molecule,
    Atom,
    Element,
    Cell,
    Selection,
    Seed,
    Document,
}

impl WidgetKind {
    /// The widget named by an `x-megane-widget` value, `None` when this client does not know it.
    pub fn from_name(name: &str) -> Option<WidgetKind> {
        Some(match name {
            "molecule" => WidgetKind::Molecule,
            "atom" => WidgetKind::Atom,
            "element" => WidgetKind::Element,
            "cell" => WidgetKind::Cell,
            "selection" => WidgetKind::Selection,
            "seed" => WidgetKind::Seed,
            "document" => WidgetKind::Document,
            _ => return None,
        })
    }
}

/// Bounds of a number field or of each number of a vector, as the schema states them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberBounds {
    /// `type: "integer"`: only whole numbers.
    pub integer: bool,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: Option<f64>,
    pub exclusive_maximum: Option<f64>,
    pub multiple_of: Option<f64>,
    /// §4.4: the unit from `x-megane-unit`, with its label and conversions.
    pub unit: Option<UnitInfo>,
}

/// §4.1: the control a host renders for one property.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "control", rename_all = "camelCase")]
pub enum Control {
    /// A number field (with its unit suffix).
    #[serde(rename_all = "camelCase")]
    Number {
        #[serde(flatten)]
        bounds: NumberBounds,
    },
    /// A select over the `enum` values.
    #[serde(rename_all = "camelCase")]
    Select { options: Vec<Value> },
    /// A text field.
    #[serde(rename_all = "camelCase")]
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        /// ECMA-262 regular expression the text must match.
        pattern: Option<String>,
    },
    /// A checkbox.
    Checkbox,
    /// A fixed value (`const`): shown, not editable, always sent.
    #[serde(rename_all = "camelCase")]
    Constant { value: Value },
    /// A fixed-size vector of numbers (`minItems == maxItems ≤ 9`).
    #[serde(rename_all = "camelCase")]
    Vector {
        length: usize,
        #[serde(flatten)]
        bounds: NumberBounds,
    },
    /// An editable table, one row per item; columns come from the item schema.
    #[serde(rename_all = "camelCase")]
    Table {
        columns: Vec<Field>,
        min_rows: u64,
        max_rows: Option<u64>,
    },
    /// One level of nested object.
    #[serde(rename_all = "camelCase")]
    Fieldset { fields: Vec<Field> },
    /// §4.2 molecule: a drop-down of the library; sent as `{name, molblock}`.
    Molecule,
    /// §4.2 atom: a 0-based atom index into the molecule argument `of` (a sibling property).
    #[serde(rename_all = "camelCase")]
    Atom { of: String },
    /// §4.2 element: an atomic number 1–118 from the periodic-table picker.
    Element,
    /// §4.2 cell: a row-major 3×3 cell in Å, with the orthorhombic a, b, c shortcut.
    Cell,
    /// §4.2 selection: atom indices into the document argument; the form shows only the count.
    Selection,
    /// §4.2 seed: a random seed pre-filled fresh, editable, with "New seed".
    Seed,
    /// §4.3 document: never a control; the form says how many atoms the open structure has.
    Document,
}

impl Control {
    /// The §4.2 widget this control is, if any.
    pub fn widget(&self) -> Option<WidgetKind> {
        Some(match self {
            Control::Molecule => WidgetKind::Molecule,
            Control::Atom { .. } => WidgetKind::Atom,
            Control::Element => WidgetKind::Element,
            Control::Cell => WidgetKind::Cell,
            Control::Selection => WidgetKind::Selection,
            Control::Seed => WidgetKind::Seed,
            Control::Document => WidgetKind::Document,
            _ => return None,
        })
    }
}

/// §4.1: one property of the form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Field {
    /// The property name (the argument's key).
    pub key: String,
    /// `title`, else the key made readable (`atom_names` → `Atom names`). Plain text.
    pub label: String,
    /// `description`, shown as help text. Plain text.
    pub help: Option<String>,
    /// Listed in the schema's `required`.
    pub required: bool,
    /// §4.1: not required and without a default: labelled optional, omitted when left empty.
    pub optional: bool,
    /// The schema also accepts `null` (a pydantic optional).
    pub nullable: bool,
    /// `default`, which pre-fills the control.
    pub default: Option<Value>,
    /// The first of `examples`, which pre-fills the control when there is no default.
    pub example: Option<Value>,
    /// §4.4 `x-megane-unit` as the server wrote it, for any control (widgets included). Not
    /// serialised: number and vector controls carry it as `unit`.
    #[serde(skip)]
    pub raw_unit: Option<String>,
    /// The control to render.
    #[serde(flatten)]
    pub control: Control,
}

/// §4.1: a whole generated form plus what discovery needs to know about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Form {
    /// Top-level fields in schema order.
    pub fields: Vec<Field>,
    /// §4.3: the property that carries the open document, if any.
    pub document_property: Option<String>,
    /// Whether a `seed` widget exists at the top level (§4.4).
    pub has_seed: bool,
    /// Non-fatal observations (an unknown widget shown as its plain control, …).
    pub notices: Vec<String>,
}

/// §4.1: a field's help text is its `description`. A property that is a local `$ref` (with or
/// without keys of its own) gets only its own `description`: the definition's describes the
/// type (e.g. pydantic's `Molecule` model), not the field.
fn field_help(schema: &Value, resolved: &Map<String, Value>) -> Option<String> {
    let own = schema.as_object().filter(|o| o.contains_key("$ref"));
    match own {
        Some(own) => str_key(own, "description").map(plain_text),
        None => str_key(resolved, "description").map(plain_text),
    }
}

/// Where a field sits: nesting decides what §4.1 still allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Fieldset,
    TableColumn,
}

struct Builder<'a> {
    root: &'a Value,
    notices: Vec<String>,
}

/// §4.1: builds the form for an `inputSchema`, or says which property Builder cannot show.
///
/// The error is the part after `Builder cannot build a form: `, e.g. ``property `x` uses `oneOf` ``.
pub fn build_form(input_schema: &Value) -> Result<Form, String> {
    let mut builder = Builder {
        root: input_schema,
        notices: Vec::new(),
    };
    let root = resolve(input_schema, input_schema).map_err(|e| format!("the input schema: {e}"))?;
    if let Some(t) = root.get("type") {
        if t.as_str() != Some("object") {
            return Err("the input schema is not an object schema".to_string());
        }
    }
    if let Some(keyword) = unsupported_keyword(&root) {
        return Err(format!("the input schema uses `{keyword}`"));
    }
    let fields = builder.fields_of(&root, "", Level::Top)?;
    check_atom_references(&fields, "")?;
    let documents: Vec<&Field> = fields
        .iter()
        .filter(|f| f.control == Control::Document)
        .collect();
    if documents.len() > 1 {
        return Err(format!(
            "properties `{}` and `{}` are both document widgets (§4.3 allows one)",
            excerpt(&documents[0].key),
            excerpt(&documents[1].key)
        ));
    }
    Ok(Form {
        document_property: documents.first().map(|f| f.key.clone()),
        has_seed: fields.iter().any(|f| f.control == Control::Seed),
        fields,
        notices: builder.notices,
    })
}

impl Builder<'_> {
    fn fields_of(
        &mut self,
        object: &Map<String, Value>,
        prefix: &str,
        level: Level,
    ) -> Result<Vec<Field>, String> {
        let required = required_names(object);
        let Some(properties) = object.get("properties") else {
            return Ok(Vec::new());
        };
        let Some(properties) = properties.as_object() else {
            return Err(format!("{}`properties` is not an object", where_(prefix)));
        };
        properties
            .iter()
            .map(|(key, schema)| {
                self.field(
                    key,
                    schema,
                    &join(prefix, key),
                    required.contains(key),
                    level,
                )
            })
            .collect()
    }

    fn field(
        &mut self,
        key: &str,
        schema: &Value,
        path: &str,
        required: bool,
        level: Level,
    ) -> Result<Field, String> {
        let resolved = resolve(schema, self.root).map_err(|e| format!("property `{path}`: {e}"))?;
        let (inner, nullable) = strip_nullable(resolved.clone());
        // A pydantic optional of a model is `anyOf: [{"$ref": …}, {"type": "null"}]`: the `$ref`
        // left after removing the null option is resolved too.
        let inner = if nullable {
            resolve(&Value::Object(inner), self.root)
                .map_err(|e| format!("property `{path}`: {e}"))?
        } else {
            inner
        };
        let control = match str_key(&resolved, "x-megane-widget") {
            Some(name) => match WidgetKind::from_name(name) {
                Some(kind) => widget_control(kind, &inner, path, level)?,
                None => {
                    self.notices.push(format!(
                        "Property `{path}` asks for the widget `{}`, which this Builder does not know; it is shown as a plain control.",
                        excerpt(name)
                    ));
                    self.plain_control(&inner, path, level)?
                }
            },
            None => self.plain_control(&inner, path, level)?,
        };
        let default = resolved.get("default").cloned();
        let example = resolved
            .get("examples")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
            .cloned();
        Ok(Field {
            key: key.to_string(),
            label: str_key(&resolved, "title")
                .map(one_line)
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| readable_key(key)),
            help: field_help(schema, &resolved),
            required,
            optional: !required && default.is_none(),
            nullable,
            default,
            example,
            raw_unit: str_key(&resolved, "x-megane-unit").map(str::to_string),
            control,
        })
    }

    fn plain_control(
        &mut self,
        schema: &Map<String, Value>,
        path: &str,
        level: Level,
    ) -> Result<Control, String> {
        if let Some(keyword) = unsupported_keyword(schema) {
            return Err(format!("property `{path}` uses `{keyword}`"));
        }
        if let Some(value) = schema.get("const") {
            return Ok(Control::Constant {
                value: value.clone(),
            });
        }
        if let Some(options) = schema.get("enum") {
            let Some(options) = options.as_array().filter(|o| !o.is_empty()) else {
                return Err(format!(
                    "property `{path}` has an empty or malformed `enum`"
                ));
            };
            if options.iter().all(|o| o.is_string() || o.is_number()) {
                return Ok(Control::Select {
                    options: options.clone(),
                });
            }
            return Err(format!(
                "property `{path}` has an `enum` of values that are not text or numbers"
            ));
        }
        match single_type(schema) {
            Some("number") | Some("integer") => Ok(Control::Number {
                bounds: number_bounds(schema),
            }),
            Some("string") => Ok(Control::Text {
                min_length: uint_key(schema, "minLength"),
                max_length: uint_key(schema, "maxLength"),
                pattern: str_key(schema, "pattern").map(str::to_string),
            }),
            Some("boolean") => Ok(Control::Checkbox),
            Some("array") => self.array_control(schema, path, level),
            Some("object") => {
                if level != Level::Top {
                    return Err(format!(
                        "property `{path}` nests an object deeper than one level"
                    ));
                }
                Ok(Control::Fieldset {
                    fields: self.fields_of(schema, path, Level::Fieldset)?,
                })
            }
            Some(other) => Err(format!("property `{path}` has type `{}`", excerpt(other))),
            None => match schema.get("type") {
                Some(_) => Err(format!("property `{path}` has more than one type")),
                None => Err(format!("property `{path}` has no type")),
            },
        }
    }

    fn array_control(
        &mut self,
        schema: &Map<String, Value>,
        path: &str,
        level: Level,
    ) -> Result<Control, String> {
        let items = match schema.get("items") {
            Some(items) => {
                resolve(items, self.root).map_err(|e| format!("property `{path}`: {e}"))?
            }
            None => return Err(format!("property `{path}` is an array without `items`")),
        };
        if let Some(keyword) = unsupported_keyword(&items) {
            return Err(format!("property `{path}` has items that use `{keyword}`"));
        }
        match single_type(&items) {
            Some("number") | Some("integer") => {
                let (min, max) = (uint_key(schema, "minItems"), uint_key(schema, "maxItems"));
                match (min, max) {
                    (Some(min), Some(max)) if min == max && (1..=9).contains(&min) => {
                        Ok(Control::Vector {
                            length: min as usize,
                            bounds: number_bounds(&items),
                        })
                    }
                    _ => Err(format!(
                        "property `{path}` is a list of numbers without a fixed size of at most 9 (`minItems` = `maxItems`)"
                    )),
                }
            }
            Some("object") => {
                if level != Level::Top {
                    return Err(format!(
                        "property `{path}` nests a table inside another control"
                    ));
                }
                Ok(Control::Table {
                    columns: self.fields_of(&items, &format!("{path}[]"), Level::TableColumn)?,
                    min_rows: uint_key(schema, "minItems").unwrap_or(0),
                    max_rows: uint_key(schema, "maxItems"),
                })
            }
            Some(other) => Err(format!(
                "property `{path}` is a list of `{}`",
                excerpt(other)
            )),
            None => Err(format!(
                "property `{path}` is a list whose items have no single type"
            )),
        }
    }
}

/// §4.2: the widget's control once its schema is known to accept the normative shape.
fn widget_control(
    kind: WidgetKind,
    schema: &Map<String, Value>,
    path: &str,
    level: Level,
) -> Result<Control, String> {
    let mismatch = |shape: &str| {
        Err(format!(
            "property `{path}` is a `{}` widget but its schema does not accept {shape}",
            widget_name(kind)
        ))
    };
    let is_type = |t: &str| single_type(schema) == Some(t);
    let items_type = |t: &str| {
        schema
            .get("items")
            .and_then(|i| i.get("type"))
            .and_then(Value::as_str)
            == Some(t)
    };
    let has_properties = |names: &[&str]| {
        let props = schema.get("properties").and_then(Value::as_object);
        names
            .iter()
            .all(|n| props.is_some_and(|p| p.contains_key(*n)))
    };
    match kind {
        WidgetKind::Molecule => {
            if !is_type("object") || !has_properties(&["name", "molblock"]) {
                return mismatch("a molecule `{name, molblock}`");
            }
            Ok(Control::Molecule)
        }
        WidgetKind::Atom => {
            if !is_type("integer") {
                return mismatch("an atom index (integer)");
            }
            match str_key(schema, "x-megane-of") {
                Some(of) => Ok(Control::Atom { of: of.to_string() }),
                None => Err(format!(
                    "property `{path}` is an `atom` widget without `x-megane-of` naming its molecule"
                )),
            }
        }
        WidgetKind::Element => {
            if !is_type("integer") {
                return mismatch("an atomic number (integer 1–118)");
            }
            Ok(Control::Element)
        }
        WidgetKind::Cell => {
            let min = uint_key(schema, "minItems").unwrap_or(0);
            let max = uint_key(schema, "maxItems").unwrap_or(u64::MAX);
            if !is_type("array") || !(items_type("number")) || min > 9 || max < 9 {
                return mismatch("a 3×3 cell (9 numbers)");
            }
            Ok(Control::Cell)
        }
        WidgetKind::Selection => {
            if !is_type("array") || !items_type("integer") {
                return mismatch("atom indices (a list of integers)");
            }
            Ok(Control::Selection)
        }
        WidgetKind::Seed => {
            if !is_type("integer") {
                return mismatch("a seed (integer)");
            }
            Ok(Control::Seed)
        }
        WidgetKind::Document => {
            if level != Level::Top {
                return Err(format!(
                    "property `{path}` is a `document` widget below the top level (§4.3)"
                ));
            }
            if !is_type("object") || !has_properties(&["elements", "positions", "cell", "bonds"]) {
                return mismatch("a Structure (elements, positions, cell, bonds)");
            }
            Ok(Control::Document)
        }
    }
}

/// §4.2: an `atom` widget's `x-megane-of` must name a sibling `molecule` widget.
fn check_atom_references(fields: &[Field], prefix: &str) -> Result<(), String> {
    for field in fields {
        match &field.control {
            Control::Atom { of } => {
                let target = fields.iter().find(|f| &f.key == of);
                if !target.is_some_and(|t| t.control == Control::Molecule) {
                    return Err(format!(
                        "property `{}` refers with `x-megane-of` to `{}`, which is not a molecule widget beside it",
                        join(prefix, &field.key),
                        excerpt(of)
                    ));
                }
            }
            Control::Table { columns, .. } => {
                check_atom_references(columns, &format!("{}[]", join(prefix, &field.key)))?
            }
            Control::Fieldset { fields: inner } => {
                check_atom_references(inner, &join(prefix, &field.key))?
            }
            _ => {}
        }
    }
    Ok(())
}

fn widget_name(kind: WidgetKind) -> &'static str {
    match kind {
        WidgetKind::Molecule => "molecule",
        WidgetKind::Atom => "atom",
        WidgetKind::Element => "element",
        WidgetKind::Cell => "cell",
        WidgetKind::Selection => "selection",
        WidgetKind::Seed => "seed",
        WidgetKind::Document => "document",
    }
}

fn number_bounds(schema: &Map<String, Value>) -> NumberBounds {
    NumberBounds {
        integer: single_type(schema) == Some("integer"),
        minimum: num_key(schema, "minimum"),
        maximum: num_key(schema, "maximum"),
        exclusive_minimum: num_key(schema, "exclusiveMinimum"),
        exclusive_maximum: num_key(schema, "exclusiveMaximum"),
        multiple_of: num_key(schema, "multipleOf"),
        unit: str_key(schema, "x-megane-unit").map(unit_info),
    }
}

fn unsupported_keyword(schema: &Map<String, Value>) -> Option<&'static str> {
    UNSUPPORTED_KEYWORDS
        .iter()
        .copied()
        .find(|k| schema.contains_key(*k))
}

/// A property's path for messages (`components[].count`), its server-given key as one line.
fn join(prefix: &str, key: &str) -> String {
    let key = excerpt(key);
    if prefix.is_empty() {
        key
    } else {
        format!("{prefix}.{key}")
    }
}

fn where_(prefix: &str) -> String {
    if prefix.is_empty() {
        "the input schema: ".to_string()
    } else {
        format!("property `{prefix}`: ")
    }
}

/// `atom_names` / `atomNames` → `Atom names`: the label of a property without a `title`.
pub fn readable_key(key: &str) -> String {
    let mut words = String::new();
    let mut previous_lower = false;
    for c in key.chars() {
        if c == '_' || c == '-' {
            words.push(' ');
            previous_lower = false;
        } else if c.is_uppercase() && previous_lower {
            words.push(' ');
            words.extend(c.to_lowercase());
            previous_lower = false;
        } else {
            words.push(c);
            previous_lower = c.is_lowercase();
        }
    }
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => key.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> Result<Form, String> {
        build_form(&schema)
    }

    #[test]
    fn every_plain_control_of_the_subset() {
        let f = form(json!({"type": "object", "properties": {
            "t": {"type": "number", "minimum": 1, "maximum": 4, "multipleOf": 0.5, "x-megane-unit": "angstrom"},
            "shape": {"type": "string", "enum": ["cubic", "orthorhombic"]},
            "label": {"type": "string", "maxLength": 8, "minLength": 1, "pattern": "^[A-Z]+$"},
            "flag": {"type": "boolean"},
            "v": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
            "k": {"const": 1},
            "opts": {"type": "object", "properties": {"a": {"type": "integer"}}}
        }}))
        .unwrap();
        let kinds: Vec<_> = f
            .fields
            .iter()
            .map(|f| serde_json::to_value(&f.control).unwrap()["control"].clone())
            .collect();
        assert_eq!(
            kinds,
            json!(["number", "select", "text", "checkbox", "vector", "constant", "fieldset"])
                .as_array()
                .unwrap()
                .clone()
        );
        match &f.fields[0].control {
            Control::Number { bounds } => {
                assert_eq!(bounds.multiple_of, Some(0.5));
                assert_eq!(bounds.unit.as_ref().unwrap().label, "Å");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unsupported_schemas_name_the_property() {
        let e = form(json!({"type": "object", "properties": {"x": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}})).unwrap_err();
        assert_eq!(e, "property `x` uses `oneOf`");
        let e = form(json!({"type": "object", "properties": {"o": {"type": "object", "properties": {"p": {"type": "object"}}}}})).unwrap_err();
        assert!(e.contains("`o.p`"), "{e}");
        let e = form(json!({"type": "object", "properties": {"v": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 12}}})).unwrap_err();
        assert!(e.contains("`v`"), "{e}");
    }

    #[test]
    fn pydantic_optional_is_an_optional_field() {
        let f = form(json!({"type": "object", "properties": {"s": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}}})).unwrap();
        assert!(f.fields[0].nullable);
        assert!(!f.fields[0].required);
        assert!(matches!(f.fields[0].control, Control::Text { .. }));
    }

    #[test]
    fn pydantic_optional_of_a_model_resolves_its_ref() {
        let f = form(json!({"type": "object", "properties": {
            "document": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}], "default": null, "x-megane-widget": "document"},
            "solvent": {"anyOf": [{"$ref": "#/$defs/M"}, {"type": "null"}], "default": null, "x-megane-widget": "molecule"},
            "mode": {"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}], "default": null}
        }, "$defs": {
            "S": {"type": "object", "properties": {"elements": {}, "positions": {}, "cell": {}, "bonds": {}}},
            "M": {"type": "object", "properties": {"name": {"type": "string"}, "molblock": {"type": "string"}}},
            "Mode": {"type": "string", "enum": ["fast", "careful"]}
        }}))
        .unwrap();
        assert_eq!(f.fields[0].control, Control::Document);
        assert!(f.fields[0].nullable);
        assert_eq!(f.fields[1].control, Control::Molecule);
        assert!(matches!(&f.fields[2].control, Control::Select { options } if options.len() == 2));
        assert_eq!(f.document_property.as_deref(), Some("document"));
    }

    #[test]
    fn atom_widget_must_name_a_molecule_sibling() {
        let e = form(json!({"type": "object", "properties": {
            "head": {"type": "integer", "x-megane-widget": "atom", "x-megane-of": "monomer"}
        }}))
        .unwrap_err();
        assert!(e.contains("`monomer`"), "{e}");
    }

    #[test]
    fn widget_with_the_wrong_shape_is_refused() {
        let e = form(json!({"type": "object", "properties": {"seed": {"type": "string", "x-megane-widget": "seed"}}})).unwrap_err();
        assert!(e.contains("`seed`") && e.contains("integer"), "{e}");
        let e = form(json!({"type": "object", "properties": {"c": {"type": "array", "items": {"type": "number"}, "maxItems": 3, "x-megane-widget": "cell"}}})).unwrap_err();
        assert!(e.contains("9 numbers"), "{e}");
    }

    #[test]
    fn unknown_widget_falls_back_with_a_notice() {
        let f = form(json!({"type": "object", "properties": {"r": {"type": "number", "x-megane-widget": "slider"}}})).unwrap();
        assert!(matches!(f.fields[0].control, Control::Number { .. }));
        assert_eq!(f.notices.len(), 1);
    }

    #[test]
    fn readable_keys() {
        assert_eq!(readable_key("atom_names"), "Atom names");
        assert_eq!(readable_key("atomNames"), "Atom names");
        assert_eq!(readable_key("seed"), "Seed");
    }
}
