//! The URI template parser and matcher (`mcpaxle::server::uri_template`): a template, a newline, a URI.
//! The properties checked are in `mcpaxle::fuzzing::uri_template`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpaxle::fuzzing::uri_template(data));
