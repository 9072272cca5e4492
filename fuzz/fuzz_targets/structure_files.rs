//! `cargo fuzz run structure_files`: the body is `targets::structure_files` (shared with
//! tests/fuzz_corpus.rs).
#![no_main]

#[path = "../targets.rs"]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::structure_files(data));
