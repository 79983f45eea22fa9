//! Whether telemetry is on for the process, and what it records with: the tracer, the metric
//! instruments, the providers to flush.

use crate::error::{Error, Result};
use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// The instrumentation scope of every span and metric of the core.
pub(crate) const SCOPE: &str = "mcpaxle";

/// The bucket bounds (seconds) OpenTelemetry's MCP conventions give the operation durations.
const DURATION_BOUNDS: [f64; 14] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// What the core records with, while telemetry is on.
pub(crate) struct Telemetry {
    pub(crate) tracer: BoxedTracer,
    pub(crate) instruments: Instruments,
    pub(crate) record_principal: bool,
    /// The providers [`install`](super::install) built (none with [`use_global`]).
    pub(crate) providers: Option<(SdkTracerProvider, SdkMeterProvider)>,
    /// The registry of the Prometheus exposition, when asked for.
    pub(crate) prometheus: Option<prometheus::Registry>,
}

/// The metric instruments (names from OpenTelemetry's MCP conventions where they have one,
/// `mcpaxle.*` otherwise).
pub(crate) struct Instruments {
    /// `mcp.server.operation.duration`: per method, tool or prompt, error code.
    pub(crate) server_duration: Histogram<f64>,
    /// `mcp.client.operation.duration`, the same on the client.
    pub(crate) client_duration: Histogram<f64>,
    /// `mcpaxle.server.active_requests`: requests in flight, per method.
    pub(crate) active_requests: UpDownCounter<i64>,
    /// `mcpaxle.server.listen_streams`: open `subscriptions/listen` streams.
    pub(crate) listen_streams: UpDownCounter<i64>,
    /// `mcpaxle.server.legacy_sessions`: open 2025-11-25 sessions.
    pub(crate) legacy_sessions: UpDownCounter<i64>,
    /// `mcp.server.session.duration`: how long legacy sessions lasted.
    pub(crate) session_duration: Histogram<f64>,
    /// `mcpaxle.server.input_rounds`: results that asked the client for input (MRTR), per
    /// method and tool.
    pub(crate) input_rounds: Counter<u64>,
}

impl Instruments {
    fn new(meter: &Meter) -> Instruments {
        let duration = |name: &'static str, what: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(what)
                .with_boundaries(DURATION_BOUNDS.to_vec())
                .build()
        };
        Instruments {
            server_duration: duration(
                "mcp.server.operation.duration",
                "MCP request duration as observed on the receiver from the time it was received until the result or ack is sent",
            ),
            client_duration: duration(
                "mcp.client.operation.duration",
                "The duration of the MCP request as observed on the sender from the time it was sent until the response is received",
            ),
            active_requests: meter
                .i64_up_down_counter("mcpaxle.server.active_requests")
                .with_unit("{request}")
                .with_description("MCP requests being served")
                .build(),
            listen_streams: meter
                .i64_up_down_counter("mcpaxle.server.listen_streams")
                .with_unit("{stream}")
                .with_description("Open subscriptions/listen streams")
                .build(),
            legacy_sessions: meter
                .i64_up_down_counter("mcpaxle.server.legacy_sessions")
                .with_unit("{session}")
                .with_description("Open 2025-11-25 sessions")
                .build(),
            session_duration: duration(
                "mcp.server.session.duration",
                "The duration of the MCP session as observed on the MCP server",
            ),
            input_rounds: meter
                .u64_counter("mcpaxle.server.input_rounds")
                .with_unit("{round}")
                .with_description("Results that asked the client for input (multi round-trip requests)")
                .build(),
        }
    }
}

static ACTIVE: AtomicBool = AtomicBool::new(false);
static STATE: RwLock<Option<Arc<Telemetry>>> = RwLock::new(None);

/// What to record with, or `None` when telemetry is off (one atomic load).
pub(crate) fn current() -> Option<Arc<Telemetry>> {
    if !ACTIVE.load(Ordering::Relaxed) {
        return None;
    }
    STATE.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Turns telemetry on with OpenTelemetry's global providers (after they are set); the
/// previous setting, if any, is shut down.
pub(crate) fn set(
    providers: Option<(SdkTracerProvider, SdkMeterProvider)>,
    prometheus: Option<prometheus::Registry>,
    record_principal: bool,
) {
    let telemetry = Telemetry {
        tracer: global::tracer(SCOPE),
        instruments: Instruments::new(&global::meter(SCOPE)),
        record_principal,
        providers,
        prometheus,
    };
    let previous = STATE.write().unwrap_or_else(|e| e.into_inner()).replace(Arc::new(telemetry));
    ACTIVE.store(true, Ordering::Relaxed);
    if let Some(p) = previous {
        shut(&p);
    }
}

/// Turns telemetry on with the tracer and meter providers the application set as
/// OpenTelemetry's globals (`opentelemetry::global::set_tracer_provider`, ...): for a Rust
/// application that exports its own spans and metrics. `record_principal`: as
/// [`TelemetryOptions::record_principal`](super::TelemetryOptions::record_principal).
pub fn use_global(record_principal: bool) {
    set(None, None, record_principal);
}

/// Whether telemetry is on.
pub fn is_enabled() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// Exports every span and metric recorded so far, now (waits for the exporter).
pub fn flush() -> Result<()> {
    let Some(t) = current() else { return Ok(()) };
    if let Some((traces, metrics)) = &t.providers {
        traces.force_flush().map_err(|e| Error::internal(format!("telemetry: exporting spans failed: {e}")))?;
        metrics.force_flush().map_err(|e| Error::internal(format!("telemetry: exporting metrics failed: {e}")))?;
    }
    Ok(())
}

/// Exports what is left and turns telemetry off.
pub fn shutdown() {
    let previous = STATE.write().unwrap_or_else(|e| e.into_inner()).take();
    ACTIVE.store(false, Ordering::Relaxed);
    if let Some(p) = previous {
        shut(&p);
    }
}

fn shut(t: &Telemetry) {
    if let Some((traces, metrics)) = &t.providers {
        let _ = traces.shutdown();
        let _ = metrics.shutdown();
    }
}

/// The metrics in Prometheus's text exposition format, when telemetry is on with
/// `prometheus`; `None` otherwise.
pub fn prometheus_text() -> Option<String> {
    use prometheus::Encoder;
    let registry = current()?.prometheus.clone()?;
    let mut out = Vec::new();
    prometheus::TextEncoder::new().encode(&registry.gather(), &mut out).ok()?;
    String::from_utf8(out).ok()
}
