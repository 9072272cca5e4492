//! `cargo fuzz run discovery`: the body is `targets::discovery` (shared with tests/fuzz_corpus.rs).
#![no_main]

#[path = "../targets.rs"]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::discovery(data));
