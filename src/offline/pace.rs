//! Pacing of an offline call's progress reports for the host (§6 progress). The packer reports at
//! every phase, and its heartbeat repeats the last report once per evaluation, Verlet rebuild or
//! "movebad" step (about 18 times in a 5-water call that lasts a tenth of a millisecond); the
//! host (the offline Worker) posts every report it is handed to the page as a message. This is the
//! one place that decides which reports reach the host: none in a call's first [`INTERVAL_MS`],
//! then at most one per [`INTERVAL_MS`]; the last report not passed is handed over when the call
//! ends ([`ProgressPace::finish`]), so a quick call costs no progress message of its own and its
//! final report ("writing N atoms") still arrives, with the result. The reports passed are a
//! subsequence of the packer's, in order, so they stay monotone; the packer's heartbeat reports
//! several times a second on long runs, so the host still hears at least once a second. Sans-I/O:
//! the caller reads the clock.

/// Shortest time between two reports passed to the host, and before the first one (ms).
pub const INTERVAL_MS: f64 = 100.0;

/// Which of one call's progress reports go to the host now, and the last one held back.
#[derive(Debug)]
pub struct ProgressPace {
    /// When the last report was passed, or the call started (ms, the caller's clock).
    passed_ms: f64,
    /// The fraction of the last report not passed, if any.
    held: Option<f64>,
    /// Its message (the buffer is reused, so a held heartbeat allocates nothing).
    held_message: String,
}

impl ProgressPace {
    /// A call that starts at `start_ms` (ms on the clock later passed to [`Self::offer`]).
    pub fn new(start_ms: f64) -> Self {
        ProgressPace {
            passed_ms: start_ms,
            held: None,
            held_message: String::new(),
        }
    }

    /// A report made at `now_ms`: `true` when the host gets it now (it is then no longer held);
    /// otherwise it is held as the call's last report so far.
    pub fn offer(&mut self, now_ms: f64, fraction: f64, message: &str) -> bool {
        // A clock that reads NaN never silences the reports.
        let waited = now_ms - self.passed_ms;
        if waited >= INTERVAL_MS || waited.is_nan() {
            self.passed_ms = now_ms;
            self.held = None;
            return true;
        }
        self.held = Some(fraction);
        self.held_message.clear();
        self.held_message.push_str(message);
        false
    }

    /// At the end of the call: the last report not passed yet, if any (for the host to hand over
    /// with the result).
    pub fn finish(&mut self) -> Option<(f64, &str)> {
        self.held.take().map(|f| (f, self.held_message.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report: time (ms), fraction, message.
    type Report = (f64, f64, String);

    /// Offers `(time, fraction, message)` in order; returns what the host sees: the passed
    /// reports, then the one handed over at the end.
    fn run(start: f64, reports: &[Report]) -> (Vec<Report>, Option<(f64, String)>) {
        let mut pace = ProgressPace::new(start);
        let passed = reports
            .iter()
            .filter(|(t, f, m)| pace.offer(*t, *f, m))
            .cloned()
            .collect();
        let last = pace.finish().map(|(f, m)| (f, m.to_string()));
        (passed, last)
    }

    #[test]
    fn a_quick_call_passes_nothing_and_hands_over_its_last_report() {
        let reports: Vec<_> = (0..18)
            .map(|i| {
                (
                    1000.0 + i as f64 * 0.005,
                    i as f64 / 20.0,
                    format!("step {i}"),
                )
            })
            .collect();
        let (passed, last) = run(1000.0, &reports);
        assert!(passed.is_empty(), "{passed:?}");
        assert_eq!(last, Some((17.0 / 20.0, "step 17".to_string())));
    }

    #[test]
    fn a_long_call_passes_one_report_per_interval_in_order() {
        // A report every 7 ms for 2.03 s, fraction rising.
        let reports: Vec<_> = (0..=290)
            .map(|i| (i as f64 * 7.0, i as f64 / 290.0, format!("r{i}")))
            .collect();
        let (passed, last) = run(0.0, &reports);
        let times: Vec<f64> = passed.iter().map(|r| r.0).collect();
        assert_eq!(times.first(), Some(&105.0), "none before 100 ms");
        assert!(times.windows(2).all(|w| w[1] - w[0] >= INTERVAL_MS));
        assert!(
            times.windows(2).all(|w| w[1] - w[0] < INTERVAL_MS + 7.0),
            "{times:?}"
        );
        assert_eq!(passed.len(), 19);
        // A subsequence of the reports in order: monotone fractions, each with its own message.
        assert!(passed.windows(2).all(|w| w[0].1 < w[1].1));
        assert!(passed
            .iter()
            .all(|(t, _, m)| *m == format!("r{}", (*t / 7.0) as usize)));
        // The last passed at 1995 ms; the final report (2030 ms) is held and handed over.
        assert_eq!(times.last(), Some(&1995.0));
        assert_eq!(last, Some((1.0, "r290".to_string())));
    }

    #[test]
    fn a_passed_last_report_is_not_handed_over_again() {
        let reports = vec![(0.0, 0.0, "a".to_string()), (150.0, 1.0, "b".to_string())];
        let (passed, last) = run(0.0, &reports);
        assert_eq!(passed, vec![(150.0, 1.0, "b".to_string())]);
        assert_eq!(last, None);
        // And a call with no report hands over nothing.
        assert_eq!(run(0.0, &[]), (vec![], None));
    }

    #[test]
    fn a_clock_that_reads_nan_passes_every_report() {
        let reports = vec![
            (f64::NAN, 0.5, "a".to_string()),
            (f64::NAN, 0.6, "b".to_string()),
        ];
        let (passed, last) = run(0.0, &reports);
        assert_eq!(passed.len(), 2);
        assert_eq!(last, None);
    }
}
