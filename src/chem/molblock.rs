//! V2000 mol blocks (§4.2 molecule widget): the writer for library molecules and a reader.
//!
//! Layout (CTfile V2000): line 1 name, line 2 program line with the dimension code `3D` / `2D`
//! at columns 21–22, line 3 comment, the counts line (atoms columns 1–3, bonds 4–6, `V2000`),
//! the atom block (x, y, z in Å at columns 1–10, 11–20, 21–30, symbol 32–34, charge code
//! 37–39), the bond block (atoms 1–3 and 4–6, 1-based, type 7–9), then `M  CHG` and `M  END`.
//!
//! Reader rules: the dimension is read from the header, never guessed from the coordinates;
//! a missing or unknown code means 3D (§4.2). When any `M  CHG` line is present it supersedes all
//! atom-block charges (as the CTfile specification says). `D` and `T` read as hydrogen. V3000 is
//! refused. Stereo parity and wedge flags are not carried (3D coordinates hold the stereo).
//! Every error is one line naming the 1-based line number. The reader never panics:
//! columns are taken with checked, char-boundary-safe slicing.
//!
//! Hand-written: the format is small, and the crates that read it pull in a whole toolkit.

use super::elements;

/// §4.2: whether a mol block's coordinates are 3D or a 2D drawing (header columns 21–22).
/// Serialised as `"3D"` / `"2D"`, as in the header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Dimension {
    /// `3D` (also a missing code).
    #[default]
    #[serde(rename = "3D")]
    ThreeD,
    /// `2D`: a flat drawing; tools that need 3D refuse it.
    #[serde(rename = "2D")]
    TwoD,
}

/// A molecule as a mol block carries it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Molecule {
    /// Line 1 of the mol block.
    #[serde(default)]
    pub name: String,
    /// Atomic numbers 1–118, one per atom, explicit hydrogens included.
    pub elements: Vec<u8>,
    /// Cartesian coordinates in Å, one `[x, y, z]` per atom.
    pub positions: Vec<[f64; 3]>,
    /// 0-based atom index pairs.
    pub bonds: Vec<(u32, u32)>,
    /// Parallel to `bonds`: 1, 2, 3 or 4 (aromatic). The writer also accepts an empty vector
    /// (all single).
    #[serde(default)]
    pub bond_orders: Vec<u8>,
    /// Per-atom formal charge in e (length N; the writer also accepts an empty vector = all 0).
    #[serde(default)]
    pub formal_charges: Vec<i8>,
    /// The header's dimension code (`"3D"` when absent).
    #[serde(default)]
    pub dimension: Dimension,
}

/// Largest atom or bond count a V2000 counts line can hold.
const MAX_V2000_COUNT: usize = 999;

/// Writes `molecule` as a V2000 mol block (lines end with `\n`, the last one is `M  END`).
pub fn write_molblock(molecule: &Molecule) -> Result<String, String> {
    check_writable(molecule)?;
    let mut out = String::new();
    out.push_str(&header_text(&molecule.name));
    out.push('\n');
    let code = match molecule.dimension {
        Dimension::ThreeD => "3D",
        Dimension::TwoD => "2D",
    };
    // Columns 1–2 initials, 3–10 program, 11–20 date: 20 characters, then the code at 21–22.
    out.push_str(&format!("  {:<8}{:10}{code}\n\n", "megane", ""));
    out.push_str(&format!(
        "{:>3}{:>3}  0  0  0  0  0  0  0  0999 V2000\n",
        molecule.elements.len(),
        molecule.bonds.len()
    ));
    for (z, p) in molecule.elements.iter().zip(&molecule.positions) {
        let symbol = elements::symbol(*z).unwrap_or("*");
        out.push_str(&format!(
            "{:>10.4}{:>10.4}{:>10.4} {:<3} 0  0  0  0  0  0  0  0  0  0  0  0\n",
            p[0], p[1], p[2], symbol
        ));
    }
    for (k, &(a, b)) in molecule.bonds.iter().enumerate() {
        let order = molecule.bond_orders.get(k).copied().unwrap_or(1);
        out.push_str(&format!("{:>3}{:>3}{:>3}  0\n", a + 1, b + 1, order));
    }
    out.push_str(&charge_lines(&molecule.formal_charges));
    out.push_str("M  END\n");
    Ok(out)
}

/// Whether `v` written as the atom block writes it (`{:>10.4}`) stays inside its 10 columns: a
/// negative value has one column less for digits (-9999.9999 is the lowest), so a bound on `|v|`
/// alone lets `-66054` spill into the next field.
fn fits_coordinate_field(v: f64) -> bool {
    v.is_finite() && format!("{v:.4}").len() <= 10
}

fn check_writable(m: &Molecule) -> Result<(), String> {
    let n = m.elements.len();
    if n > MAX_V2000_COUNT || m.bonds.len() > MAX_V2000_COUNT {
        return Err(format!(
            "molecule: {n} atoms and {} bonds; a V2000 mol block holds at most 999 of each",
            m.bonds.len()
        ));
    }
    if m.positions.len() != n {
        return Err(format!(
            "molecule.positions: {} entries for {n} atoms",
            m.positions.len()
        ));
    }
    if !m.bond_orders.is_empty() && m.bond_orders.len() != m.bonds.len() {
        return Err(format!(
            "molecule.bondOrders: {} entries for {} bonds",
            m.bond_orders.len(),
            m.bonds.len()
        ));
    }
    if !m.formal_charges.is_empty() && m.formal_charges.len() != n {
        return Err(format!(
            "molecule.formalCharges: {} entries for {n} atoms",
            m.formal_charges.len()
        ));
    }
    if let Some(i) = m
        .elements
        .iter()
        .position(|&z| elements::symbol(z).is_none())
    {
        return Err(format!(
            "molecule.elements[{i}]: {} is not an atomic number (1–118)",
            m.elements[i]
        ));
    }
    if let Some(i) = m
        .positions
        .iter()
        .position(|p| p.iter().any(|&v| !fits_coordinate_field(v)))
    {
        return Err(format!(
            "molecule.positions[{i}]: not a finite coordinate that fits the V2000 columns (-9999.9999 to 99999.9999 Å)"
        ));
    }
    for (k, &(a, b)) in m.bonds.iter().enumerate() {
        if a as usize >= n || b as usize >= n || a == b {
            return Err(format!(
                "molecule.bonds[{k}]: ({a}, {b}) is not a bond between two of the {n} atoms"
            ));
        }
    }
    if let Some(k) = m.bond_orders.iter().position(|o| !(1..=4).contains(o)) {
        return Err(format!(
            "molecule.bondOrders[{k}]: {} is not a bond order (1–4)",
            m.bond_orders[k]
        ));
    }
    if let Some(i) = m
        .formal_charges
        .iter()
        .position(|c| !(-15..=15).contains(c))
    {
        return Err(format!(
            "molecule.formalCharges[{i}]: {} does not fit M  CHG",
            m.formal_charges[i]
        ));
    }
    Ok(())
}

/// One line, at most 80 characters, no control characters.
fn header_text(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(80).collect()
}

/// `M  CHG` lines, eight atoms per line, for the non-zero charges.
fn charge_lines(charges: &[i8]) -> String {
    let charged: Vec<(usize, i8)> = charges
        .iter()
        .enumerate()
        .filter(|(_, &c)| c != 0)
        .map(|(i, &c)| (i + 1, c))
        .collect();
    let mut out = String::new();
    for chunk in charged.chunks(8) {
        out.push_str(&format!("M  CHG{:>3}", chunk.len()));
        for (atom, charge) in chunk {
            out.push_str(&format!(" {atom:>3} {charge:>3}"));
        }
        out.push('\n');
    }
    out
}

/// Reads a V2000 mol block. Errors are one line: `line N: …`.
pub fn parse_molblock(text: &str) -> Result<Molecule, String> {
    let lines: Vec<&str> = text.lines().collect();
    let line = |i: usize| -> Result<&str, String> {
        lines
            .get(i)
            .copied()
            .ok_or_else(|| format!("line {}: missing; the mol block ends too early", i + 1))
    };
    let name = header_text(line(0)?.trim());
    let dimension = read_dimension(line(1)?);
    let counts = line(3)?;
    if counts.contains("V3000") {
        return Err("line 4: this is a V3000 mol block; only V2000 is supported".to_string());
    }
    let n_atoms = count_field(counts, 0, "atom")?;
    let n_bonds = count_field(counts, 3, "bond")?;
    let mut molecule = Molecule {
        name,
        elements: Vec::with_capacity(n_atoms),
        positions: Vec::with_capacity(n_atoms),
        bonds: Vec::with_capacity(n_bonds),
        bond_orders: Vec::with_capacity(n_bonds),
        formal_charges: Vec::with_capacity(n_atoms),
        dimension,
    };
    for i in 0..n_atoms {
        let number = 5 + i;
        let (z, position, charge) = read_atom(line(4 + i)?, number)?;
        molecule.elements.push(z);
        molecule.positions.push(position);
        molecule.formal_charges.push(charge);
    }
    for k in 0..n_bonds {
        let index = 4 + n_atoms + k;
        let (a, b, order) = read_bond(line(index)?, index + 1, n_atoms)?;
        molecule.bonds.push((a, b));
        molecule.bond_orders.push(order);
    }
    read_properties(&lines, 4 + n_atoms + n_bonds, &mut molecule)?;
    Ok(molecule)
}

/// §4.2: columns 21–22 of line 2 (counted in characters); only `2D` means 2D.
fn read_dimension(program_line: &str) -> Dimension {
    let code: String = program_line.chars().skip(20).take(2).collect();
    if code == "2D" {
        Dimension::TwoD
    } else {
        Dimension::ThreeD
    }
}

/// Columns `[start, end)` (0-based bytes) of an ASCII line, trimmed; `None` past the end or on a
/// non-ASCII boundary.
fn columns(line: &str, start: usize, end: usize) -> Option<&str> {
    let end = end.min(line.len());
    line.get(start..end).map(str::trim)
}

fn count_field(counts: &str, start: usize, what: &str) -> Result<usize, String> {
    let field = columns(counts, start, start + 3).unwrap_or("");
    field
        .parse::<usize>()
        .map_err(|_| format!("line 4: the {what} count {field:?} is not a number"))
}

fn read_atom(text: &str, number: usize) -> Result<(u8, [f64; 3], i8), String> {
    if !text.is_ascii() {
        return Err(format!("line {number}: an atom line must be plain ASCII"));
    }
    let coordinate = |start: usize, axis: &str| -> Result<f64, String> {
        let field = columns(text, start, start + 10).unwrap_or("");
        match field.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(format!(
                "line {number}: the {axis} coordinate {field:?} is not a number"
            )),
        }
    };
    let position = [
        coordinate(0, "x")?,
        coordinate(10, "y")?,
        coordinate(20, "z")?,
    ];
    let symbol = columns(text, 31, 34).unwrap_or("");
    let z = match symbol {
        "D" | "T" => 1,
        _ => elements::atomic_number(symbol)
            .ok_or_else(|| format!("line {number}: {symbol:?} is not an element symbol"))?,
    };
    let charge_code = columns(text, 36, 39).unwrap_or("");
    let charge = match charge_code {
        "" | "0" | "4" => 0,
        "1" => 3,
        "2" => 2,
        "3" => 1,
        "5" => -1,
        "6" => -2,
        "7" => -3,
        other => {
            return Err(format!(
                "line {number}: {other:?} is not a V2000 charge code (0–7)"
            ))
        }
    };
    Ok((z, position, charge))
}

fn read_bond(text: &str, number: usize, n_atoms: usize) -> Result<(u32, u32, u8), String> {
    if !text.is_ascii() {
        return Err(format!("line {number}: a bond line must be plain ASCII"));
    }
    let atom = |start: usize| -> Result<u32, String> {
        let field = columns(text, start, start + 3).unwrap_or("");
        match field.parse::<usize>() {
            Ok(a) if (1..=n_atoms).contains(&a) => Ok((a - 1) as u32),
            _ => Err(format!(
                "line {number}: bond atom {field:?} is not an atom number 1–{n_atoms}"
            )),
        }
    };
    let (a, b) = (atom(0)?, atom(3)?);
    if a == b {
        return Err(format!(
            "line {number}: a bond joins atom {} to itself",
            a + 1
        ));
    }
    let order_field = columns(text, 6, 9).unwrap_or("");
    let order = match order_field.parse::<u8>() {
        Ok(o @ 1..=4) => o,
        _ => {
            return Err(format!(
                "line {number}: bond type {order_field:?} is not 1, 2, 3 or 4 (query bonds are not supported)"
            ))
        }
    };
    Ok((a, b, order))
}

/// The properties block up to `M  END`: `M  CHG` lines (which supersede atom-block charges).
fn read_properties(lines: &[&str], first: usize, molecule: &mut Molecule) -> Result<(), String> {
    let mut charges_reset = false;
    for (offset, text) in lines.iter().enumerate().skip(first) {
        let number = offset + 1;
        if text.starts_with("M  END") {
            return Ok(());
        }
        if let Some(rest) = text.strip_prefix("M  CHG") {
            if !charges_reset {
                molecule.formal_charges.iter_mut().for_each(|c| *c = 0);
                charges_reset = true;
            }
            apply_charge_line(rest, number, molecule)?;
        }
    }
    Err(format!("line {}: `M  END` is missing", lines.len() + 1))
}

fn apply_charge_line(rest: &str, number: usize, molecule: &mut Molecule) -> Result<(), String> {
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let (count, pairs) = fields
        .split_first()
        .ok_or_else(|| format!("line {number}: `M  CHG` without a count"))?;
    let count: usize = count
        .parse()
        .map_err(|_| format!("line {number}: `M  CHG` count {count:?} is not a number"))?;
    // Checked: a count near usize::MAX must be a refusal, not an overflow.
    if count.checked_mul(2) != Some(pairs.len()) {
        return Err(format!(
            "line {number}: `M  CHG` announces {count} atoms but lists {}",
            pairs.len() / 2
        ));
    }
    for pair in pairs.chunks_exact(2) {
        let atom = pair[0]
            .parse::<usize>()
            .ok()
            .filter(|a| (1..=molecule.elements.len()).contains(a));
        let charge = pair[1]
            .parse::<i8>()
            .ok()
            .filter(|c| (-15..=15).contains(c));
        match (atom, charge) {
            (Some(a), Some(c)) => {
                if let Some(slot) = molecule.formal_charges.get_mut(a - 1) {
                    *slot = c;
                }
            }
            _ => {
                return Err(format!(
                    "line {number}: `M  CHG` entry {:?} {:?} is not an atom and a charge",
                    pair[0], pair[1]
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Found by the `molblock` fuzz target: a NUL in an `M  CHG` entry reached the message.
    #[test]
    fn a_bad_charge_entry_is_quoted_on_one_line() {
        let text = "x\n\n\n  1  0  0  0  0  0  0  0  0  0999 V2000\n    0.0000    0.0000    0.0000 O   0  0\nM  CHG  1 \u{0}\u{2028} 1\nM  END\n";
        let e = parse_molblock(text).unwrap_err();
        assert!(crate::wire::text::is_one_line(&e), "{e:?}");
        assert!(e.starts_with("line 6: `M  CHG` entry"), "{e}");
    }

    use super::*;

    /// Found by the `molblock` fuzz target: an `M  CHG` count near `usize::MAX` overflowed when
    /// doubled (a panic in debug builds, a wrong comparison in release).
    #[test]
    fn a_huge_charge_count_is_refused() {
        let text = "x\n\n\n  1  0  0  0  0  0  0  0  0  0999 V2000\n    0.0000    0.0000    0.0000 O   0  0\nM  CHG 12297829382473034412  1  1\nM  END\n";
        let e = parse_molblock(text).unwrap_err();
        assert_eq!(
            e,
            "line 6: `M  CHG` announces 12297829382473034412 atoms but lists 1"
        );
    }

    /// Found by the `molblock` fuzz target: `-066054` reads (it fits the 10 columns) but written
    /// as `-66054.0000` it took 11 and shifted the element into the wrong field; the writer now
    /// refuses it, and every coordinate it accepts re-reads exactly.
    #[test]
    fn a_coordinate_that_does_not_fit_its_columns_is_refused_when_written() {
        let text = "x\n\n\n  1  0  0  0  0  0  0  0  0  0999 V2000\n   -0.8884   -066054   -0.8098 H   0  0\nM  END\n";
        let m = parse_molblock(text).unwrap();
        assert_eq!(m.positions[0][1], -66054.0);
        let e = write_molblock(&m).unwrap_err();
        assert!(
            e.starts_with("molecule.positions[0]: not a finite coordinate"),
            "{e}"
        );
        for ok in [-9999.9999, 99999.9999, -0.00001, 0.0] {
            let mut m = m.clone();
            m.positions[0][1] = ok;
            let back = parse_molblock(&write_molblock(&m).unwrap()).unwrap();
            assert!((back.positions[0][1] - ok).abs() < 1e-4, "{ok}");
        }
        for bad in [-10000.0, -9999.99996, 100000.0, 99999.99996, f64::NAN] {
            let mut m = m.clone();
            m.positions[0][1] = bad;
            assert!(write_molblock(&m).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_dimension_from_the_header_only() {
        let flat = "x\n     RDKit          2D\n\n  1  0  0  0  0  0  0  0  0  0999 V2000\n    0.0000    0.0000    0.0000 C   0  0\nM  END\n";
        assert_eq!(parse_molblock(flat).unwrap().dimension, Dimension::TwoD);
        let missing = flat.replace("     RDKit          2D", "");
        assert_eq!(
            parse_molblock(&missing).unwrap().dimension,
            Dimension::ThreeD
        );
    }

    #[test]
    fn m_chg_supersedes_atom_block_charges() {
        let text = "ion\n\n\n  2  0  0  0  0  0  0  0  0  0999 V2000\n    0.0000    0.0000    0.0000 N   0  3\n    1.0000    0.0000    0.0000 O   0  5\nM  CHG  1   2  -1\nM  END\n";
        let m = parse_molblock(text).unwrap();
        assert_eq!(m.formal_charges, vec![0, -1]);
        let without = text.replace("M  CHG  1   2  -1\n", "");
        assert_eq!(
            parse_molblock(&without).unwrap().formal_charges,
            vec![1, -1]
        );
    }

    #[test]
    fn refuses_v3000_and_names_lines() {
        let v3000 = "x\n\n\n  0  0  0     0  0            999 V3000\nM  END\n";
        assert!(parse_molblock(v3000).unwrap_err().contains("V3000"));
        let bad = "x\n\n\n  1  0  0  0  0  0  0  0  0  0999 V2000\n    0.0000    0.0000    0.0000 Xx  0  0\nM  END\n";
        assert_eq!(
            parse_molblock(bad).unwrap_err(),
            "line 5: \"Xx\" is not an element symbol"
        );
        assert!(parse_molblock("").unwrap_err().starts_with("line 1:"));
        assert!(parse_molblock("a\nb\nc\n  1é 0\n").is_err());
    }

    #[test]
    fn writes_the_dimension_code_at_columns_21_22() {
        let m = Molecule {
            name: "flat".into(),
            elements: vec![6, 8],
            positions: vec![[0.0, 0.0, 0.0], [1.2, 0.0, 0.0]],
            bonds: vec![(0, 1)],
            bond_orders: vec![2],
            formal_charges: vec![0, 0],
            dimension: Dimension::TwoD,
        };
        let text = write_molblock(&m).unwrap();
        let line2 = text.lines().nth(1).unwrap();
        assert_eq!(&line2[20..22], "2D");
        assert_eq!(parse_molblock(&text).unwrap(), m);
    }

    const MOLECULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/molecules");

    /// (file, atoms, bonds, molar mass g/mol) from fixtures/molecules/README.md.
    const TABLE: [(&str, usize, usize, f64); 7] = [
        ("water", 3, 2, 18.015),
        ("methanol", 6, 5, 32.042),
        ("ethanol", 9, 8, 46.069),
        ("acetonitrile", 6, 5, 41.053),
        ("benzene", 12, 12, 78.114),
        ("caffeine", 24, 25, 194.194),
        ("alanine_dipeptide", 22, 21, 144.174),
    ];

    #[test]
    fn every_fixture_molecule_reads_and_round_trips() {
        let count = std::fs::read_dir(MOLECULES)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "mol")
            })
            .count();
        assert_eq!(count, TABLE.len(), "a fixture molecule is not in the table");
        for (file, atoms, bonds, molar_mass) in TABLE {
            let text = std::fs::read_to_string(format!("{MOLECULES}/{file}.mol")).unwrap();
            let m = parse_molblock(&text).unwrap();
            assert_eq!((m.elements.len(), m.bonds.len()), (atoms, bonds), "{file}");
            assert_eq!(m.dimension, Dimension::ThreeD, "{file}");
            assert_eq!(m.name, file);
            let mass: f64 = m
                .elements
                .iter()
                .map(|&z| elements::atomic_mass(z).unwrap())
                .sum();
            assert!((mass - molar_mass).abs() < 2e-3, "{file}: {mass}");
            let written = write_molblock(&m).unwrap();
            assert_eq!(parse_molblock(&written).unwrap(), m, "{file}");
            // The columns this module carries (atom columns 1–39, bond columns 1–9) are
            // character-for-character what RDKit wrote; stereo flags are not carried.
            let carried = |text: &str| -> Vec<String> {
                let lines = text.lines().skip(4);
                let atoms_part = lines.clone().take(atoms).map(|l| l[..39].to_string());
                let bonds_part = lines.skip(atoms).take(bonds).map(|l| l[..9].to_string());
                atoms_part.chain(bonds_part).collect()
            };
            assert_eq!(carried(&written), carried(&text), "{file}");
        }
    }

    #[test]
    fn benzene_keeps_kekule_orders() {
        let text = std::fs::read_to_string(format!("{MOLECULES}/benzene.mol")).unwrap();
        let m = parse_molblock(&text).unwrap();
        assert_eq!(m.bond_orders.iter().filter(|&&o| o == 2).count(), 3);
        assert!(m.positions.iter().all(|p| p[2].abs() < 0.1));
    }

    #[test]
    fn charges_are_written_as_m_chg_and_read_back() {
        let m = Molecule {
            name: "ammonium chloride".into(),
            elements: vec![7, 1, 1, 1, 1, 17],
            positions: vec![
                [0.0; 3],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
                [-1.0, 0.0, 0.0],
                [4.0, 0.0, 0.0],
            ],
            bonds: vec![(0, 1), (0, 2), (0, 3), (0, 4)],
            bond_orders: vec![1; 4],
            formal_charges: vec![1, 0, 0, 0, 0, -1],
            dimension: Dimension::ThreeD,
        };
        let text = write_molblock(&m).unwrap();
        assert!(text.contains("M  CHG  2   1   1   6  -1\n"), "{text}");
        assert_eq!(parse_molblock(&text).unwrap(), m);
    }

    #[test]
    fn javascript_shape_with_defaults() {
        let m: Molecule = serde_json::from_str(
            r#"{"elements":[8,1,1],"positions":[[0,0,0],[0.96,0,0],[-0.24,0.93,0]],"bonds":[[0,1],[0,2]]}"#,
        )
        .unwrap();
        assert_eq!(m.dimension, Dimension::ThreeD);
        let text = write_molblock(&m).unwrap();
        let back = parse_molblock(&text).unwrap();
        assert_eq!(back.bond_orders, vec![1, 1]);
        assert_eq!(back.formal_charges, vec![0, 0, 0]);
        assert_eq!(serde_json::to_value(back.dimension).unwrap(), "3D");
    }
}
