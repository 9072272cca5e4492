//! §5/§5.1: the result of a Builder tool and its one check (the contract, §5.1, the name
//! fallback), and the §9 byte cap every reading path applies first.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::contract::marker::{Marker, SUPPORTED_CONTRACTS};
use crate::contract::structure::Structure;
use crate::wire::caps::MAX_RESULT_BYTES;

/// §5: the name used when a result's `name` is missing or blank.
pub const FALLBACK_NAME: &str = "result";

/// §9: limits applied before and while parsing a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultLimits {
    /// Largest response body accepted, in bytes, checked before parsing. The default is
    /// [`MAX_RESULT_BYTES`].
    pub max_bytes: usize,
}

impl Default for ResultLimits {
    fn default() -> Self {
        ResultLimits {
            max_bytes: MAX_RESULT_BYTES,
        }
    }
}

/// §5: a validated BuilderResult.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuilderResult {
    /// Contract version; equal to the tool's marker after [`check_builder_result`].
    pub contract: u64,
    /// Suggested document / fragment name; never blank after checking (fallback `result`).
    pub name: String,
    /// The atoms (§5.1).
    pub structure: Structure,
    /// Non-fatal problems to show after the summary (non-string entries dropped).
    pub warnings: Vec<String>,
    /// Software versions and seed, strings and numbers only (§7), in the server's order.
    pub provenance: Map<String, Value>,
}

/// §5/§5.1: a [`BuilderResult`] that passed the one result check (`check_result`: the contract,
/// [`Structure::validate`], the name fallback) and has not changed since: read-only ([`Deref`]
/// only), and made only by that check ([`check_builder_result`], [`read_builder_result`], every
/// `interpret_*`). [`plan_apply_checked`] takes it and does not validate §5.1 again, so §5.1 runs
/// once on every path from a call to a plan; a host cannot hand it an unchecked structure.
///
/// ```compile_fail
/// use megane_builder_client::contract::result::{BuilderResult, CheckedResult};
/// fn forge(result: BuilderResult) -> CheckedResult {
///     CheckedResult(result) // the field is private: only the checks make one
/// }
/// ```
///
/// [`Structure::validate`]: crate::contract::structure::Structure::validate
/// [`plan_apply_checked`]: crate::contract::apply::plan_apply_checked
/// [`read_builder_result`]: super::read_builder_result
/// [`Deref`]: std::ops::Deref
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct CheckedResult(BuilderResult);

impl std::ops::Deref for CheckedResult {
    type Target = BuilderResult;
    fn deref(&self) -> &BuilderResult {
        &self.0
    }
}

impl CheckedResult {
    /// The result, no longer marked checked (a change to it needs the check again).
    pub fn into_inner(self) -> BuilderResult {
        self.0
    }
}

/// The outcome of a successful call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Interpreted {
    /// The validated result.
    pub result: CheckedResult,
    /// The text content items joined with newlines: plain text, never markup.
    pub summary: String,
    /// The result's warnings, for the notice line.
    pub warnings: Vec<String>,
}

/// §5/§5.1: checks a parsed BuilderResult against the tool's marker and the Structure rules,
/// and applies the name fallback.
pub fn check_builder_result(
    marker: &Marker,
    result: BuilderResult,
) -> Result<CheckedResult, String> {
    check_result(Some(marker.contract), result)
}

/// §5: the one check of a result's `contract`: it must be the tool's (`Some`, from its marker),
/// or (`None`, the tool unknown) one this client supports.
pub fn check_contract(expected: Option<u64>, result_contract: u64) -> Result<(), String> {
    match expected {
        Some(expected) if result_contract != expected => Err(format!(
            "contract: the result is for contract {result_contract}, but the tool declared contract {expected}"
        )),
        None if !SUPPORTED_CONTRACTS.contains(&result_contract) => Err(format!(
            "contract: the result is for contract {result_contract}, which this client does not support"
        )),
        _ => Ok(()),
    }
}

/// [`check_builder_result`] against the tool's contract, or (`None`) any supported contract.
pub(super) fn check_result(
    contract: Option<u64>,
    mut result: BuilderResult,
) -> Result<CheckedResult, String> {
    check_contract(contract, result.contract)?;
    result.structure.validate()?;
    if result.name.trim().is_empty() {
        result.name = FALLBACK_NAME.to_string();
    }
    Ok(CheckedResult(result))
}

/// §9/§5.1: the one byte cap on a result, checked before parsing on every path.
pub fn check_result_size(len: usize, limits: &ResultLimits) -> Result<(), String> {
    if len > limits.max_bytes {
        return Err(format!(
            "result: {len} bytes is more than the {} bytes Builder accepts",
            limits.max_bytes
        ));
    }
    Ok(())
}
