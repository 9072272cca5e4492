//! §5.1 Structure: the structure-of-arrays payload of results and of the §4.3 document argument.
//!
//! Deserialisation goes straight into typed vectors (no `serde_json::Value` tree for the big
//! arrays), from any serde deserializer (bytes through `serde_json`, a JavaScript object through
//! `serde-wasm-bindgen`). Every wire error names its field, e.g.
//! `structure.positions[7]: invalid type: string "x", expected a number`.
//! [`Structure::validate`] then enforces the §5.1 rules in O(N + bonds · log bonds).
//! Unknown fields are ignored (§11); `null` in an optional field means absent (pydantic servers
//! send that).
//!
//! Files: this one holds the §5.1 rules of the Structure (the data type is the chemistry
//! layer's, [`crate::chem::structure`], re-exported here as the contract's Structure), `fields.rs`
//! the serde building blocks every typed reader of the contract core uses (field paths in errors,
//! typed scalars, lists, bounded skipping), `read.rs` the Structure's wire reader (and the
//! placeholder for a Structure the scan read while its body streamed in).

use megane_structure_scan::checks;

use crate::wire::caps::MAX_ATOMS;
use crate::wire::text::excerpt;

pub(crate) mod fields;
pub(crate) mod read;

pub use crate::chem::column::{StringColumn, StringColumnBuilder};
pub use crate::chem::structure::{ScanFacts, Structure};

/// §5.1: the highest atomic number.
pub const MAX_ELEMENT: u8 = 118;

impl Structure {
    /// §5.1: checks every rule; the first violation is returned as one line naming the field
    /// (`structure.<field>[index]: …`). For the Structure a scan read while its body streamed
    /// in (`read::read_placed`), the first call consults the scan's facts ([`Structure::scanned`]):
    /// a column they clear is not searched again (issue 10: the searches were most of what ran
    /// after the last byte); a column they do not clear is searched as for any other Structure,
    /// so the outcome is the same.
    pub fn validate(&self) -> Result<(), String> {
        let facts = self.scanned.take();
        // Facts that sum up every entry of these columns, else none.
        let known = facts
            .as_deref()
            .filter(|f| f.counted() == self.columns().lengths());
        self.validate_elements(known)?;
        self.validate_positions(known)?;
        self.validate_cell()?;
        self.validate_bonds(known)?;
        self.validate_bond_orders(known)?;
        self.validate_per_atom_channels(known)?;
        self.validate_scalars()
    }

    /// The columns the scan's [`checks::Facts`] sum up.
    fn columns(&self) -> checks::Columns<'_> {
        checks::Columns {
            elements: &self.elements,
            positions: &self.positions,
            bonds: &self.bonds,
            bond_orders: self.bond_orders.as_deref().unwrap_or_default(),
            residue_ids: self.residue_ids.as_deref().unwrap_or_default(),
            chain_ids: self.chain_ids.as_deref().unwrap_or_default(),
        }
    }

    fn validate_elements(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let n = self.n_atoms();
        if n > MAX_ATOMS {
            return Err(format!(
                "structure.elements: {n} atoms; Builder accepts at most {MAX_ATOMS} per result"
            ));
        }
        let bounds = known.map(|f| &f.elements);
        match checks::search_outside(bounds, 1, MAX_ELEMENT, |lo, hi| {
            checks::first_outside_u8(&self.elements, lo, hi)
        }) {
            Some(i) => Err(format!(
                "structure.elements[{i}]: {} is not an atomic number (1–118)",
                self.elements[i]
            )),
            None => Ok(()),
        }
    }

    fn validate_positions(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let n = self.n_atoms();
        if self.positions.len() != 3 * n {
            return Err(format!(
                "structure.positions: has {} numbers; {n} atoms need {} (x, y, z each)",
                self.positions.len(),
                3 * n
            ));
        }
        let first = known.map_or_else(
            || checks::first_not_finite(&self.positions),
            |f| f.first_not_finite_position,
        );
        match first {
            Some(i) => Err(format!("structure.positions[{i}]: not a finite number")),
            None => Ok(()),
        }
    }

    fn validate_cell(&self) -> Result<(), String> {
        let Some(cell) = &self.cell else {
            return Ok(());
        };
        match cell.iter().position(|v| !v.is_finite()) {
            Some(i) => Err(format!("structure.cell[{i}]: not a finite number")),
            None => Ok(()),
        }
    }

    fn validate_bonds(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let n = self.n_atoms();
        // Every atom named in range: the first bad bond is the first to name an atom twice.
        let first_bad = match known {
            Some(f) if f.bonded_atoms.is_none_or(|(_, hi)| (hi as usize) < n) => f.first_self_bond,
            _ => checks::first_bad_bond(&self.bonds, n),
        };
        if let Some(k) = first_bad {
            let [a, b] = self.bonds[k];
            if let Some(atom) = [a, b].into_iter().find(|&atom| atom as usize >= n) {
                return Err(format!(
                    "structure.bonds[{k}]: atom {atom} is out of range ({n} atoms)"
                ));
            }
            return Err(format!("structure.bonds[{k}]: bonds atom {a} to itself"));
        }
        // The lowest duplicated atom pair, with its two lowest bond indices (O(N + B), in the
        // scanner crate at opt-level 3); none when the bonds' pairs increase.
        let ascending = known.is_some_and(|f| f.first_unordered_bond.is_none());
        match (!ascending)
            .then(|| checks::first_repeated_bond(&self.bonds, n))
            .flatten()
        {
            Some(checks::Repeat {
                lo,
                hi,
                earlier,
                later,
            }) => Err(format!(
                "structure.bonds[{later}]: repeats bonds[{earlier}] (atoms {lo} and {hi})"
            )),
            None => Ok(()),
        }
    }

    fn validate_bond_orders(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let Some(orders) = &self.bond_orders else {
            return Ok(());
        };
        if orders.len() != self.bonds.len() {
            return Err(format!(
                "structure.bondOrders: has {} entries but there are {} bonds",
                orders.len(),
                self.bonds.len()
            ));
        }
        let bounds = known.map(|f| &f.bond_orders);
        match checks::search_outside(bounds, 1, 4, |lo, hi| {
            checks::first_outside_u8(orders, lo, hi)
        }) {
            Some(k) => Err(format!(
                "structure.bondOrders[{k}]: {} is not a bond order (1, 2, 3 or 4)",
                orders[k]
            )),
            None => Ok(()),
        }
    }

    fn validate_per_atom_channels(&self, known: Option<&checks::Facts>) -> Result<(), String> {
        let n = self.n_atoms();
        check_channel_length("molecules", self.molecules.as_ref().map(Vec::len), n)?;
        check_channel_length(
            "residueNames",
            self.residue_names.as_ref().map(StringColumn::len),
            n,
        )?;
        check_channel_length("residueIds", self.residue_ids.as_ref().map(Vec::len), n)?;
        if let Some(ids) = &self.residue_ids {
            // A JavaScript number holds integers exactly only up to 2^53 − 1; Builder's labels and
            // the plan's residueIds are JavaScript numbers.
            const MAX_SAFE: i64 = (1 << 53) - 1;
            let bounds = known.map(|f| &f.residue_ids);
            let first = checks::search_outside(bounds, -MAX_SAFE, MAX_SAFE, |lo, hi| {
                checks::first_outside_i64(ids, lo, hi)
            });
            if let Some(i) = first {
                return Err(format!(
                    "structure.residueIds[{i}]: {} is beyond ±(2^53 − 1), which JavaScript cannot hold exactly",
                    ids[i]
                ));
            }
        }
        check_channel_length(
            "atomNames",
            self.atom_names.as_ref().map(StringColumn::len),
            n,
        )?;
        check_channel_length("chainIds", self.chain_ids.as_ref().map(Vec::len), n)?;
        check_channel_length(
            "formalCharges",
            self.formal_charges.as_ref().map(Vec::len),
            n,
        )?;
        if let Some(chains) = &self.chain_ids {
            let bounds = known.map(|f| &f.chain_id_chars);
            let first = checks::search_outside(bounds, 1, 1, |lo, hi| {
                chains
                    .iter()
                    .position(|c| !(lo..=hi).contains(&c.chars().count()))
            });
            if let Some(i) = first {
                return Err(format!(
                    "structure.chainIds[{i}]: a chain id is exactly one character, not {:?}",
                    excerpt(&chains[i])
                ));
            }
        }
        Ok(())
    }

    fn validate_scalars(&self) -> Result<(), String> {
        let Some(scalars) = &self.scalars else {
            return Ok(());
        };
        let n = self.n_atoms();
        for (name, values) in scalars {
            let shown = excerpt(name);
            if values.len() != n {
                return Err(format!(
                    "structure.scalars.{shown}: has {} values for {n} atoms",
                    values.len()
                ));
            }
            if let Some(i) = checks::first_not_finite(values) {
                return Err(format!(
                    "structure.scalars.{shown}[{i}]: not a finite number"
                ));
            }
        }
        Ok(())
    }
}

fn check_channel_length(field: &str, len: Option<usize>, n: usize) -> Result<(), String> {
    match len {
        Some(len) if len != n => Err(format!(
            "structure.{field}: has {len} entries for {n} atoms"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn parse(json: &str) -> Result<Structure, String> {
        serde_json::from_str::<Structure>(json).map_err(|e| e.to_string())
    }

    const WATER: &str = r#"{"elements":[8,1,1],"positions":[0,0,0, 0.96,0,0, -0.24,0.93,0],
        "cell":null,"bonds":[[0,1],[0,2]],"extra":{"ignored":[1,2]}}"#;

    #[test]
    fn parses_and_validates_water() {
        let s = parse(WATER).unwrap();
        assert_eq!(s.elements, vec![8, 1, 1]);
        assert_eq!(s.bonds, vec![[0, 1], [0, 2]]);
        assert_eq!(s.cell, None);
        s.validate().unwrap();
    }

    #[test]
    fn errors_name_the_field_and_index() {
        let err =
            parse(r#"{"elements":[8,1,"x"],"positions":[],"cell":null,"bonds":[]}"#).unwrap_err();
        assert!(err.starts_with("structure.elements[2]: "), "{err}");
        let err =
            parse(r#"{"elements":[8],"positions":[0,0,0],"cell":[1,2],"bonds":[]}"#).unwrap_err();
        assert!(err.starts_with("structure.cell: has 2 numbers"), "{err}");
        let err = parse(r#"{"elements":[8],"positions":[0,0,0],"bonds":[]}"#).unwrap_err();
        assert!(err.starts_with("structure.cell: missing"), "{err}");
        let err = parse(r#"{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[[0,1,2]]}"#)
            .unwrap_err();
        assert!(err.starts_with("structure.bonds[0]: "), "{err}");
    }

    #[test]
    fn duplicate_bond_in_either_direction_is_refused() {
        let mut s = parse(WATER).unwrap();
        s.bonds.push([1, 0]);
        let err = s.validate().unwrap_err();
        assert_eq!(err, "structure.bonds[2]: repeats bonds[0] (atoms 0 and 1)");
    }

    #[test]
    fn out_of_range_and_self_bonds_are_refused() {
        let mut s = parse(WATER).unwrap();
        s.bonds[1] = [0, 3];
        assert_eq!(
            s.validate().unwrap_err(),
            "structure.bonds[1]: atom 3 is out of range (3 atoms)"
        );
        s.bonds[1] = [2, 2];
        assert_eq!(
            s.validate().unwrap_err(),
            "structure.bonds[1]: bonds atom 2 to itself"
        );
    }

    /// The reference duplicate check: a full sort of `(min, max, index)` keys.
    fn duplicate_by_sorting(bonds: &[[u32; 2]]) -> Option<(usize, usize)> {
        let mut keys: Vec<(u32, u32, usize)> = bonds
            .iter()
            .enumerate()
            .map(|(k, &[a, b])| (a.min(b), a.max(b), k))
            .collect();
        keys.sort_unstable();
        keys.windows(2)
            .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
            .map(|w| (w[0].2, w[1].2))
    }

    #[test]
    fn bucketed_duplicate_check_reports_what_a_full_sort_reports() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m) as u32
        };
        for case in 0..3000 {
            let n = 2 + next(12) as usize;
            let count = next(3 * n as u64) as usize + usize::from(case % 2 == 0);
            let mut bonds = Vec::new();
            while bonds.len() < count {
                let (a, b) = (next(n as u64), next(n as u64));
                if a != b {
                    bonds.push([a, b]);
                }
            }
            // Also the same bonds listed in increasing (lower, higher) order, as tools write
            // them (the check's one-pass path when no pair repeats).
            let mut sorted = bonds.clone();
            sorted.sort_by_key(|&[a, b]| (a.min(b), a.max(b)));
            for bonds in [bonds, sorted] {
                let s = Structure {
                    elements: vec![6; n],
                    positions: vec![0.0; 3 * n],
                    bonds: bonds.clone(),
                    ..Structure::default()
                };
                let expected = duplicate_by_sorting(&bonds).map(|(earlier, later)| {
                    let [a, b] = bonds[earlier];
                    format!(
                        "structure.bonds[{later}]: repeats bonds[{earlier}] (atoms {} and {})",
                        a.min(b),
                        a.max(b)
                    )
                });
                assert_eq!(s.validate().err(), expected, "{bonds:?}");
            }
        }
    }

    #[test]
    fn bonds_are_read_as_pairs_with_list_errors() {
        let body = |bonds: &str| {
            format!(
                r#"{{"elements":[8,1,1],"positions":[0,0,0,1,0,0,0,1,0],"cell":null,"bonds":{bonds}}}"#
            )
        };
        assert_eq!(
            parse(&body("[[0,1],[2,0]]")).unwrap().bonds,
            vec![[0, 1], [2, 0]]
        );
        for (bonds, message) in [
            (
                "[[0,1],[0,1,2]]",
                "structure.bonds[1]: a bond is a pair of two atom indices, not 3 numbers",
            ),
            (
                "[[0]]",
                "structure.bonds[0]: a bond is a pair of two atom indices, not 1 numbers",
            ),
            (
                "[[]]",
                "structure.bonds[0]: a bond is a pair of two atom indices, not 0 numbers",
            ),
            (
                "[[0,-1]]",
                "structure.bonds[0]: second atom: -1 is not a 0-based index",
            ),
            (
                "[[0,1,\"x\"]]",
                "structure.bonds[0]: bond[2]: invalid type: string \"x\", expected an integer",
            ),
            (
                "[7]",
                "structure.bonds[0]: invalid type: integer `7`, expected an array",
            ),
        ] {
            let err = parse(&body(bonds)).unwrap_err();
            assert!(err.starts_with(message), "{bonds}: {err}");
        }
    }

    #[test]
    fn string_channels_are_dictionary_encoded() {
        let s = parse(
            r#"{"elements":[8,1,1,8],"positions":[0,0,0,1,0,0,0,1,0,5,5,5],"cell":null,"bonds":[],
            "residueNames":["HOH","HOH","HOH","N\u0041"],"atomNames":["O","H1","H2","O"]}"#,
        )
        .unwrap();
        let names = s.residue_names.as_ref().unwrap();
        assert_eq!(names.table(), ["HOH", "NA"]);
        assert_eq!(names.indices(), [0, 0, 0, 1]);
        assert_eq!(names[3], "NA");
        assert_eq!(names.get(4), None);
        assert_eq!(
            *names,
            vec!["HOH", "HOH", "HOH", "NA"]
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>()
        );
        let atoms = s.atom_names.as_ref().unwrap();
        assert_eq!(atoms.to_vec(), ["O", "H1", "H2", "O"]);
        assert_eq!(atoms.table().len(), 3);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json["residueNames"],
            serde_json::json!(["HOH", "HOH", "HOH", "NA"])
        );
        let mut pushed = StringColumn::new();
        for name in ["A", "B", "A"] {
            pushed.push(name);
        }
        assert_eq!(pushed, StringColumn::from(&["A", "B", "A"][..]));
        let err = parse(
            r#"{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"residueNames":["A",7]}"#,
        )
        .unwrap_err();
        assert!(
            err.starts_with(
                "structure.residueNames[1]: invalid type: integer `7`, expected a string"
            ),
            "{err}"
        );
    }

    #[test]
    fn channels_must_have_one_entry_per_atom() {
        let mut s = parse(WATER).unwrap();
        s.chain_ids = Some(vec!["A".into(), "A".into(), "AB".into()]);
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("structure.chainIds[2]: "));
        s.chain_ids = None;
        s.scalars = Some(BTreeMap::from([("q".to_string(), vec![0.1, 0.2])]));
        assert_eq!(
            s.validate().unwrap_err(),
            "structure.scalars.q: has 2 values for 3 atoms"
        );
    }
}
