//! What discovery (§3) reads of a tools/list, whatever reads it: its root ([`ListRoot`]), its
//! items ([`ListItem`]) and each tool definition ([`ToolDefinition`]), over a JSON value here and
//! over the typed borrowed reading in [`super::typed`].

use serde_json::{Map, Value};

use crate::contract::marker::MARKER_KEY;

/// A tools/list's root as discovery walks it (§3): an object with its `tools` (`None`: absent;
/// `Some(None)`: present but not a list), a list of items, or anything else.
pub enum ListRoot<'a, I> {
    Object(Option<Option<&'a [I]>>),
    List(&'a [I]),
    Other,
}

impl<'a> ListRoot<'a, Value> {
    pub(super) fn of_value(input: &'a Value) -> ListRoot<'a, Value> {
        match input {
            Value::Object(result) => ListRoot::Object(result.get("tools").map(value_list)),
            Value::Array(items) => ListRoot::List(items),
            _ => ListRoot::Other,
        }
    }
}

fn value_list(value: &Value) -> Option<&[Value]> {
    value.as_array().map(Vec::as_slice)
}

/// An item of a tools/list (§3): a tool definition, or a result page with its own `tools`.
pub trait ListItem {
    /// The definition, when the item is an object.
    type Definition: ToolDefinition;
    fn definition(&self) -> Option<&Self::Definition>;
    /// The item's `tools` (`None`: absent or not an object; `Some(None)`: present, not a list).
    fn tools(&self) -> Option<Option<&[Self]>>
    where
        Self: Sized;
    /// Whether the item is an object with a `name` (of any type).
    fn has_name(&self) -> bool;
}

impl ListItem for Value {
    type Definition = Map<String, Value>;
    fn definition(&self) -> Option<&Map<String, Value>> {
        self.as_object()
    }
    fn tools(&self) -> Option<Option<&[Value]>> {
        self.get("tools").map(value_list)
    }
    fn has_name(&self) -> bool {
        self.get("name").is_some()
    }
}

/// What discovery reads of one tool definition (§3): a JSON object, or the typed reading of a
/// tools/list text ([`super::parse_tool_list_text`]). Each is the value at that key as sent.
pub trait ToolDefinition {
    /// `name`, when it is text.
    fn name(&self) -> Option<&str>;
    /// `title`, when it is text.
    fn title(&self) -> Option<&str>;
    /// `annotations.title`, when `annotations` is an object whose `title` is text.
    fn annotations_title(&self) -> Option<&str>;
    /// `description`, when it is text.
    fn description(&self) -> Option<&str>;
    /// `_meta[MARKER_KEY]` (any JSON value), when `_meta` is an object that has it.
    fn marker(&self) -> Option<&Value>;
    /// `icons`, when it is a list.
    fn icons(&self) -> Option<&[Value]>;
    /// `inputSchema` (any JSON value), when present.
    fn input_schema(&self) -> Option<&Value>;
    /// `outputSchema` (any JSON value, `null` included), when present.
    fn output_schema(&self) -> Option<&Value>;
}

impl ToolDefinition for Map<String, Value> {
    fn name(&self) -> Option<&str> {
        self.get("name").and_then(Value::as_str)
    }
    fn title(&self) -> Option<&str> {
        self.get("title").and_then(Value::as_str)
    }
    fn annotations_title(&self) -> Option<&str> {
        self.get("annotations")
            .and_then(|a| a.get("title"))
            .and_then(Value::as_str)
    }
    fn description(&self) -> Option<&str> {
        self.get("description").and_then(Value::as_str)
    }
    fn marker(&self) -> Option<&Value> {
        self.get("_meta").and_then(|m| m.get(MARKER_KEY))
    }
    fn icons(&self) -> Option<&[Value]> {
        self.get("icons")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
    }
    fn input_schema(&self) -> Option<&Value> {
        self.get("inputSchema")
    }
    fn output_schema(&self) -> Option<&Value> {
        self.get("outputSchema")
    }
}
