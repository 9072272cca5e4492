//! GROMACS `.gro` files: a title line, the atom count, one fixed-column line per atom
//! (`%5d%-5s%5s%5d%8.3f%8.3f%8.3f`: residue number, residue name, atom name, atom number, x, y, z
//! in nm, optional velocities after), and the box line (v1(x) v2(y) v3(z), then for a triclinic
//! box v1(y) v1(z) v2(x) v2(z) v3(x) v3(y), nm). GROMACS keeps v1 along x and v2 in the xy plane.
//!
//! Reader: the coordinate width is found as GROMACS finds it, from the distance between the
//! first line's decimal points, so files written with more decimals (`gmx editconf -ndec`) read
//! too. The element comes from the atom name's letters: a two-letter element where the second is
//! lower case (`Cl1`) or where the residue is named like the atom (an ion: `NA` in `NA`), else
//! the first letter. A zero box is no cell. `.gro` has no bonds: the caller perceives them.
//!
//! Writer: the standard 8-column coordinate fields (`%8.4f`: the decimal points 8 apart, as in
//! `%8.3f`, so GROMACS, which reads the width from them, and ASE, which reads fixed columns, both
//! take it) with 4 decimals instead of 3, so a position is kept to within 0.00005 nm = 0.0005 Å
//! (3 decimals would move it by up to 0.005 Å on a Save → Open); residue and atom numbers
//! modulo 100 000, as GROMACS writes them. A cell GROMACS cannot hold (v1 not along x or v2 not
//! in the xy plane) is refused in words; no cell is written as a zero box.

use super::elements;
use super::read::{number, Read};
use super::residues::labels;
use super::structure::Structure;

/// Reads a `.gro` text (its first frame).
pub fn read(text: &str) -> Result<Read, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut read = Read::with_capacity(0);
    read.title = lines
        .first()
        .map(|t| t.trim().to_string())
        .unwrap_or_default();
    let count = lines.get(1).map(|l| l.trim()).unwrap_or("");
    let n: usize = count
        .parse()
        .map_err(|_| format!("line 2: the atom count {count:?} is not a number"))?;
    let first = lines
        .get(2)
        .ok_or("line 3: missing; the file lists no atoms")?;
    let width = coordinate_width(first);
    // Reserved for at most the atoms the text can hold: a count is only a claim.
    let room = n.min(lines.len());
    let mut names = Vec::with_capacity(room);
    let mut residues = Vec::with_capacity(room);
    let mut ids = Vec::with_capacity(room);
    for k in 0..n {
        let line_no = k + 3;
        let line = lines
            .get(k + 2)
            .ok_or_else(|| format!("line {line_no}: missing; the file lists {n} atoms"))?;
        if !line.is_ascii() {
            return Err(format!("line {line_no}: a .gro line must be plain ASCII"));
        }
        let col = |a: usize, b: usize| {
            line.get(a.min(line.len())..b.min(line.len()))
                .unwrap_or("")
                .trim()
        };
        let residue = col(5, 10);
        let name = col(10, 15);
        let z = element(name, residue)
            .ok_or_else(|| format!("line {line_no}: the atom name {name:?} names no element"))?;
        read.structure.elements.push(z);
        for (axis, what) in ["x", "y", "z"].iter().enumerate() {
            let start = 20 + axis * width;
            let v = number(col(start, start + width), what, line_no)?;
            read.structure.positions.push(10.0 * v);
        }
        names.push(name.to_string());
        residues.push(residue.to_string());
        ids.push(col(0, 5).parse::<i64>().unwrap_or(0));
    }
    let box_no = n + 3;
    let box_line = lines
        .get(n + 2)
        .ok_or_else(|| format!("line {box_no}: the box line is missing"))?;
    let v: Vec<f64> = box_line
        .split_whitespace()
        .map(|x| number(x, "a box entry", box_no))
        .collect::<Result<_, _>>()?;
    let cell = match v.len() {
        3 => [v[0], 0.0, 0.0, 0.0, v[1], 0.0, 0.0, 0.0, v[2]],
        9 => [v[0], v[3], v[4], v[5], v[1], v[6], v[7], v[8], v[2]],
        k => {
            return Err(format!(
                "line {box_no}: the box has {k} numbers, not 3 or 9"
            ))
        }
    };
    if cell.iter().any(|&x| x != 0.0) {
        read.structure.cell = Some(cell.map(|x| 10.0 * x));
    }
    let s = &mut read.structure;
    s.atom_names = Some(names.into_iter().collect());
    s.residue_names = Some(residues.into_iter().collect());
    s.residue_ids = Some(ids);
    Ok(read)
}

/// The width of a coordinate field: the distance between the first two decimal points from
/// column 21 on (8 in a standard file).
fn coordinate_width(line: &str) -> usize {
    let tail = line.get(20..).unwrap_or("");
    let mut dots = tail.match_indices('.').map(|(i, _)| i);
    match (dots.next(), dots.next()) {
        (Some(a), Some(b)) if b > a && b - a >= 4 => b - a,
        _ => 8,
    }
}

/// The element an atom name stands for (see the module doc).
fn element(name: &str, residue: &str) -> Option<u8> {
    let letters: String = name
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    let two = letters.get(..2);
    let lower_second = letters
        .chars()
        .nth(1)
        .is_some_and(|c| c.is_ascii_lowercase());
    if let Some(two) = two.filter(|_| lower_second || name.eq_ignore_ascii_case(residue)) {
        if let Some(z) = elements::atomic_number(two) {
            return Some(z);
        }
    }
    elements::atomic_number(letters.get(..1)?)
}

/// Writes `s` (validated) as a `.gro` file titled `title`.
pub fn write(s: &Structure, title: &str) -> Result<String, String> {
    let n = s.n_atoms();
    let cell = s.cell.unwrap_or([0.0; 9]);
    if [cell[1], cell[2], cell[5]].iter().any(|x| x.abs() > 1e-9) {
        return Err("GROMACS needs the cell's first vector along x and its second in the xy plane; this cell is turned otherwise: save it as extended XYZ or PDB instead.".to_string());
    }
    if let Some(i) = s
        .positions
        .iter()
        .position(|v| !(-999.9..=9999.9).contains(v))
    {
        return Err(format!(
            "Atom {} lies outside what .gro columns hold (-99.9999 to 999.9999 nm): save it as extended XYZ instead.",
            i / 3 + 1
        ));
    }
    let l = labels(s);
    let mut out = String::with_capacity(45 * n + 120);
    let title: String = title.chars().filter(|c| !c.is_control()).take(80).collect();
    out.push_str(if title.trim().is_empty() {
        "structure"
    } else {
        &title
    });
    out.push('\n');
    out.push_str(&format!("{n:5}\n"));
    for i in 0..n {
        let p = &s.positions[3 * i..3 * i + 3];
        let residue: String = l.residue_names[i]
            .chars()
            .filter(char::is_ascii_graphic)
            .take(5)
            .collect();
        let name: String = l.atom_names[i]
            .chars()
            .filter(char::is_ascii_graphic)
            .take(5)
            .collect();
        // A .gro file has no element column: a name that does not say the element is replaced.
        let name = if element(&name, &residue) == Some(s.elements[i]) {
            name
        } else {
            elements::symbol(s.elements[i]).unwrap_or("X").to_string()
        };
        out.push_str(&format!(
            "{:5}{residue:<5}{name:>5}{:5}{:8.4}{:8.4}{:8.4}\n",
            l.residue_ids[i].rem_euclid(100_000),
            (i + 1) % 100_000,
            p[0] / 10.0,
            p[1] / 10.0,
            p[2] / 10.0
        ));
    }
    let nm = cell.map(|x| x / 10.0);
    // `%10.5f` each, as GROMACS writes; a value wider than its 10 columns (found by the
    // `structure_files` fuzz target: `3.17216-408.42232`) gets a space before it, so that readers
    // that split the line on whitespace (ASE's, ours) still see two numbers.
    let mut entries = vec![nm[0], nm[4], nm[8]];
    if [nm[3], nm[6], nm[7]].iter().any(|x| *x != 0.0) {
        entries.extend([nm[1], nm[2], nm[3], nm[5], nm[6], nm[7]]);
    }
    let entries: Vec<String> = entries.iter().map(|x| format!("{x:10.5}")).collect();
    // Found by the `structure_files` fuzz target: a cell of a few 10⁻⁵ Å is written as a zero
    // box, which reads back as no cell at all.
    let has_cell = s.cell.is_some_and(|c| c.iter().any(|&x| x != 0.0));
    if has_cell && entries.iter().all(|e| e.trim().parse::<f64>() == Ok(0.0)) {
        return Err("This cell is too small for a GROMACS .gro box line (steps of 0.00001 nm): save it as extended XYZ instead.".to_string());
    }
    for entry in entries {
        if !entry.starts_with(' ') {
            out.push(' ');
        }
        out.push_str(&entry);
    }
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_gromacs_water() {
        let text = "water\n    3\n    1SOL     OW    1   0.126   1.624   1.679\n    1SOL    HW1    2   0.190   1.661   1.747\n    1SOL    HW2    3   0.177   1.568   1.613\n   1.86206   1.86206   1.86206\n";
        let r = read(text).unwrap();
        assert_eq!(r.structure.elements, vec![8, 1, 1]);
        assert!((r.structure.positions[0] - 1.26).abs() < 1e-12);
        assert!((r.structure.cell.unwrap()[8] - 18.6206).abs() < 1e-9);
        assert_eq!(r.title, "water");
    }

    #[test]
    fn reads_more_decimals_and_ions() {
        let text = "ions\n2\n    1NA      NA    1   0.12600   1.62400   1.67900\n    2CL      CL    2   1.00000   1.00000   1.00000\n   0.00000   0.00000   0.00000\n";
        let r = read(text).unwrap();
        assert_eq!(r.structure.elements, vec![11, 17]);
        assert!((r.structure.positions[2] - 16.79).abs() < 1e-12);
        assert_eq!(r.structure.cell, None);
        assert_eq!(element("Cl12", "UNL"), Some(17));
        assert_eq!(element("CA", "ALA"), Some(6));
    }

    #[test]
    fn writes_the_standard_columns_with_4_decimals_and_a_triclinic_box() {
        let s = Structure {
            elements: vec![8, 1],
            positions: vec![1.0, 2.0, 3.0, 1.5, 2.5, 3.5],
            cell: Some([20.0, 0.0, 0.0, 3.0, 19.0, 0.0, 1.0, 2.0, 18.0]),
            bonds: vec![[0, 1]],
            ..Structure::default()
        };
        let text = write(&s, "t").unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[2], "    1UNL     O1    1  0.1000  0.2000  0.3000");
        // The columns of a standard file: x, y, z in 8-character fields from column 21.
        assert_eq!(&lines[2][20..28], "  0.1000");
        assert_eq!(lines[4], "   2.00000   1.90000   1.80000   0.00000   0.00000   0.30000   0.00000   0.10000   0.20000");
        let back = read(&text).unwrap().structure;
        assert_eq!(back.cell, s.cell.map(|c| c.map(|x| 10.0 * (x / 10.0))));
        assert_eq!(back.elements, vec![8, 1]);
    }

    /// Found by the `structure_files` fuzz target: a box entry wider than its 10 columns ran
    /// into the one before it.
    #[test]
    fn a_box_entry_wider_than_its_columns_keeps_a_space_before_it() {
        let s = Structure {
            elements: vec![8],
            positions: vec![0.0; 3],
            cell: Some([31.7216, 0.0, 0.0, -4084.2232, 19.0, 0.0, 0.0, 0.0, 18.0]),
            ..Structure::default()
        };
        let text = write(&s, "t").unwrap();
        assert!(
            text.contains("   3.17216") && text.contains(" -408.42232"),
            "{text}"
        );
        let back = read(&text).unwrap().structure.cell.unwrap();
        assert!((back[3] + 4084.2232).abs() < 1e-9, "{back:?}");
    }

    /// Found by the `structure_files` fuzz target: a tiny cell written as a zero box.
    #[test]
    fn a_cell_too_small_for_the_box_line_is_refused_in_words() {
        let s = Structure {
            elements: vec![8],
            positions: vec![0.0; 3],
            cell: Some([1e-5, 0.0, 0.0, 0.0, 1e-5, 0.0, 0.0, 0.0, 2e-5]),
            ..Structure::default()
        };
        let e = write(&s, "t").unwrap_err();
        assert!(e.contains("too small for a GROMACS .gro box line"), "{e}");
    }

    #[test]
    fn a_turned_cell_is_refused_in_words() {
        let s = Structure {
            elements: vec![8],
            positions: vec![0.0; 3],
            cell: Some([10.0, 1.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 10.0]),
            ..Structure::default()
        };
        assert!(write(&s, "")
            .unwrap_err()
            .starts_with("GROMACS needs the cell's first vector along x"));
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            read("t\nx\n").unwrap_err(),
            "line 2: the atom count \"x\" is not a number"
        );
        assert_eq!(
            read("t\n1\n").unwrap_err(),
            "line 3: missing; the file lists no atoms"
        );
        let no_box = "t\n1\n    1SOL     OW    1   0.126   1.624   1.679\n";
        assert_eq!(read(no_box).unwrap_err(), "line 4: the box line is missing");
    }
}
