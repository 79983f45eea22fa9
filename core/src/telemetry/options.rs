//! [`TelemetryOptions`]: where traces and metrics go, and what they record.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// How [`install`](super::install) sets up traces and metrics for the process. Every field
/// left out falls back to OpenTelemetry's standard environment variables
/// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`/`_ARG`, `OTEL_METRIC_EXPORT_INTERVAL`,
/// the per-signal `OTEL_EXPORTER_OTLP_TRACES_*` and `_METRICS_*`), then to their defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TelemetryOptions {
    /// The OTLP/HTTP (protobuf) base URL, e.g. `"http://127.0.0.1:4318"`: traces go to
    /// `{endpoint}/v1/traces`, metrics to `{endpoint}/v1/metrics`. Default: the environment,
    /// else `http://localhost:4318`.
    pub endpoint: Option<String>,
    /// Headers sent with every export (an API key of a hosted backend); added to those of
    /// `OTEL_EXPORTER_OTLP_HEADERS`.
    pub headers: BTreeMap<String, String>,
    /// The `service.name` of the process's resource. Default: `OTEL_SERVICE_NAME`, else
    /// `unknown_service`.
    #[serde(alias = "service_name")]
    pub service_name: Option<String>,
    /// The share of new traces sampled, 0.0 to 1.0; a request whose caller's trace is sampled
    /// (or not) follows its caller. Default: `OTEL_TRACES_SAMPLER`, else every trace.
    #[serde(alias = "sample_ratio", deserialize_with = "ratio")]
    pub sample_ratio: Option<f64>,
    /// Whether spans are exported (default true).
    pub traces: bool,
    /// Whether metrics are exported over OTLP (default true).
    pub metrics: bool,
    /// How often metrics are exported. Default: `OTEL_METRIC_EXPORT_INTERVAL`, else 60 s.
    #[serde(rename = "metricsIntervalMs", with = "crate::options::opt_positive_ms")]
    #[serde(alias = "metrics_interval_ms")]
    pub metrics_interval: Option<Duration>,
    /// Whether the metrics are also kept for a Prometheus scrape: the built-in HTTP server
    /// answers them at its `metricsPath` (default false).
    pub prometheus: bool,
    /// Whether server spans record the authenticated principal (`enduser.id`, the bearer
    /// token's subject). Default false: a subject is personal data in many deployments.
    #[serde(alias = "record_principal")]
    pub record_principal: bool,
}

impl Default for TelemetryOptions {
    fn default() -> Self {
        TelemetryOptions {
            endpoint: None,
            headers: BTreeMap::new(),
            service_name: None,
            sample_ratio: None,
            traces: true,
            metrics: true,
            metrics_interval: None,
            prometheus: false,
            record_principal: false,
        }
    }
}

fn ratio<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<f64>, D::Error> {
    crate::options::checked(d, |r: &Option<f64>| match r {
        Some(r) if !(0.0..=1.0).contains(r) => Err(format!("{r} is not a ratio between 0.0 and 1.0")),
        _ => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_by_both_spellings_and_checked() {
        let o: TelemetryOptions = crate::options::from_json(
            "telemetry options",
            serde_json::json!({"endpoint": "http://127.0.0.1:4318", "sample_ratio": 0.25, "metricsIntervalMs": 500}),
        )
        .unwrap();
        assert_eq!(o.sample_ratio, Some(0.25));
        assert_eq!(o.metrics_interval, Some(Duration::from_millis(500)));
        assert!(o.traces && o.metrics && !o.prometheus && !o.record_principal);
        let e =
            crate::options::from_json::<TelemetryOptions>("telemetry options", serde_json::json!({"sampleRatio": 2}))
                .unwrap_err();
        assert!(e.message().contains("sampleRatio: 2 is not a ratio between 0.0 and 1.0"), "{e}");
    }
}
