//! The core's OpenTelemetry traces and metrics for Node (the package's `telemetry`): turned on,
//! flushed and shut down for the process. Exports run on napi's runtime; the calls that wait for
//! them ([`telemetry_flush`], [`telemetry_shutdown`]) run on its blocking pool and hand back a
//! `Promise`, so neither the JavaScript thread nor a runtime worker ever waits on a collector.

use crate::errors;
use crate::runtime;
use mcpaxle::telemetry::{self, TelemetryOptions};
use napi::bindgen_prelude::{PromiseRaw, within_runtime_if_available};
use napi::{Env, Result};
use napi_derive::napi;

/// Turns traces and metrics on for the process (OTLP over HTTP) with `optionsJson`, the core's
/// `TelemetryOptions` (`endpoint`, `serviceName`, `metricsIntervalMs`, `prometheus`, ...), read
/// and checked by the core; none: every default (and the `OTEL_*` environment). Replaces an
/// earlier setting, whose pending exports are sent first.
#[napi]
pub fn telemetry_configure(options_json: Option<String>) -> Result<()> {
    runtime::check()?;
    let options: TelemetryOptions = match options_json {
        Some(json) => mcpaxle::options::from_str("the telemetry options", &json).map_err(errors::to_napi)?,
        None => TelemetryOptions::default(),
    };
    within_runtime_if_available(|| telemetry::install(options)).map_err(errors::to_napi)
}

/// Exports every span and metric recorded so far; resolves once the exporter is done.
#[napi(ts_return_type = "Promise<void>")]
pub fn telemetry_flush<'env>(env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
    runtime::blocking(env, telemetry::flush)
}

/// Exports what is left and turns telemetry off; resolves once the exporter is done.
#[napi(ts_return_type = "Promise<void>")]
pub fn telemetry_shutdown<'env>(env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
    runtime::blocking(env, || {
        telemetry::shutdown();
        Ok(())
    })
}

/// Whether telemetry is on.
#[napi]
pub fn telemetry_is_enabled() -> bool {
    telemetry::is_enabled()
}

/// The metrics in Prometheus's text format while telemetry is on with `prometheus`, else none.
#[napi]
pub fn telemetry_prometheus_text() -> Option<String> {
    telemetry::prometheus_text()
}
