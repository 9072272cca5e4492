//! The serde building blocks of the contract core's typed readers (the Structure, the
//! BuilderResult, `tools/call` answers): errors that name their field path, typed JSON scalars,
//! lists that name the index of a bad item, `null` as absent, and skipping without unbounded
//! recursion. From any deserializer: `serde_json` bytes or a JavaScript object through
//! `serde-wasm-bindgen`.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::wire::caps::MAX_ATOMS;

/// Strips serde_json's trailing ` at line L column C` so nested errors do not repeat it, and the
/// leading `Error: ` a JavaScript `Error` prints (serde-wasm-bindgen's errors are JS `Error`s, so
/// each nesting level would add one: `Error: Error: …`).
pub(crate) fn without_position(message: &str) -> &str {
    let mut message = message;
    while let Some(rest) = message.strip_prefix("Error: ") {
        message = rest;
    }
    match message.rfind(" at line ") {
        Some(at) if message[at..].contains(" column ") => &message[..at],
        _ => message,
    }
}

/// `path: message`, unless the message already starts with a field path of this subtree.
pub(crate) fn at_path<E: de::Error>(path: &str, error: impl fmt::Display) -> E {
    let text = error.to_string();
    let text = without_position(&text);
    if text.starts_with(path) {
        E::custom(text)
    } else {
        E::custom(format!("{path}: {text}"))
    }
}

/// Deepest nesting accepted inside a value that is skipped (unknown fields, dropped warnings).
pub(crate) const MAX_SKIP_DEPTH: usize = 64;

/// Skips a value of any shape, refusing nesting deeper than [`MAX_SKIP_DEPTH`]. Unlike
/// `IgnoredAny` this bounds recursion for every deserializer (a JavaScript object through
/// `serde-wasm-bindgen` has no depth limit of its own).
#[derive(Clone, Copy)]
pub(crate) struct Skip {
    depth: usize,
}

impl Skip {
    /// A skipper at the top of the skipped value.
    pub(crate) const TOP: Skip = Skip { depth: 0 };

    fn deeper<E: de::Error>(self) -> Result<Skip, E> {
        if self.depth >= MAX_SKIP_DEPTH {
            Err(E::custom(format!(
                "nested more than {MAX_SKIP_DEPTH} levels deep"
            )))
        } else {
            Ok(Skip {
                depth: self.depth + 1,
            })
        }
    }
}

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        while map.next_key_seed(inner)?.is_some() {
            map.next_value_seed(inner)?;
        }
        Ok(())
    }
}

/// A JSON integer (an integral float such as `8.0` counts, as in JSON Schema).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Int(pub i64);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IntVisitor;
        impl Visitor<'_> for IntVisitor {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                i64::try_from(v)
                    .map(Int)
                    .map_err(|_| E::custom(format!("{v} is too large")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Int, E> {
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    Ok(Int(v as i64))
                } else {
                    Err(E::invalid_type(de::Unexpected::Float(v), &self))
                }
            }
        }
        d.deserialize_any(IntVisitor)
    }
}

/// A JSON number as `f64`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Num(pub f64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NumVisitor;
        impl Visitor<'_> for NumVisitor {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v))
            }
        }
        d.deserialize_any(NumVisitor)
    }
}

/// A JSON string.
#[derive(Debug, Clone)]
pub(crate) struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl Visitor<'_> for TextVisitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
                Ok(Text(v))
            }
        }
        d.deserialize_any(TextVisitor)
    }
}

/// Reads an array whose items are `R` on the wire and `T` after `convert`, naming the index of
/// the first bad item (`path[i]: …`).
pub(crate) struct ListSeed<'p, R, T> {
    /// Field path for errors, e.g. `structure.positions`.
    pub path: &'p str,
    /// Checks and converts one wire item; its error is prefixed with `path[index]: `.
    pub convert: fn(R) -> Result<T, String>,
}

impl<'de, R: Deserialize<'de>, T> DeserializeSeed<'de> for ListSeed<'_, R, T> {
    type Value = Vec<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(ListVisitor {
            seed: self,
            raw: PhantomData,
        })
    }
}

struct ListVisitor<'p, R, T> {
    seed: ListSeed<'p, R, T>,
    raw: PhantomData<R>,
}

impl<'de, R: Deserialize<'de>, T> Visitor<'de> for ListVisitor<'_, R, T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let path = self.seed.path;
        // The byte cap bounds the input; the hint is capped so a lying hint cannot over-allocate.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4 * MAX_ATOMS));
        loop {
            let index = out.len();
            match seq.next_element::<R>() {
                Ok(Some(raw)) => match (self.seed.convert)(raw) {
                    Ok(item) => out.push(item),
                    Err(message) => {
                        return Err(de::Error::custom(format!("{path}[{index}]: {message}")))
                    }
                },
                Ok(None) => return Ok(out),
                Err(e) => return Err(at_path(&format!("{path}[{index}]"), e)),
            }
        }
    }
}

/// Wraps a seed so that `null` (or an absent JavaScript value) reads as `None`.
pub(crate) struct Nullable<S>(pub S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Nullable<S> {
    type Value = Option<S::Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(NullableVisitor(self.0))
    }
}

struct NullableVisitor<S>(S);

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for NullableVisitor<S> {
    type Value = Option<S::Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value or null")
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(d).map(Some)
    }
}
