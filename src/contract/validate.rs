//! §6: arguments are validated against the tool's `inputSchema` (crate `jsonschema`, draft 2020-12
//! unless the schema names another) before Run, and every problem is said in words a chemist
//! understands, addressed to the form field it concerns.
//!
//! Compiling a schema costs milliseconds, validating small arguments microseconds: validators
//! are compiled once per distinct schema and kept in a bounded cache ([`compiled`]) that
//! discovery, form validation and the offline tools share. The §4.3 document is not walked by
//! `jsonschema` on every keystroke: [`validate_with_document`] takes the typed §5.1 check made
//! once per document and validates the rest of the arguments with a stand-in in its place.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, Validator};
use serde::{Deserialize as _, Serialize};
use serde_json::{json, Map, Value};

use super::canonical::canonical_json;
use super::form::{Control, Field, Form};
use crate::wire::text::{excerpt, one_line, one_line_max};

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

/// Most distinct schemas whose validators are kept (the least recently used is dropped first).
pub const MAX_CACHED_VALIDATORS: usize = 64;

/// What is kept of one distinct schema: the schema itself (as first seen), its validator, its
/// §4.1 form and the form's JSON text, each made on first use; and its serial number, which no
/// other entry has (an entry dropped from the cache and made again gets a new one).
pub struct SchemaEntry {
    serial: u64,
    schema: Value,
    validator: OnceLock<Result<Validator, String>>,
    form: OnceLock<Result<Form, String>>,
    form_json: OnceLock<Option<String>>,
}

impl SchemaEntry {
    fn new(schema: Value) -> SchemaEntry {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        SchemaEntry {
            serial: NEXT.fetch_add(1, Ordering::Relaxed),
            schema,
            validator: OnceLock::new(),
            form: OnceLock::new(),
            form_json: OnceLock::new(),
        }
    }

    /// The entry's serial number (unique in this process; never 0). A caller that keeps what it
    /// had from an entry (a form's text) under its serial finds the entry again with
    /// [`schema_entry_by_serial`] without sending the schema.
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The schema this entry was made for (as first seen; any schema with the same canonical JSON
    /// shares the entry).
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The compiled validator of the entry's schema, or why it does not compile (one line).
    /// `_input_schema` is a schema with the same canonical JSON (kept for callers that have one).
    pub fn validator(&self, _input_schema: &Value) -> &Result<Validator, String> {
        self.validator.get_or_init(|| compile(&self.schema))
    }

    /// The §4.1 form of the entry's schema, or why Builder cannot build one
    /// ([`super::form::build_form`]).
    pub fn form(&self, _input_schema: &Value) -> &Result<Form, String> {
        self.form
            .get_or_init(|| super::form::build_form(&self.schema))
    }

    /// The form as JSON text (made once; `None` when there is no form), for hosts that take the
    /// toolbox as text.
    pub fn form_json(&self) -> Option<&str> {
        self.form_json
            .get_or_init(|| {
                self.form(&self.schema)
                    .as_ref()
                    .ok()
                    .and_then(|f| serde_json::to_string(f).ok())
            })
            .as_deref()
    }
}

/// A cached schema entry.
pub type Compiled = Arc<SchemaEntry>;

/// The cache: canonical schema text (RFC 8785 style, so key order and number spelling do not
/// matter) → (entry, last use); and, in front of it, the schema's JSON text as a caller wrote it
/// → (entry, last use), so a schema seen again costs a hash of its text, not a canonicalisation.
#[derive(Default)]
struct ValidatorCache {
    entries: HashMap<String, (Compiled, u64)>,
    by_text: HashMap<String, (Compiled, u64)>,
    clock: u64,
}

impl ValidatorCache {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The entry for a schema's JSON text, if the text was seen.
    fn by_text(&mut self, text: &str) -> Option<Compiled> {
        let clock = self.tick();
        let (entry, used) = self.by_text.get_mut(text)?;
        *used = clock;
        let entry = entry.clone();
        // Keep the canonical entry's use fresh too (it decides what is dropped).
        if let Some((_, used)) = self
            .entries
            .values_mut()
            .find(|(e, _)| Arc::ptr_eq(e, &entry))
        {
            *used = clock;
        }
        Some(entry)
    }

    /// The entry for `schema` (canonical lookup, made when new), remembered under `text` too.
    fn insert(&mut self, text: String, schema: &Value) -> Compiled {
        let key = canonical_json(schema);
        let clock = self.tick();
        let entry = match self.entries.get_mut(&key) {
            Some((entry, used)) => {
                *used = clock;
                entry.clone()
            }
            None => {
                if self.entries.len() >= MAX_CACHED_VALIDATORS {
                    if let Some(oldest) = oldest(&self.entries) {
                        if let Some((dropped, _)) = self.entries.remove(&oldest) {
                            self.by_text.retain(|_, (e, _)| !Arc::ptr_eq(e, &dropped));
                        }
                    }
                }
                let entry = Arc::new(SchemaEntry::new(schema.clone()));
                self.entries.insert(key, (entry.clone(), clock));
                entry
            }
        };
        if self.by_text.len() >= MAX_CACHED_VALIDATORS {
            if let Some(oldest) = oldest(&self.by_text) {
                self.by_text.remove(&oldest);
            }
        }
        self.by_text.insert(text, (entry.clone(), clock));
        entry
    }
}

fn oldest(map: &HashMap<String, (Compiled, u64)>) -> Option<String> {
    map.iter()
        .min_by_key(|(_, (_, used))| *used)
        .map(|(k, _)| k.clone())
}

fn cache() -> &'static Mutex<ValidatorCache> {
    static CACHE: OnceLock<Mutex<ValidatorCache>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

fn lock() -> std::sync::MutexGuard<'static, ValidatorCache> {
    cache().lock().unwrap_or_else(|e| e.into_inner())
}

/// §4.1/§6: the cache entry of an `inputSchema`, keyed by the schema's canonical JSON (at most
/// [`MAX_CACHED_VALIDATORS`] schemas; the least recently used is dropped). Its validator and
/// form are made once, on first use, however many tools share the schema. A schema seen again
/// is found by its JSON text first (no canonicalisation).
pub fn schema_entry(input_schema: &Value) -> Compiled {
    let text = serde_json::to_string(input_schema).unwrap_or_default();
    let mut cache = lock();
    match cache.by_text(&text) {
        Some(entry) => entry,
        None => cache.insert(text, input_schema),
    }
}

/// The cache entry of a schema given as JSON text (as `JSON.stringify` wrote it): a hash of the
/// text when it was seen, else parsed once and looked up by its canonical JSON. `None` when the
/// text is not JSON `serde_json` reads (the caller then takes the schema as a value).
pub fn schema_entry_for_text(text: &str) -> Option<Compiled> {
    if let Some(entry) = lock().by_text(text) {
        return Some(entry);
    }
    let schema: Value = serde_json::from_str(text).ok()?;
    Some(lock().insert(text.to_string(), &schema))
}

/// The cache entry whose [`SchemaEntry::serial`] is `serial`, while the cache still holds it
/// (`None` once it was dropped: the caller then looks the schema up again).
pub fn schema_entry_by_serial(serial: u64) -> Option<Compiled> {
    let mut cache = lock();
    let clock = cache.tick();
    cache
        .entries
        .values_mut()
        .find(|(e, _)| e.serial == serial)
        .map(|(entry, used)| {
            *used = clock;
            entry.clone()
        })
}

/// §6: the cache entry of an `inputSchema` with its validator compiled (once per distinct
/// schema; a schema that does not compile keeps its one-line reason).
pub fn compiled(input_schema: &Value) -> Compiled {
    let entry = schema_entry(input_schema);
    entry.validator(input_schema);
    entry
}

/// How many validators the cache holds now (for tests and benchmarks).
pub fn cached_validators() -> usize {
    cache().lock().map(|c| c.entries.len()).unwrap_or(0)
}

/// Empties the validator cache (benchmarks measure a cold start with it).
pub fn clear_validator_cache() {
    let mut cache = lock();
    cache.entries.clear();
    cache.by_text.clear();
}

/// Compiles a schema (uncached: use [`compiled`]); the error (one line, `not valid JSON Schema
/// (…)`, each caller names the schema) says why it is not usable JSON Schema.
pub fn compile(input_schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(input_schema)
        .or_else(|_| jsonschema::validator_for(input_schema))
        .map_err(|e| format!("not valid JSON Schema ({})", one_line(&e.to_string())))
}

/// §6: every problem of `arguments` against the tool's schema, in form order of discovery.
///
/// `form` supplies labels and units for the messages; without it paths are used as labels.
pub fn validate_arguments(
    input_schema: &Value,
    form: Option<&Form>,
    arguments: &Value,
) -> Vec<Problem> {
    schema_problems(Subject::Arguments, input_schema, form, arguments, None)
}

/// MCP `tools/call`: every problem of a plain tool's `structuredContent` against the tool's
/// `outputSchema`, with the same cached validator ([`schema_entry`]: compiled once per distinct
/// schema) and the same wording as the arguments' problems; paths name the result's fields.
/// `Err`: the schema does not compile (one line saying so).
pub fn validate_output(
    output_schema: &Value,
    structured_content: &Value,
) -> Result<Vec<Problem>, String> {
    if let Err(e) = schema_entry(output_schema).validator(output_schema) {
        return Err(Subject::Result.cannot_check(e));
    }
    Ok(schema_problems(
        Subject::Result,
        output_schema,
        None,
        structured_content,
        None,
    ))
}

/// What a schema judges: a call's arguments (`inputSchema`) or a tool's result (`outputSchema`).
/// Only the words differ.
#[derive(Debug, Clone, Copy)]
enum Subject {
    Arguments,
    Result,
}

impl Subject {
    /// The label of the whole value (an empty path).
    fn whole(self) -> &'static str {
        match self {
            Subject::Arguments => "The arguments",
            Subject::Result => "The result",
        }
    }
    /// Why it cannot be checked: its schema does not compile (`reason` from [`compile`]).
    fn cannot_check(self, reason: &str) -> String {
        let (noun, schema) = match self {
            Subject::Arguments => ("arguments", "the input schema"),
            Subject::Result => ("result", "its outputSchema"),
        };
        format!("Builder cannot check this tool's {noun}: {schema} is {reason}")
    }
}

/// The problems `jsonschema` finds, except those inside the per-atom arrays of the document
/// property `skip` (a stand-in's).
fn schema_problems(
    subject: Subject,
    input_schema: &Value,
    form: Option<&Form>,
    arguments: &Value,
    skip: Option<&str>,
) -> Vec<Problem> {
    entry_problems(subject, &schema_entry(input_schema), form, arguments, skip)
}

/// §6: [`validate_arguments`] against a schema entry the caller keeps (its validator and form
/// made once, as the offline tools keep theirs): no schema text or cache lookup per call.
pub fn entry_argument_problems(entry: &SchemaEntry, arguments: &Value) -> Vec<Problem> {
    let form = entry.form(entry.schema()).as_ref().ok();
    entry_problems(Subject::Arguments, entry, form, arguments, None)
}

/// [`schema_problems`] with the schema's entry at hand.
fn entry_problems(
    subject: Subject,
    entry: &SchemaEntry,
    form: Option<&Form>,
    arguments: &Value,
    skip: Option<&str>,
) -> Vec<Problem> {
    let validator = match entry.validator(entry.schema()) {
        Ok(v) => v,
        Err(e) => return vec![Problem::new("", subject.cannot_check(e))],
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
        // Inside the document's stand-in, only its own level and its cell are the document's:
        // the per-atom arrays were emptied, and the typed §5.1 check has judged them.
        if skip.is_some()
            && segments.first().map(String::as_str) == skip
            && segments.get(1).is_some_and(|field| field != "cell")
        {
            continue;
        }
        let problem = describe(subject, error.kind(), &segments, fields);
        if !problems.contains(&problem) {
            problems.push(problem);
        }
    }
    problems
}

/// §4.3: what the typed §5.1 validator found in the open document, checked once per document
/// (the JS API keeps it for as long as the host passes the same document object).
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentCheck {
    /// Number of atoms N.
    pub n_atoms: usize,
    /// The row-major 3×3 cell in Å, when the document is periodic.
    pub cell: Option<[f64; 9]>,
    /// Why the document is not a valid §5.1 Structure (one line, `structure.<field>…: …`), if it
    /// is not.
    pub problem: Option<String>,
    /// The document's own field names, in order (its stand-in has the same ones).
    pub keys: Vec<String>,
}

impl DocumentCheck {
    /// Checks a typed document, whose wire object had the fields `keys`, against every §5.1 rule.
    pub fn of_structure(
        structure: &super::structure::Structure,
        keys: Vec<String>,
    ) -> DocumentCheck {
        DocumentCheck {
            n_atoms: structure.n_atoms(),
            cell: structure.cell,
            problem: structure.validate().err(),
            keys,
        }
    }

    /// Reads a document sent as JSON into typed vectors (wire errors name the field), then checks it.
    pub fn of_json(document: &Value) -> DocumentCheck {
        let keys = document
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        match super::structure::Structure::deserialize(document) {
            Ok(structure) => DocumentCheck::of_structure(&structure, keys),
            Err(e) => DocumentCheck::unreadable(&e.to_string(), keys),
        }
    }

    /// A document whose wire form cannot be read (`error` names the field).
    pub fn unreadable(error: &str, keys: Vec<String>) -> DocumentCheck {
        DocumentCheck {
            n_atoms: 0,
            cell: None,
            problem: Some(one_line(error)),
            keys,
        }
    }

    /// A small value the §4.3 document's place in the arguments holds while the rest is validated:
    /// the document's fields with every per-atom array emptied and its cell kept, so the schema
    /// still judges which fields there are (`required`, `additionalProperties`) and the cell.
    pub fn stand_in(&self) -> Value {
        let mut out = Map::new();
        for key in &self.keys {
            let value = if key == "cell" {
                json!(self.cell)
            } else {
                json!([])
            };
            out.insert(key.clone(), value);
        }
        Value::Object(out)
    }
}

/// §4.3/§6: every problem of `arguments` whose document property `document_property` holds a
/// stand-in (or nothing) while the document itself was checked by the typed §5.1 validator:
/// the document's problem first (path = the property), then `jsonschema`'s for the rest.
/// Costs what the small arguments cost, whatever the document's size.
pub fn validate_with_document(
    input_schema: &Value,
    form: Option<&Form>,
    arguments: &Map<String, Value>,
    document_property: &str,
    document: Option<&DocumentCheck>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(problem) = document.and_then(|d| d.problem.as_ref()) {
        problems.push(document_problem(document_property, problem));
    }
    let mut with_stand_in = arguments.clone();
    if let Some(document) = document {
        with_stand_in.insert(document_property.to_string(), document.stand_in());
    }
    problems.extend(schema_problems(
        Subject::Arguments,
        input_schema,
        form,
        &Value::Object(with_stand_in),
        Some(document_property),
    ));
    problems
}

/// The problem of a document that is not a valid §5.1 Structure.
pub fn document_problem(document_property: &str, problem: &str) -> Problem {
    Problem::new(
        document_property,
        format!("The open document is not a valid structure: {problem}."),
    )
}

/// The label of the field at `segments` (`["components", "0", "count"]` →
/// `Components, row 1: Count`), with the field itself when found.
fn locate<'a>(
    subject: Subject,
    segments: &[String],
    fields: &'a [Field],
) -> (String, Option<&'a Field>) {
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
        subject.whole().to_string()
    } else {
        label_parts.join(": ")
    };
    (label, found)
}

fn describe(
    subject: Subject,
    kind: &ValidationErrorKind,
    segments: &[String],
    fields: &[Field],
) -> Problem {
    let path = segments.join("/");
    let (label, field) = locate(subject, segments, fields);
    let unit = field
        .and_then(unit_label)
        .map(|u| format!(" {u}"))
        .unwrap_or_default();
    let message = match kind {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default().to_string();
            let mut child = segments.to_vec();
            child.push(name.clone());
            let (child_label, _) = locate(subject, &child, fields);
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
