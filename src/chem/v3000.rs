//! V3000 (extended) mol blocks, for molecules beyond V2000's 999 atoms or bonds.
//!
//! Layout (CTfile V3000): the three header lines, a counts line `0  0 … V3000`, then `M  V30`
//! lines: `BEGIN CTAB`, `COUNTS na nb …`, the atom block (`index type x y z aamap [CHG=c] …`),
//! the bond block (`index type atom1 atom2 …`), `END CTAB`, and `M  END`. A line ending in `-`
//! continues on the next. Reader rules as for V2000 ([`super::molblock`]): only bond types 1–4,
//! `D`/`T` read as hydrogen; collections, S-groups and the rest are passed over.

use super::elements;
use super::molblock::{Dimension, Molecule};

/// Reads a V3000 mol block. Errors are one line naming the line.
pub fn read(text: &str) -> Result<Molecule, String> {
    let raw: Vec<&str> = text.lines().collect();
    let name: String = raw
        .first()
        .map(|l| l.trim())
        .unwrap_or("")
        .chars()
        .take(80)
        .collect();
    let dimension = match raw
        .get(1)
        .map(|l| l.chars().skip(20).take(2).collect::<String>())
    {
        Some(code) if code == "2D" => Dimension::TwoD,
        _ => Dimension::ThreeD,
    };
    // The `M  V30` lines after the counts line, continuations joined, with their line numbers.
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut joining = false;
    for (k, line) in raw.iter().enumerate().skip(4) {
        if line.starts_with("M  END") {
            break;
        }
        let Some(body) = line.strip_prefix("M  V30 ") else {
            continue;
        };
        let (body, more) = match body.trim_end().strip_suffix('-') {
            Some(cut) => (cut, true),
            None => (body.trim_end(), false),
        };
        match (joining, lines.last_mut()) {
            (true, Some((_, last))) => last.push_str(body),
            _ => lines.push((k + 1, body.to_string())),
        }
        joining = more;
    }
    let mut molecule = Molecule {
        name,
        elements: Vec::new(),
        positions: Vec::new(),
        bonds: Vec::new(),
        bond_orders: Vec::new(),
        formal_charges: Vec::new(),
        dimension,
    };
    let mut block = "";
    for (line_no, line) in &lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["BEGIN", what, ..] => block = what,
            ["END", ..] => block = "",
            _ if block == "ATOM" => read_atom(&fields, *line_no, &mut molecule)?,
            _ if block == "BOND" => read_bond(&fields, *line_no, &mut molecule)?,
            _ => {}
        }
    }
    if molecule.elements.is_empty() {
        return Err("the V3000 mol block has no atom block".to_string());
    }
    Ok(molecule)
}

fn read_atom(fields: &[&str], line_no: usize, m: &mut Molecule) -> Result<(), String> {
    let [_, symbol, x, y, z, ..] = fields else {
        return Err(format!(
            "line {line_no}: an atom needs an index, a type and x, y, z"
        ));
    };
    let atomic = match *symbol {
        "D" | "T" => Some(1),
        s => elements::atomic_number(s),
    };
    let atomic =
        atomic.ok_or_else(|| format!("line {line_no}: {symbol:?} is not an element symbol"))?;
    let mut position = [0.0; 3];
    for (k, v) in [x, y, z].into_iter().enumerate() {
        position[k] = v
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("line {line_no}: the coordinate {v:?} is not a number"))?;
    }
    let charge = fields
        .iter()
        .find_map(|f| f.strip_prefix("CHG="))
        .map(|c| c.parse::<i8>().ok().filter(|c| (-15..=15).contains(c)))
        .unwrap_or(Some(0))
        .ok_or_else(|| format!("line {line_no}: the charge is not a number from -15 to 15"))?;
    m.elements.push(atomic);
    m.positions.push(position);
    m.formal_charges.push(charge);
    Ok(())
}

fn read_bond(fields: &[&str], line_no: usize, m: &mut Molecule) -> Result<(), String> {
    let [_, order, a, b, ..] = fields else {
        return Err(format!(
            "line {line_no}: a bond needs an index, a type and two atoms"
        ));
    };
    let order = order
        .parse::<u8>()
        .ok()
        .filter(|o| (1..=4).contains(o))
        .ok_or_else(|| format!("line {line_no}: bond type {order:?} is not 1, 2, 3 or 4"))?;
    let n = m.elements.len();
    let atom = |s: &str| {
        s.parse::<usize>()
            .ok()
            .filter(|a| (1..=n).contains(a))
            .map(|a| (a - 1) as u32)
            .ok_or_else(|| format!("line {line_no}: bond atom {s:?} is not an atom number 1–{n}"))
    };
    let (a, b) = (atom(a)?, atom(b)?);
    if a == b {
        return Err(format!(
            "line {line_no}: a bond joins atom {} to itself",
            a + 1
        ));
    }
    m.bonds.push((a, b));
    m.bond_orders.push(order);
    Ok(())
}

/// Writes `m` (atoms with element symbols, bonds in range) as a V3000 mol block.
pub fn write(m: &Molecule) -> String {
    let mut out = String::with_capacity(64 * (m.elements.len() + m.bonds.len()) + 200);
    let name: String = m
        .name
        .chars()
        .filter(|c| !c.is_control())
        .take(80)
        .collect();
    let code = if m.dimension == Dimension::TwoD {
        "2D"
    } else {
        "3D"
    };
    out.push_str(&format!("{name}\n  {:<8}{:10}{code}\n\n", "megane", ""));
    out.push_str("  0  0  0     0  0            999 V3000\nM  V30 BEGIN CTAB\n");
    out.push_str(&format!(
        "M  V30 COUNTS {} {} 0 0 0\nM  V30 BEGIN ATOM\n",
        m.elements.len(),
        m.bonds.len()
    ));
    for (i, (z, p)) in m.elements.iter().zip(&m.positions).enumerate() {
        let symbol = elements::symbol(*z).unwrap_or("*");
        out.push_str(&format!(
            "M  V30 {} {symbol} {:.4} {:.4} {:.4} 0",
            i + 1,
            p[0],
            p[1],
            p[2]
        ));
        match m.formal_charges.get(i) {
            Some(&c) if c != 0 => out.push_str(&format!(" CHG={c}\n")),
            _ => out.push('\n'),
        }
    }
    out.push_str("M  V30 END ATOM\n");
    if !m.bonds.is_empty() {
        out.push_str("M  V30 BEGIN BOND\n");
        for (k, &(a, b)) in m.bonds.iter().enumerate() {
            let order = m.bond_orders.get(k).copied().unwrap_or(1);
            out.push_str(&format!("M  V30 {} {order} {} {}\n", k + 1, a + 1, b + 1));
        }
        out.push_str("M  V30 END BOND\n");
    }
    out.push_str("M  V30 END CTAB\nM  END\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ethanol_like() -> Molecule {
        Molecule {
            name: "x".into(),
            elements: vec![6, 8, 1],
            positions: vec![[0.0, 0.0, 0.0], [1.43, 0.0, 0.0], [1.8, 0.9, -0.1234]],
            bonds: vec![(0, 1), (1, 2)],
            bond_orders: vec![1, 2],
            formal_charges: vec![0, -1, 0],
            dimension: Dimension::ThreeD,
        }
    }

    #[test]
    fn writes_and_reads_back() {
        let m = ethanol_like();
        let text = write(&m);
        assert!(text.lines().nth(3).unwrap().ends_with("V3000"));
        assert!(text.contains("M  V30 2 O 1.4300 0.0000 0.0000 0 CHG=-1\n"));
        assert_eq!(read(&text).unwrap(), m);
    }

    #[test]
    fn continuation_lines_are_joined() {
        let text = "x\n\n\n  0  0  0     0  0            999 V3000\nM  V30 BEGIN CTAB\nM  V30 COUNTS 1 0 0 0 0\nM  V30 BEGIN ATOM\nM  V30 1 C 1.0 2.0 -\nM  V30 3.0 0 CHG=1\nM  V30 END ATOM\nM  V30 END CTAB\nM  END\n";
        let m = read(text).unwrap();
        assert_eq!(m.positions, vec![[1.0, 2.0, 3.0]]);
        assert_eq!(m.formal_charges, vec![1]);
    }

    #[test]
    fn errors_name_the_line() {
        let text = "x\n\n\n  0  0  0     0  0            999 V3000\nM  V30 BEGIN CTAB\nM  V30 BEGIN ATOM\nM  V30 1 Qq 1 2 3 0\nM  V30 END ATOM\nM  END\n";
        assert_eq!(
            read(text).unwrap_err(),
            "line 7: \"Qq\" is not an element symbol"
        );
        assert_eq!(
            read("x\n\n\n  0  0 V3000\nM  END\n").unwrap_err(),
            "the V3000 mol block has no atom block"
        );
    }
}
