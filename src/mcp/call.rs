//! Tool-call rules: turning `notifications/progress` into `(fraction, message)`. The §6 timeout
//! lives in `wire::timing` (one rule for remote and offline calls).

use serde_json::Value;

/// Timeout of requests other than `tools/call` (initialize, tools/list, ping, DELETE).
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 60_000;

/// A progress report for the host.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// `progress / total` in [0, 1] when the server gave a positive total, else `None`.
    pub fraction: Option<f64>,
    /// The server's message, if any (untrusted text).
    pub message: Option<String>,
}

/// Reads `notifications/progress` params: the token and the update. `None` when malformed.
pub fn parse_progress(params: &Value) -> Option<(Value, ProgressUpdate)> {
    let token = params.get("progressToken")?.clone();
    let progress = params.get("progress").and_then(Value::as_f64);
    let total = params.get("total").and_then(Value::as_f64);
    let fraction = match (progress, total) {
        (Some(p), Some(t)) if t > 0.0 && p.is_finite() && t.is_finite() => {
            Some((p / t).clamp(0.0, 1.0))
        }
        _ => None,
    };
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string);
    Some((token, ProgressUpdate { fraction, message }))
}
