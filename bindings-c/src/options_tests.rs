//! Every option of the core's schema reaches C: each area of `mcpaxle::catalog::examples()`
//! (a valid value for every option the core knows) goes through the C function that takes it.
//! An option added in the core is in the examples (the core checks that), so this fails if C
//! stops handing its JSON to the core.

use crate::calls::mcpaxle_reply;
use crate::client::*;
use crate::client_oauth::mcpaxle_client_options_set_oauth;
use crate::ffi::mcpaxle_result;
use crate::server::*;
use crate::server_auth::mcpaxle_server_set_bearer_auth;
use mcpaxle_core::catalog::examples;
use serde_json::Value;
use std::ffi::{CString, c_char, c_void};
use std::ptr;

fn c(v: &Value) -> CString {
    CString::new(v.to_string()).unwrap()
}

unsafe extern "C" fn handler(
    _: *mut c_void,
    _: *const c_char,
    _: *mut crate::calls::mcpaxle_context,
    _: *mut mcpaxle_reply,
) {
}

#[test]
fn every_option_of_the_core_reaches_c() {
    let ex = examples();
    let ok = mcpaxle_result::MCPAXLE_OK;
    let (n, v) = (c"n".as_ptr(), c"1".as_ptr());
    unsafe {
        let mut s = ptr::null_mut();
        assert_eq!(mcpaxle_server_new(n, v, c(&ex["server"]).as_ptr(), &mut s), ok);
        let legacy = serde_json::json!({ "legacy": ex["legacy"], "cache": ex["cache"] });
        let mut s2 = ptr::null_mut();
        assert_eq!(mcpaxle_server_new(n, v, c(&legacy).as_ptr(), &mut s2), ok);
        mcpaxle_server_free(s2);
        let tool = c(&serde_json::json!({ "name": "t", "inputSchema": { "type": "object" } }));
        let r = mcpaxle_server_add_tool_with_options(
            s,
            tool.as_ptr(),
            c(&ex["tool"]).as_ptr(),
            Some(handler),
            ptr::null_mut(),
        );
        assert_eq!(r, ok);
        let template = c(&serde_json::json!({ "uriTemplate": "t://{id}", "name": "t" }));
        let (hint, options) = (c(&ex["cacheHint"]), c(&ex["template"]));
        let r = mcpaxle_server_add_resource_template_with(
            s,
            template.as_ptr(),
            hint.as_ptr(),
            options.as_ptr(),
            Some(handler),
            ptr::null_mut(),
        );
        assert_eq!(r, ok);
        // The example sets jwt and introspection: the built-in verifiers, no verify callback.
        assert_eq!(mcpaxle_server_set_bearer_auth(s, c(&ex["bearerAuth"]).as_ptr(), None, ptr::null_mut()), ok);
        let server = &*s;
        let http = crate::serve::http_options(Some(ex["http"].clone()), server).unwrap();
        assert_eq!(http.max_body, 1048576);
        assert!(http.auth.is_some(), "the bearer protection set on the server");
        let http =
            crate::serve::http_options(Some(serde_json::json!({ "connections": ex["connections"] })), server).unwrap();
        assert_eq!(http.connections.max_header_bytes, 65536);
        let http = crate::serve::http_options(Some(serde_json::json!({ "cors": ex["cors"] })), server).unwrap();
        assert_eq!(http.cors.unwrap().allowed_origins, ["http://localhost:6274"]);
        let stdio = crate::serve::stdio_options(Some(ex["stdio"].clone()), &server.stop_token()).unwrap();
        assert_eq!(stdio.max_outbound_queue, 64);
        mcpaxle_server_free(s);

        let mut o = ptr::null_mut();
        assert_eq!(mcpaxle_client_options_new(n, v, c(&ex["client"]).as_ptr(), &mut o), ok);
        assert_eq!(mcpaxle_client_options_set_oauth(o, c(&ex["oauth"]).as_ptr(), None, ptr::null_mut()), ok);
        mcpaxle_client_options_free(o);
        let mut co = ptr::null_mut();
        assert_eq!(mcpaxle_call_options_new(c(&ex["call"]).as_ptr(), &mut co), ok);
        mcpaxle_call_options_free(co);

        // Telemetry is process-wide: on with every option, then off again.
        assert_eq!(crate::telemetry::mcpaxle_telemetry_configure(c(&ex["telemetry"]).as_ptr()), ok);
        assert!(mcpaxle_core::telemetry::is_enabled());
        let bad = c(&serde_json::json!({ "sampleRatio": 7 }));
        assert_eq!(crate::telemetry::mcpaxle_telemetry_configure(bad.as_ptr()), mcpaxle_result::MCPAXLE_ERR_USAGE);
        assert_eq!(crate::telemetry::mcpaxle_telemetry_shutdown(), ok);
        assert!(!mcpaxle_core::telemetry::is_enabled());
    }
}
