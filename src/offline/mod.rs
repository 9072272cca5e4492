//! The in-page offline tools `liquid_box` and `solvate`, served under the Builder Tool Contract
//! like a remote server's: the same `tools/list` shape (§12.1, §12.3), arguments checked against
//! their own `inputSchema`, and answers as MCP CallToolResults (a tool error is `isError`), so the
//! contract core's discovery, forms, result validation and apply plans handle them unchanged.

pub mod assemble;
pub mod definitions;
pub mod liquid_box;
pub mod molecule;
pub mod solvate;

use serde_json::Value;

use crate::contract::discovery::form_for;
use crate::contract::validate::validate_arguments;
use crate::pack::{PackControl, PackError, PackOutcome};

/// `serverInfo` of the offline tools.
pub const SERVER_NAME: &str = "megane-builder-client (offline)";

/// The packer's iteration budget for an offline call.
pub const MAX_ITERATIONS: usize = 20_000;

/// Calls an offline tool: arguments are checked against the tool's own schema first, then the tool
/// runs. Always a CallToolResult JSON value; failures a user can fix are `isError` results.
pub fn call_tool(name: &str, arguments: &Value, control: &PackControl) -> Value {
    let definition = match name {
        "liquid_box" => definitions::liquid_box(),
        "solvate" => definitions::solvate(),
        other => return assemble::tool_error(&format!("Unknown tool: {other}")),
    };
    let schema = &definition["inputSchema"];
    let form = form_for(schema).ok();
    if let Some(problem) = validate_arguments(schema, form.as_ref(), arguments).first() {
        return assemble::tool_error(&problem.message);
    }
    let outcome = match name {
        "liquid_box" => liquid_box::run(arguments, control),
        _ => solvate::run(arguments, control),
    };
    outcome.unwrap_or_else(|message| assemble::tool_error(&message))
}

/// A number argument, or its default when absent.
fn number_or(args: &Value, key: &str, default: f64) -> f64 {
    args.get(key).and_then(Value::as_f64).unwrap_or(default)
}

/// A packing refusal in words that say what to change.
fn pack_error_message(error: &PackError) -> String {
    match error {
        PackError::Infeasible(m) => format!("These molecules cannot be packed this densely: {m}"),
        PackError::InvalidInput(m) | PackError::TooLarge(m) => format!("Cannot pack: {m}"),
    }
}

/// The packer's warnings plus an honest one when the tolerance was not met.
fn outcome_warnings(outcome: &PackOutcome, tolerance: f64) -> Vec<String> {
    let mut warnings = outcome.warnings.clone();
    if !outcome.converged && !warnings.iter().any(|w| w.contains("minimum distance")) {
        warnings.push(format!(
            "The packer reached its budget; minimum distance {:.2} Å < tolerance {tolerance} Å ({} pairs too close).",
            outcome.min_distance, outcome.offending_pairs
        ));
    }
    warnings
}
