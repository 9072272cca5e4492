//! `cargo fuzz run sse`: the body is `targets::sse` (shared with tests/fuzz_corpus.rs).
#![no_main]

#[path = "../targets.rs"]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::sse(data));
