//! `cargo fuzz run molblock`: the body is `targets::molblock` (shared with tests/fuzz_corpus.rs).
#![no_main]

#[path = "../targets.rs"]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::molblock(data));
