//! §3: discovery. A `tools/list` result (all pages) becomes a [`Toolbox`]: Builder buttons in server
//! order, grouped by category, plus the tools Builder hides and why, and the plain MCP tools.
//!
//! Everything a server sends is untrusted (§9): labels and tooltips are plain text, icons only
//! `data:` URIs of an allowed image type.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use super::form::Form;
use super::marker::{Apply, Category, DocumentUse, Marker, SUPPORTED_CONTRACTS};
use super::validate::{Compiled, SchemaEntry};
use crate::wire::text::{excerpt, one_line, one_line_ref, plain_text_ref};

/// §3/§9: image types an icon `data:` URI may carry.
pub const ALLOWED_ICON_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/gif",
    "image/svg+xml",
];

/// Most tools read from one listing; more is a hostile or broken server.
pub const MAX_TOOLS: usize = 10_000;

/// A Builder button (§3): a marked tool of a supported contract with a known `apply` mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolButton {
    /// The server id from the user's configuration, when given: a tool is (server, name).
    pub server_id: Option<String>,
    /// The MCP tool name.
    pub name: String,
    /// `title` → `annotations.title` → `name`. Plain text.
    pub label: String,
    /// First sentence of `description`. Plain text.
    pub tooltip: String,
    /// The whole `description`. Plain text.
    pub description: String,
    /// §3 category (unknown → `other`).
    pub category: Category,
    /// The parsed marker (`contract`, `apply`, `document`, `stochastic`, `expectedSeconds`).
    pub marker: Marker,
    /// A `data:` URI of an allowed image type, or `None` (the host shows the category icon).
    pub icon: Option<String>,
    /// The generated form, when Builder can build one.
    pub form: Option<Form>,
    /// `Builder cannot build a form: …` naming the property, when it cannot; the button is disabled.
    pub disabled_reason: Option<String>,
    /// The tool's `inputSchema` as sent, for validation (§6).
    pub input_schema: Value,
    /// The tool's `outputSchema` as sent (§5: a Builder tool declares the BuilderResult schema),
    /// `None` when the tool declares none. Builder validates results against its own copy (§6);
    /// this one is only checked by the §10 server check.
    pub output_schema: Option<Value>,
    /// Observations about this tool that do not hide it (no seed on a stochastic tool, …).
    pub notices: Vec<String>,
}

/// A tool Builder hides, with the reason (plain text).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HiddenTool {
    pub name: String,
    pub label: String,
    pub reason: String,
}

/// A tool without the Builder marker: an ordinary MCP tool, kept for LLM clients and listings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlainTool {
    pub name: String,
    pub label: String,
    pub tooltip: String,
    pub description: String,
    /// The tool's `inputSchema` as sent.
    pub input_schema: Value,
    /// The tool's `outputSchema` as sent, `None` when it declares none: a result's
    /// `structuredContent` is validated against it ([`super::result::interpret_plain_bytes`]).
    pub output_schema: Option<Value>,
}

/// One Tools-menu group: a category and its buttons' names in server order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryGroup {
    pub category: Category,
    /// Menu heading, e.g. `Bulk`.
    pub label: String,
    /// Names of the buttons in this group, in server order.
    pub tools: Vec<String>,
}

/// §3: what one server's tools become.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Toolbox {
    pub server_id: Option<String>,
    /// Builder buttons, in server order (enabled or disabled).
    pub buttons: Vec<ToolButton>,
    /// Non-empty groups in menu order (bulk, molecule, polymer, surface, solvation, other).
    pub categories: Vec<CategoryGroup>,
    /// Marked tools of a contract version this client does not support.
    pub unsupported_contract: Vec<HiddenTool>,
    /// Marked tools with an `apply` mode this client does not know.
    pub unknown_apply: Vec<HiddenTool>,
    /// Tools whose marker (or definition) is malformed, with the reason.
    pub malformed: Vec<HiddenTool>,
    /// Tools without the marker.
    pub plain_tools: Vec<PlainTool>,
    /// Server-level notices (one per unsupported contract version) and per-tool notices.
    pub notices: Vec<String>,
}

impl Toolbox {
    /// Every tool name the server listed: buttons, plain tools and hidden tools.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let hidden = self
            .unsupported_contract
            .iter()
            .chain(&self.unknown_apply)
            .chain(&self.malformed)
            .map(|t| t.name.as_str());
        self.buttons
            .iter()
            .map(|b| b.name.as_str())
            .chain(self.plain_tools.iter().map(|t| t.name.as_str()))
            .chain(hidden)
    }
}

/// §6: the one-line error for a call to a tool the server does not list: `Unknown tool: <name>`.
/// The same for remote servers and the offline tools.
pub fn unknown_tool(name: &str) -> String {
    format!("Unknown tool: {}", excerpt(name))
}

/// §6: `Some(`[`unknown_tool`]`)` when `name` is not among the `listed` names (a call to it is
/// refused without a request), else `None`.
pub fn refuse_call<'a>(listed: impl IntoIterator<Item = &'a str>, name: &str) -> Option<String> {
    if listed.into_iter().any(|n| n == name) {
        None
    } else {
        Some(unknown_tool(name))
    }
}

/// §3: the Tools-menu heading of a category.
pub fn category_label(category: Category) -> &'static str {
    match category {
        Category::Bulk => "Bulk",
        Category::Molecule => "Molecule",
        Category::Polymer => "Polymer",
        Category::Surface => "Surface",
        Category::Solvation => "Solvation",
        Category::Other => "Other",
    }
}

const MENU_ORDER: [Category; 6] = [
    Category::Bulk,
    Category::Molecule,
    Category::Polymer,
    Category::Surface,
    Category::Solvation,
    Category::Other,
];

/// §3: turns a `tools/list` result into a toolbox.
///
/// Accepts one result (`{"tools": [...]}`), a list of result pages (`[{"tools": [...]}, ...]`), or
/// a bare list of tool definitions. Fails only when the input is none of these.
pub fn parse_tool_list(input: &Value, server_id: Option<&str>) -> Result<Toolbox, String> {
    let (mut toolbox, entries) = parse_tool_list_with(input, server_id, &mut SentSchemas)?;
    for (button, entry) in toolbox.buttons.iter_mut().zip(entries) {
        button.form = entry.and_then(|e| e.form(e.schema()).as_ref().ok().cloned());
    }
    Ok(toolbox)
}

/// The forms [`parse_tool_list_with`] left out of a toolbox whose buttons carry the schemas as
/// sent, put back from the shared schema cache (compiled once, so this costs a lookup per
/// button); a disabled button keeps none, as in [`parse_tool_list`].
pub fn restore_forms(toolbox: &mut Toolbox) {
    for button in &mut toolbox.buttons {
        if button.disabled_reason.is_none() && button.form.is_none() {
            let entry = super::validate::schema_entry(&button.input_schema);
            button.form = entry.form(entry.schema()).as_ref().ok().cloned();
        }
    }
}

/// A toolbox whose buttons' forms are left out, and each button's cache entry
/// ([`parse_tool_list_with`]).
pub type Discovered = (Toolbox, Vec<Option<Compiled>>);

/// Where discovery finds each tool's `inputSchema` and what the toolbox carries for it.
pub trait ToolSchemas {
    /// The `inputSchema` the toolbox carries for a tool definition whose `inputSchema` is
    /// `input_schema` (`None`: absent): the value as sent, or a stand-in the caller replaces by
    /// the host's own object.
    fn carried(&mut self, input_schema: Option<&Value>) -> Value;
    /// The shared cache entry of a definition's `inputSchema` ([`super::validate`]), or `None`
    /// when it has none that is an object.
    fn entry(&mut self, input_schema: Option<&Value>) -> Option<Compiled>;
    /// `true` when the buttons' schema parts ([`schema_part`]: form, disabled reason, notices)
    /// are left to the caller, to be made when first needed: discovery then never calls
    /// [`ToolSchemas::entry`], every button comes out with no disabled reason and no notices,
    /// and the toolbox's notices are the server-level ones only ([`complete_deferred`] makes
    /// the rest).
    fn deferred(&self) -> bool {
        false
    }
}

/// The `inputSchema` values as they are in the definitions.
pub struct SentSchemas;

impl ToolSchemas for SentSchemas {
    fn carried(&mut self, input_schema: Option<&Value>) -> Value {
        input_schema.cloned().unwrap_or(Value::Null)
    }

    fn entry(&mut self, input_schema: Option<&Value>) -> Option<Compiled> {
        input_schema
            .filter(|s| s.is_object())
            .map(super::validate::schema_entry)
    }
}

/// [`parse_tool_list`] with the schemas found through `schemas`, and the buttons' forms left
/// out (`form: None`): the second list gives, for each button, the cache entry whose form it
/// shows (`None` for a disabled button), so a caller can hand each distinct form over once.
pub fn parse_tool_list_with(
    input: &Value,
    server_id: Option<&str>,
    schemas: &mut impl ToolSchemas,
) -> Result<Discovered, String> {
    let tools = collect_tools(ListRoot::of_value(input))?;
    toolbox_of(&tools, server_id, schemas)
}

/// [`parse_tool_list_with`] of a tools/list given as JSON text: read into typed borrowed
/// definitions (only what [`ToolDefinition`] names is kept; no `Value` tree of the whole list),
/// and classified by the same code. `each` sees every definition discovery reads, in order,
/// before the toolbox is made. `None` when the text is not JSON (or nests deeper than
/// `serde_json` reads), as [`Value`] parsing would refuse it.
pub fn parse_tool_list_text(
    text: &str,
    server_id: Option<&str>,
    schemas: &mut impl ToolSchemas,
    mut each: impl FnMut(&dyn ToolDefinition),
) -> Option<Result<Discovered, String>> {
    let root: typed::Root = serde_json::from_str(text).ok()?;
    let made = collect_tools(root.as_list_root()).and_then(|tools| {
        for tool in &tools {
            if let Some(definition) = tool.definition() {
                each(definition);
            }
        }
        toolbox_of(&tools, server_id, schemas)
    });
    Some(made)
}

/// §3: the toolbox of the tools `collect_tools` found, whatever holds their definitions.
fn toolbox_of<I: ListItem>(
    tools: &[&I],
    server_id: Option<&str>,
    schemas: &mut impl ToolSchemas,
) -> Result<Discovered, String> {
    let mut toolbox = Toolbox {
        server_id: server_id.map(str::to_string),
        buttons: Vec::new(),
        categories: Vec::new(),
        unsupported_contract: Vec::new(),
        unknown_apply: Vec::new(),
        malformed: Vec::new(),
        plain_tools: Vec::new(),
        notices: Vec::new(),
    };
    let mut entries: Vec<Option<Compiled>> = Vec::new();
    let mut seen_names: HashSet<String> = HashSet::new();
    let mut unsupported_versions: Vec<String> = Vec::new();
    let mut marker_reads = MarkerReads(Vec::new());
    for (index, tool) in tools.iter().enumerate() {
        let Some(definition) = tool.definition() else {
            toolbox.malformed.push(hidden(
                format!("(tool #{})", index + 1),
                None,
                "the tool definition is not an object",
            ));
            continue;
        };
        let Some(name) = definition.name().filter(|n| !n.is_empty()) else {
            toolbox.malformed.push(hidden(
                format!("(tool #{})", index + 1),
                None,
                "the tool has no name",
            ));
            continue;
        };
        // The name is what `tools/call` must send back: kept exactly; only the label is cleaned.
        let name = name.to_string();
        let label = label_of(definition, &one_line(&name));
        if seen_names.contains(&name) {
            toolbox.malformed.push(hidden(
                name,
                Some(label),
                "another tool of this server has the same name; the first is kept",
            ));
            continue;
        }
        seen_names.insert(name.clone());
        match marker_reads.read(definition) {
            MarkerRead::Absent => {
                let (tooltip, description) = tool_texts(definition.description());
                toolbox.plain_tools.push(PlainTool {
                    tooltip: tooltip.into_owned(),
                    description: description.into_owned(),
                    input_schema: schemas.carried(definition.input_schema()),
                    output_schema: definition.output_schema().cloned(),
                    name,
                    label,
                })
            }
            MarkerRead::Malformed(reason) => {
                toolbox.malformed.push(hidden(name, Some(label), &reason))
            }
            MarkerRead::UnsupportedContract(version) => {
                if !unsupported_versions.contains(&version) {
                    unsupported_versions.push(version.clone());
                }
                let reason = format!(
                    "it uses Builder contract {version}, which this Builder does not support"
                );
                toolbox
                    .unsupported_contract
                    .push(hidden(name, Some(label), &reason));
            }
            MarkerRead::UnknownApply(mode) => {
                let reason = format!(
                    "it asks for the apply mode `{mode}`, which this Builder does not know"
                );
                toolbox
                    .unknown_apply
                    .push(hidden(name, Some(label), &reason));
            }
            MarkerRead::Ok(marker) => {
                let entry = (!schemas.deferred()).then(|| schemas.entry(definition.input_schema()));
                let mut button =
                    make_button(definition, name, label, marker, server_id, entry.as_ref());
                button.input_schema = schemas.carried(definition.input_schema());
                toolbox.notices.extend(button.notices.iter().cloned());
                toolbox.buttons.push(button);
                entries.push(entry.flatten().filter(|_| button_enabled(&toolbox)));
            }
        }
    }
    for version in unsupported_versions {
        let count = toolbox
            .unsupported_contract
            .iter()
            .filter(|t| t.reason.contains(&format!("contract {version},")))
            .count();
        let supported: Vec<String> = SUPPORTED_CONTRACTS.iter().map(u64::to_string).collect();
        toolbox.notices.insert(
            0,
            format!(
                "{count} tool(s) of this server use Builder contract {version}; this Builder supports contract {} and hides them.",
                supported.join(", ")
            ),
        );
    }
    toolbox.categories = group_by_category(&toolbox.buttons);
    Ok((toolbox, entries))
}

/// Whether the button just pushed is enabled.
fn button_enabled(toolbox: &Toolbox) -> bool {
    toolbox
        .buttons
        .last()
        .is_some_and(|b| b.disabled_reason.is_none())
}

fn collect_tools<I: ListItem>(root: ListRoot<'_, I>) -> Result<Vec<&I>, String> {
    let tools: Vec<&I> = match root {
        ListRoot::Object(tools) => match tools {
            Some(Some(tools)) => tools.iter().collect(),
            Some(None) => return Err("the tools/list result's `tools` is not a list".to_string()),
            None => return Err("the tools/list result has no `tools` list".to_string()),
        },
        ListRoot::List(items) => {
            let pages =
                !items.is_empty() && items.iter().all(|p| p.tools().is_some() && !p.has_name());
            if pages {
                let mut all = Vec::new();
                for (i, page) in items.iter().enumerate() {
                    match page.tools() {
                        Some(Some(tools)) => all.extend(tools.iter()),
                        _ => {
                            return Err(format!(
                                "page {} of the tools/list result has no `tools` list",
                                i + 1
                            ))
                        }
                    }
                }
                all
            } else {
                items.iter().collect()
            }
        }
        ListRoot::Other => {
            return Err("the tools/list result is not an object or a list".to_string())
        }
    };
    if tools.len() > MAX_TOOLS {
        return Err(format!(
            "the server lists {} tools; at most {MAX_TOOLS} are read",
            tools.len()
        ));
    }
    Ok(tools)
}

#[derive(Clone)]
enum MarkerRead {
    Absent,
    Malformed(String),
    UnsupportedContract(String),
    UnknownApply(String),
    Ok(Marker),
}

/// [`read_marker`] of the tools of one list, once per marker value: the typed reading shares one
/// value among the tools whose markers have the same text, so its first few distinct values
/// (by address; every value outlives the list's classification) are read once.
struct MarkerReads(Vec<(*const Value, MarkerRead)>);

impl MarkerReads {
    /// How many distinct marker values are remembered.
    const ENTRIES: usize = 8;

    fn read(&mut self, definition: &impl ToolDefinition) -> MarkerRead {
        let Some(key) = definition.marker().map(|m| m as *const Value) else {
            return MarkerRead::Absent;
        };
        if let Some((_, read)) = self.0.iter().find(|(k, _)| *k == key) {
            return read.clone();
        }
        let read = read_marker(definition);
        if self.0.len() < Self::ENTRIES {
            self.0.push((key, read.clone()));
        }
        read
    }
}

/// §3: reads and checks the marker. Wrong types are malformed; an unknown category is `other`
/// (§11); a missing `document` is `none` and a missing `stochastic` is `false`.
fn read_marker(definition: &impl ToolDefinition) -> MarkerRead {
    let Some(raw) = definition.marker() else {
        return MarkerRead::Absent;
    };
    let Some(marker) = raw.as_object() else {
        return MarkerRead::Malformed("its Builder marker is not an object".to_string());
    };
    let contract = match marker.get("contract") {
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) => v,
            None => {
                return MarkerRead::Malformed(format!(
                    "its marker's `contract` ({n}) is not a positive whole number"
                ))
            }
        },
        Some(_) => {
            return MarkerRead::Malformed("its marker's `contract` is not a number".to_string())
        }
        None => return MarkerRead::Malformed("its marker has no `contract`".to_string()),
    };
    if !SUPPORTED_CONTRACTS.contains(&contract) {
        return MarkerRead::UnsupportedContract(contract.to_string());
    }
    let apply = match marker.get("apply").map(|a| a.as_str()) {
        Some(Some("new_document")) => Apply::NewDocument,
        Some(Some("insert")) => Apply::Insert,
        Some(Some(other)) => return MarkerRead::UnknownApply(excerpt(other)),
        Some(None) => return MarkerRead::Malformed("its marker's `apply` is not text".to_string()),
        None => return MarkerRead::Malformed("its marker has no `apply`".to_string()),
    };
    let category = match marker.get("category") {
        None | Some(Value::Null) => Category::Other,
        Some(Value::String(c)) => {
            serde_json::from_value(Value::String(c.clone())).unwrap_or(Category::Other)
        }
        Some(_) => return MarkerRead::Malformed("its marker's `category` is not text".to_string()),
    };
    let document = match marker.get("document").map(|d| d.as_str()) {
        None => DocumentUse::None,
        Some(Some("none")) => DocumentUse::None,
        Some(Some("optional")) => DocumentUse::Optional,
        Some(Some("required")) => DocumentUse::Required,
        Some(Some(other)) => {
            return MarkerRead::Malformed(format!(
                "its marker's `document` is `{}` (none, optional or required)",
                excerpt(other)
            ))
        }
        Some(None) => {
            return MarkerRead::Malformed("its marker's `document` is not text".to_string())
        }
    };
    let stochastic = match marker.get("stochastic") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return MarkerRead::Malformed(
                "its marker's `stochastic` is not true or false".to_string(),
            )
        }
    };
    let expected_seconds = match marker.get("expectedSeconds") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if s.is_finite() && s >= 0.0 => Some(s),
            _ => {
                return MarkerRead::Malformed(
                    "its marker's `expectedSeconds` is not a non-negative number".to_string(),
                )
            }
        },
        Some(_) => {
            return MarkerRead::Malformed(
                "its marker's `expectedSeconds` is not a number".to_string(),
            )
        }
    };
    MarkerRead::Ok(Marker {
        contract,
        category,
        apply,
        document,
        stochastic,
        expected_seconds,
    })
}

fn make_button(
    definition: &impl ToolDefinition,
    name: String,
    label: String,
    marker: Marker,
    server_id: Option<&str>,
    entry: Option<&Option<Compiled>>,
) -> ToolButton {
    let SchemaPart {
        disabled_reason,
        notices,
    } = match entry {
        Some(entry) => schema_part(entry.as_deref(), &label, &marker),
        None => SchemaPart::default(),
    };
    let (tooltip, description) = tool_texts(definition.description());
    ToolButton {
        server_id: server_id.map(str::to_string),
        tooltip: tooltip.into_owned(),
        description: description.into_owned(),
        category: marker.category,
        icon: icon_of(definition),
        name,
        label,
        marker,
        form: None,
        disabled_reason,
        input_schema: Value::Null,
        output_schema: definition.output_schema().cloned(),
        notices,
    }
}

/// What a button's `inputSchema` decides (§3/§4): why the button is disabled, or the notices its
/// form gives (the form's own, and where it disagrees with the marker).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaPart {
    /// `Builder cannot build a form: …`, when it cannot; the button is disabled.
    pub disabled_reason: Option<String>,
    /// The button's notices (each begins with its label).
    pub notices: Vec<String>,
}

/// §3/§4: the [`SchemaPart`] of the button labelled `label` with `marker`, whose `inputSchema`
/// has the cache entry `entry` (`None`: no input schema object). The one rule for every way a
/// toolbox is made, whether up front or when a deferred button is first read.
pub fn schema_part(entry: Option<&SchemaEntry>, label: &str, marker: &Marker) -> SchemaPart {
    match entry_form(entry) {
        Ok(form) => {
            let mut notices: Vec<String> = form
                .notices
                .iter()
                .map(|n| format!("{label}: {n}"))
                .collect();
            notices.extend(consistency_notices(
                label,
                marker,
                form,
                entry.map(SchemaEntry::schema),
            ));
            SchemaPart {
                disabled_reason: None,
                notices,
            }
        }
        Err(reason) => SchemaPart {
            disabled_reason: Some(one_line(&format!("Builder cannot build a form: {reason}"))),
            notices: Vec::new(),
        },
    }
}

/// Completes a toolbox made with deferred schemas ([`ToolSchemas::deferred`]) whose buttons
/// carry their schemas as sent: each button's [`schema_part`] and form, and the toolbox's
/// notices (the server-level ones, then each button's in button order), as
/// [`parse_tool_list`] makes them. The JavaScript toolbox of `parseToolList` does the same per
/// button when one is first read.
pub fn complete_deferred(toolbox: &mut Toolbox) {
    for button in &mut toolbox.buttons {
        let entry = button
            .input_schema
            .is_object()
            .then(|| super::validate::schema_entry(&button.input_schema));
        let part = schema_part(entry.as_deref(), &button.label, &button.marker);
        button.form = match (&part.disabled_reason, &entry) {
            (None, Some(e)) => e.form(e.schema()).as_ref().ok().cloned(),
            _ => None,
        };
        button.disabled_reason = part.disabled_reason;
        button.notices = part.notices;
        toolbox.notices.extend(button.notices.iter().cloned());
    }
}

/// §4.1 form plus a check that the schema compiles as JSON Schema (so Run can validate, §6).
///
/// Decided when the toolbox is made by [`parse_tool_list`] (connect(), the `megane` listing, the
/// offline tools), or on a button's first read of its form, disabled reason or notices when the
/// page's `parseToolList` defers them ([`ToolSchemas::deferred`], [`schema_part`]); either way a
/// button whose schema does not compile is disabled with the reason. The validator goes into the shared cache
/// ([`super::validate::compiled`]): a schema repeated under many tool names, or seen again by a
/// form or an offline call, is compiled once.
pub fn form_for(input_schema: &Value) -> Result<Form, String> {
    if !input_schema.is_object() {
        return Err(NO_INPUT_SCHEMA.to_string());
    }
    let entry = super::validate::schema_entry(input_schema);
    entry_form(Some(&entry)).cloned()
}

const NO_INPUT_SCHEMA: &str = "the tool has no input schema";

/// The form of a cached schema (`None`: the tool has no input schema object), or why Builder
/// cannot build one: §4.1 rules first, then whether the schema compiles (decided here, once per
/// distinct schema, so the reason is on the button before anyone opens it).
fn entry_form(entry: Option<&SchemaEntry>) -> Result<&Form, String> {
    let entry = entry.ok_or_else(|| NO_INPUT_SCHEMA.to_string())?;
    let form = entry.form(entry.schema()).as_ref().map_err(Clone::clone)?;
    if let Err(reason) = entry.validator(entry.schema()) {
        return Err(format!("the input schema is {reason}"));
    }
    Ok(form)
}

/// §3/§4.3/§4.4 checks that are notices, not refusals.
fn consistency_notices(
    label: &str,
    marker: &Marker,
    form: &Form,
    schema: Option<&Value>,
) -> Vec<String> {
    let mut notices = Vec::new();
    if marker.stochastic && !form.has_seed {
        notices.push(format!(
            "{label}: the tool is stochastic but has no `seed` input, so its results cannot be reproduced (§4.4)."
        ));
    }
    let required: &[Value] = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    match (&marker.document, &form.document_property) {
        (DocumentUse::None, Some(p)) => notices.push(format!(
            "{label}: the marker says `document: none` but property `{p}` is a document widget (§4.3)."
        )),
        (DocumentUse::Required | DocumentUse::Optional, None) => notices.push(format!(
            "{label}: the marker says the tool takes the document but no property is a document widget (§4.3)."
        )),
        (DocumentUse::Required, Some(p)) if !required.iter().any(|r| r == p) => notices.push(format!(
            "{label}: the marker says `document: required` but property `{p}` is not required (§4.3)."
        )),
        (DocumentUse::Optional, Some(p)) if required.iter().any(|r| r == p) => notices.push(format!(
            "{label}: the marker says `document: optional` but property `{p}` is required (§4.3)."
        )),
        _ => {}
    }
    if marker.apply == Apply::Insert && marker.document == DocumentUse::None {
        notices.push(format!(
            "{label}: an `insert` tool that does not receive the document cannot avoid the open structure's atoms."
        ));
    }
    notices
}

fn hidden(name: String, label: Option<String>, reason: &str) -> HiddenTool {
    HiddenTool {
        label: label.unwrap_or_else(|| one_line(&name)),
        name,
        reason: one_line(reason),
    }
}

/// §3: `title` → `annotations.title` → `name`.
fn label_of(definition: &impl ToolDefinition, name: &str) -> String {
    let candidates = [definition.title(), definition.annotations_title()];
    candidates
        .into_iter()
        .flatten()
        .map(one_line)
        .find(|t| !t.is_empty())
        .unwrap_or_else(|| name.to_string())
}

/// §3/§4.1: a tool's `(tooltip, description)` from its `description` as sent (`None`: absent or
/// not text): the description as plain text, the tooltip its first sentence on one line. Every
/// way of making a toolbox calls this (the page's fast way on a button's first read of either).
/// Each text borrows from `description` when the rules leave it as it is (the common case).
pub fn tool_texts(description: Option<&str>) -> (Cow<'_, str>, Cow<'_, str>) {
    let description = description.map(plain_text_ref).unwrap_or_default();
    let tooltip = match &description {
        Cow::Borrowed(d) => one_line_ref(first_sentence(d)),
        Cow::Owned(d) => Cow::Owned(one_line(first_sentence(d))),
    };
    (tooltip, description)
}

/// §3: the first sentence of a description: up to the first `.`, `!` or `?` followed by white
/// space or the end, or up to the first line break, whichever comes first.
pub fn first_sentence(description: &str) -> &str {
    let text = description.trim();
    // The marks are ASCII, so a byte scan finds them (no byte of a longer UTF-8 sequence is
    // ASCII); only the character after a mark is decoded.
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if b == b'\n' {
            return text[..i].trim();
        }
        if matches!(b, b'.' | b'!' | b'?')
            && text[i + 1..].chars().next().is_none_or(char::is_whitespace)
        {
            return &text[..i + 1];
        }
    }
    text
}

/// §3/§9: the first icon whose `src` is a `data:` URI of an allowed image type (the URI's own
/// media type decides; a `mimeType` beside it must agree). Anything else is ignored.
fn icon_of(definition: &impl ToolDefinition) -> Option<String> {
    let icons = definition.icons()?;
    icons.iter().find_map(|icon| {
        let src = icon.get("src")?.as_str()?;
        let media_type = data_uri_media_type(src)?;
        if !ALLOWED_ICON_TYPES.contains(&media_type.as_str()) {
            return None;
        }
        if let Some(declared) = icon.get("mimeType").and_then(Value::as_str) {
            if declared.to_ascii_lowercase() != media_type {
                return None;
            }
        }
        Some(src.to_string())
    })
}

/// The media type of a well-formed `data:` URI (`data:<type>[;params][;base64],<data>`), lower case.
fn data_uri_media_type(src: &str) -> Option<String> {
    let rest = src
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("data:"))
        .map(|_| &src[5..])?;
    let (header, _data) = rest.split_once(',')?;
    let media_type = header.split(';').next()?.trim().to_ascii_lowercase();
    if media_type.is_empty() || src.len() > 1_000_000 {
        return None;
    }
    Some(media_type)
}

fn group_by_category(buttons: &[ToolButton]) -> Vec<CategoryGroup> {
    MENU_ORDER
        .iter()
        .filter_map(|category| {
            let tools: Vec<String> = buttons
                .iter()
                .filter(|b| b.category == *category)
                .map(|b| b.name.clone())
                .collect();
            (!tools.is_empty()).then(|| CategoryGroup {
                category: *category,
                label: category_label(*category).to_string(),
                tools,
            })
        })
        .collect()
}

mod listing;
pub mod page;
mod typed;

pub use listing::{ListItem, ListRoot, ToolDefinition};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentence_stops_at_the_first_full_stop() {
        assert_eq!(first_sentence("Fill a box. More text."), "Fill a box.");
        assert_eq!(
            first_sentence("Version 1.5 of it! Then"),
            "Version 1.5 of it!"
        );
        assert_eq!(first_sentence("No stop\nsecond line"), "No stop");
        assert_eq!(first_sentence("No stop at all"), "No stop at all");
    }

    #[test]
    fn data_uri_types() {
        assert_eq!(
            data_uri_media_type("data:image/png;base64,AAAA").as_deref(),
            Some("image/png")
        );
        assert_eq!(
            data_uri_media_type("DATA:Image/SVG+xml,<svg/>").as_deref(),
            Some("image/svg+xml")
        );
        assert_eq!(data_uri_media_type("https://x/icon.png"), None);
        assert_eq!(data_uri_media_type("data:image/png"), None);
    }
}
