//! Which offline calls run on the page's own thread, and for how long (issue 12). Going to the
//! offline Worker and back costs more than packing a few molecules (~0.2 ms of the ~0.4 ms a
//! 5-water call took through it), and a first call need not wait for the Worker to start
//! (~150 ms); but the page's thread must not stall. So a call runs there
//! ([`super::call_tool_here`]) only when the structure it builds has at most [`HERE_MAX_ATOMS`]
//! atoms (each tool checks it, `fits`, where it checks Builder's own limit, before packing) and
//! only for [`HERE_MAX_MS`] of packing ([`HereDeadline`]); otherwise it runs again in the Worker,
//! where the same seed gives the same structure. Sans-I/O: the caller reads the clock.

/// The most atoms a call builds on the page's own thread (a solvate's document counted): 200 atoms
/// (66 water) pack in about a millisecond in wasm.
pub const HERE_MAX_ATOMS: usize = 200;

/// How long (ms) a call on the page's own thread may pack, from the tool's first progress report
/// (its arguments read), before it is given up: a frame at 60 Hz. (At 8 ms, a pause of the
/// page's thread, a garbage collection or a compile, now and then sent a 0.2 ms call to the
/// Worker: in 2 of 8 pages of 151 calls.)
pub const HERE_MAX_MS: f64 = 16.0;

/// [`HERE_MAX_MS`] for a tool's first call on a thread that reaches its packing (or its chain's
/// building), which also compiles that code as it first runs it (10-40 ms in Chromium): at 16 ms
/// that call was given up and repeated in the Worker, on 2 of 10 fresh pages.
pub const HERE_FIRST_MAX_MS: f64 = 50.0;

/// Where an offline call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The offline Worker: any size.
    Worker,
    /// The calling thread (the page's): at most [`HERE_MAX_ATOMS`] atoms, else the tool declines
    /// before packing.
    Here,
}

/// What a tool answers, for a call [`Place::Here`], when the structure would exceed
/// [`HERE_MAX_ATOMS`] (never shown: [`super::call_tool_here`] then returns `None`).
pub(super) const NOT_HERE: &str = "This call is too large to run on the page's thread.";

/// The tools' check of their atom count for [`Place::Here`] (before any packing).
pub(super) fn fits(place: Place, atoms: usize) -> Result<(), String> {
    if place == Place::Here && atoms > HERE_MAX_ATOMS {
        return Err(NOT_HERE.to_string());
    }
    Ok(())
}

/// The deadline of one call on the page's thread: [`HERE_MAX_MS`] (or [`HERE_FIRST_MAX_MS`]) from
/// its first report. The caller asks at every report and heartbeat (the packer's come once per
/// evaluation; the chain's builder reports at each unit it first reaches, so its backtracking,
/// bounded by its budget, goes unchecked) and stops the call once it has passed.
#[derive(Debug)]
pub struct HereDeadline {
    limit_ms: f64,
    /// The first report's time (ms, the caller's clock).
    from_ms: Option<f64>,
}

impl HereDeadline {
    /// A call's deadline; `first` for the tool's first call on this thread to reach a report.
    pub fn new(first: bool) -> Self {
        HereDeadline {
            limit_ms: if first {
                HERE_FIRST_MAX_MS
            } else {
                HERE_MAX_MS
            },
            from_ms: None,
        }
    }

    /// Whether the call has made its first report (its clock runs).
    pub fn started(&self) -> bool {
        self.from_ms.is_some()
    }

    /// A report at `now_ms`: whether the call has run past its deadline. A clock that reads NaN
    /// counts as past (the call then goes to the Worker, which has no deadline).
    pub fn passed(&mut self, now_ms: f64) -> bool {
        let from = *self.from_ms.get_or_insert(now_ms);
        let within = now_ms - from <= self.limit_ms;
        !within
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_starts_at_the_first_report_and_a_nan_clock_is_past() {
        let mut d = HereDeadline::new(false);
        assert!(!d.passed(1000.0));
        assert!(!d.passed(1000.0 + HERE_MAX_MS));
        assert!(d.passed(1000.0 + HERE_MAX_MS + 0.01));
        let mut first = HereDeadline::new(true);
        assert!(!first.passed(5.0));
        assert!(
            !first.passed(5.0 + HERE_MAX_MS + 1.0),
            "the first call's compiles allowed for"
        );
        assert!(first.passed(5.0 + HERE_FIRST_MAX_MS + 0.01));
        assert!(HereDeadline::new(false).passed(f64::NAN));
        let mut later_nan = HereDeadline::new(false);
        assert!(!later_nan.passed(3.0));
        assert!(later_nan.passed(f64::NAN));
    }

    #[test]
    fn only_a_call_here_is_held_to_the_atom_limit() {
        assert!(fits(Place::Here, HERE_MAX_ATOMS).is_ok());
        assert_eq!(
            fits(Place::Here, HERE_MAX_ATOMS + 1),
            Err(NOT_HERE.to_string())
        );
        assert!(fits(Place::Worker, usize::MAX).is_ok());
    }
}
