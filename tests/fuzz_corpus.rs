//! The CI smoke of the `cargo fuzz` targets (issue 11, item 14): every committed corpus file in
//! `fuzz/corpus/<target>/` is replayed through the same target body the fuzzer runs
//! (`fuzz/targets.rs`), on stable. The long runs (10 000 000 executions each) are done outside CI
//! with `cargo +nightly fuzz run <target>`; see fuzz/README.md.
#![cfg(not(target_arch = "wasm32"))]

#[path = "../fuzz/targets.rs"]
mod targets;

use std::path::Path;

#[test]
fn every_corpus_file_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for name in targets::TARGETS {
        let dir = root.join(name);
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| targets::run(name, &data));
            assert!(outcome.is_ok(), "{name}: {} fails", path.display());
            count += 1;
        }
        assert!(count > 0, "{name}: the corpus is empty");
        println!("{name}: {count} corpus files replayed");
    }
}

#[test]
fn the_invariants_catch_a_two_line_error() {
    let caught = std::panic::catch_unwind(|| targets::assert_one_line("t", "a\nb"));
    assert!(caught.is_err());
    let caught = std::panic::catch_unwind(|| targets::assert_one_line("t", "a\u{0}b"));
    assert!(caught.is_err());
    let caught = std::panic::catch_unwind(|| targets::assert_one_line("t", " a"));
    assert!(caught.is_err());
    targets::assert_one_line("t", "a b: c");
}
