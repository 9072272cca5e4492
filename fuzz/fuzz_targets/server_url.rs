//! `cargo fuzz run server_url`: the body is `targets::server_url` (shared with tests/fuzz_corpus.rs).
#![no_main]

#[path = "../targets.rs"]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::server_url(data));
