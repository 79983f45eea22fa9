//! Traces and metrics by OpenTelemetry: one span per request on each side (the attributes of
//! OpenTelemetry's MCP semantic conventions), W3C trace context carried in `_meta` (and read
//! from HTTP headers), and the request metrics (durations per method and tool, errors by
//! code, requests in flight, listen streams, legacy sessions, MRTR rounds).
//!
//! Off by default, and then a request costs one atomic load. [`install`] turns it on for the
//! process with an OTLP/HTTP exporter (and, optionally, a Prometheus registry the built-in
//! HTTP server exposes at [`HttpOptions::metrics_path`](crate::transport::http::HttpOptions));
//! [`use_global`] turns it on with the providers a Rust application set as OpenTelemetry's
//! globals itself. The server and client use [`spans`]; only [`otlp`] touches the network.

mod options;
mod otlp;
mod propagation;
mod spans;
mod state;

pub use options::TelemetryOptions;
pub use otlp::{install, install_from_env};
pub use propagation::TraceContext;
pub(crate) use spans::{ClientSpan, Counted, Described, Ended, Gauge, ServerSpan, gauge, in_trace};
pub use state::{flush, is_enabled, prometheus_text, shutdown, use_global};
