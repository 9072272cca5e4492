//! §6: a failed call's outcome as the JavaScript modules need it where they end a call
//! themselves (the offline tools' cancel, close and timeout; the `megane` entry's cancel), made by
//! the same function as the remote client's, in the words of the one message table
//! ([`crate::wire::messages`]).

use wasm_bindgen::prelude::*;

use super::connect::error_outcome;
use super::interop::{failure, set};
use crate::mcp::errors::McpError;
use crate::wire::messages::{limit_seconds, OFFLINE_CLOSED};

/// §6: `{ok: false, error, cancelled: true}` for `"cancelled"` (`Cancelled.`) and `"closed"` (the
/// offline tools closed under the call), `{ok: false, error, timedOut: true}` for `"timedOut"`
/// after a time limit of `limitMs` (shown in whole seconds, rounded up). Throws for another kind.
#[wasm_bindgen(js_name = callFailure, unchecked_return_type = "CallFailure")]
pub fn call_failure(
    #[wasm_bindgen(unchecked_param_type = "\"cancelled\" | \"closed\" | \"timedOut\"")] kind: &str,
    #[wasm_bindgen(js_name = limitMs)] limit_ms: Option<f64>,
) -> Result<JsValue, JsError> {
    Ok(match kind {
        "cancelled" => error_outcome(&McpError::Cancelled),
        "timedOut" => {
            let ms = limit_ms
                .filter(|ms| ms.is_finite() && *ms >= 0.0)
                .unwrap_or(0.0);
            error_outcome(&McpError::Timeout {
                seconds: limit_seconds(ms as u64),
            })
        }
        "closed" => {
            let outcome = failure(OFFLINE_CLOSED);
            set(outcome.unchecked_ref(), "cancelled", true);
            outcome
        }
        other => {
            return Err(JsError::new(&format!(
                "callFailure: unknown kind {other:?} (cancelled, closed or timedOut)"
            )))
        }
    })
}
