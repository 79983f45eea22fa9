//! W3C trace context (`traceparent`, `tracestate`) and `baggage`, in a request's `_meta` (as
//! OpenTelemetry's MCP conventions carry them) and in HTTP headers.

use opentelemetry::Context;
use opentelemetry::baggage::BaggageExt;
use opentelemetry::propagation::{Extractor, Injector, TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// The keys trace context travels under, in `_meta` as in HTTP headers.
pub(crate) const KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// The trace context a handler runs in: the W3C `traceparent` of the request's server span,
/// its `tracestate` and the caller's `baggage`, as text. A binding hands it to the host's
/// OpenTelemetry (Python's context, Node's active context), so that the spans the handler's
/// own code starts nest under the request's span.
#[derive(Debug, Clone, Default)]
pub struct TraceContext {
    /// `traceparent`, e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
    pub traceparent: String,
    /// `tracestate`, empty when there is none.
    pub tracestate: String,
    /// `baggage`, empty when there is none.
    pub baggage: String,
    /// The context holding the span itself (in this process), when there is one.
    span: Context,
}

impl PartialEq for TraceContext {
    fn eq(&self, other: &Self) -> bool {
        (&self.traceparent, &self.tracestate, &self.baggage) == (&other.traceparent, &other.tracestate, &other.baggage)
    }
}

impl TraceContext {
    /// The context as a carrier: `traceparent`, and `tracestate` and `baggage` when not empty.
    pub fn to_map(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let mut put = |k: &str, v: &str| {
            if !v.is_empty() {
                m.insert(k.to_owned(), Value::String(v.to_owned()));
            }
        };
        put("traceparent", &self.traceparent);
        put("tracestate", &self.tracestate);
        put("baggage", &self.baggage);
        m
    }

    /// The OpenTelemetry context it stands for, for Rust code that starts spans under the
    /// request's span: the span's own (in this process), else a remote parent.
    pub fn to_context(&self) -> Context {
        if self.span.has_active_span() { self.span.clone() } else { extract(&self.to_map()) }
    }

    /// Links the span to the span of `traceparent` (an earlier request this one continues:
    /// the first round of a multi round-trip request, the call that created a task); `why`
    /// says which, as the link's `mcpaxle.link` attribute. Nothing for a malformed one.
    pub(crate) fn link(&self, traceparent: &str, why: &'static str) {
        let mut carrier = Map::new();
        carrier.insert("traceparent".into(), Value::String(traceparent.to_owned()));
        let linked = extract(&carrier).span().span_context().clone();
        if linked.is_valid() {
            self.span.span().add_link(linked, vec![opentelemetry::KeyValue::new("mcpaxle.link", why)]);
        }
    }

    /// The trace context of `cx` (its span and baggage), or `None` when `cx` has no valid span.
    /// Written directly from the span context: this runs for every request while telemetry is
    /// on, sampled or not.
    pub(crate) fn of(cx: &Context) -> Option<TraceContext> {
        let span = cx.span();
        let sc = span.span_context();
        if !sc.is_valid() {
            return None;
        }
        let baggage = if cx.baggage().is_empty() {
            String::new()
        } else {
            let mut m = Map::new();
            BaggagePropagator::new().inject_context(cx, &mut MetaInjector(&mut m));
            m.remove("baggage").and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
        };
        Some(TraceContext {
            traceparent: format!("00-{}-{}-{:02x}", sc.trace_id(), sc.span_id(), sc.trace_flags().to_u8()),
            tracestate: sc.trace_state().header(),
            baggage,
            span: cx.clone(),
        })
    }
}

fn propagator() -> &'static TextMapCompositePropagator {
    static P: OnceLock<TextMapCompositePropagator> = OnceLock::new();
    P.get_or_init(|| {
        TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ])
    })
}

struct MetaCarrier<'a>(&'a Map<String, Value>);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

struct HeaderCarrier<'a>(&'a http::HeaderMap);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// The context carried by a `_meta` object (an empty context when it carries none).
pub(crate) fn extract(meta: &Map<String, Value>) -> Context {
    propagator().extract_with_context(&Context::new(), &MetaCarrier(meta))
}

/// The context of a request: its `_meta`'s when that has a `traceparent`, else its HTTP
/// headers' (a proxy or a caller that traces HTTP only), else none.
pub(crate) fn extract_request(meta: Option<&Map<String, Value>>, headers: Option<&http::HeaderMap>) -> Context {
    match (meta, headers) {
        (Some(m), _) if m.contains_key("traceparent") => extract(m),
        (_, Some(h)) if h.contains_key("traceparent") => {
            propagator().extract_with_context(&Context::new(), &HeaderCarrier(h))
        }
        _ => Context::new(),
    }
}

/// Writes `cx`'s trace context into a `_meta` object (replacing what it carried).
pub(crate) fn inject(cx: &Context, meta: &mut Map<String, Value>) {
    for k in KEYS {
        meta.remove(k);
    }
    propagator().inject_context(cx, &mut MetaInjector(meta));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn meta_round_trips_trace_context_and_baggage() {
        let meta = json!({"traceparent": PARENT, "tracestate": "k=v", "baggage": "user=alice"});
        let cx = extract(meta.as_object().unwrap());
        assert!(cx.span().span_context().is_remote());
        let tc = TraceContext::of(&cx).unwrap();
        assert_eq!(tc.traceparent, PARENT);
        assert_eq!(tc.tracestate, "k=v");
        assert_eq!(tc.baggage, "user=alice");
        assert_eq!(tc.to_context().span().span_context().trace_id(), cx.span().span_context().trace_id());
    }

    #[test]
    fn meta_wins_over_headers_and_headers_serve_without_it() {
        let mut h = http::HeaderMap::new();
        h.insert("traceparent", "00-11111111111111111111111111111111-2222222222222222-01".parse().unwrap());
        let meta = json!({"traceparent": PARENT});
        let from_meta = extract_request(meta.as_object(), Some(&h));
        assert_eq!(TraceContext::of(&from_meta).unwrap().traceparent, PARENT);
        let from_headers = extract_request(Some(&Map::new()), Some(&h));
        assert!(TraceContext::of(&from_headers).unwrap().traceparent.starts_with("00-1111"));
        assert!(TraceContext::of(&extract_request(None, None)).is_none());
    }

    #[test]
    fn a_malformed_traceparent_is_no_parent() {
        let meta = json!({"traceparent": "00-zz-not-a-trace"});
        assert!(TraceContext::of(&extract(meta.as_object().unwrap())).is_none());
    }
}
