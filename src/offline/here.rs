//! Which offline calls run on the page's own thread, and for how long (issue 12). Going to the
//! offline Worker and back costs more than packing a few molecules (~0.2 ms of the ~0.4 ms a
//! 5-water call took through it), and a first call need not wait for the Worker to start
//! (~150 ms); but the page's thread must not stall. So a call runs there
//! ([`super::call_tool_here`]) only when the structure it builds has at most [`HERE_MAX_ATOMS`]
//! atoms (each tool checks it, `fits`, where it checks Builder's own limit, before packing) and
//! only for [`HERE_MAX_MS`] of packing ([`HereDeadline`]); otherwise it runs again in the Worker,
//! where the same seed gives the same structure. A call whose arguments alone show it is too
//! large is declined before they are read ([`declined_unread`]). Sans-I/O: the caller reads the
//! clock.

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

/// A call's arguments as the host holds them, read a property at a time without converting them
/// (a JavaScript object in the page; a JSON value natively): what [`atoms_at_least`] reads.
pub trait ArgsView: Sized {
    /// The property `key`, when the value is an object (JavaScript: `Reflect.get`).
    fn field(&self, key: &str) -> Option<Self>;
    /// The value, when it is a number.
    fn number(&self) -> Option<f64>;
    /// Its `length` property, when that is a number (an array's, a typed array's).
    fn length(&self) -> Option<f64>;
    /// The number of its items, when it is an array.
    fn array_len(&self) -> Option<u32>;
    /// Item `i` of an array.
    fn item(&self, i: u32) -> Option<Self>;
}

/// Whether a call to `name` is declined on the page's thread before its arguments are read into
/// wasm and checked (a solvate's whole document): its arguments alone show more than
/// [`HERE_MAX_ATOMS`] atoms.
pub fn declined_unread<A: ArgsView>(name: &str, args: &A) -> bool {
    atoms_at_least(name, args) > HERE_MAX_ATOMS
}

/// A lower bound of the atoms an offline call builds, from its arguments as given (a few
/// property reads, none of them converted). The tools' own count ([`fits`]) decides the rest
/// (`polymer_chain`'s units are capped by its schema at what the page takes anyway). A value of
/// the wrong type counts 0 (the tool then answers with its error).
pub fn atoms_at_least<A: ArgsView>(name: &str, args: &A) -> usize {
    let count = |v: Option<f64>| {
        v.filter(|n| n.is_finite() && *n > 0.0)
            .map_or(0, |n| n.min(usize::MAX as f64) as usize)
    };
    let length = |v: &A, key: &str| count(v.field(key).and_then(|a| a.length()));
    match name {
        // At least one atom per molecule (a molecule has one), read until past the page's limit.
        "liquid_box" => {
            let Some(components) = args.field("components") else {
                return 0;
            };
            let Some(n) = components.array_len() else {
                return 0;
            };
            let mut atoms = 0usize;
            for i in 0..n {
                let copies = components.item(i).and_then(|c| c.field("count"));
                atoms = atoms.saturating_add(count(copies.and_then(|c| c.number())));
                if atoms > HERE_MAX_ATOMS {
                    break;
                }
            }
            atoms
        }
        // The document's atoms, by either list.
        "solvate" => args.field("document").map_or(0, |d| {
            length(&d, "elements").max(length(&d, "positions") / 3)
        }),
        _ => 0,
    }
}

/// The rule over a JSON value (native callers and tests): an object's property (`null` when it
/// has none, as JavaScript's `undefined`), a number, an array's length and items.
impl ArgsView for &serde_json::Value {
    fn field(&self, key: &str) -> Option<Self> {
        static ABSENT: serde_json::Value = serde_json::Value::Null;
        Some(self.as_object()?.get(key).unwrap_or(&ABSENT))
    }
    fn number(&self) -> Option<f64> {
        self.as_f64()
    }
    fn length(&self) -> Option<f64> {
        self.as_array().map(|a| a.len() as f64)
    }
    fn array_len(&self) -> Option<u32> {
        self.as_array().map(|a| a.len() as u32)
    }
    fn item(&self, i: u32) -> Option<Self> {
        self.as_array()?.get(i as usize)
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

    #[test]
    fn a_call_is_declined_unread_when_its_arguments_show_too_many_atoms() {
        use serde_json::json;
        let boxed = |counts: serde_json::Value| json!({"components": counts, "seed": 1});
        let cases = [
            ("liquid_box", boxed(json!([{"count": 200}])), 200),
            (
                "liquid_box",
                boxed(json!([{"count": 150}, {"count": 51}])),
                201,
            ),
            // Read until past the limit, a count of the wrong type as 0, fractions dropped.
            (
                "liquid_box",
                boxed(json!([{"count": 1e300}, {"count": 5}])),
                usize::MAX,
            ),
            (
                "liquid_box",
                boxed(json!([{"count": "9"}, {"count": -4}, {"count": 2.5}])),
                2,
            ),
            ("liquid_box", boxed(json!({"count": 500})), 0),
            ("liquid_box", json!("components"), 0),
            // A solvate's document by either list.
            (
                "solvate",
                json!({"document": {"elements": vec![1; 201]}}),
                201,
            ),
            (
                "solvate",
                json!({"document": {"positions": vec![0.0; 603]}}),
                201,
            ),
            (
                "solvate",
                json!({"document": {"elements": [1, 1], "positions": vec![0.0; 30]}}),
                10,
            ),
            ("solvate", json!({"document": "big"}), 0),
            ("polymer_chain", json!({"length": 200}), 0),
        ];
        for (name, args, atoms) in cases {
            assert_eq!(atoms_at_least(name, &&args), atoms, "{name} {args}");
            assert_eq!(
                declined_unread(name, &&args),
                atoms > HERE_MAX_ATOMS,
                "{name} {args}"
            );
        }
    }
}
