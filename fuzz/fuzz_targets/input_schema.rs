//! The input schema checker (`mcpaxle::server::input_schema`): a schema, then arguments, as JSON values.
//! The properties checked are in `mcpaxle::fuzzing::input_schema`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpaxle::fuzzing::input_schema(data));
