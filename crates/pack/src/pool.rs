//! Where a packing runs: on a thread of the rayon pool, its progress reports carried back to the
//! calling thread.
//!
//! Why (issue 32): every parallel step the packer takes from a thread outside the pool (the
//! offline tools' Worker, in the threaded wasm build) is handed to the pool and waited for, and
//! in the browser each hand-over wakes a pool thread from `Atomics.wait`: a few hundred of them
//! per 100 000-water run made the threaded build on one thread ~20 % slower than the
//! single-threaded one, and two threads barely faster. Run on a pool thread, the packer's parallel
//! steps are split within the pool. The caller's progress callback need not be `Sync` (a
//! JavaScript function is bound to its thread), so the packer on the pool sends its reports over a
//! channel and this thread passes them on, every one and in order, and the packer waits for each
//! new report to be passed on before it goes on: a cancel the callback sets (the caller's atomic
//! flag, as before) is seen at the packer's next check, as when the packer called the callback
//! itself. A report that repeats the last (a heartbeat) does not wait: 343 round trips per
//! 100 000-water run cost the threaded build ~4 % on 2 threads.
//!
//! Single-threaded builds (the page package) and callers already on the pool (a test's
//! `ThreadPool::install`) run the job where they are.

use crate::PackControl;

/// Runs `job` with a control that has the caller's cancel flag and passes its progress reports
/// to `control.progress` on this thread, each of them, in order. A new report of the job returns
/// when the callback has returned, so a cancel the callback sets reaches the job at its next
/// check; a repeat of the last report (a heartbeat) returns at once.
#[cfg(any(not(target_arch = "wasm32"), target_feature = "atomics"))]
pub fn run<R: Send>(control: &PackControl, job: impl FnOnce(&PackControl) -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return job(control);
    }
    /// What the job sends this thread: its reports, then its result.
    enum Sent<R> {
        Report(f64, String),
        Done(R),
    }
    let (send, receive) = std::sync::mpsc::channel();
    let (cancel, reported) = (control.cancel, control.progress.is_some());
    let mut result = None;
    rayon::in_place_scope(|scope| {
        // One `()` per report passed on: the job waits for it. Made here so that it is dropped
        // when this thread unwinds (a panicking callback), which frees a waiting job.
        let (passed_on, wait_passed_on) = std::sync::mpsc::channel::<()>();
        // The sender goes with the job and is dropped when it ends, returning or unwinding: the
        // loop below then ends (and the scope passes a panic on).
        scope.spawn(move |_| {
            // The last report and how many were passed on since without waiting: a report that
            // repeats the last (the heartbeat of a long step, most of a large run's reports)
            // does not wait, so a run makes tens of round trips rather than hundreds; a new one
            // waits until every report so far has been passed on.
            let last = std::cell::RefCell::new(((f64::NAN, String::new()), 0usize));
            let report = |fraction: f64, message: &str| {
                let mut last = last.borrow_mut();
                // A send fails only once this thread has unwound: then there is no one to wait for.
                if send
                    .send(Sent::Report(fraction, message.to_owned()))
                    .is_err()
                {
                    return;
                }
                let ((f, m), unwaited) = &mut *last;
                if *f == fraction && m == message {
                    *unwaited += 1;
                    return;
                }
                (*f, *m) = (fraction, message.to_owned());
                for _ in 0..=std::mem::take(unwaited) {
                    let _ = wait_passed_on.recv();
                }
            };
            let done = job(&PackControl {
                cancel,
                progress: reported.then_some(&report as &dyn Fn(f64, &str)),
            });
            let _ = send.send(Sent::Done(done));
        });
        for sent in receive {
            match sent {
                Sent::Report(fraction, message) => {
                    if let Some(progress) = control.progress {
                        progress(fraction, &message);
                    }
                    let _ = passed_on.send(());
                }
                Sent::Done(done) => result = Some(done),
            }
        }
    });
    result.expect("the job ended without a panic, so it sent its result")
}

/// The single-threaded build: the job runs here.
#[cfg(not(any(not(target_arch = "wasm32"), target_feature = "atomics")))]
pub fn run<R>(control: &PackControl, job: impl FnOnce(&PackControl) -> R) -> R {
    job(control)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[test]
    fn the_job_runs_on_the_pool_and_every_report_reaches_this_thread_in_order() {
        let here = std::thread::current().id();
        let seen = RefCell::new(Vec::new());
        let progress = |fraction: f64, message: &str| {
            assert_eq!(std::thread::current().id(), here);
            seen.borrow_mut().push((fraction, message.to_owned()));
        };
        let control = PackControl {
            cancel: None,
            progress: Some(&progress),
        };
        let (on_pool, value) = run(&control, |c| {
            for i in 0..100 {
                (c.progress.unwrap())(f64::from(i) / 100.0, "working");
            }
            (c.progress.unwrap())(1.0, "done");
            (rayon::current_thread_index().is_some(), 42)
        });
        assert!(on_pool);
        assert_eq!(value, 42);
        let seen = seen.into_inner();
        let made: Vec<(f64, String)> = (0..100)
            .map(|i| (f64::from(i) / 100.0, "working".to_owned()))
            .chain([(1.0, "done".to_owned())])
            .collect();
        assert_eq!(seen, made);
    }

    #[test]
    fn a_cancel_set_by_this_threads_callback_reaches_the_job() {
        let cancel = AtomicBool::new(false);
        let progress = |_: f64, _: &str| cancel.store(true, Ordering::Relaxed);
        let control = PackControl {
            cancel: Some(&cancel),
            progress: Some(&progress),
        };
        let stopped = run(&control, |c| {
            (c.progress.unwrap())(0.0, "started");
            // Waits (bounded) for this thread's callback to set the flag.
            (0..10_000).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                c.cancel.unwrap().load(Ordering::Relaxed)
            })
        });
        assert!(stopped);
    }

    #[test]
    fn a_report_returns_after_this_threads_callback_so_its_cancel_is_seen_at_once() {
        let cancel = AtomicBool::new(false);
        let progress = |_: f64, message: &str| {
            // Slow, as a busy machine can make it.
            std::thread::sleep(std::time::Duration::from_millis(20));
            if message == "stop" {
                cancel.store(true, Ordering::Relaxed);
            }
        };
        let control = PackControl {
            cancel: Some(&cancel),
            progress: Some(&progress),
        };
        let seen = run(&control, |c| {
            let flag = c.cancel.unwrap();
            (c.progress.unwrap())(0.0, "go on");
            let before = flag.load(Ordering::Relaxed);
            (c.progress.unwrap())(0.5, "stop");
            (before, flag.load(Ordering::Relaxed))
        });
        assert_eq!(seen, (false, true));
    }

    #[test]
    fn heartbeats_do_not_wait_but_the_next_new_report_waits_for_them_all() {
        use std::sync::atomic::AtomicUsize;
        let seen = AtomicUsize::new(0);
        let progress = |_: f64, _: &str| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            seen.fetch_add(1, Ordering::SeqCst);
        };
        let control = PackControl {
            cancel: None,
            progress: Some(&progress),
        };
        let counts = run(&control, |c| {
            let report = c.progress.unwrap();
            report(0.1, "step");
            let after_first = seen.load(Ordering::SeqCst);
            for _ in 0..5 {
                report(0.1, "step");
            }
            report(0.2, "next step");
            (after_first, seen.load(Ordering::SeqCst))
        });
        assert_eq!(counts, (1, 7));
    }

    #[test]
    fn a_panicking_callback_passes_its_panic_on_instead_of_hanging() {
        let progress = |_: f64, _: &str| panic!("callback");
        let control = PackControl {
            cancel: None,
            progress: Some(&progress),
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(&control, |c| {
                for _ in 0..3 {
                    (c.progress.unwrap())(0.0, "working");
                }
                7
            })
        }));
        assert!(outcome.is_err());
    }

    #[test]
    fn a_panicking_job_passes_its_panic_on_instead_of_hanging() {
        let control = PackControl::default();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(&control, |_| -> u8 { panic!("boom") })
        }));
        assert!(outcome.is_err());
    }

    #[test]
    fn a_caller_on_the_pool_runs_the_job_itself() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let index =
            pool.install(|| run(&PackControl::default(), |_| rayon::current_thread_index()));
        assert_eq!(index, Some(0));
    }
}
