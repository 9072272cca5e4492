//! The demo page's Open and Save of structure files: the format chosen by the file name's
//! extension, read and written by the chemistry layer (extended XYZ [`crate::chem::xyz`], PDB
//! [`crate::chem::pdb`], mol / SD [`crate::chem::mol_file`], GROMACS `.gro` [`crate::chem::gro`]),
//! and, to open, the page's own JSON (a §5.1 Structure, read by the contract's own reader). What
//! is opened or saved is checked as a §5.1 Structure (the rules are this layer's, hence the module
//! here and not in `chem`). Where a file lists no bonds they are perceived from distances
//! ([`crate::chem::bonds`]), and the outcome says so. Every error is one line.

use serde::Serialize;

use super::structure::Structure;
use crate::chem::read::Read;
use crate::chem::{bonds, gro, mol_file, pdb, xyz};
use crate::wire::text::one_line;

/// The formats the page saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Extended XYZ (`.xyz`), with the cell.
    Xyz,
    /// PDB (`.pdb`): cell, residues, bonds; at most 99 999 atoms.
    Pdb,
    /// MDL mol (`.mol`): V2000, or V3000 beyond 999 atoms or bonds; no cell.
    Mol,
    /// GROMACS (`.gro`): the box, no bonds.
    Gro,
}

impl Format {
    /// Every format the page saves, in the order it offers them.
    pub const ALL: [Format; 4] = [Format::Xyz, Format::Pdb, Format::Mol, Format::Gro];

    /// From the page's name for it (`"xyz"`, `"pdb"`, `"mol"`, `"gro"`).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.extension() == name)
    }

    /// The file name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Xyz => "xyz",
            Format::Pdb => "pdb",
            Format::Mol => "mol",
            Format::Gro => "gro",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Format::Xyz => "Extended XYZ (.xyz)",
            Format::Pdb => "PDB (.pdb)",
            Format::Mol => "mol (.mol)",
            Format::Gro => "GROMACS (.gro)",
        }
    }
}

/// A format as the page's Save menu shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveChoice {
    /// `"xyz"`, `"pdb"`, `"mol"` or `"gro"`.
    pub format: Format,
    /// What the menu says.
    pub label: String,
    /// Why this structure cannot be saved so (one line), else none.
    pub refusal: Option<String>,
    /// What the format leaves out of this structure (one line), else none.
    pub loses: Option<String>,
}

/// The Save menu for a structure of `n_atoms` atoms, with or without a cell and bonds.
pub fn save_choices(n_atoms: usize, has_cell: bool, has_bonds: bool) -> Vec<SaveChoice> {
    Format::ALL
        .into_iter()
        .map(|format| {
            let refusal = (format == Format::Pdb && n_atoms > pdb::MAX_ATOMS).then(|| {
                format!("A PDB file holds at most 99 999 atoms and this structure has {n_atoms}: save it as extended XYZ, mol or GROMACS .gro instead.")
            });
            let loses = match format {
                Format::Mol if has_cell => Some("a mol file has no cell: the cell is not saved"),
                Format::Xyz | Format::Gro if has_bonds => {
                    Some("the file has no bonds: they are found again from distances when it is opened")
                }
                _ => None,
            };
            SaveChoice {
                format,
                label: format.label().to_string(),
                refusal,
                loses: loses.map(str::to_string),
            }
        })
        .collect()
}

/// Writes `s` as `format`, titled `title` (one line, e.g. the document's name). `s` is checked
/// as a §5.1 Structure first.
pub fn write_structure(s: &Structure, format: Format, title: &str) -> Result<String, String> {
    s.validate()?;
    if s.n_atoms() == 0 {
        return Err("There are no atoms to save.".to_string());
    }
    let title = one_line(title);
    match format {
        Format::Xyz => Ok(xyz::write(&s.elements, &s.positions, s.cell.as_ref())),
        Format::Pdb => pdb::write(s, &title),
        Format::Gro => gro::write(s, &title),
        Format::Mol => Ok(mol_file::write(s, &title)),
    }
}

/// A file the page opened.
#[derive(Debug)]
pub struct Opened {
    /// The atoms, checked as a §5.1 Structure.
    pub structure: Structure,
    /// The format's name (`"xyz"`, `"pdb"`, `"mol"`, `"gro"`, `"json"`).
    pub format: &'static str,
    /// The file's title line, if any.
    pub title: String,
    /// What the page says beside the file (bonds found from distances, frames passed over).
    pub notes: Vec<String>,
}

/// What the page says of a file it does not read.
const NOT_READ: &str = "is not a structure file this page reads: open extended XYZ (.xyz), PDB (.pdb), mol or SD (.mol, .sdf), GROMACS (.gro) or the page's own JSON (.json)";

/// Reads a structure file named `file_name` (the extension chooses the format). Errors are one
/// line starting with the file's name.
pub fn read_structure(file_name: &str, text: &str) -> Result<Opened, String> {
    let shown = one_line(file_name);
    let extension = file_name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let (format, read) = match extension.as_str() {
        "xyz" | "extxyz" => ("xyz", xyz::read(text)),
        "pdb" | "ent" => ("pdb", pdb::read(text)),
        "mol" | "sdf" | "sd" | "mdl" => ("mol", mol_file::read(text)),
        "gro" => ("gro", gro::read(text)),
        "json" => ("json", read_json(text)),
        _ => return Err(format!("{shown} {NOT_READ}.")),
    };
    let mut read = read.map_err(|e| format!("{shown}: {}", one_line(&e)))?;
    let mut notes: Vec<String> = read.note.take().into_iter().collect();
    let s = &mut read.structure;
    if !read.bonds_listed && s.bonds.is_empty() && s.n_atoms() > 1 {
        s.bonds = bonds::perceive(&s.elements, &s.positions);
        notes.push(format!("{} {}.", s.bonds.len(), bonds::RULE));
    }
    s.validate().map_err(|e| format!("{shown}: {e}"))?;
    Ok(Opened {
        structure: read.structure,
        format,
        title: one_line(&read.title),
        notes,
    })
}

/// The page's own JSON: a §5.1 Structure (read by the same reader as a result's, so the package
/// carries no second one).
fn read_json(text: &str) -> Result<Read, String> {
    let structure: Structure = serde_json::from_slice(text.as_bytes())
        .map_err(|e| format!("not a structure (elements, positions, cell, bonds): {e}"))?;
    Ok(Read {
        bonds_listed: true,
        structure,
        ..Read::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_files_and_bad_content_are_one_line_errors() {
        let e = read_structure("notes.txt", "hello").unwrap_err();
        assert!(
            e.starts_with("notes.txt is not a structure file this page reads"),
            "{e}"
        );
        let e = read_structure("a.json", "{\"elements\": 3}").unwrap_err();
        assert!(e.starts_with("a.json: not a structure"), "{e}");
        let e = read_structure("w.xyz", "{\"elements\": []}").unwrap_err();
        assert!(e.starts_with("w.xyz: line 1: the atom count"), "{e}");
        let e = read_structure("two\nlines.xyz", "x").unwrap_err();
        assert!(!e.contains('\n'));
    }

    #[test]
    fn bonds_are_perceived_where_a_file_has_none_and_the_page_is_told() {
        let o = read_structure(
            "w.xyz",
            "3\n\nO 0 0 0.1173\nH 0 0.7572 -0.4692\nH 0 -0.7572 -0.4692\n",
        )
        .unwrap();
        assert_eq!(o.structure.bonds, vec![[0, 1], [0, 2]]);
        assert_eq!(o.notes.len(), 1);
        assert!(
            o.notes[0].starts_with("2 bonds found from distances"),
            "{:?}",
            o.notes
        );
    }

    #[test]
    fn sd_files_give_their_first_molecule() {
        let water = "water\n  megane\n\n  3  2  0  0  0  0  0  0  0  0999 V2000\n    0.0000    0.0000    0.1173 O   0  0\n    0.0000    0.7572   -0.4692 H   0  0\n    0.0000   -0.7572   -0.4692 H   0  0\n  1  2  1  0\n  1  3  1  0\nM  END\n";
        let text = format!("{water}> <ID>\n1\n\n$$$$\n{water}$$$$\n");
        let o = read_structure("two.sdf", &text).unwrap();
        assert_eq!(o.structure.n_atoms(), 3);
        assert_eq!(
            o.notes,
            ["The file holds 2 molecules; the first was opened."]
        );
        assert_eq!(o.title, "water");
    }

    #[test]
    fn the_save_menu_refuses_pdb_beyond_99_999_atoms_and_says_what_is_lost() {
        let menu = save_choices(100_000, true, true);
        let pdb = menu.iter().find(|c| c.format == Format::Pdb).unwrap();
        assert!(pdb
            .refusal
            .as_deref()
            .unwrap()
            .contains("at most 99 999 atoms"));
        assert!(menu
            .iter()
            .filter(|c| c.format != Format::Pdb)
            .all(|c| c.refusal.is_none()));
        let mol = menu.iter().find(|c| c.format == Format::Mol).unwrap();
        assert_eq!(
            mol.loses.as_deref(),
            Some("a mol file has no cell: the cell is not saved")
        );
        assert!(save_choices(99_999, false, false)
            .iter()
            .all(|c| c.refusal.is_none() && c.loses.is_none()));
    }

    #[test]
    fn mol_switches_to_v3000_beyond_999_atoms() {
        let n = 1000;
        let s = Structure {
            elements: vec![6; n],
            positions: (0..3 * n)
                .map(|k| (k / 3) as f64 * 1.5 * f64::from((k % 3 == 0) as u8))
                .collect(),
            bonds: (0..n as u32 - 1).map(|i| [i, i + 1]).collect(),
            ..Structure::default()
        };
        let text = write_structure(&s, Format::Mol, "chain").unwrap();
        assert!(text.lines().nth(3).unwrap().ends_with("V3000"));
        let back = read_structure("chain.mol", &text).unwrap().structure;
        assert_eq!(back.bonds, s.bonds);
        let small = Structure {
            elements: vec![6; 2],
            positions: vec![0.0, 0.0, 0.0, 1.5, 0.0, 0.0],
            bonds: vec![[0, 1]],
            ..Structure::default()
        };
        assert!(write_structure(&small, Format::Mol, "")
            .unwrap()
            .lines()
            .nth(3)
            .unwrap()
            .ends_with("V2000"));
    }
}
