//! The JSON-RPC envelope parser (`mcpaxle::jsonrpc::parse_message`) on any frame.
//! The properties checked are in `mcpaxle::fuzzing::jsonrpc_envelope`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpaxle::fuzzing::jsonrpc_envelope(data));
