//! Tool-call rules: the contract §6 timeout, and turning `notifications/progress` into
//! `(fraction, message)`.

use serde_json::Value;

/// The shortest call timeout (contract §6), in milliseconds.
pub const MIN_CALL_TIMEOUT_MS: u64 = 60_000;
/// The longest call timeout, and the cap that progress never extends past (contract §6).
pub const MAX_CALL_TIMEOUT_MS: u64 = 30 * 60_000;
/// Timeout of requests other than `tools/call` (initialize, tools/list, ping, DELETE).
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 60_000;

/// max(60 s, 5 × expectedSeconds), at most 30 minutes; an explicit `timeout_ms` wins but is capped too.
pub fn call_timeout_ms(expected_seconds: Option<f64>, timeout_ms: Option<u64>) -> u64 {
    if let Some(t) = timeout_ms {
        return t.clamp(1, MAX_CALL_TIMEOUT_MS);
    }
    let from_expected = match expected_seconds {
        Some(s) if s.is_finite() && s > 0.0 => (s * 5_000.0).min(MAX_CALL_TIMEOUT_MS as f64) as u64,
        _ => 0,
    };
    from_expected.clamp(MIN_CALL_TIMEOUT_MS, MAX_CALL_TIMEOUT_MS)
}

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
