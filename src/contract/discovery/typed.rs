//! §3: a typed, borrowed reading of a tools/list text for [`super::parse_tool_list_text`]. Only
//! what [`ToolDefinition`] names is kept (texts borrowed from the input where they have no
//! escapes); every other value is skipped without being built, so a list costs its scan, not a
//! `Value` tree of maps and strings. Each type reads any JSON value without failing, as
//! `Value::get` / `as_str` would see it: a value of another type is as good as absent, and of
//! duplicate keys the last one counts (as in a `serde_json` map).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::listing::{ListItem, ListRoot, ToolDefinition};
use crate::contract::marker::MARKER_KEY;

/// The scalar visits of a visitor that keeps nothing of a scalar: each gives `$none`.
macro_rules! skip_scalars {
    ($none:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
    };
}

/// Skips a list's items or a map's entries.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Any JSON value, kept only when it is text.
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Some(Cow::Owned(v))))
            }
            skip_scalars!(Text(None));
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text<'de>, A::Error> {
                skip_seq(seq).map(|_| Text(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text<'de>, A::Error> {
                skip_map(map).map(|_| Text(None))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Any JSON value; of an object, the value at `key` (`Self::pick`), else nothing.
struct Picked<'a, T>(Option<T>, std::marker::PhantomData<&'a ()>);

/// What [`Picked`] takes from an object: its key, and how its value is read.
trait Pick<'de>: Sized {
    const KEY: &'static str;
    fn read<A: MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error>;
}

/// `annotations.title` when text.
struct AnnotationsTitle<'a>(Option<Cow<'a, str>>);

impl<'de> Pick<'de> for AnnotationsTitle<'de> {
    const KEY: &'static str = "title";
    fn read<A: MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error> {
        map.next_value::<Text<'de>>().map(|t| AnnotationsTitle(t.0))
    }
}

/// `_meta[MARKER_KEY]`, any value. A server's tools mostly carry a few distinct marker texts, and
/// building a `Value` map of each (an ordered map, its keys hashed) was half the cost of reading a
/// list: the marker is taken as its raw text and built once per distinct text ([`marker_value`]).
struct MarkerValue(Rc<Value>);

impl<'de> Pick<'de> for MarkerValue {
    const KEY: &'static str = MARKER_KEY;
    fn read<A: MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error> {
        let raw = map.next_value::<&'de RawValue>()?;
        marker_value(raw.get())
            .map(MarkerValue)
            .map_err(serde::de::Error::custom)
    }
}

/// Markers at most this long (bytes of JSON text) are remembered by [`marker_value`].
const MEMO_TEXT_BYTES: usize = 1024;
/// How many distinct marker texts [`marker_value`] remembers (the most recent ones).
const MEMO_ENTRIES: usize = 8;

thread_local! {
    /// Marker texts read lately and their values, the most recent last.
    static MARKERS: RefCell<Vec<(String, Rc<Value>)>> = const { RefCell::new(Vec::new()) };
}

/// The value of a marker's JSON text (exactly what reading it as a `Value` in place gives), shared
/// with the earlier markers of the same text.
fn marker_value(text: &str) -> Result<Rc<Value>, serde_json::Error> {
    if text.len() > MEMO_TEXT_BYTES {
        return serde_json::from_str(text).map(Rc::new);
    }
    MARKERS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(k) = memo.iter().rposition(|(t, _)| t == text) {
            return Ok(Rc::clone(&memo[k].1));
        }
        let value = Rc::new(serde_json::from_str(text)?);
        if memo.len() == MEMO_ENTRIES {
            memo.remove(0);
        }
        memo.push((text.to_string(), Rc::clone(&value)));
        Ok(value)
    })
}

impl<'de, T: Pick<'de>> Deserialize<'de> for Picked<'de, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Pick<'de>> Visitor<'de> for V<T> {
            type Value = Picked<'de, T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            skip_scalars!(Picked(None, std::marker::PhantomData));
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Picked(None, std::marker::PhantomData))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                skip_seq(seq).map(|_| Picked(None, std::marker::PhantomData))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut picked = None;
                while let Some(key) = map.next_key::<Text<'de>>()? {
                    if key.0.as_deref() == Some(T::KEY) {
                        picked = Some(T::read(&mut map)?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Picked(picked, std::marker::PhantomData))
            }
        }
        deserializer.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A tool definition (or a result page): the keys discovery reads.
#[derive(Default)]
pub struct Tool<'a> {
    name: Option<Cow<'a, str>>,
    has_name: bool,
    title: Option<Cow<'a, str>>,
    annotations_title: Option<Cow<'a, str>>,
    description: Option<Cow<'a, str>>,
    marker: Option<Rc<Value>>,
    icons: Option<Vec<Value>>,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
    /// `tools`: `Some(None)` when present but not a list.
    tools: Option<Option<Vec<Item<'a>>>>,
}

/// A list item: an object read as a [`Tool`], or anything else.
pub enum Item<'a> {
    Object(Box<Tool<'a>>),
    Other,
}

/// A list, kept only when it is one.
struct List<'a>(Option<Vec<Item<'a>>>);

impl<'de> Deserialize<'de> for List<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = List<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            skip_scalars!(List(None));
            fn visit_str<E>(self, _: &str) -> Result<List<'de>, E> {
                Ok(List(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<'de>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element::<Item<'de>>()? {
                    items.push(item);
                }
                Ok(List(Some(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<List<'de>, A::Error> {
                skip_map(map).map(|_| List(None))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Reads an object's entries into a [`Tool`].
fn read_tool<'de, A: MapAccess<'de>>(mut map: A) -> Result<Tool<'de>, A::Error> {
    let mut tool = Tool::default();
    while let Some(key) = map.next_key::<Text<'de>>()? {
        match key.0.as_deref().unwrap_or_default() {
            "name" => {
                tool.has_name = true;
                tool.name = map.next_value::<Text<'de>>()?.0;
            }
            "title" => tool.title = map.next_value::<Text<'de>>()?.0,
            "description" => tool.description = map.next_value::<Text<'de>>()?.0,
            "annotations" => {
                let picked = map.next_value::<Picked<'de, AnnotationsTitle<'de>>>()?;
                tool.annotations_title = picked.0.and_then(|t| t.0);
            }
            "_meta" => {
                let picked = map.next_value::<Picked<'de, MarkerValue>>()?;
                tool.marker = picked.0.map(|m| m.0);
            }
            "icons" => {
                tool.icons = match map.next_value::<Value>()? {
                    Value::Array(icons) => Some(icons),
                    _ => None,
                }
            }
            "inputSchema" => tool.input_schema = Some(map.next_value::<Value>()?),
            "outputSchema" => tool.output_schema = Some(map.next_value::<Value>()?),
            "tools" => tool.tools = Some(map.next_value::<List<'de>>()?.0),
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(tool)
}

impl<'de> Deserialize<'de> for Item<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Item<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            skip_scalars!(Item::Other);
            fn visit_str<E>(self, _: &str) -> Result<Item<'de>, E> {
                Ok(Item::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Item<'de>, A::Error> {
                skip_seq(seq).map(|_| Item::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Item<'de>, A::Error> {
                read_tool(map).map(|t| Item::Object(Box::new(t)))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A tools/list's root.
pub enum Root<'a> {
    Object(Option<Option<Vec<Item<'a>>>>),
    List(Vec<Item<'a>>),
    Other,
}

impl<'de> Deserialize<'de> for Root<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Root<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            skip_scalars!(Root::Other);
            fn visit_str<E>(self, _: &str) -> Result<Root<'de>, E> {
                Ok(Root::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Root<'de>, A::Error> {
                List::visit(seq).map(Root::List)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Root<'de>, A::Error> {
                let mut tools = None;
                while let Some(key) = map.next_key::<Text<'de>>()? {
                    if key.0.as_deref() == Some("tools") {
                        tools = Some(map.next_value::<List<'de>>()?.0);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Root::Object(tools))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl<'de> List<'de> {
    fn visit<A: SeqAccess<'de>>(mut seq: A) -> Result<Vec<Item<'de>>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<Item<'de>>()? {
            items.push(item);
        }
        Ok(items)
    }
}

impl<'a> Root<'a> {
    /// The root as discovery walks it.
    pub fn as_list_root(&self) -> ListRoot<'_, Item<'a>> {
        match self {
            Root::Object(tools) => ListRoot::Object(tools.as_ref().map(|t| t.as_deref())),
            Root::List(items) => ListRoot::List(items),
            Root::Other => ListRoot::Other,
        }
    }
}

impl<'a> ListItem for Item<'a> {
    type Definition = Tool<'a>;
    fn definition(&self) -> Option<&Tool<'a>> {
        match self {
            Item::Object(tool) => Some(tool),
            Item::Other => None,
        }
    }
    fn tools(&self) -> Option<Option<&[Item<'a>]>> {
        self.definition()?.tools.as_ref().map(|t| t.as_deref())
    }
    fn has_name(&self) -> bool {
        self.definition().is_some_and(|t| t.has_name)
    }
}

impl ToolDefinition for Tool<'_> {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
    fn annotations_title(&self) -> Option<&str> {
        self.annotations_title.as_deref()
    }
    fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    fn marker(&self) -> Option<&Value> {
        self.marker.as_deref()
    }
    fn icons(&self) -> Option<&[Value]> {
        self.icons.as_deref()
    }
    fn input_schema(&self) -> Option<&Value> {
        self.input_schema.as_ref()
    }
    fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }
}
