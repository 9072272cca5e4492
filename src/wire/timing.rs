//! §6 execution timing: the call timeout and the progress indicator chosen from a tool's
//! `expectedSeconds` (§3 marker), and when a running call times out. The one place for these
//! rules: the remote client (`mcp::client`) and the offline tools (`src/js/offline.js`, through
//! the wasm API's `callTimeoutMs` / `callDeadlineMs`) both call them.

/// §6: the shortest timeout, 60 s in milliseconds.
pub const MIN_TIMEOUT_MS: u64 = 60_000;
/// §6: the longest timeout, 30 minutes in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 30 * 60_000;
/// §3: above this many expected seconds Builder shows a progress bar instead of a spinner.
pub const BAR_THRESHOLD_SECONDS: f64 = 2.0;

/// §6: the call timeout in milliseconds: the host's explicit `timeout_ms` when it is a positive
/// finite number (rounded up to a whole millisecond), else max(60 s, 5 × `expected_seconds`);
/// either way at most 30 minutes.
///
/// A missing, NaN, infinite, zero or negative `expected_seconds` gives 60 s; such a `timeout_ms`
/// is treated as absent.
pub fn call_timeout_ms(expected_seconds: Option<f64>, timeout_ms: Option<f64>) -> u64 {
    if let Some(explicit) = timeout_ms.filter(|t| t.is_finite() && *t > 0.0) {
        return explicit.min(MAX_TIMEOUT_MS as f64).ceil() as u64;
    }
    match usable_seconds(expected_seconds) {
        None => MIN_TIMEOUT_MS,
        Some(seconds) => {
            let wanted_ms = seconds * 5.0 * 1000.0;
            // `wanted_ms` is finite and positive here; the clamp keeps the cast in range.
            wanted_ms
                .clamp(MIN_TIMEOUT_MS as f64, MAX_TIMEOUT_MS as f64)
                .ceil() as u64
        }
    }
}

/// §6: when a call times out (milliseconds, on the caller's clock): `timeout_ms` (from
/// [`call_timeout_ms`]) after its last sign of life — its start or its latest progress
/// notification, `last_activity` — but never later than 30 minutes after `started_at`. Progress
/// thus keeps a long call alive without letting it run for ever.
pub fn call_deadline_ms(started_at: u64, last_activity: u64, timeout_ms: u64) -> u64 {
    last_activity
        .saturating_add(timeout_ms)
        .min(started_at.saturating_add(MAX_TIMEOUT_MS))
}

/// §3/§6: how the host shows a running call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgressStyle {
    /// A progress bar (the tool expects to run longer than ~2 s).
    Bar,
    /// A spinner (short or unknown run time).
    Spinner,
}

/// §3: `Bar` when `expected_seconds` is a finite number above 2 s, else `Spinner`.
pub fn progress_style(expected_seconds: Option<f64>) -> ProgressStyle {
    match usable_seconds(expected_seconds) {
        Some(seconds) if seconds > BAR_THRESHOLD_SECONDS => ProgressStyle::Bar,
        _ => ProgressStyle::Spinner,
    }
}

/// `expected_seconds` when it is a finite positive number; garbage is treated as absent.
fn usable_seconds(expected_seconds: Option<f64>) -> Option<f64> {
    expected_seconds.filter(|s| s.is_finite() && *s > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_follows_the_formula_and_bounds() {
        assert_eq!(call_timeout_ms(None, None), 60_000);
        assert_eq!(call_timeout_ms(Some(5.0), None), 60_000);
        assert_eq!(call_timeout_ms(Some(20.0), None), 100_000);
        assert_eq!(call_timeout_ms(Some(60.0), None), 300_000);
        assert_eq!(call_timeout_ms(Some(1e9), None), 1_800_000);
        assert_eq!(call_timeout_ms(Some(f64::INFINITY), None), 60_000);
        assert_eq!(call_timeout_ms(Some(f64::NAN), None), 60_000);
        assert_eq!(call_timeout_ms(Some(-3.0), None), 60_000);
    }

    #[test]
    fn an_explicit_timeout_wins_but_is_capped_and_garbage_is_absent() {
        assert_eq!(call_timeout_ms(Some(20.0), Some(5_000.0)), 5_000);
        assert_eq!(call_timeout_ms(None, Some(0.5)), 1);
        assert_eq!(call_timeout_ms(None, Some(4e6)), 1_800_000);
        assert_eq!(call_timeout_ms(None, Some(f64::INFINITY)), 60_000);
        assert_eq!(call_timeout_ms(Some(20.0), Some(0.0)), 100_000);
        assert_eq!(call_timeout_ms(None, Some(-1.0)), 60_000);
        assert_eq!(call_timeout_ms(None, Some(f64::NAN)), 60_000);
    }

    #[test]
    fn progress_moves_the_deadline_up_to_thirty_minutes_after_the_start() {
        assert_eq!(call_deadline_ms(1_000, 1_000, 60_000), 61_000);
        assert_eq!(call_deadline_ms(1_000, 50_000, 60_000), 110_000);
        assert_eq!(call_deadline_ms(1_000, 1_790_000, 60_000), 1_801_000);
        assert_eq!(call_deadline_ms(0, u64::MAX, 60_000), 1_800_000);
    }

    #[test]
    fn progress_style_switches_above_two_seconds() {
        assert_eq!(progress_style(Some(2.0)), ProgressStyle::Spinner);
        assert_eq!(progress_style(Some(2.5)), ProgressStyle::Bar);
        assert_eq!(progress_style(None), ProgressStyle::Spinner);
        assert_eq!(progress_style(Some(f64::NAN)), ProgressStyle::Spinner);
    }
}
