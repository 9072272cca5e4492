//! §6: arguments are validated against the tool's `inputSchema` (crate `jsonschema`, draft 2020-12
//! unless the schema names another) before Run, and every problem is said in words a chemist
//! understands, addressed to the form field it concerns.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, Validator};
use serde::Serialize;
use serde_json::Value;

use super::form::{Control, Field, Form};
use super::text::{excerpt, one_line, one_line_max};

/// One reason Run is not possible: the field's path (`components/0/count`, empty for the whole
/// form) and a sentence for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    /// A problem at a path.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Compiles an `inputSchema`; the error (one line) says why it is not usable JSON Schema.
pub fn compile(input_schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(input_schema)
        .or_else(|_| jsonschema::validator_for(input_schema))
        .map_err(|e| {
            format!(
                "the input schema is not valid JSON Schema ({})",
                one_line(&e.to_string())
            )
        })
}

/// §6: every problem of `arguments` against the tool's schema, in form order of discovery.
///
/// `form` supplies labels and units for the messages; without it paths are used as labels.
pub fn validate_arguments(
    input_schema: &Value,
    form: Option<&Form>,
    arguments: &Value,
) -> Vec<Problem> {
    let validator = match compile(input_schema) {
        Ok(v) => v,
        Err(e) => {
            return vec![Problem::new(
                "",
                format!("Builder cannot check this tool's arguments: {e}"),
            )]
        }
    };
    let fields = form.map(|f| f.fields.as_slice()).unwrap_or(&[]);
    let mut problems: Vec<Problem> = Vec::new();
    for error in validator.iter_errors(arguments) {
        let segments: Vec<String> = error
            .instance_path()
            .as_str()
            .split('/')
            .skip(1)
            .map(unescape_pointer)
            .collect();
        let problem = describe(error.kind(), &segments, fields);
        if !problems.contains(&problem) {
            problems.push(problem);
        }
    }
    problems
}

/// The label of the field at `segments` (`["components", "0", "count"]` →
/// `Components, row 1: Count`), with the field itself when found.
fn locate<'a>(segments: &[String], fields: &'a [Field]) -> (String, Option<&'a Field>) {
    let mut label_parts: Vec<String> = Vec::new();
    let mut current_fields = fields;
    let mut found: Option<&Field> = None;
    let mut i = 0;
    while i < segments.len() {
        let key = &segments[i];
        match current_fields.iter().find(|f| &f.key == key) {
            Some(field) => {
                found = Some(field);
                label_parts.push(one_line(&field.label));
                match &field.control {
                    Control::Table { columns, .. } => {
                        if let Some(row) = segments.get(i + 1).and_then(|r| r.parse::<usize>().ok())
                        {
                            if let Some(last) = label_parts.last_mut() {
                                *last = format!("{last}, row {}", row + 1);
                            }
                            i += 1;
                        }
                        current_fields = columns;
                    }
                    Control::Fieldset { fields } => current_fields = fields,
                    _ => current_fields = &[],
                }
            }
            None => {
                if let Ok(index) = key.parse::<usize>() {
                    if let Some(last) = label_parts.last_mut() {
                        *last = format!("{last}, value {}", index + 1);
                    }
                } else {
                    label_parts.push(excerpt(key));
                    found = None;
                }
            }
        }
        i += 1;
    }
    let label = if label_parts.is_empty() {
        "The arguments".to_string()
    } else {
        label_parts.join(": ")
    };
    (label, found)
}

fn describe(kind: &ValidationErrorKind, segments: &[String], fields: &[Field]) -> Problem {
    let path = segments.join("/");
    let (label, field) = locate(segments, fields);
    let unit = field
        .and_then(unit_label)
        .map(|u| format!(" {u}"))
        .unwrap_or_default();
    let message = match kind {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default().to_string();
            let mut child = segments.to_vec();
            child.push(name.clone());
            let (child_label, _) = locate(&child, fields);
            return Problem::new(child.join("/"), format!("{child_label} is required."));
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("{label} must be at least {}{unit}.", number(limit))
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("{label} must be at most {}{unit}.", number(limit))
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{label} must be greater than {}{unit}.", number(limit))
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{label} must be less than {}{unit}.", number(limit))
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!(
                "{label} must be a multiple of {}{unit}.",
                format_f64(*multiple_of)
            )
        }
        ValidationErrorKind::Type { kind } => format!("{label} must be {}.", expected_type(kind)),
        ValidationErrorKind::Enum { options } => {
            format!("{label} must be one of: {}.", list(options))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{label} must be {}.", short_json(expected_value))
        }
        ValidationErrorKind::MinItems { limit } => match field.map(|f| &f.control) {
            Some(Control::Table { .. }) => format!("{label} needs at least {limit} row(s)."),
            _ => format!("{label} needs at least {limit} value(s)."),
        },
        ValidationErrorKind::MaxItems { limit } => match field.map(|f| &f.control) {
            Some(Control::Table { .. }) => format!("{label} takes at most {limit} row(s)."),
            _ => format!("{label} takes at most {limit} value(s)."),
        },
        ValidationErrorKind::MinLength { limit } => {
            if *limit == 1 {
                format!("{label} must not be empty.")
            } else {
                format!("{label} needs at least {limit} characters.")
            }
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("{label} takes at most {limit} characters.")
        }
        ValidationErrorKind::Pattern { .. } => format!("{label} is not in the expected format."),
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            match field.map(|f| &f.control) {
                Some(Control::Molecule) => format!("{label} needs a mol block or a SMILES."),
                _ => format!("{label} does not have any of the accepted forms."),
            }
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            format!("{label} is ambiguous: it fits more than one accepted form.")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            format!(
                "{label} has fields this tool does not take: {}.",
                unexpected
                    .iter()
                    .map(|k| excerpt(k))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        ValidationErrorKind::UniqueItems => format!("{label} must not repeat a value."),
        ValidationErrorKind::FalseSchema => format!("{label} is not accepted by this tool."),
        other => format!("{label} is not valid ({}).", other.keyword()),
    };
    Problem::new(path, message)
}

fn unit_label(field: &Field) -> Option<String> {
    match &field.control {
        Control::Number { bounds } | Control::Vector { bounds, .. } => bounds
            .unit
            .as_ref()
            .map(|u| u.label.clone())
            .filter(|l| !l.is_empty()),
        _ => None,
    }
}

fn expected_type(kind: &TypeKind) -> String {
    let name = |t: JsonType| match t {
        JsonType::Integer => "a whole number",
        JsonType::Number => "a number",
        JsonType::String => "text",
        JsonType::Boolean => "true or false",
        JsonType::Array => "a list",
        JsonType::Object => "a group of values",
        JsonType::Null => "empty",
    };
    match kind {
        TypeKind::Single(t) => name(*t).to_string(),
        TypeKind::Multiple(set) => set.iter().map(name).collect::<Vec<_>>().join(" or "),
    }
}

fn number(value: &Value) -> String {
    value
        .as_f64()
        .map(format_f64)
        .unwrap_or_else(|| value.to_string())
}

/// A number as a person writes it: `1` not `1.0`, otherwise the shortest round-trip form.
pub fn format_f64(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

fn list(options: &Value) -> String {
    match options.as_array() {
        Some(items) => items.iter().map(short_json).collect::<Vec<_>>().join(", "),
        None => short_json(options),
    }
}

/// A value from the schema quoted in a message: text as itself, anything else as compact JSON;
/// one line of at most 60 characters.
fn short_json(value: &Value) -> String {
    match value {
        Value::String(s) => one_line_max(s, 60),
        other => one_line_max(&other.to_string(), 60),
    }
}

fn unescape_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}
