//! §6 execution timing: the call timeout and the progress indicator chosen from a tool's
//! `expectedSeconds` (§3 marker).

/// §6: the shortest timeout, 60 s in milliseconds.
pub const MIN_TIMEOUT_MS: u64 = 60_000;
/// §6: the longest timeout, 30 minutes in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 30 * 60_000;
/// §3: above this many expected seconds Builder shows a progress bar instead of a spinner.
pub const BAR_THRESHOLD_SECONDS: f64 = 2.0;

/// §6: the call timeout in milliseconds: max(60 s, 5 × `expected_seconds`), at most 30 minutes.
///
/// A missing, NaN, infinite, zero or negative `expected_seconds` gives 60 s.
pub fn call_timeout_ms(expected_seconds: Option<f64>) -> u64 {
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
        assert_eq!(call_timeout_ms(None), 60_000);
        assert_eq!(call_timeout_ms(Some(5.0)), 60_000);
        assert_eq!(call_timeout_ms(Some(20.0)), 100_000);
        assert_eq!(call_timeout_ms(Some(60.0)), 300_000);
        assert_eq!(call_timeout_ms(Some(1e9)), 1_800_000);
        assert_eq!(call_timeout_ms(Some(f64::INFINITY)), 60_000);
        assert_eq!(call_timeout_ms(Some(f64::NAN)), 60_000);
        assert_eq!(call_timeout_ms(Some(-3.0)), 60_000);
    }

    #[test]
    fn progress_style_switches_above_two_seconds() {
        assert_eq!(progress_style(Some(2.0)), ProgressStyle::Spinner);
        assert_eq!(progress_style(Some(2.5)), ProgressStyle::Bar);
        assert_eq!(progress_style(None), ProgressStyle::Spinner);
        assert_eq!(progress_style(Some(f64::NAN)), ProgressStyle::Spinner);
    }
}
