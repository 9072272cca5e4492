//! PDB files (wwPDB format 3.3, the fixed columns small-molecule and simulation programs write).
//!
//! Reader: `ATOM`/`HETATM` of the first model (up to `ENDMDL`): atom name (columns 13–16), residue
//! name (18–21, so a 4-character name is kept), chain (22), residue number (23–26), x, y, z (31–54,
//! Å), element (77–78, else from the atom name), charge (79–80, `2-`); `CRYST1` a, b, c (Å), α, β,
//! γ (°) → cell vectors (a along x, b in the xy plane); `CONECT` → bonds, each once (a partner listed
//! twice is one bond). A file without `CONECT` has its bonds perceived by the caller.
//!
//! Writer: `TITLE`, `CRYST1` (space group `P 1`), one `HETATM` per atom with the residue name cut
//! to 3 characters (columns 18–20, which every reader takes), residue numbers modulo 10 000 (4
//! columns), element in capitals, then `CONECT` for every bond in both directions (4 partners per
//! record) and `END`. Serial numbers have 5 columns: at most [`MAX_ATOMS`] atoms.

use super::elements;
use super::read::{number, Read};
use super::residues::labels;
use super::structure::Structure;

/// The most atoms a PDB file can number (5 columns of serial number).
pub const MAX_ATOMS: usize = 99_999;

/// Columns `[start, end)` (0-based, in bytes) of a line, trimmed; empty past its end.
fn col(line: &str, start: usize, end: usize) -> &str {
    line.get(start.min(line.len())..end.min(line.len()))
        .unwrap_or("")
        .trim()
}

/// Reads the first model of a PDB text.
pub fn read(text: &str) -> Result<Read, String> {
    let mut read = Read::with_capacity(0);
    // Atom index by serial number (5 columns: at most 99 999); u32::MAX where none.
    let mut by_serial: Vec<u32> = Vec::new();
    let mut names = Vec::new();
    let mut residues = Vec::new();
    let mut ids = Vec::new();
    let mut chains = Vec::new();
    let mut charges = Vec::new();
    let mut conect: Vec<(usize, i64, i64)> = Vec::new();
    let mut in_model_done = false;
    for (k, line) in text.lines().enumerate() {
        let line_no = k + 1;
        if !line.is_ascii() {
            return Err(format!("line {line_no}: a PDB line must be plain ASCII"));
        }
        let record = col(line, 0, 6);
        match record {
            "ENDMDL" => in_model_done = true,
            "ATOM" | "HETATM" if !in_model_done => {
                let name = col(line, 12, 16);
                let z = element(col(line, 76, 78), name, col(line, 17, 21))
                    .ok_or_else(|| format!("line {line_no}: the atom {name:?} names no element"))?;
                if let Ok(serial @ 0..=99_999) = col(line, 6, 11).parse::<usize>() {
                    if by_serial.len() <= serial {
                        by_serial.resize(serial + 1, u32::MAX);
                    }
                    by_serial[serial] = read.structure.elements.len() as u32;
                }
                read.structure.elements.push(z);
                for (start, what) in [(30, "x"), (38, "y"), (46, "z")] {
                    let v = number(col(line, start, start + 8), what, line_no)?;
                    read.structure.positions.push(v);
                }
                names.push(name.to_string());
                residues.push(col(line, 17, 21).to_string());
                ids.push(col(line, 22, 26).parse::<i64>().unwrap_or(0));
                chains.push(line.get(21..22).unwrap_or(" ").to_string());
                charges.push(charge(col(line, 78, 80)));
            }
            "CRYST1" => read.structure.cell = Some(cryst1(line, line_no)?),
            "CONECT" => {
                let from = col(line, 6, 11).parse::<i64>();
                let from = from.map_err(|_| format!("line {line_no}: CONECT names no atom"))?;
                for start in [11, 16, 21, 26] {
                    if let Ok(to) = col(line, start, start + 5).parse::<i64>() {
                        conect.push((line_no, from, to));
                    }
                }
            }
            "TITLE" | "COMPND" if read.title.is_empty() => {
                read.title = col(line, 10, 80).to_string();
            }
            _ => {}
        }
    }
    if read.structure.elements.is_empty() {
        return Err("the file has no ATOM or HETATM records".to_string());
    }
    let index = |serial: i64, line_no: usize| {
        usize::try_from(serial)
            .ok()
            .and_then(|k| by_serial.get(k).copied())
            .filter(|&at| at != u32::MAX)
            .ok_or_else(|| {
                format!("line {line_no}: CONECT names atom {serial}, which the file does not have")
            })
    };
    let mut keyed: Vec<(u32, u32, usize)> = Vec::with_capacity(conect.len());
    for (line_no, from, to) in conect {
        let (a, b) = (index(from, line_no)?, index(to, line_no)?);
        if a != b {
            keyed.push((a.min(b), a.max(b), 0));
        }
    }
    // Each bond once (a partner listed twice, or by both atoms, is one bond), in order.
    keyed.sort_unstable();
    keyed.dedup();
    let bonds: Vec<[u32; 2]> = keyed.into_iter().map(|(a, b, _)| [a, b]).collect();
    read.bonds_listed = !bonds.is_empty();
    let s = &mut read.structure;
    s.bonds = bonds;
    s.atom_names = Some(names.into_iter().collect());
    s.residue_names = Some(residues.into_iter().collect());
    s.residue_ids = Some(ids);
    if chains.iter().any(|c| c != " ") {
        s.chain_ids = Some(chains);
    }
    if charges.iter().any(|&c| c != 0) {
        s.formal_charges = Some(charges);
    }
    Ok(read)
}

/// The element of an atom: columns 77–78, else the atom name's letters (a two-letter element
/// only where the residue is named like the atom, as an ion is: `CL` in `CL`, `CA` in `CA`, while
/// `CA` in `ALA` is a carbon).
fn element(column: &str, name: &str, residue: &str) -> Option<u8> {
    if !column.is_empty() {
        return elements::atomic_number(column);
    }
    let letters: String = name
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    if letters.len() >= 2 && name == residue {
        if let Some(z) = elements::atomic_number(&letters[..2]) {
            return Some(z);
        }
    }
    elements::atomic_number(letters.get(..1)?)
}

/// Columns 79–80: `2-`, `1+` (also `-2`, `+1`); anything else is 0.
fn charge(field: &str) -> i32 {
    let digits: String = field.chars().filter(char::is_ascii_digit).collect();
    let size = digits.parse::<i32>().unwrap_or(0);
    if field.contains('-') {
        -size
    } else {
        size
    }
}

/// `CRYST1` a, b, c (Å), α, β, γ (°) → row-major cell vectors, a along x and b in the xy plane.
fn cryst1(line: &str, line_no: usize) -> Result<[f64; 9], String> {
    let mut v = [0.0; 6];
    for (k, (start, end)) in [(6, 15), (15, 24), (24, 33), (33, 40), (40, 47), (47, 54)]
        .into_iter()
        .enumerate()
    {
        v[k] = number(col(line, start, end), "a CRYST1 entry", line_no)?;
    }
    let [a, b, c, alpha, beta, gamma] = v;
    // Found by the `structure_files` fuzz target: angles of 90048° made a third vector of
    // 10⁶ Å that no CRYST1 line can hold again. A cell's angles lie strictly between 0° and 180°.
    if [alpha, beta, gamma]
        .iter()
        .any(|x| !(*x > 0.0 && *x < 180.0))
    {
        return Err(format!(
            "line {line_no}: the CRYST1 angles must lie between 0 and 180 degrees"
        ));
    }
    let (ca, cb, cg) = [alpha, beta, gamma].map(|x| x.to_radians().cos()).into();
    let sg = gamma.to_radians().sin();
    let cx = c * cb;
    let cy = c * (ca - cb * cg) / sg;
    let cz = (c * c - cx * cx - cy * cy).max(0.0).sqrt();
    let round = |x: f64| if x.abs() < 1e-9 { 0.0 } else { x };
    Ok([
        a,
        0.0,
        0.0,
        round(b * cg),
        round(b * sg),
        0.0,
        round(cx),
        round(cy),
        cz,
    ])
}

/// a, b, c (Å) and α, β, γ (°) of a cell.
fn lengths_angles(cell: &[f64; 9]) -> [f64; 6] {
    let v = |k: usize| [cell[3 * k], cell[3 * k + 1], cell[3 * k + 2]];
    let dot = |p: [f64; 3], q: [f64; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    let (va, vb, vc) = (v(0), v(1), v(2));
    let (a, b, c) = (dot(va, va).sqrt(), dot(vb, vb).sqrt(), dot(vc, vc).sqrt());
    let angle =
        |p, q, lp: f64, lq: f64| (dot(p, q) / (lp * lq)).clamp(-1.0, 1.0).acos().to_degrees();
    [
        a,
        b,
        c,
        angle(vb, vc, b, c),
        angle(va, vc, a, c),
        angle(va, vb, a, b),
    ]
}

/// Writes `s` (validated) as a PDB file titled `title`.
pub fn write(s: &Structure, title: &str) -> Result<String, String> {
    let n = s.n_atoms();
    if n > MAX_ATOMS {
        return Err(format!(
            "A PDB file holds at most 99 999 atoms and this structure has {n}: save it as extended XYZ, mol or GROMACS .gro instead."
        ));
    }
    if let Some(i) = s
        .positions
        .iter()
        .position(|v| !(-999.999..=9999.999).contains(v))
    {
        return Err(format!(
            "Atom {} lies outside what PDB columns hold (-999.999 to 9999.999 Å): save it as extended XYZ instead.",
            i / 3 + 1
        ));
    }
    let l = labels(s);
    let mut out = String::with_capacity(81 * (n + s.bonds.len() / 2 + 4));
    let title: String = title
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(70)
        .collect();
    if !title.trim().is_empty() {
        out.push_str(&format!("TITLE     {title}\n"));
    }
    if let Some(cell) = &s.cell {
        let [a, b, c, al, be, ga] = lengths_angles(cell);
        // Found by the `structure_files` fuzz target: a .gro box with a zero vector.
        if [a, b, c].iter().any(|&x| x.is_nan() || x <= 0.0)
            || [al, be, ga].iter().any(|x| !x.is_finite())
        {
            return Err("This cell has a vector of zero length, which a PDB file cannot hold: save it as extended XYZ or GROMACS .gro instead.".to_string());
        }
        // CRYST1's columns hold lengths below 100 000 Å (`%9.3f`) and angles that read back
        // strictly between 0° and 180° (`%7.2f`).
        if [a, b, c].iter().any(|&x| x >= 99_999.999_5)
            || [al, be, ga].iter().any(|&x| !(0.005..179.995).contains(&x))
        {
            return Err("This cell is too long or too flat for a PDB file's CRYST1 line: save it as extended XYZ or GROMACS .gro instead.".to_string());
        }
        out.push_str(&format!(
            "CRYST1{a:9.3}{b:9.3}{c:9.3}{al:7.2}{be:7.2}{ga:7.2} P 1           1\n"
        ));
    }
    let chain = |i: usize| {
        s.chain_ids
            .as_ref()
            .and_then(|c| c[i].chars().next())
            .unwrap_or(' ')
    };
    for i in 0..n {
        let symbol = elements::symbol(s.elements[i]).unwrap_or("X");
        let name: String = l.atom_names[i]
            .chars()
            .filter(char::is_ascii_graphic)
            .take(4)
            .collect();
        // A 1-letter element's name starts in column 14 unless the name fills all 4 columns.
        let name = if symbol.len() == 1 && name.len() < 4 {
            format!(" {name:<3}")
        } else {
            format!("{name:<4}")
        };
        let residue: String = l.residue_names[i]
            .chars()
            .filter(char::is_ascii_graphic)
            .take(3)
            .collect();
        let charge = s.formal_charges.as_ref().map_or(0, |c| c[i]);
        let charge = match charge {
            0 => "  ".to_string(),
            c if c > 0 => format!("{}+", c.min(9)),
            c => format!("{}-", (-c).min(9)),
        };
        let p = &s.positions[3 * i..3 * i + 3];
        out.push_str(&format!(
            "HETATM{:>5} {name}{:1}{residue:>3} {}{:>4}    {:8.3}{:8.3}{:8.3}  1.00  0.00          {:>2}{charge}\n",
            i + 1,
            "",
            chain(i),
            l.residue_ids[i].rem_euclid(10_000),
            p[0],
            p[1],
            p[2],
            symbol.to_ascii_uppercase()
        ));
    }
    let mut partners: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &[a, b] in &s.bonds {
        partners[a as usize].push(b);
        partners[b as usize].push(a);
    }
    for (i, list) in partners.iter_mut().enumerate() {
        list.sort_unstable();
        for chunk in list.chunks(4) {
            out.push_str(&format!("CONECT{:>5}", i + 1));
            for j in chunk {
                out.push_str(&format!("{:>5}", j + 1));
            }
            out.push('\n');
        }
    }
    out.push_str("END\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn water() -> Structure {
        Structure {
            elements: vec![8, 1, 1],
            positions: vec![
                9.994, 10.3872, 10.0, 9.206, 9.8042, 10.0, 10.8, 9.8086, 10.0,
            ],
            cell: Some([20.0, 0.0, 0.0, 0.0, 21.0, 0.0, 0.0, 0.0, 22.0]),
            bonds: vec![[0, 1], [0, 2]],
            ..Structure::default()
        }
    }

    /// Found by the `structure_files` fuzz target: a CRYST1 angle of 90048° read, and a cell
    /// written that its own CRYST1 line could not hold.
    #[test]
    fn cells_a_cryst1_line_cannot_hold_are_refused_both_ways() {
        let line = "CRYST1   31.000   32.000   33.000  80.00  90.00 90048 P 1           1";
        let e = cryst1(line, 2).unwrap_err();
        assert!(e.contains("between 0 and 180"), "{e}");
        let mut long = water();
        long.cell = Some([2.0e5, 0.0, 0.0, 0.0, 21.0, 0.0, 0.0, 0.0, 22.0]);
        let mut flat = water();
        flat.cell = Some([20.0, 0.0, 0.0, 21.0, 1e-4, 0.0, 0.0, 0.0, 22.0]);
        for s in [long, flat] {
            let e = write(&s, "t").unwrap_err();
            assert!(e.contains("too long or too flat"), "{e}");
        }
    }

    #[test]
    fn columns_are_where_the_format_puts_them() {
        let text = write(&water(), "one water").unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "TITLE     one water");
        assert_eq!(
            lines[1],
            "CRYST1   20.000   21.000   22.000  90.00  90.00  90.00 P 1           1"
        );
        assert_eq!(
            lines[2],
            "HETATM    1  O1  UNL     1       9.994  10.387  10.000  1.00  0.00           O  "
        );
        assert_eq!(lines[2].len(), 80);
        assert_eq!(lines[5], "CONECT    1    2    3");
        assert_eq!(*lines.last().unwrap(), "END");
    }

    #[test]
    fn reads_back_atoms_cell_bonds_and_residues() {
        let r = read(&write(&water(), "w").unwrap()).unwrap();
        assert_eq!(r.structure.elements, vec![8, 1, 1]);
        assert_eq!(r.structure.bonds, vec![[0, 1], [0, 2]]);
        assert!(r.bonds_listed);
        let cell = r.structure.cell.unwrap();
        assert!((cell[4] - 21.0).abs() < 1e-9 && cell[1] == 0.0 && cell[3] == 0.0);
        assert_eq!(r.structure.residue_ids, Some(vec![1, 1, 1]));
        assert_eq!(r.title, "w");
    }

    #[test]
    fn a_triclinic_cell_comes_back_the_same() {
        let cell = [10.0, 0.0, 0.0, 2.0, 9.0, 0.0, 1.0, 1.5, 8.0];
        let mut s = water();
        s.cell = Some(cell);
        let back = read(&write(&s, "").unwrap())
            .unwrap()
            .structure
            .cell
            .unwrap();
        for k in 0..9 {
            assert!((back[k] - cell[k]).abs() < 2e-3, "{back:?}");
        }
    }

    #[test]
    fn elements_from_atom_names_and_ions() {
        assert_eq!(element("", "CA", "ALA"), Some(6));
        assert_eq!(element("", "CA", "CA"), Some(20));
        assert_eq!(element("", "1HB", "ALA"), Some(1));
        assert_eq!(element("FE", "X", "HEM"), Some(26));
        assert_eq!(charge("2-"), -2);
        assert_eq!(charge("1+"), 1);
    }

    /// Found by the `structure_files` fuzz target: a cell with a zero vector gave `NaN` angles.
    #[test]
    fn a_cell_with_a_zero_vector_is_refused_in_words() {
        let mut s = water();
        s.cell = Some([0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        let e = write(&s, "").unwrap_err();
        assert!(
            e.starts_with("This cell has a vector of zero length"),
            "{e}"
        );
    }

    #[test]
    fn too_many_atoms_is_refused_in_words() {
        let s = Structure {
            elements: vec![1; MAX_ATOMS + 1],
            positions: vec![0.0; 3 * (MAX_ATOMS + 1)],
            ..Structure::default()
        };
        let e = write(&s, "").unwrap_err();
        assert!(
            e.starts_with("A PDB file holds at most 99 999 atoms and this structure has 100000"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            read("REMARK nothing\n").unwrap_err(),
            "the file has no ATOM or HETATM records"
        );
        let bad =
            "HETATM    1  O   HOH     1       x.994  10.387  10.000  1.00  0.00           O\n";
        assert!(read(bad).unwrap_err().starts_with("line 1: the x "));
        let conect = "HETATM    1  O   HOH     1       9.994  10.387  10.000  1.00  0.00           O\nCONECT    1    7\n";
        assert_eq!(
            read(conect).unwrap_err(),
            "line 2: CONECT names atom 7, which the file does not have"
        );
    }
}
