//! One offline call run for the page's host (the JavaScript API's `offlineCall` in the Worker and
//! `offlineCallHere` on the page's thread): the tool run at its [`Place`], its progress reports
//! passed to the host paced ([`ProgressPace`], the Worker's) or held to the last one (the page's
//! thread, blocked meanwhile), and a call on the page's thread given up at its deadline
//! ([`HereDeadline`]: the packer stopped through its cancel flag). Which tools have run on this
//! thread is remembered, so their next calls here get the shorter deadline. Sans-I/O: the host
//! gives its clock and its progress callback.
//!
//! The packer's progress callback must be `Sync`, and the host's callback (a JavaScript function)
//! is not: the running call's callback and reporting state live in a thread-local slot, and the
//! callback handed to the packer is a closure that captures only the cancel flag (an atomic) and
//! the clock (a function pointer) and reads the slot; a report from another thread (a rayon
//! worker) finds nothing there and is dropped.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::here::{HereDeadline, Place};
use super::pace::ProgressPace;
use crate::pack::PackControl;

/// The host's progress callback: `(fraction, message, last)`; `last` is true for the report
/// handed over with the result.
pub type Progress = Rc<dyn Fn(f64, &str, bool)>;

/// How a running call's reports reach the host.
enum Reporting {
    /// The Worker's: paced.
    Paced(ProgressPace),
    /// The page's thread: the deadline, and the last report, held.
    Here {
        deadline: HereDeadline,
        last: Option<(f64, String)>,
    },
}

thread_local! {
    /// The running call's progress callback (if any) and how its reports reach it.
    static PROGRESS: RefCell<Option<(Option<Progress>, Reporting)>> = const { RefCell::new(None) };
    /// The tools whose code has run on this thread in a call here (a call reached its first
    /// report): their next calls get [`HereDeadline::new`]'s shorter deadline.
    static HERE_STARTED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Runs the offline tool `name` on `args` at `place`, with `now_ms` as the clock (ms, monotone).
///
/// [`Place::Worker`]: the transfer of [`super::call_tool_transfer`]; `on_progress` gets the reports
/// [`ProgressPace`] passes (`last` false) and, just before returning, the last report not passed
/// yet, if any (`last` true). [`Place::Here`]: the transfer of [`super::call_tool_here`], or `None`
/// when the call is too large for the page's thread or ran past its deadline (given up: nothing
/// reported); a call answered here reports only its last report, with `last` true. A call made
/// from within another's progress callback has the slot to itself meanwhile.
pub fn run(
    name: &str,
    args: &Value,
    place: Place,
    now_ms: fn() -> f64,
    on_progress: Option<Progress>,
) -> Option<Vec<u8>> {
    let reporting = match place {
        Place::Worker => Reporting::Paced(ProgressPace::new(now_ms())),
        Place::Here => Reporting::Here {
            deadline: HereDeadline::new(!started_here(name)),
            last: None,
        },
    };
    let outer = PROGRESS.with(|slot| slot.replace(Some((on_progress, reporting))));
    let past_deadline = AtomicBool::new(false);
    let report = |fraction: f64, message: &str| {
        let (pass, passed) = PROGRESS.with(|slot| {
            let mut slot = slot.borrow_mut();
            let Some((f, reporting)) = slot.as_mut() else {
                return (None, false);
            };
            match reporting {
                Reporting::Paced(pace) => {
                    let pass = f
                        .as_ref()
                        .filter(|_| pace.offer(now_ms(), fraction, message));
                    (pass.cloned(), false)
                }
                Reporting::Here { deadline, last } => {
                    let held = last.get_or_insert_with(|| (0.0, String::new()));
                    held.0 = fraction;
                    held.1.clear();
                    held.1.push_str(message);
                    (None, deadline.passed(now_ms()))
                }
            }
        });
        if passed {
            past_deadline.store(true, Ordering::Relaxed);
        }
        // Called with the slot released: the callback may start a call of its own.
        if let Some(f) = pass {
            f(fraction, message, false);
        }
    };
    let control = PackControl {
        cancel: Some(&past_deadline),
        progress: Some(&report),
    };
    let bytes = match place {
        Place::Worker => Some(super::call_tool_transfer(name, args, &control)),
        // Given up once a report found the deadline passed, even if the packer finished first:
        // on a rayon pool its reports reach this thread (and set the flag) a little after they
        // are made (`crate::pack::pool`).
        Place::Here => super::call_tool_here(name, args, &control)
            .filter(|_| !past_deadline.load(Ordering::Relaxed)),
    };
    if let Some((f, reporting)) = PROGRESS.with(|slot| slot.replace(outer)) {
        let last = match reporting {
            Reporting::Paced(mut pace) => pace.finish().map(|(fr, m)| (fr, m.to_string())),
            Reporting::Here { last, deadline } => {
                // The tool's code has run here now (its first report came): compiled.
                if deadline.started() {
                    mark_started_here(name);
                }
                last.filter(|_| bytes.is_some())
            }
        };
        if let (Some(f), Some((fraction, message))) = (f, last) {
            f(fraction, &message, true);
        }
    }
    bytes
}

/// Whether a call of `name` on this thread reached its first report.
fn started_here(name: &str) -> bool {
    HERE_STARTED.with(|started| started.borrow().iter().any(|t| t == name))
}

fn mark_started_here(name: &str) {
    HERE_STARTED.with(|started| {
        let mut started = started.borrow_mut();
        if !started.iter().any(|t| t == name) {
            started.push(name.to_string());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    use serde_json::json;

    use crate::offline::here::{HERE_FIRST_MAX_MS, HERE_MAX_MS};
    use crate::offline::pace::INTERVAL_MS;

    thread_local! {
        /// The test clock: each read returns `now` and then adds `step` (ms).
        static CLOCK: Cell<(f64, f64)> = const { Cell::new((0.0, 0.0)) };
    }

    fn clock() -> f64 {
        CLOCK.with(|c| {
            let (now, step) = c.get();
            c.set((now + step, step));
            now
        })
    }

    fn set_clock(now: f64, step: f64) {
        CLOCK.with(|c| c.set((now, step)));
    }

    /// What the host's callback saw.
    type Seen = Rc<RefCell<Vec<(f64, String, bool)>>>;

    fn recorder() -> (Seen, Progress) {
        let seen: Seen = Rc::default();
        let into = seen.clone();
        let progress: Progress = Rc::new(move |f, m: &str, last| {
            into.borrow_mut().push((f, m.to_string(), last));
        });
        (seen, progress)
    }

    const WATER: &str = include_str!("../../tests/fixtures/molecules/water.mol");

    /// A liquid_box of `count` waters, seed `seed`.
    fn waters(count: usize, seed: u64) -> Value {
        json!({
            "components": [{"molecule": {"name": "water", "molblock": WATER}, "count": count}],
            "seed": seed
        })
    }

    /// [`run`] of a liquid_box of `count` waters in the Worker, on the test clock.
    fn in_worker(count: usize, seed: u64, progress: Progress) -> Option<Vec<u8>> {
        run(
            "liquid_box",
            &waters(count, seed),
            Place::Worker,
            clock,
            Some(progress),
        )
    }

    #[test]
    fn the_worker_passes_paced_reports_and_hands_over_the_last_with_the_result() {
        // A clock that stands still: nothing passes during the call, the last comes at the end.
        set_clock(0.0, 0.0);
        let (seen, progress) = recorder();
        let bytes = in_worker(5, 3, progress);
        let expected = crate::offline::call_tool_transfer(
            "liquid_box",
            &waters(5, 3),
            &PackControl::default(),
        );
        assert_eq!(bytes, Some(expected));
        let seen = seen.borrow();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(
            seen[0].2 && seen[0].1.starts_with("writing 15 atoms"),
            "{seen:?}"
        );
        // A clock past the interval at every read: every report passes as it comes.
        set_clock(0.0, INTERVAL_MS);
        let (seen, progress) = recorder();
        in_worker(5, 3, progress);
        let seen = seen.borrow();
        assert!(seen.len() > 2, "{seen:?}");
        assert!(seen.iter().all(|r| !r.2), "none held back: {seen:?}");
        assert!(seen.last().unwrap().1.starts_with("writing 15 atoms"));
    }

    #[test]
    fn a_call_here_reports_only_its_last_and_is_given_up_past_its_deadline() {
        let args = waters(4, 5);
        // The first call's deadline: HERE_FIRST_MAX_MS from its first report. The clock reads 0
        // first, then the deadline plus a little at every read: given up, nothing reported.
        set_clock(0.0, HERE_FIRST_MAX_MS + 0.5);
        let (seen, progress) = recorder();
        assert_eq!(
            run("liquid_box", &args, Place::Here, clock, Some(progress)),
            None
        );
        assert!(seen.borrow().is_empty(), "{:?}", seen.borrow());
        // A still clock: answered here, the last report only, as the Worker's bytes.
        set_clock(0.0, 0.0);
        let (seen, progress) = recorder();
        let bytes = run("liquid_box", &args, Place::Here, clock, Some(progress));
        assert_eq!(
            bytes,
            crate::offline::call_tool_here("liquid_box", &args, &PackControl::default())
        );
        assert!(bytes.is_some());
        let seen = seen.borrow();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].2, "{seen:?}");
        // Too large for the page's thread: declined, nothing reported.
        let (seen, progress) = recorder();
        assert_eq!(
            run(
                "liquid_box",
                &waters(100, 1),
                Place::Here,
                clock,
                Some(progress)
            ),
            None
        );
        assert!(seen.borrow().is_empty());
    }

    /// Between the two deadlines (ms).
    const BETWEEN: f64 = (HERE_MAX_MS + HERE_FIRST_MAX_MS) / 2.0;

    /// A clock that reads 0 once, then [`BETWEEN`] at every later read.
    fn zero_then_between() -> f64 {
        CLOCK.with(|c| c.replace((BETWEEN, 0.0)).0)
    }

    #[test]
    fn a_tool_that_has_run_here_gets_the_shorter_deadline() {
        const { assert!(BETWEEN > HERE_MAX_MS && BETWEEN < HERE_FIRST_MAX_MS) };
        assert!(!started_here("liquid_box"));
        // The first call here (which also compiles the tool's code) keeps its longer deadline.
        set_clock(0.0, 0.0);
        let first = run(
            "liquid_box",
            &waters(4, 5),
            Place::Here,
            zero_then_between,
            None,
        );
        assert!(first.is_some());
        assert!(started_here("liquid_box"));
        // The next one is given up at the shorter one.
        set_clock(0.0, 0.0);
        assert_eq!(
            run(
                "liquid_box",
                &waters(4, 5),
                Place::Here,
                zero_then_between,
                None
            ),
            None
        );
    }

    #[test]
    fn a_call_from_within_a_progress_callback_has_the_slot_to_itself() {
        set_clock(0.0, INTERVAL_MS);
        let inner_seen: Seen = Rc::default();
        let into = inner_seen.clone();
        let started = Rc::new(Cell::new(false));
        let once = started.clone();
        let (outer_seen, record) = recorder();
        let progress: Progress = Rc::new(move |f, m: &str, last| {
            record(f, m, last);
            if !once.replace(true) {
                let (seen, inner) = recorder();
                let bytes = in_worker(3, 9, inner);
                assert!(bytes.is_some());
                into.borrow_mut().extend(seen.borrow().iter().cloned());
            }
        });
        in_worker(5, 3, progress);
        assert!(started.get());
        let inner = inner_seen.borrow();
        assert!(
            inner.iter().any(|r| r.1.starts_with("writing 9 atoms")),
            "{inner:?}"
        );
        let outer = outer_seen.borrow();
        assert!(
            outer.iter().any(|r| r.1.starts_with("writing 15 atoms")),
            "{outer:?}"
        );
        assert!(
            outer.iter().all(|r| !r.1.starts_with("writing 9 atoms")),
            "{outer:?}"
        );
    }
}
