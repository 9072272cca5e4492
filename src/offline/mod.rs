//! The in-page offline tools `liquid_box`, `polymer_chain` and `solvate`, served under the Builder
//! Tool Contract like a remote server's: the same `tools/list` shape (§12.1–§12.3), arguments checked against
//! their own `inputSchema`, and answers as MCP CallToolResults (a tool error is `isError`), so the
//! contract core's discovery, forms, result validation and apply plans handle them unchanged.

pub mod assemble;
pub mod definitions;
pub mod here;
pub mod judged;
pub mod liquid_box;
pub mod molecule;
pub mod pace;
pub mod packing;
pub mod polymer;
pub mod run;
pub mod solvate;
pub mod transfer;

use serde_json::Value;

use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use crate::contract::validate::{compiled, entry_argument_problems, Compiled};
use crate::pack::PackControl;

use assemble::report_writing;
use here::NOT_HERE;
pub use here::{Place, HERE_MAX_ATOMS};

/// `serverInfo` of the offline tools.
pub const SERVER_NAME: &str = "megane-builder-client (offline)";

/// Calls an offline tool: arguments are checked against the tool's own schema first, then the tool
/// runs. Always a CallToolResult JSON value; failures a user can fix are `isError` results.
pub fn call_tool(name: &str, arguments: &Value, control: &PackControl) -> Value {
    match run_tool(name, arguments, control, Place::Worker) {
        Ok(result) => result.to_value(),
        Err(message) => assemble::tool_error(&message),
    }
}

/// [`call_tool`] as the CallToolResult's JSON bytes, written straight from the typed result (no
/// JSON value tree of the structure is built; the Worker hands [`call_tool_transfer`] instead).
/// A successful result reports progress "writing N atoms" (fraction 1, [`assemble::report_writing`]) every few
/// MB of the writing passes and between them; the packing tools also report it before assembling
/// the structure.
pub fn call_tool_bytes(name: &str, arguments: &Value, control: &PackControl) -> Vec<u8> {
    match run_tool(name, arguments, control, Place::Worker) {
        Ok(result) => {
            // Writing a large result is a phase of its own: said again during its passes.
            let atoms = result.structure.n_atoms();
            result.to_bytes_with(&|| report_writing(control, atoms))
        }
        Err(message) => serde_json::to_vec(&assemble::tool_error(&message)).unwrap_or_default(),
    }
}

/// [`call_tool`] as the offline Worker hands it to the page ([`transfer`]: a successful result's
/// typed parts with the Structure's arrays as binary, a tool error as JSON). A successful result
/// reports "writing N atoms" once more here, before it is written (copying the arrays takes a
/// small part of writing them as JSON text).
pub fn call_tool_transfer(name: &str, arguments: &Value, control: &PackControl) -> Vec<u8> {
    transfer_of(run_tool(name, arguments, control, Place::Worker), control)
}

/// [`call_tool_transfer`] on the calling thread (the page's), for a small call: `None` when the
/// structure would exceed [`HERE_MAX_ATOMS`] atoms (declined before packing, and a solvate
/// before its free volume) or when the call was cancelled through `control` (the caller's
/// deadline, [`here::HERE_MAX_MS`]); the caller then runs it in the Worker. Otherwise the same
/// bytes as [`call_tool_transfer`], tool errors included.
pub fn call_tool_here(name: &str, arguments: &Value, control: &PackControl) -> Option<Vec<u8>> {
    let outcome = run_tool(name, arguments, control, Place::Here);
    let cancelled = control.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    match outcome {
        Err(message) if message == NOT_HERE => None,
        Err(_) if cancelled => None,
        outcome => Some(transfer_of(outcome, control)),
    }
}

/// A tool's outcome as the transfer to the page (a result after the "writing" report).
fn transfer_of(outcome: Result<assemble::ToolResult, String>, control: &PackControl) -> Vec<u8> {
    match outcome {
        Ok(result) => {
            report_writing(control, result.structure.n_atoms());
            result.to_transfer()
        }
        Err(message) => transfer::encode_json(
            &serde_json::to_vec(&assemble::tool_error(&message)).unwrap_or_default(),
        ),
    }
}

/// The schema entries (validator and form) of `liquid_box`, `solvate` and `polymer_chain`'s
/// `inputSchema`s, made on the first call and kept: a call neither rebuilds a definition nor
/// looks its schema up. Held here, they outlive the validator cache's least-recently-used drops.
fn tool_schemas() -> &'static (Compiled, Compiled, Compiled) {
    static SCHEMAS: OnceLock<(Compiled, Compiled, Compiled)> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let entry = |definition: Value| compiled(&definition["inputSchema"]);
        (
            entry(definitions::liquid_box()),
            entry(definitions::solvate()),
            entry(definitions::polymer_chain()),
        )
    })
}

/// Checks the arguments and runs the tool; `Err` is the one-line tool error.
fn run_tool(
    name: &str,
    arguments: &Value,
    control: &PackControl,
    place: Place,
) -> Result<assemble::ToolResult, String> {
    let entry = match name {
        "liquid_box" => &tool_schemas().0,
        "solvate" => &tool_schemas().1,
        "polymer_chain" => &tool_schemas().2,
        other => return Err(crate::contract::discovery::unknown_tool(other)),
    };
    if let Some(problem) = entry_argument_problems(entry, arguments).first() {
        return Err(problem.message.clone());
    }
    match name {
        "liquid_box" => liquid_box::run(arguments, control, place),
        "polymer_chain" => polymer::run(arguments, control, place),
        _ => solvate::run(arguments, control, place),
    }
}
