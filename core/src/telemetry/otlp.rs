//! [`install`]: OpenTelemetry's SDK for the process, exporting OTLP over HTTP (protobuf) through
//! the core's own hyper client, and optionally a Prometheus registry.

use super::options::TelemetryOptions;
use super::state;
use crate::error::{Error, Result};
use crate::transport::http::hyper_client::{HttpClient as Hyper, RequestBody, new_http_client};
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use opentelemetry::global;
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tokio::runtime::Handle;

/// The most a collector's answer may hold (it is read whole, then dropped).
const MAX_ANSWER: usize = 1 << 20;

/// How long one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Turns traces and metrics on for the process: OpenTelemetry's SDK with an OTLP/HTTP
/// exporter per `options` (and the `OTEL_*` environment), set as OpenTelemetry's global
/// providers too, so that a Rust application's own spans go the same way. Called again, it
/// replaces the previous setting (which is flushed first). Call it inside a tokio runtime:
/// exports run on it. Spans are batched (`OTEL_BSP_*`) and metrics exported every
/// `metricsIntervalMs`; [`flush`](super::flush) sends what is pending at once.
pub fn install(options: TelemetryOptions) -> Result<()> {
    let runtime = Handle::try_current().map_err(|_| {
        Error::usage("telemetry: install it from inside a tokio runtime (exports run on it)".to_owned())
    })?;
    let client = Exporter { client: new_http_client()?, runtime };
    let endpoint =
        |signal: &str| options.endpoint.as_deref().map(|e| format!("{}/v1/{signal}", e.trim_end_matches('/')));
    let headers: HashMap<String, String> = options.headers.clone().into_iter().collect();
    let failed = |what: &str, e: &dyn std::fmt::Display| Error::usage(format!("telemetry: {what}: {e}"));

    let mut resource = Resource::builder();
    if let Some(name) = &options.service_name {
        resource = resource.with_service_name(name.clone());
    }
    let resource = resource.build();

    let mut traces = SdkTracerProvider::builder().with_resource(resource.clone());
    if let Some(ratio) = options.sample_ratio {
        traces = traces.with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio))));
    }
    if options.traces {
        let mut exporter = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_http_client(client.clone())
            .with_headers(headers.clone());
        if let Some(url) = endpoint("traces") {
            exporter = exporter.with_endpoint(url);
        }
        traces = traces.with_batch_exporter(exporter.build().map_err(|e| failed("the span exporter", &e))?);
    }
    let traces = traces.build();

    let mut metrics = SdkMeterProvider::builder().with_resource(resource);
    if options.metrics {
        let mut exporter = MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_http_client(client)
            .with_headers(headers);
        if let Some(url) = endpoint("metrics") {
            exporter = exporter.with_endpoint(url);
        }
        let mut reader = PeriodicReader::builder(exporter.build().map_err(|e| failed("the metric exporter", &e))?);
        if let Some(interval) = options.metrics_interval {
            reader = reader.with_interval(interval);
        }
        metrics = metrics.with_reader(reader.build());
    }
    let registry = if options.prometheus {
        let registry = prometheus::Registry::new();
        let exporter = opentelemetry_prometheus::exporter()
            .with_registry(registry.clone())
            .build()
            .map_err(|e| failed("the Prometheus registry", &e))?;
        metrics = metrics.with_reader(exporter);
        Some(registry)
    } else {
        None
    };
    let metrics = metrics.build();

    global::set_tracer_provider(traces.clone());
    global::set_meter_provider(metrics.clone());
    state::set(Some((traces, metrics)), registry, options.record_principal);
    Ok(())
}

/// Turns telemetry on when the standard environment asks for OTLP export: one of
/// `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
/// `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is set, and `OTEL_SDK_DISABLED` is not `true`
/// (`OTEL_TRACES_EXPORTER=none` or `OTEL_METRICS_EXPORTER=none` leaves that signal out).
/// The bindings call it as their runtime starts; whether it turned telemetry on is returned.
/// Call it inside a tokio runtime.
pub fn install_from_env() -> Result<bool> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let is = |name: &str, value: &str| var(name).is_some_and(|v| v.trim().eq_ignore_ascii_case(value));
    let asked =
        ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"]
            .iter()
            .any(|n| var(n).is_some());
    if !asked || is("OTEL_SDK_DISABLED", "true") || state::is_enabled() {
        return Ok(false);
    }
    let options = TelemetryOptions {
        traces: !is("OTEL_TRACES_EXPORTER", "none"),
        metrics: !is("OTEL_METRICS_EXPORTER", "none"),
        ..TelemetryOptions::default()
    };
    install(options).map(|()| true)
}

/// OTLP's HTTP requests, sent by the core's hyper client on the runtime [`install`] was
/// called in (the SDK's export threads are not tokio's).
#[derive(Clone)]
struct Exporter {
    client: Hyper,
    runtime: Handle,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("mcpaxle OTLP client")
    }
}

impl HttpClient for Exporter {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: http::Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<http::Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        let client = self.client.clone();
        let sent = self.runtime.spawn(async move {
            let (parts, body) = request.into_parts();
            let exchange = async {
                let response = client.request(http::Request::from_parts(parts, RequestBody::new(body))).await?;
                let (parts, body) = response.into_parts();
                let body = Limited::new(body, MAX_ANSWER).collect().await?.to_bytes();
                Ok::<_, HttpError>(http::Response::from_parts(parts, body))
            };
            match tokio::time::timeout(EXPORT_TIMEOUT, exchange).await {
                Ok(r) => r,
                Err(_) => Err(format!("no answer from the collector in {EXPORT_TIMEOUT:?}").into()),
            }
        });
        Box::pin(async move { sent.await.map_err(|e| -> HttpError { Box::new(e) })? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_outside_a_runtime_says_where_to_call_it() {
        let e = install(TelemetryOptions::default()).unwrap_err();
        assert!(e.message().contains("inside a tokio runtime"), "{e}");
    }
}
