//! The §5.1 Structure's wire reader: straight into typed vectors from any deserializer, every
//! error naming its field (`structure.<field>[index]: …`); and the placeholder that stands for a
//! Structure the scan (`megane-structure-scan`) read while its body streamed in ([`read_placed`]).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;

use megane_structure_scan::checks;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::fields::{at_path, Int, ListSeed, Nullable, Num, Skip, Text};
use super::{ScanFacts, StringColumn, StringColumnBuilder, Structure, MAX_ELEMENT};
use crate::wire::text::excerpt;

fn element(raw: Int) -> Result<u8, String> {
    match u8::try_from(raw.0) {
        Ok(z) if (1..=MAX_ELEMENT).contains(&z) => Ok(z),
        _ => Err(format!("{} is not an atomic number (1–118)", raw.0)),
    }
}

fn number(raw: Num) -> Result<f64, String> {
    Ok(raw.0)
}

fn bond_order(raw: Int) -> Result<u8, String> {
    match u8::try_from(raw.0) {
        Ok(o) if (1..=4).contains(&o) => Ok(o),
        _ => Err(format!("{} is not a bond order (1, 2, 3 or 4)", raw.0)),
    }
}

fn index(raw: Int) -> Result<u32, String> {
    u32::try_from(raw.0).map_err(|_| format!("{} is not a 0-based index", raw.0))
}

fn integer(raw: Int) -> Result<i64, String> {
    Ok(raw.0)
}

fn charge(raw: Int) -> Result<i32, String> {
    i32::try_from(raw.0).map_err(|_| format!("{} is not a formal charge", raw.0))
}

fn text(raw: Text) -> Result<String, String> {
    Ok(raw.0)
}

fn bond_pair(raw: BondWire) -> Result<[u32; 2], String> {
    match raw {
        BondWire {
            first: [a, b],
            count: 2,
        } => Ok([
            index(a).map_err(|e| format!("first atom: {e}"))?,
            index(b).map_err(|e| format!("second atom: {e}"))?,
        ]),
        BondWire { count, .. } => Err(format!(
            "a bond is a pair of two atom indices, not {count} numbers"
        )),
    }
}

fn cell_of_nine(raw: Vec<f64>) -> Result<[f64; 9], String> {
    <[f64; 9]>::try_from(raw.as_slice()).map_err(|_| {
        format!(
            "has {} numbers; a cell is 9 (row-major 3×3, Å) or null",
            raw.len()
        )
    })
}

/// Reads a bond `[i, j]`: the first two integers are kept and the rest only counted, so a bond
/// costs no allocation; errors are those of a list of integers (`bond[2]: invalid type: …`).
struct BondWire {
    first: [Int; 2],
    count: usize,
}

impl<'de> Deserialize<'de> for BondWire {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(BondVisitor)
    }
}

struct BondVisitor;

impl<'de> Visitor<'de> for BondVisitor {
    type Value = BondWire;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BondWire, A::Error> {
        let mut bond = BondWire {
            first: [Int(0); 2],
            count: 0,
        };
        loop {
            match seq.next_element::<Int>() {
                Ok(Some(raw)) => {
                    if let Some(slot) = bond.first.get_mut(bond.count) {
                        *slot = raw;
                    }
                    bond.count += 1;
                }
                Ok(None) => return Ok(bond),
                Err(e) => return Err(at_path(&format!("bond[{}]", bond.count), e)),
            }
        }
    }
}

/// Reads an array of strings into a [`StringColumn`], naming the index of the first bad item
/// (`path[i]: …`, as [`ListSeed`] does). Strings without escapes are read borrowed from the
/// input, so a repeated name costs no allocation.
struct StringColumnSeed<'p> {
    path: &'p str,
}

impl<'de> DeserializeSeed<'de> for StringColumnSeed<'_> {
    type Value = StringColumn;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<StringColumn, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for StringColumnSeed<'_> {
    type Value = StringColumn;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StringColumn, A::Error> {
        let mut builder = StringColumnBuilder::default();
        loop {
            let index = builder.len();
            match seq.next_element_seed(InternSeed(&mut builder)) {
                Ok(Some(())) => {}
                Ok(None) => return Ok(builder.finish()),
                Err(e) => return Err(at_path(&format!("{}[{index}]", self.path), e)),
            }
        }
    }
}

/// One string of a [`StringColumnSeed`] array, pushed into the builder.
struct InternSeed<'b>(&'b mut StringColumnBuilder);

impl<'de> DeserializeSeed<'de> for InternSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for InternSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.push(v);
        Ok(())
    }
}

/// Scalars: an object of per-atom number arrays.
struct ScalarsSeed;

impl<'de> DeserializeSeed<'de> for ScalarsSeed {
    type Value = BTreeMap<String, Vec<f64>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(ScalarsVisitor)
    }
}

struct ScalarsVisitor;

impl<'de> Visitor<'de> for ScalarsVisitor {
    type Value = BTreeMap<String, Vec<f64>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of number arrays")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(Text(name)) = map.next_key::<Text>()? {
            let path = format!("structure.scalars.{}", excerpt(&name));
            let values = map.next_value_seed(ListSeed {
                path: &path,
                convert: number,
            })?;
            if out.insert(name, values).is_some() {
                return Err(de::Error::custom(format!("{path}: appears twice")));
            }
        }
        Ok(out)
    }
}

impl<'de> Deserialize<'de> for Structure {
    /// §5.1 wire format; errors name the field (`structure.<field>…`). In [`read_placed`], the
    /// placeholder is the Structure read by the scan (tests also read JSON text by the scanner).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mode = MODE.with(Cell::get);
        if mode == Mode::Placed {
            return d.deserialize_any(PlacedVisitor);
        }
        #[cfg(all(test, not(target_arch = "wasm32")))]
        if mode == Mode::Scan {
            let raw = <&serde_json::value::RawValue>::deserialize(d)?;
            if raw.get() == SPLICE_MARK {
                return SPLICED
                    .with(|s| s.borrow_mut().take())
                    .ok_or_else(|| de::Error::custom("structure: left to the exact reader"));
            }
            return megane_structure_scan::scan_structure(raw.get().as_bytes())
                .map(Structure::from)
                .ok_or_else(|| de::Error::custom("structure: left to the exact reader"));
        }
        d.deserialize_map(StructureVisitor)
    }
}

/// How a Structure is read (see [`read_placed`]).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// By the serde visitor.
    Exact,
    /// JSON text by the scanner; the placeholder is the Structure read in place (tests: the
    /// scanner against the visitor, `scan_differential.rs`).
    #[cfg(all(test, not(target_arch = "wasm32")))]
    Scan,
    /// By the serde visitor; the placeholder is the Structure read while the body streamed in.
    Placed,
}

/// The exact reader's Structure, except that the placeholder, as written (a string without
/// escapes, so serde_json lends it from the text), is the Structure read before ([`read_placed`]).
/// Anything else gets the visitor's own reading and error.
struct PlacedVisitor;

impl<'de> Visitor<'de> for PlacedVisitor {
    type Value = Structure;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        StructureVisitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Structure, A::Error> {
        StructureVisitor.visit_map(map)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Structure, E> {
        let mark = &SPLICE_MARK[1..SPLICE_MARK.len() - 1];
        match SPLICED.with(|s| s.borrow_mut().take_if(|_| v == mark)) {
            Some(structure) => Ok(structure),
            None => Err(de::Error::invalid_type(de::Unexpected::Str(v), &self)),
        }
    }
}

thread_local! {
    /// How a Structure in JSON text is read (see [`read_placed`]).
    static MODE: Cell<Mode> = const { Cell::new(Mode::Exact) };
    /// The Structure the scan read in place, for the placeholder that replaced it.
    static SPLICED: RefCell<Option<Structure>> = const { RefCell::new(None) };
}

/// What replaces the Structure's text in the body handed to serde_json (see [`read_placed`]).
pub(crate) const SPLICE_MARK: &str = "\"megane:structure read in place\"";

/// Runs `read` with Structure objects read by the scanner (`megane-structure-scan`, built at
/// opt-level 3; the big arrays go straight into typed vectors) when `scan` is true, or by the
/// serde visitor below when false (tests: the package reads a Structure's text with the resumable
/// scan, `result::interpret_bytes`, or the visitor).
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) fn with_scan<T>(scan: bool, read: impl FnOnce() -> T) -> T {
    with_mode(if scan { Mode::Scan } else { Mode::Exact }, read)
}

fn with_mode<T>(mode: Mode, read: impl FnOnce() -> T) -> T {
    struct Restore(Mode);
    impl Drop for Restore {
        fn drop(&mut self) {
            MODE.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(MODE.with(|s| s.replace(mode)));
    read()
}

/// The exact reader (the serde visitor for every Structure) on `spliced`, a body with
/// [`SPLICE_MARK`] where the Structure's text stood, taking `scanned` (read from that text by the
/// scanner while the body streamed in: `mcp::body`) where it meets the placeholder. The caller
/// makes sure the placeholder is there once as written and inside the result `read` reads, so
/// `read` meets it exactly where the visitor would have read the Structure's text, unless it
/// stops before (with the same error). The scanner accepts only text the visitor reads to the
/// same values, and the rest of the text is the same, so the outcome is the exact reader's on
/// the body as sent.
pub(crate) fn read_placed<T>(
    spliced: &[u8],
    scanned: megane_structure_scan::Scanned,
    facts: checks::Facts,
    read: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<T, String> {
    with_mode(Mode::Placed, || {
        let structure = Structure {
            scanned: ScanFacts::holding(facts),
            ..Structure::from(scanned)
        };
        SPLICED.with(|s| *s.borrow_mut() = Some(structure));
        let outcome = read(spliced);
        match (outcome, SPLICED.with(|s| s.borrow_mut().take())) {
            // Read without meeting the placeholder where a Structure is read: the checks of the
            // caller rule this out.
            (Ok(_), Some(_)) => Err("result: the answer changed while it was read".to_string()),
            (outcome, _) => outcome,
        }
    })
}

struct StructureVisitor;

/// Which required fields have been seen.
#[derive(Default)]
struct Seen {
    elements: bool,
    positions: bool,
    cell: bool,
    bonds: bool,
}

impl<'de> Visitor<'de> for StructureVisitor {
    type Value = Structure;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Structure object (§5.1)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Structure, A::Error> {
        let mut s = Structure::default();
        let mut seen = Seen::default();
        let mut optional_seen: Vec<String> = Vec::new();
        while let Some(Text(key)) = map.next_key::<Text>()? {
            let required_flag = match key.as_str() {
                "elements" => Some(&mut seen.elements),
                "positions" => Some(&mut seen.positions),
                "cell" => Some(&mut seen.cell),
                "bonds" => Some(&mut seen.bonds),
                _ => None,
            };
            match required_flag {
                Some(flag) if *flag => return Err(twice(&key)),
                Some(flag) => *flag = true,
                None if is_optional_field(&key) => {
                    if optional_seen.contains(&key) {
                        return Err(twice(&key));
                    }
                    optional_seen.push(key.clone());
                }
                None => {}
            }
            read_field(&mut map, &key, &mut s)
                .map_err(|e| at_path::<A::Error>(&format!("structure.{}", excerpt(&key)), e))?;
        }
        for (present, name) in [
            (seen.elements, "elements"),
            (seen.positions, "positions"),
            (seen.cell, "cell"),
            (seen.bonds, "bonds"),
        ] {
            if !present {
                let hint = if name == "cell" {
                    " (null for a non-periodic structure)"
                } else {
                    ""
                };
                return Err(de::Error::custom(format!(
                    "structure.{name}: missing{hint}"
                )));
            }
        }
        Ok(s)
    }
}

fn twice<E: de::Error>(key: &str) -> E {
    E::custom(format!("structure.{key}: appears twice"))
}

fn is_optional_field(key: &str) -> bool {
    matches!(
        key,
        "bondOrders"
            | "molecules"
            | "residueNames"
            | "residueIds"
            | "atomNames"
            | "chainIds"
            | "formalCharges"
            | "scalars"
    )
}

/// Reads the value of one Structure field into `s`; unknown fields are skipped (§11).
fn read_field<'de, A: MapAccess<'de>>(
    map: &mut A,
    key: &str,
    s: &mut Structure,
) -> Result<(), A::Error> {
    match key {
        "elements" => {
            s.elements = map.next_value_seed(ListSeed {
                path: "structure.elements",
                convert: element,
            })?
        }
        "positions" => {
            s.positions = map.next_value_seed(ListSeed {
                path: "structure.positions",
                convert: number,
            })?
        }
        "cell" => {
            let raw = map.next_value_seed(Nullable(ListSeed {
                path: "structure.cell",
                convert: number,
            }))?;
            s.cell = raw
                .map(cell_of_nine)
                .transpose()
                .map_err(|e| de::Error::custom(format!("structure.cell: {e}")))?;
        }
        "bonds" => {
            s.bonds = map.next_value_seed(ListSeed {
                path: "structure.bonds",
                convert: bond_pair,
            })?
        }
        "bondOrders" => {
            s.bond_orders = map.next_value_seed(Nullable(ListSeed {
                path: "structure.bondOrders",
                convert: bond_order,
            }))?
        }
        "molecules" => {
            s.molecules = map.next_value_seed(Nullable(ListSeed {
                path: "structure.molecules",
                convert: index,
            }))?
        }
        "residueNames" => {
            s.residue_names = map.next_value_seed(Nullable(StringColumnSeed {
                path: "structure.residueNames",
            }))?
        }
        "residueIds" => {
            s.residue_ids = map.next_value_seed(Nullable(ListSeed {
                path: "structure.residueIds",
                convert: integer,
            }))?
        }
        "atomNames" => {
            s.atom_names = map.next_value_seed(Nullable(StringColumnSeed {
                path: "structure.atomNames",
            }))?
        }
        "chainIds" => {
            s.chain_ids = map.next_value_seed(Nullable(ListSeed {
                path: "structure.chainIds",
                convert: text,
            }))?
        }
        "formalCharges" => {
            s.formal_charges = map.next_value_seed(Nullable(ListSeed {
                path: "structure.formalCharges",
                convert: charge,
            }))?
        }
        "scalars" => s.scalars = map.next_value_seed(Nullable(ScalarsSeed))?,
        _ => {
            map.next_value_seed(Skip::TOP)
                .map_err(|e| at_path::<A::Error>(&format!("structure.{}", excerpt(key)), e))?;
        }
    }
    Ok(())
}
