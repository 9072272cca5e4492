//! §3: the toolbox as the page's JavaScript assembles it (`src/js/snippets/toolbox.js`), the
//! encoding both ways of making a toolbox for the page share with the JavaScript API
//! (`src/wasm/toolbox.rs`, which only moves the texts and arrays across).
//!
//! parseToolList's fast way: the page packs the host's tools/list into one UTF-8 buffer (the
//! reduced list's JSON text, each tool's `inputSchema` replaced by its holder index, then each
//! description; [`packed_texts`] cuts it), discovery classifies it with [`HostSchemas`] (no schema
//! read; every button's schema part deferred), and [`page_toolbox`] writes the toolbox as one
//! compact JSON text ([`PageToolbox`]: tools named by their holders, each distinct marker once, a
//! tooltip or description the §3 rules leave as a slice of the host's description as its UTF-16
//! bounds, [`PageText`]). On the first read of a button's form, disabled reason or notices the
//! page asks for its [`deferred_part`]. connect()'s toolbox ([`listed_page`]) crosses as JSON
//! text without forms or schemas, each distinct form and schema once as its own text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::{
    parse_tool_list_text, schema_part, tool_texts, CategoryGroup, HiddenTool, SchemaPart,
    ToolSchemas, Toolbox,
};
use crate::contract::marker::Marker;
use crate::contract::validate::Compiled;
use crate::wire::text::one_line;

/// The schemas of a packed tools/list: `inputSchema: holder` in each definition; discovery
/// leaves every button's schema part to [`deferred_part`] (the page asks for it on first read).
pub struct HostSchemas;

impl ToolSchemas for HostSchemas {
    fn carried(&mut self, input_schema: Option<&Value>) -> Value {
        input_schema.cloned().unwrap_or(Value::Null)
    }

    fn entry(&mut self, _input_schema: Option<&Value>) -> Option<Compiled> {
        None
    }

    fn deferred(&self) -> bool {
        true
    }
}

/// §3: parseToolList's toolbox for the page from the buffer `packTools` made (`all`, cut at
/// `lengths`): `Some(Ok(text))` ([`PageToolbox`] as JSON), `Some(Err(why))` when the list is not
/// a tool list, `None` when the page must take the list the general way (the buffer is not cut
/// into whole texts, a tool carries no holder).
pub fn page_toolbox(
    all: &str,
    lengths: &[u32],
    server_id: Option<&str>,
) -> Option<Result<String, String>> {
    let (text, descriptions) = packed_texts(all, lengths)?;
    let (toolbox, _) = match parse_tool_list_text(text, server_id, &mut HostSchemas, |_| {})? {
        Ok(done) => done,
        Err(error) => return Some(Err(error)),
    };
    serde_json::to_string(&PageToolbox::of(&toolbox, &descriptions)?)
        .ok()
        .map(Ok)
}

/// The texts `packTools` encodes into one buffer, `all`, cut at `lengths` (UTF-8 bytes): the
/// reduced list's JSON text, then each tool's description (`u32::MAX`: none, or not text).
/// `None` when the lengths do not cut `all` into whole texts.
pub fn packed_texts<'a>(all: &'a str, lengths: &[u32]) -> Option<(&'a str, Vec<Option<&'a str>>)> {
    let (&first, rest) = lengths.split_first()?;
    let mut at = first as usize;
    let text = all.get(..at)?;
    let mut descriptions = Vec::with_capacity(rest.len());
    for &n in rest {
        descriptions.push(if n == u32::MAX {
            None
        } else {
            let end = at.checked_add(n as usize)?;
            let description = all.get(at..end)?;
            at = end;
            Some(description)
        });
    }
    (at == all.len()).then_some((text, descriptions))
}

/// A tooltip or description as the page makes it ([`tool_texts`] of the host's
/// description): `[start, end]`, the slice of the host's text it is (in UTF-16 units, as
/// JavaScript's `slice` counts), or the text itself when the rules changed it.
#[derive(Serialize)]
#[serde(untagged)]
pub enum PageText<'a> {
    Slice(usize, usize),
    Text(Cow<'a, str>),
}

impl<'a> PageText<'a> {
    /// `made` as a slice of `host` when it borrows from it, else as text.
    fn of(host: Option<&str>, made: Cow<'a, str>) -> PageText<'a> {
        if let (Some(host), Cow::Borrowed(part)) = (host, &made) {
            let start = (part.as_ptr() as usize).wrapping_sub(host.as_ptr() as usize);
            if start <= host.len() && part.len() <= host.len() - start {
                let begin = utf16_len(&host[..start]);
                return PageText::Slice(begin, begin + utf16_len(part));
            }
        }
        PageText::Text(made)
    }

    /// A tool's `(tooltip, description)` from its host description.
    fn pair(host: Option<&'a str>) -> (PageText<'a>, PageText<'a>) {
        let (tooltip, description) = tool_texts(host);
        (PageText::of(host, tooltip), PageText::of(host, description))
    }
}

/// The length of `text` in UTF-16 units.
fn utf16_len(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().map(char::len_utf16).sum()
    }
}

/// A button for the page: holder, label, marker (index into [`PageToolbox::markers`]), icon,
/// tooltip, description.
type PageButton<'a> = (
    u32,
    &'a str,
    usize,
    &'a Option<String>,
    PageText<'a>,
    PageText<'a>,
);

/// parseToolList's toolbox as the page's `assembleToolbox` reads it: the buttons and
/// plain tools named by their holders (the page takes their names from the host's tools, which
/// discovery keeps exactly), each distinct marker once; the rest as the toolbox has it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageToolbox<'a> {
    server_id: Option<&'a str>,
    buttons: Vec<PageButton<'a>>,
    markers: Vec<&'a Marker>,
    /// Holder, label, tooltip, description.
    plain_tools: Vec<(u32, &'a str, PageText<'a>, PageText<'a>)>,
    categories: &'a [CategoryGroup],
    unsupported_contract: &'a [HiddenTool],
    unknown_apply: &'a [HiddenTool],
    malformed: &'a [HiddenTool],
    notices: &'a [String],
}

impl<'a> PageToolbox<'a> {
    /// `None` when a tool carries no holder (the list was not packed as `packTools` packs it).
    pub fn of(toolbox: &'a Toolbox, descriptions: &[Option<&'a str>]) -> Option<PageToolbox<'a>> {
        let texts = |holder: &Value| {
            let k = u32::try_from(holder.as_u64()?).ok()?;
            let host = *descriptions.get(k as usize)?;
            Some((k, PageText::pair(host)))
        };
        let mut markers: Vec<&Marker> = Vec::new();
        let mut buttons = Vec::with_capacity(toolbox.buttons.len());
        for b in &toolbox.buttons {
            let (k, (tooltip, description)) = texts(&b.input_schema)?;
            let m = match markers.iter().position(|m| **m == b.marker) {
                Some(m) => m,
                None => {
                    markers.push(&b.marker);
                    markers.len() - 1
                }
            };
            buttons.push((k, b.label.as_str(), m, &b.icon, tooltip, description));
        }
        let plain_tools = toolbox
            .plain_tools
            .iter()
            .map(|t| {
                let (k, (tooltip, description)) = texts(&t.input_schema)?;
                Some((k, t.label.as_str(), tooltip, description))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(PageToolbox {
            server_id: toolbox.server_id.as_deref(),
            buttons,
            markers,
            plain_tools,
            categories: &toolbox.categories,
            unsupported_contract: &toolbox.unsupported_contract,
            unknown_apply: &toolbox.unknown_apply,
            malformed: &toolbox.malformed,
            notices: &toolbox.notices,
        })
    }
}

/// The form of a deferred part ([`DeferredPart::form`]).
#[derive(Debug, PartialEq)]
pub enum PartForm<'e> {
    /// The form of the cache entry the page named by its serial: the page has its text.
    Known,
    /// A form new to the page: its entry's serial (for the page to name it by next time) and text.
    New { serial: u64, text: &'e str },
}

/// A deferred button's schema part as the page takes it.
#[derive(Debug, PartialEq)]
pub struct DeferredPart<'e> {
    /// The form (`None`: no form, the button is disabled).
    pub form: Option<PartForm<'e>>,
    /// `Builder cannot build a form: …`, one line, when it cannot.
    pub disabled_reason: Option<String>,
    /// The button's notices as a JSON array of strings.
    pub notices: String,
}

/// §3/§4 a deferred button's schema part ([`schema_part`]) for the page's first read of its
/// `form`, `disabledReason` or `notices`. `entry` is the cache entry of the button's schema
/// (`Ok(None)`: it has none; `Err(why)`: the host's schema could not be read), `by_serial` whether
/// the page named that entry by its serial (so it has the form's text already), `label` the
/// button's label and `marker` its marker as JSON text. An unreadable schema or marker disables
/// the button with its reason.
pub fn deferred_part<'e>(
    entry: &'e Result<Option<Compiled>, String>,
    by_serial: bool,
    label: &str,
    marker: &str,
) -> DeferredPart<'e> {
    let made = match serde_json::from_str::<Marker>(marker) {
        Ok(marker) => match entry {
            Ok(entry) => {
                let part = schema_part(entry.as_deref(), label, &marker);
                let form = match (&part.disabled_reason, entry) {
                    (None, Some(e)) => e.form_json().map(|text| {
                        if by_serial {
                            PartForm::Known
                        } else {
                            PartForm::New {
                                serial: e.serial(),
                                text,
                            }
                        }
                    }),
                    _ => None,
                };
                Ok((form, part))
            }
            Err(why) => Err(format!("the input schema cannot be read: {why}")),
        },
        Err(_) => Err("the button's marker cannot be read".to_string()),
    };
    let (form, part) = made.unwrap_or_else(|why| {
        let reason = one_line(&format!("Builder cannot build a form: {why}"));
        (
            None,
            SchemaPart {
                disabled_reason: Some(reason),
                notices: Vec::new(),
            },
        )
    });
    DeferredPart {
        form,
        disabled_reason: part.disabled_reason,
        notices: serde_json::to_string(&part.notices).unwrap_or_else(|_| "[]".to_string()),
    }
}

/// connect()'s toolbox for the page, as `assembleListed` takes it.
#[derive(Debug, PartialEq)]
pub struct ListedPage<'e> {
    /// The toolbox's JSON text, each tool's `inputSchema` / `outputSchema` an index into
    /// [`ListedPage::schemas`] and no button's form.
    pub text: String,
    /// Each distinct form of the buttons' cache entries, as JSON text.
    pub forms: Vec<&'e str>,
    /// For each button, the index of its form in [`ListedPage::forms`] (−1: none, disabled).
    pub form_index: Vec<i32>,
    /// Each distinct schema (input or output) as JSON text.
    pub schemas: Vec<String>,
}

/// §3: connect()'s toolbox for the page: `toolbox` (from [`super::parse_tool_list_with`], forms
/// left out; `entries` its buttons' cache entries) as JSON text without forms and schemas, each
/// distinct form and each distinct schema once as its own text. `toolbox` is given back
/// unchanged; `None` when a form or schema cannot be written.
pub fn listed_page<'e>(
    toolbox: &mut Toolbox,
    entries: &'e [Option<Compiled>],
) -> Option<ListedPage<'e>> {
    let (forms, form_index) = distinct_forms(entries)?;
    let mut schemas: Vec<String> = Vec::new();
    let mut known: HashMap<String, u32> = HashMap::new();
    let mut index = |schema: &Value| -> Option<Value> {
        let text = serde_json::to_string(schema).ok()?;
        let next = known.len() as u32;
        let k = *known.entry(text).or_insert_with_key(|text| {
            schemas.push(text.clone());
            next
        });
        Some(Value::from(k))
    };
    // The schemas are taken out while the text is written, then put back.
    let mut taken: Vec<(Value, Option<Value>)> = Vec::new();
    let mut failed = false;
    for (input, output) in schema_slots(toolbox) {
        let replaced = index(input).and_then(|i| {
            let o = match output.as_ref() {
                Some(o) => Some(index(o)?),
                None => None,
            };
            Some((i, o))
        });
        match replaced {
            Some((i, o)) => taken.push((std::mem::replace(input, i), std::mem::replace(output, o))),
            None => {
                failed = true;
                break;
            }
        }
    }
    let text = serde_json::to_string(&*toolbox);
    for ((input, output), (i, o)) in schema_slots(toolbox).zip(taken) {
        *input = i;
        *output = o;
    }
    if failed {
        return None;
    }
    Some(ListedPage {
        text: text.ok()?,
        forms,
        form_index,
        schemas,
    })
}

/// Each distinct form of the buttons' cache entries as JSON text, and for each button the index
/// of its form (−1: a disabled button); `None` when a form cannot be written.
fn distinct_forms(entries: &[Option<Compiled>]) -> Option<(Vec<&str>, Vec<i32>)> {
    let mut forms: Vec<&str> = Vec::new();
    let mut distinct: Vec<&Compiled> = Vec::new();
    let mut form_index: Vec<i32> = Vec::with_capacity(entries.len());
    for entry in entries {
        let Some(entry) = entry else {
            form_index.push(-1);
            continue;
        };
        let k = match distinct.iter().position(|d| Arc::ptr_eq(d, entry)) {
            Some(k) => k,
            None => {
                forms.push(entry.form_json()?);
                distinct.push(entry);
                distinct.len() - 1
            }
        };
        form_index.push(k as i32);
    }
    Some((forms, form_index))
}

/// Every tool's `(inputSchema, outputSchema)` in `toolbox`, buttons first, then plain tools: the
/// one order in which [`listed_page`] takes the schemas out and puts them back.
fn schema_slots(toolbox: &mut Toolbox) -> impl Iterator<Item = (&mut Value, &mut Option<Value>)> {
    toolbox
        .buttons
        .iter_mut()
        .map(|b| (&mut b.input_schema, &mut b.output_schema))
        .chain(
            toolbox
                .plain_tools
                .iter_mut()
                .map(|t| (&mut t.input_schema, &mut t.output_schema)),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::discovery::{parse_tool_list_with, SentSchemas};
    use crate::contract::validate::schema_entry;
    use serde_json::json;

    const KEY: &str = "io.github.megane-labs/builder";

    fn marker() -> Value {
        json!({"contract": 1, "category": "bulk", "apply": "new_document", "document": "none", "stochastic": true})
    }

    fn schema() -> Value {
        json!({"type": "object", "properties": {"seed": {"type": "integer", "minimum": 0}}})
    }

    /// `texts` in one buffer, as `packTools` encodes them: the list, then each description.
    fn packed(list: &str, descriptions: &[Option<&str>]) -> (String, Vec<u32>) {
        let mut all = list.to_string();
        let mut lengths = vec![list.len() as u32];
        for d in descriptions {
            match d {
                Some(d) => {
                    all.push_str(d);
                    lengths.push(d.len() as u32);
                }
                None => lengths.push(u32::MAX),
            }
        }
        (all, lengths)
    }

    #[test]
    fn packed_texts_are_cut_at_their_lengths_or_refused() {
        let (all, lengths) = packed("[1]", &[Some("é a"), None, Some("b")]);
        let (text, descriptions) = packed_texts(&all, &lengths).unwrap();
        assert_eq!(text, "[1]");
        assert_eq!(descriptions, [Some("é a"), None, Some("b")]);
        // Lengths that leave bytes over, run past the end or cut a character: refused.
        assert!(packed_texts(&all, &[3, 4, u32::MAX]).is_none());
        assert!(packed_texts(&all, &[3, 4, u32::MAX, 2]).is_none());
        assert!(packed_texts(&all, &[3, 1, u32::MAX, 4]).is_none());
        assert!(packed_texts(&all, &[]).is_none());
    }

    #[test]
    fn the_page_toolbox_names_tools_by_holder_and_slices_the_hosts_texts_in_utf16() {
        let list = json!({"tools": [
            {"name": "box", "inputSchema": 0, "_meta": {KEY: marker()}},
            {"name": "plain", "inputSchema": 1},
            {"name": "box2", "inputSchema": 2, "_meta": {KEY: marker()}},
        ]})
        .to_string();
        let host = "Packs 😀 water. Then more.";
        let (all, lengths) = packed(&list, &[Some(host), None, Some("Line\tone\u{7}.")]);
        let text = page_toolbox(&all, &lengths, Some("s1")).unwrap().unwrap();
        let page: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(page["serverId"], "s1");
        // The tooltip is the first sentence: a slice of the host's text, counted in UTF-16 units
        // (the emoji is two); the whole description is the host's text, all of it.
        let box_button = &page["buttons"][0];
        assert_eq!(box_button[0], 0);
        assert_eq!(box_button[2], 0, "the first marker");
        assert_eq!(box_button[4], json!([0, 15]));
        let utf16: Vec<u16> = host.encode_utf16().collect();
        assert_eq!(
            String::from_utf16(&utf16[0..15]).unwrap(),
            "Packs 😀 water."
        );
        assert_eq!(box_button[5], json!([0, utf16.len()]));
        // The same marker is sent once; a text the rules changed is sent as text.
        assert_eq!(page["buttons"][1][2], 0);
        assert_eq!(page["markers"].as_array().unwrap().len(), 1);
        let Cow::Owned(changed) = tool_texts(Some("Line\tone\u{7}.")).1 else {
            panic!("the rules leave a tab and a bell as they are");
        };
        assert_eq!(page["buttons"][1][5], changed.as_str());
        assert_eq!(page["plainTools"][0][0], 1);
        // A list that is not a tool list, and one whose tools carry no holder.
        let (all, lengths) = packed("\"no\"", &[]);
        assert!(matches!(page_toolbox(&all, &lengths, None), Some(Err(_))));
        let list = json!({"tools": [{"name": "t", "_meta": {KEY: marker()}}]}).to_string();
        let (all, lengths) = packed(&list, &[None]);
        assert_eq!(page_toolbox(&all, &lengths, None), None);
    }

    #[test]
    fn a_deferred_part_sends_a_new_form_once_and_refuses_what_it_cannot_read() {
        let marker_text = marker().to_string();
        let entry = Ok(Some(schema_entry(&schema())));
        let new = deferred_part(&entry, false, "Box", &marker_text);
        let Some(PartForm::New { serial, text }) = new.form else {
            panic!("{new:?}");
        };
        let compiled = entry.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(serial, compiled.serial());
        assert_eq!(Some(text), compiled.form_json());
        assert_eq!(new.disabled_reason, None);
        let notices: Vec<String> = serde_json::from_str(&new.notices).unwrap();
        // Named by its serial: the page has the form's text already.
        let known = deferred_part(&entry, true, "Box", &marker_text);
        assert_eq!(known.form, Some(PartForm::Known));
        assert_eq!(known.notices, new.notices);
        assert!(notices.iter().all(|n| n.starts_with("Box")), "{notices:?}");
        // No schema, an unreadable schema, an unreadable marker: disabled, one line each.
        let none = deferred_part(&Ok(None), false, "Box", &marker_text);
        assert_eq!(none.form, None);
        assert!(none.disabled_reason.is_some());
        let unreadable = Err("a\ncycle".to_string());
        let unread = deferred_part(&unreadable, false, "Box", &marker_text);
        assert_eq!(
            unread.disabled_reason.as_deref(),
            Some("Builder cannot build a form: the input schema cannot be read: a")
        );
        assert_eq!(unread.notices, "[]");
        let bad = deferred_part(&entry, false, "Box", "{");
        assert_eq!(
            bad.disabled_reason.as_deref(),
            Some("Builder cannot build a form: the button's marker cannot be read")
        );
        assert_eq!(bad.form, None);
    }

    #[test]
    fn the_listed_page_sends_each_form_and_schema_once_and_gives_the_toolbox_back() {
        let list = json!({"tools": [
            {"name": "a", "inputSchema": schema(), "_meta": {KEY: marker()}},
            {"name": "b", "inputSchema": schema(), "outputSchema": {"type": "object"}, "_meta": {KEY: marker()}},
            {"name": "c", "inputSchema": {"type": "string"}, "_meta": {KEY: marker()}},
            {"name": "plain", "inputSchema": schema()},
        ]});
        let (mut toolbox, entries) = parse_tool_list_with(&list, None, &mut SentSchemas).unwrap();
        let before = serde_json::to_value(&toolbox).unwrap();
        let listed = listed_page(&mut toolbox, &entries).unwrap();
        assert_eq!(serde_json::to_value(&toolbox).unwrap(), before);
        assert_eq!(listed.schemas.len(), 3, "{:?}", listed.schemas);
        let page: Value = serde_json::from_str(&listed.text).unwrap();
        let index = |v: &Value| &listed.schemas[v.as_u64().unwrap() as usize];
        assert_eq!(
            index(&page["buttons"][0]["inputSchema"]),
            &schema().to_string()
        );
        assert_eq!(
            page["buttons"][0]["inputSchema"],
            page["buttons"][1]["inputSchema"]
        );
        assert_eq!(
            index(&page["buttons"][1]["outputSchema"]),
            "{\"type\":\"object\"}"
        );
        assert_eq!(
            page["plainTools"][0]["inputSchema"],
            page["buttons"][0]["inputSchema"]
        );
        // Buttons a and b share one form; c (a schema that is not an object's) has none.
        assert_eq!(listed.forms.len(), 1);
        assert_eq!(listed.form_index[..2], [0, 0]);
        assert_eq!(listed.form_index.len(), 3);
    }
}
