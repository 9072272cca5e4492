//! §3: the Builder marker `_meta["io.github.megane-labs/builder"]` on a tool definition.

use serde::{Deserialize, Serialize};

/// The `_meta` key that makes a tool a Builder button (§3).
pub const MARKER_KEY: &str = "io.github.megane-labs/builder";

/// Contract versions this client supports (§11).
pub const SUPPORTED_CONTRACTS: &[u64] = &[1];

/// §3 `category`: the Tools-menu group. Unknown values map to `Other` (§11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Bulk,
    Molecule,
    Polymer,
    Surface,
    Solvation,
    Other,
}

/// §3/§5.2 `apply`: how a result enters the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Apply {
    /// The result opens as a new document.
    NewDocument,
    /// The result's atoms are added to the open document as one `add_fragment` op.
    Insert,
}

/// §3/§4.3 `document`: whether the tool receives the open document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocumentUse {
    None,
    Optional,
    Required,
}

/// A well-formed §3 marker of a supported contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Marker {
    /// Contract version (§11); always one of [`SUPPORTED_CONTRACTS`] here.
    pub contract: u64,
    pub category: Category,
    pub apply: Apply,
    pub document: DocumentUse,
    /// The result depends on a random seed (§4.4).
    pub stochastic: bool,
    /// Typical run time in seconds, when the server states it (§6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_seconds: Option<f64>,
}
