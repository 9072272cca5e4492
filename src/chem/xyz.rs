//! Extended XYZ (the layout ASE and QUIP write), and plain XYZ, which is its subset.
//!
//! Line 1 the atom count, line 2 the comment line, then one line per atom. The comment line's
//! `key=value` pairs (values in double quotes when they hold spaces) give `Lattice="ax ay az bx by
//! bz cx cy cz"` (the cell's three vectors, Å) and `Properties=species:S:1:pos:R:3:…` (the
//! columns: name, type `S`/`R`/`I`/`L`, width); without `Properties`, the columns are the species
//! and the position. A species is an element symbol or an atomic number. Only the first frame of
//! a file is read. XYZ has no bonds: the reader's caller perceives them.
//!
//! The writer writes `Lattice` when there is a cell, `Properties=species:S:1:pos:R:3`, `pbc`, and
//! positions with 8 decimals.

use super::elements;
use super::read::{number, Read};

/// Reads the first frame of an (extended) XYZ text. Errors are one line naming the line.
pub fn read(text: &str) -> Result<Read, String> {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").trim();
    let n: usize = first
        .parse()
        .map_err(|_| format!("line 1: the atom count {:?} is not a number", cut(first)))?;
    let comment = lines
        .next()
        .ok_or("line 2: missing; the file ends too early")?;
    let pairs = key_values(comment);
    let value = |key: &str| {
        pairs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    };
    let cell = match value("Lattice") {
        None => None,
        Some(lattice) => {
            let numbers: Vec<f64> = lattice
                .split_whitespace()
                .map(|x| number(x, "a Lattice entry", 2))
                .collect::<Result<_, _>>()?;
            let cell: [f64; 9] = numbers
                .try_into()
                .map_err(|_| "line 2: Lattice needs 9 numbers (three cell vectors)".to_string())?;
            Some(cell)
        }
    };
    let (species_at, pos_at) = columns(value("Properties").unwrap_or("species:S:1:pos:R:3"))?;
    // Reserved for at most the atoms the text can hold: a count is only a claim.
    let mut read = Read::with_capacity(n.min(text.len() / 8));
    read.structure.cell = cell;
    if pairs.is_empty() {
        read.title = comment.trim().to_string();
    }
    for i in 0..n {
        let line_no = i + 3;
        let line = lines
            .next()
            .ok_or_else(|| format!("line {line_no}: missing; the file lists {n} atoms"))?;
        let fields: Vec<&str> = line.split_whitespace().collect();
        let field = |k: usize| {
            fields
                .get(k)
                .copied()
                .ok_or_else(|| format!("line {line_no}: too few columns for an atom"))
        };
        let species = field(species_at)?;
        let z = species
            .parse::<u8>()
            .ok()
            .filter(|z| elements::symbol(*z).is_some())
            .or_else(|| elements::atomic_number(species))
            .ok_or_else(|| format!("line {line_no}: {:?} is not an element", cut(species)))?;
        read.structure.elements.push(z);
        for k in 0..3 {
            let v = number(field(pos_at + k)?, "a coordinate", line_no)?;
            read.structure.positions.push(v);
        }
    }
    Ok(read)
}

/// The first 24 characters of a field, for a message.
fn cut(s: &str) -> String {
    s.chars().take(24).collect()
}

/// The comment line's `key=value` pairs; a value may be in double quotes (with spaces inside).
fn key_values(line: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut rest = line.trim();
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq]
            .split_whitespace()
            .last()
            .unwrap_or("")
            .to_string();
        let after = &rest[eq + 1..];
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => (quoted, ""),
            }
        } else {
            let end = after.find(char::is_whitespace).unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if !key.is_empty() {
            pairs.push((key, value.to_string()));
        }
        rest = next.trim_start();
    }
    pairs
}

/// The column of the species and of the first position coordinate, from `Properties`.
fn columns(properties: &str) -> Result<(usize, usize), String> {
    let parts: Vec<&str> = properties.split(':').collect();
    let (mut at, mut species, mut pos) = (0, None, None);
    for triple in parts.chunks(3) {
        let [name, _, width] = triple else {
            return Err("line 2: Properties is not name:type:width triples".to_string());
        };
        let width: usize = width
            .parse()
            .map_err(|_| format!("line 2: Properties width {:?} is not a number", cut(width)))?;
        match name.to_ascii_lowercase().as_str() {
            "species" | "element" | "symbols" => species = Some(at),
            "pos" | "positions" => pos = Some(at),
            _ => {}
        }
        at += width;
    }
    match (species, pos) {
        (Some(s), Some(p)) => Ok((s, p)),
        _ => Err("line 2: Properties names no species and pos columns".to_string()),
    }
}

/// Writes `elements` at `positions` (Å) with `cell` as extended XYZ.
pub fn write(elements: &[u8], positions: &[f64], cell: Option<&[f64; 9]>) -> String {
    let mut out = String::with_capacity(48 * elements.len() + 160);
    out.push_str(&format!("{}\n", elements.len()));
    if let Some(c) = cell {
        let shown: Vec<String> = c.iter().map(|v| format!("{v:.8}")).collect();
        out.push_str(&format!("Lattice=\"{}\" ", shown.join(" ")));
    }
    let pbc = if cell.is_some() { "T T T" } else { "F F F" };
    out.push_str(&format!("Properties=species:S:1:pos:R:3 pbc=\"{pbc}\"\n"));
    for (z, p) in elements.iter().zip(positions.chunks_exact(3)) {
        let s = elements::symbol(*z).unwrap_or("X");
        out.push_str(&format!(
            "{s:<2} {:>16.8} {:>16.8} {:>16.8}\n",
            p[0], p[1], p[2]
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ase_style_extended_xyz() {
        let text = "3\nLattice=\"10.0 0.0 0.0 0.0 11.0 0.0 0.0 0.0 12.0\" Properties=species:S:1:pos:R:3:forces:R:3 energy=-1.5 pbc=\"T T T\"\nO 0 0 0.1173 1 2 3\nH 0 0.7572 -0.4692 0 0 0\nH 0 -0.7572 -0.4692 0 0 0\n";
        let r = read(text).unwrap();
        assert_eq!(r.structure.elements, vec![8, 1, 1]);
        assert_eq!(r.structure.positions[4], 0.7572);
        assert_eq!(r.structure.cell.unwrap()[4], 11.0);
    }

    #[test]
    fn species_after_other_columns_and_atomic_numbers() {
        let text = "1\nProperties=id:I:1:pos:R:3:species:S:1\n7 1.0 2.0 3.0 8\n";
        let r = read(text).unwrap();
        assert_eq!(r.structure.elements, vec![8]);
        assert_eq!(r.structure.positions, vec![1.0, 2.0, 3.0]);
    }

    #[test]
    fn plain_xyz_keeps_its_comment_as_the_title() {
        let r = read("1\nmethane carbon\nC 0 0 0\n").unwrap();
        assert_eq!(r.title, "methane carbon");
        assert_eq!(r.structure.cell, None);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            read("x\n").unwrap_err(),
            "line 1: the atom count \"x\" is not a number"
        );
        assert_eq!(
            read("2\n\nC 0 0 0\n").unwrap_err(),
            "line 4: missing; the file lists 2 atoms"
        );
        assert_eq!(
            read("1\n\nQq 0 0 0\n").unwrap_err(),
            "line 3: \"Qq\" is not an element"
        );
        assert!(read("1\n\nC 0 zero 0\n")
            .unwrap_err()
            .starts_with("line 3: "));
    }

    #[test]
    fn writes_what_it_reads() {
        let cell = [20.0, 0.0, 0.0, 0.0, 20.0, 0.0, 1.0, 0.0, 20.0];
        let text = write(&[8, 17], &[0.1, 0.2, 0.3, -1.5, 2.25, 3.125], Some(&cell));
        let r = read(&text).unwrap();
        assert_eq!(r.structure.elements, vec![8, 17]);
        assert_eq!(
            r.structure.positions,
            vec![0.1, 0.2, 0.3, -1.5, 2.25, 3.125]
        );
        assert_eq!(r.structure.cell, Some(cell));
    }
}
