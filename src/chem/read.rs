//! What every structure file reader shares: the outcome it gives back ([`Read`]: the atoms as a
//! [`Structure`], the title, whether bonds were listed, a note) and how it reads a number field.

use super::structure::Structure;

/// What a format reader gives back.
#[derive(Debug, Default)]
pub struct Read {
    /// The atoms (and whatever channels the format has).
    pub structure: Structure,
    /// The file's own title line, if any.
    pub title: String,
    /// Whether the file listed its bonds (else the caller perceives them).
    pub bonds_listed: bool,
    /// Something the reader passed over that the user should know (more frames, molecules).
    pub note: Option<String>,
}

impl Read {
    pub fn with_capacity(n: usize) -> Read {
        let mut read = Read::default();
        read.structure.elements.reserve(n);
        read.structure.positions.reserve(3 * n);
        read
    }
}

/// A finite number from a field; else `line N: the <what> "<field>" is not a number`.
pub fn number(field: &str, what: &str, line_no: usize) -> Result<f64, String> {
    match field.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!(
            "line {line_no}: the {what} {:?} is not a number",
            field.trim().chars().take(24).collect::<String>()
        )),
    }
}
