//! How a chain build ends without a chain: the caller's cancel, or a reason in one line (the
//! tool puts its own words on a cancel, as every offline tool does).

/// Why no chain came: the caller cancelled it, or a one-line reason a chemist can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The caller's cancel flag was set.
    Cancelled,
    /// The walk or the relaxation could not finish: why, in one line.
    Failed(String),
}
