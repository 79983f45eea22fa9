//! A request with everything the client does around it: the cache, the protocol's retries
//! (renegotiating the version, listing tools again after a header mismatch, a new legacy
//! session after one expired) and the MRTR loop.

use super::conn::Inner;
use super::era;
use super::mrtr::answer_input_requests;
use super::options::CallOptions;
use crate::era::Era;
use crate::error::{Error, ErrorKind, Result};
use crate::headers;
use crate::jsonrpc::{self, Outcome};
use crate::schema::Tool;
use crate::telemetry::{self, ClientSpan, Described, Ended};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Drops the tools whose `x-mcp-header` annotations are invalid (HTTP only, with a warning)
/// and those that are not tool definitions, and remembers the header parameters of the rest.
pub(crate) fn filter_tools(inner: &Inner, mut result: Value) -> Value {
    let http = inner.wire.is_http();
    if let Some(Value::Array(tools)) = result.get_mut("tools") {
        tools.retain(|t| {
            let Ok(tool) = serde_json::from_value::<Tool>(t.clone()) else {
                let name = t.get("name").map(ToString::to_string).unwrap_or_default();
                tracing::warn!(tool = %name, "dropping a tool whose definition is not valid");
                return false;
            };
            match headers::header_params(&tool.input_schema) {
                Ok(params) => {
                    inner.remember_tool(&tool.name, params);
                    true
                }
                Err(e) if http => {
                    tracing::warn!(tool = %tool.name, "dropping tool {:?} from tools/list: {e}", tool.name);
                    false
                }
                Err(_) => {
                    inner.remember_tool(&tool.name, Vec::new());
                    true
                }
            }
        });
    }
    result
}

impl Inner {
    /// One request with the protocol's retries, without MRTR: the result object.
    pub(super) async fn round_trip(
        self: &Arc<Self>,
        method: &str,
        params: &Map<String, Value>,
        opts: &CallOptions,
    ) -> Result<Value> {
        let (mut retried_version, mut retried_headers, mut retried_session) = (false, false, false);
        loop {
            let timeout = opts.timeout.unwrap_or(self.options.request_timeout);
            let out = self.outbound(method, params.clone(), opts);
            match self.exchange(out, opts, timeout).await {
                Ok((resp, _)) => match resp.outcome {
                    Outcome::Result(v) => return Ok(v),
                    Outcome::Error(e) => {
                        let modern = self.state().era == Era::Modern;
                        if e.code == jsonrpc::UNSUPPORTED_PROTOCOL_VERSION && modern && !retried_version {
                            retried_version = true;
                            if era::renegotiate(self, e.data.as_ref()).await? {
                                continue;
                            }
                        }
                        if e.code == jsonrpc::HEADER_MISMATCH && method == "tools/call" && modern && !retried_headers {
                            // The tool's x-mcp-header parameters may have changed: list again.
                            retried_headers = true;
                            self.refresh_tools().await;
                            continue;
                        }
                        return Err(Error::remote(e));
                    }
                },
                Err(e) if !retried_session && e.data().and_then(|d| d.get("sessionExpired")).is_some() => {
                    retried_session = true;
                    era::reinitialize(self).await?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn refresh_tools(self: &Arc<Self>) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let mut cursor: Option<String> = None;
            for _ in 0..100 {
                let mut params = Map::new();
                if let Some(c) = &cursor {
                    params.insert("cursor".into(), json!(c));
                }
                let Ok(v) = self.request("tools/list", params, &CallOptions::new().bypass_cache()).await else {
                    return;
                };
                filter_tools(self, v.clone());
                cursor = v.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
                if cursor.is_none() {
                    return;
                }
            }
        })
    }

    /// A request with everything: cache, retries, the MRTR loop (answers to `inputRequests`
    /// and the `requestState` go into a retry with a new id), and a task followed to its end.
    pub fn request<'a>(
        self: &'a Arc<Self>,
        method: &'a str,
        params: Map<String, Value>,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Value>> {
        self.request_or_task(method, params, opts, true)
    }

    /// [`Inner::request`], which returns a `CreateTaskResult` as it came when `follow_tasks`
    /// is false (an explicit task handle follows it later).
    pub(super) fn request_or_task<'a>(
        self: &'a Arc<Self>,
        method: &'a str,
        params: Map<String, Value>,
        opts: &'a CallOptions,
        follow_tasks: bool,
    ) -> BoxFuture<'a, Result<Value>> {
        let Some(mut span) = self.span(method, &params, opts) else {
            return self.request_untraced(method, params, opts, follow_tasks);
        };
        Box::pin(async move {
            let mut traced = opts.clone();
            span.inject(traced.meta.get_or_insert_with(Map::new));
            let result = self.request_untraced(method, params, &traced, follow_tasks).await;
            span.finish(match &result {
                Ok(v) => Ended::of_result(v),
                Err(e) => Ended::Error { code: e.code(), message: e.message() },
            });
            result
        })
    }

    /// The span of a request, while telemetry is on.
    fn span(&self, method: &str, params: &Map<String, Value>, opts: &CallOptions) -> Option<ClientSpan> {
        if !telemetry::is_enabled() {
            return None;
        }
        let st = self.state();
        let described = Described {
            method,
            params: Some(params),
            id: None,
            protocol_version: Some(&st.version),
            session_id: None,
            http: self.wire.is_http(),
            known_target: true,
        };
        ClientSpan::start(&described, st.era, opts.meta.as_ref())
    }

    /// [`Inner::request_or_task`] without its span.
    fn request_untraced<'a>(
        self: &'a Arc<Self>,
        method: &'a str,
        params: Map<String, Value>,
        opts: &'a CallOptions,
        follow_tasks: bool,
    ) -> BoxFuture<'a, Result<Value>> {
        Box::pin(async move {
            let modern = self.state().era == Era::Modern;
            let key = (self.options.cache && modern)
                .then(|| self.cache.key(method, &params, self.authorization().as_deref()))
                .flatten();
            if let (Some(k), false) = (&key, opts.bypass_cache) {
                if let Some(v) = self.cache.get(k) {
                    return Ok(v);
                }
            }
            let mut retry = Map::new();
            let mut rounds = 0;
            loop {
                let mut p = params.clone();
                p.extend(retry.clone());
                let may_be_task = method == "tools/call" && self.declares_tasks();
                let result = if may_be_task {
                    self.call_round_trip(p, opts).await?
                } else {
                    self.round_trip(method, &p, opts).await?
                };
                if may_be_task && result.get("resultType").and_then(Value::as_str) == Some("task") {
                    return if follow_tasks { self.follow_task(result, opts).await } else { Ok(result) };
                }
                if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                    if let (Some(k), 0) = (&key, rounds) {
                        self.cache.put(k, &result);
                    }
                    return Ok(result);
                }
                if rounds >= self.options.max_input_rounds {
                    return Err(Error::new(
                        ErrorKind::InputRequired,
                        format!("{method} still requires input after {rounds} rounds (the limit); giving up"),
                    )
                    .with_data(result));
                }
                rounds += 1;
                retry.clear();
                if let Some(requests) = result.get("inputRequests").and_then(Value::as_object).filter(|r| !r.is_empty())
                {
                    let cancel = opts.cancel.clone().unwrap_or_default();
                    let answers = tokio::select! {
                        _ = cancel.cancelled() => return Err(Error::new(ErrorKind::Cancelled, format!("{method} was cancelled"))),
                        a = answer_input_requests(&self.options, requests) => a?,
                    };
                    retry.insert("inputResponses".into(), Value::Object(answers));
                }
                if let Some(state) = result.get("requestState").filter(|s| !s.is_null()) {
                    retry.insert("requestState".into(), state.clone());
                }
            }
        })
    }
}
