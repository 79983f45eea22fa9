//! `mcpaxle_telemetry_*`: OpenTelemetry traces and metrics of the process (OTLP over HTTP, and
//! the Prometheus text of the HTTP server's `metricsPath`).

use crate::ffi::{FfiResult, from_json, into_c_string, mcpaxle_result, opt_json, out_ptr};
use crate::runtime;
use mcpaxle_core::telemetry::{self, TelemetryOptions};
use std::ffi::c_char;

/// Turns traces and metrics on for the process: a span per request served and per call made
/// (OpenTelemetry's MCP conventions), W3C trace context carried in `_meta`, the request
/// metrics, exported over OTLP/HTTP. `options_json`: the telemetry options (`endpoint`,
/// `headers`, `serviceName`, `sampleRatio`, `traces`, `metrics`, `metricsIntervalMs`,
/// `prometheus`, `recordPrincipal`; NULL: every default); what is left out falls back to the
/// standard `OTEL_*` environment variables. Without this call, telemetry is on only when
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (or a per-signal endpoint) is set as the library starts.
///
/// A C handler's trace context is in `mcpaxle_context_info`'s `trace`; a C client's call joins
/// a trace when its call options' `meta` carries a `traceparent`. Process-wide: a later call
/// replaces the setting. Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_telemetry_configure(options_json: *const c_char) -> mcpaxle_result {
    crate::ffi::ffi_boundary!({
        // SAFETY: per the contract.
        let value = unsafe { opt_json(options_json, "options_json")? };
        let options: TelemetryOptions = match value {
            Some(v) if !v.is_null() => from_json(v, "telemetry options")?,
            _ => TelemetryOptions::default(),
        };
        let _in_runtime = runtime::handle()?.enter();
        telemetry::install(options)?;
        Ok(())
    })
}

/// Exports the spans and metrics recorded so far, now, and waits for the exporter. Fails with
/// `MCPAXLE_ERR_USAGE` on an inline handler's thread (it would stall the runtime the export
/// runs on). Thread: any other.
#[unsafe(no_mangle)]
pub extern "C" fn mcpaxle_telemetry_flush() -> mcpaxle_result {
    crate::ffi::ffi_boundary!({ waiting(telemetry::flush) })
}

/// Exports what is left and turns telemetry off. Thread: as `mcpaxle_telemetry_flush`.
#[unsafe(no_mangle)]
pub extern "C" fn mcpaxle_telemetry_shutdown() -> mcpaxle_result {
    crate::ffi::ffi_boundary!({
        waiting(|| {
            telemetry::shutdown();
            Ok(())
        })
    })
}

/// The process's metrics in Prometheus's text format in `*text` (telemetry on with
/// `"prometheus": true`), else NULL (and `MCPAXLE_OK`).
///
/// Ownership: `*text` is the caller's (`mcpaxle_string_free`). Thread: any.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_telemetry_prometheus_text(text: *mut *mut c_char) -> mcpaxle_result {
    crate::ffi::ffi_boundary!({
        // SAFETY: per the contract.
        let out = unsafe { out_ptr(text, "text")? };
        if let Some(t) = telemetry::prometheus_text() {
            *out = into_c_string(&t);
        }
        Ok(())
    })
}

/// Runs `f`, which waits for exports running on the runtime, where waiting is allowed.
fn waiting(f: impl FnOnce() -> mcpaxle_core::Result<()>) -> FfiResult {
    runtime::refuse_inline()?;
    Ok(f()?)
}
