//! Megane Builder's tool seam (§3, §4.1, §4.2, §6): the shapes Builder's tool layer reads —
//! `ToolListing`, `BuilderToolInfo`, `FieldSpec` — made from this crate's [`Toolbox`] and
//! [`Form`](super::form::Form), and the words Builder uses for a call that cannot be applied
//! ([`builder_failure`]), so the `megane` entry of the package drops into Builder unchanged.
//! Every contract rule stays in discovery, form generation and result interpretation; this module
//! only renames, regroups and rewords.
//!
//! Choices where Builder's seam is narrower than the form descriptors:
//! - `unsupported` lists the tools hidden for an unsupported `contract` and those with an unknown
//!   `apply` (Builder puts both there); tools with a malformed marker are in neither list.
//! - `formError` is the reason without the `Builder cannot build a form: ` prefix (Builder's menu
//!   adds it).
//! - A select whose options are not all strings is a `number` field (Builder's `enum` kind holds
//!   strings); a `const` becomes a one-option `enum` (string), a `number` with `min == max`, or a
//!   `boolean`; any other constant makes the form unusable for Builder (`formError`).
//! - `default` and `example` are left out (`undefined` in JavaScript) when the schema has none.
//! - A failed call (Builder's `interpretCall`): a tool error is the tool's whole first text block
//!   (trimmed, sanitised and bounded by [`message_block`](crate::wire::text::message_block)), as
//!   Builder shows it, where the core API's `error` keeps its one line; a result that cannot be
//!   used is `The tool returned an invalid result: <problem>`, the core's problem in plain words
//!   ([`plain_problem`]); a JSON-RPC error stays the core's `The server failed: <first line>`.

use serde::Serialize;
use serde_json::Value;

use super::discovery::{ToolButton, Toolbox};
use super::form::{Control, Field, NumberBounds, WidgetKind};
use super::marker::{Apply, Category, DocumentUse};
use super::result::FailureKind;

/// The prefix discovery puts before a form error in `disabledReason`.
const FORM_ERROR_PREFIX: &str = "Builder cannot build a form: ";

/// Builder's `ToolListing`: its buttons (server order) and the names of hidden marked tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolListing {
    /// Every Builder button, with its form or `formError`.
    pub tools: Vec<BuilderToolInfo>,
    /// Names of tools marked for a contract (or an `apply` mode) this client does not support.
    pub unsupported: Vec<String>,
}

/// Builder's `BuilderToolInfo`: one button.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuilderToolInfo {
    /// The MCP tool name (what `call` takes).
    pub name: String,
    /// `title`, else `annotations.title`, else the name. Plain text.
    pub label: String,
    /// The first sentence of the description. Plain text.
    pub tooltip: String,
    /// The whole description. Plain text.
    pub description: String,
    /// §3 Tools-menu group.
    pub category: Category,
    /// §5.2 apply mode.
    pub apply: Apply,
    /// §4.3 whether the tool takes the open document.
    pub document: DocumentUse,
    /// Whether the tool has a seed.
    pub stochastic: bool,
    /// Typical run time in seconds, or null.
    pub expected_seconds: Option<f64>,
    /// The tool's `inputSchema` as sent.
    pub input_schema: Value,
    /// The form, or null when Builder cannot build one (then `formError` says why).
    pub fields: Option<Vec<FieldSpec>>,
    /// Why there is no form, without the `Builder cannot build a form: ` prefix; else null.
    pub form_error: Option<String>,
}

/// Builder's `FieldSpec`: the common part plus the kind's own keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldSpec {
    /// The property name.
    pub key: String,
    /// The label. Plain text.
    pub label: String,
    /// Help text: the property's own `description` (a `$ref`-only property has none).
    pub help: Option<String>,
    /// Listed in `required`.
    pub required: bool,
    /// The schema's `default`, absent when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// The first of `examples`, absent when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
    /// `kind` and its keys.
    #[serde(flatten)]
    pub kind: FieldKind,
}

/// The `kind` of a [`FieldSpec`] and its keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum FieldKind {
    /// A number field; `min`/`max` are the exclusive bound when one is given, else the inclusive.
    #[serde(rename_all = "camelCase")]
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
        exclusive_min: bool,
        exclusive_max: bool,
        /// `x-megane-unit` as written, or null.
        unit: Option<String>,
    },
    /// A select over string options.
    Enum { options: Vec<String> },
    /// A text field.
    #[serde(rename_all = "camelCase")]
    String { max_length: Option<u64> },
    /// A checkbox.
    Boolean,
    /// A fixed-length vector of numbers.
    Vector {
        length: usize,
        integer: bool,
        unit: Option<String>,
    },
    /// A table of rows, one per array item.
    #[serde(rename_all = "camelCase")]
    Table {
        columns: Vec<FieldSpec>,
        min_items: u64,
        max_items: Option<u64>,
    },
    /// One level of nested object.
    Group { fields: Vec<FieldSpec> },
    /// A §4.2 widget; `of` names the molecule property of an atom widget.
    Widget {
        widget: WidgetKind,
        of: Option<String>,
        unit: Option<String>,
    },
}

/// How Builder's `interpretCall` begins the error of a result it cannot use.
pub const INVALID_RESULT: &str = "The tool returned an invalid result: ";

/// Builder's words for a call the core refused: `line` is the core's one-line error for the
/// response and `kind` what the response was ([`failure_kind`](super::result::failure_kind)).
pub fn builder_failure(kind: FailureKind, line: &str) -> String {
    match kind {
        FailureKind::ServerFailed => line.to_string(),
        FailureKind::ToolError { message } => message,
        FailureKind::InvalidResult => format!("{INVALID_RESULT}{}", plain_problem(line)),
    }
}

/// A result problem as the core words it (`<field path>: <reason>`) in plain words: `structure:
/// missing` → `structure is missing`; `structure.positions[4]: not a finite number` →
/// `structure.positions[4] is not a finite number`; `structure.bondOrders: has 3 entries …` →
/// `structure.bondOrders has 3 entries …`; a problem of the whole `result: …` loses its path;
/// any other reason, which names its own subject (`structure.elements[0]: 0 is not an atomic
/// number (1–118)`), keeps the path before it.
pub fn plain_problem(problem: &str) -> String {
    let Some((path, reason)) = problem.split_once(": ") else {
        return problem.to_string();
    };
    let is_path = !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '[' | ']' | '_' | '-'));
    if !is_path {
        return problem.to_string();
    }
    let verb = |words: &[&str]| words.iter().any(|w| reason.starts_with(w));
    if path == "result" {
        reason.to_string()
    } else if verb(&["missing", "not "]) {
        format!("{path} is {reason}")
    } else if verb(&["has ", "appears ", "repeats ", "bonds "]) {
        format!("{path} {reason}")
    } else {
        problem.to_string()
    }
}

/// Builder's listing of a toolbox.
pub fn tool_listing(toolbox: &Toolbox) -> ToolListing {
    ToolListing {
        tools: toolbox.buttons.iter().map(tool_info).collect(),
        unsupported: toolbox
            .unsupported_contract
            .iter()
            .chain(&toolbox.unknown_apply)
            .map(|hidden| hidden.name.clone())
            .collect(),
    }
}

/// Builder's description of one button.
pub fn tool_info(button: &ToolButton) -> BuilderToolInfo {
    let fields = match &button.form {
        Some(form) => form.fields.iter().map(field_spec).collect(),
        None => Err(button
            .disabled_reason
            .as_deref()
            .map(|r| r.strip_prefix(FORM_ERROR_PREFIX).unwrap_or(r))
            .unwrap_or("the tool has no form")
            .to_string()),
    };
    let (fields, form_error) = match fields {
        Ok(fields) => (Some(fields), None),
        Err(error) => (None, Some(error)),
    };
    let marker = &button.marker;
    BuilderToolInfo {
        name: button.name.clone(),
        label: button.label.clone(),
        tooltip: button.tooltip.clone(),
        description: button.description.clone(),
        category: button.category,
        apply: marker.apply,
        document: marker.document,
        stochastic: marker.stochastic,
        expected_seconds: marker.expected_seconds.filter(|s| *s > 0.0),
        input_schema: button.input_schema.clone(),
        fields,
        form_error,
    }
}

/// One form field as Builder's `FieldSpec`; `Err` when Builder's kinds cannot show it.
pub fn field_spec(field: &Field) -> Result<FieldSpec, String> {
    let kind = match &field.control {
        Control::Number { bounds } => number_kind(bounds),
        Control::Select { options } => match options
            .iter()
            .map(|o| o.as_str().map(str::to_string))
            .collect::<Option<Vec<String>>>()
        {
            Some(options) => FieldKind::Enum { options },
            None => FieldKind::Number {
                integer: options.iter().all(|o| o.is_i64() || o.is_u64()),
                min: None,
                max: None,
                exclusive_min: false,
                exclusive_max: false,
                unit: field.raw_unit.clone(),
            },
        },
        Control::Text { max_length, .. } => FieldKind::String {
            max_length: *max_length,
        },
        Control::Checkbox => FieldKind::Boolean,
        Control::Constant { value } => constant_kind(value, field)?,
        Control::Vector { length, bounds } => FieldKind::Vector {
            length: *length,
            integer: bounds.integer,
            unit: bounds.unit.as_ref().map(|u| u.unit.clone()),
        },
        Control::Table {
            columns,
            min_rows,
            max_rows,
        } => FieldKind::Table {
            columns: columns.iter().map(field_spec).collect::<Result<_, _>>()?,
            min_items: *min_rows,
            max_items: *max_rows,
        },
        Control::Fieldset { fields } => FieldKind::Group {
            fields: fields.iter().map(field_spec).collect::<Result<_, _>>()?,
        },
        widget => FieldKind::Widget {
            // Every other control is one of the §4.2 widgets.
            widget: widget.widget().unwrap_or(WidgetKind::Document),
            of: match widget {
                Control::Atom { of } => Some(of.clone()),
                _ => None,
            },
            unit: field.raw_unit.clone(),
        },
    };
    Ok(FieldSpec {
        key: field.key.clone(),
        label: field.label.clone(),
        help: field.help.clone(),
        required: field.required,
        default: field.default.clone(),
        example: field.example.clone(),
        kind,
    })
}

fn number_kind(bounds: &NumberBounds) -> FieldKind {
    FieldKind::Number {
        integer: bounds.integer,
        min: bounds.exclusive_minimum.or(bounds.minimum),
        max: bounds.exclusive_maximum.or(bounds.maximum),
        exclusive_min: bounds.exclusive_minimum.is_some(),
        exclusive_max: bounds.exclusive_maximum.is_some(),
        unit: bounds.unit.as_ref().map(|u| u.unit.clone()),
    }
}

fn constant_kind(value: &Value, field: &Field) -> Result<FieldKind, String> {
    Ok(match value {
        Value::String(text) => FieldKind::Enum {
            options: vec![text.clone()],
        },
        Value::Number(n) => FieldKind::Number {
            integer: n.is_i64() || n.is_u64(),
            min: n.as_f64(),
            max: n.as_f64(),
            exclusive_min: false,
            exclusive_max: false,
            unit: field.raw_unit.clone(),
        },
        Value::Bool(_) => FieldKind::Boolean,
        _ => {
            return Err(format!(
                "property `{}` is a constant that is not a string, number or boolean",
                field.key
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_in_plain_words() {
        for (core, plain) in [
            ("structure: missing", "structure is missing"),
            ("contract: missing", "contract is missing"),
            (
                "structure.positions[4]: not a finite number",
                "structure.positions[4] is not a finite number",
            ),
            (
                "structure.bondOrders: has 3 entries but there are 2 bonds",
                "structure.bondOrders has 3 entries but there are 2 bonds",
            ),
            (
                "structure.bonds[1]: bonds atom 2 to itself",
                "structure.bonds[1] bonds atom 2 to itself",
            ),
            (
                "structure.scalars.q: appears twice",
                "structure.scalars.q appears twice",
            ),
            (
                "structure.elements[0]: 0 is not an atomic number (1–118)",
                "structure.elements[0]: 0 is not an atomic number (1–118)",
            ),
            ("result: not valid JSON: EOF", "not valid JSON: EOF"),
            (
                "structuredContent: missing; the tool returned no BuilderResult",
                "structuredContent is missing; the tool returned no BuilderResult",
            ),
            (
                "The result does not match: x",
                "The result does not match: x",
            ),
            ("no colon", "no colon"),
        ] {
            assert_eq!(plain_problem(core), plain, "{core}");
        }
    }

    #[test]
    fn builder_words_each_kind() {
        assert_eq!(
            builder_failure(FailureKind::InvalidResult, "structure: missing"),
            "The tool returned an invalid result: structure is missing"
        );
        assert_eq!(
            builder_failure(FailureKind::ServerFailed, "The server failed: boom"),
            "The server failed: boom"
        );
        let message = "1 validation error\nph\n  bad".to_string();
        assert_eq!(
            builder_failure(
                FailureKind::ToolError {
                    message: message.clone()
                },
                "1 validation error"
            ),
            message
        );
    }
}
