//! `cargo fuzz run jsonrpc`: the body is `targets::jsonrpc` (shared with tests/fuzz_corpus.rs).
#![no_main]

#[path = "../targets.rs"]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::jsonrpc(data));
