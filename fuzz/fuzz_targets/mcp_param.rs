//! The `Mcp-Name` / `Mcp-Param-*` header value decoder and encoder (`mcpaxle::headers`).
//! The properties checked are in `mcpaxle::fuzzing::mcp_param`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpaxle::fuzzing::mcp_param(data));
