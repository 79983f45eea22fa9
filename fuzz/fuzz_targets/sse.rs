//! The client's `text/event-stream` parser on any stream, cut into chunks in different ways.
//! The properties checked are in `mcpaxle::fuzzing::sse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpaxle::fuzzing::sse(data));
