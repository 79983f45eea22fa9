//! Multi round-trip requests: the server answers with an [`InputRequiredResult`] listing
//! [`InputRequests`], and the client retries the original request with [`InputResponses`]
//! and the opaque `requestState`.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::common::{JsonObject, Meta, ResultType};
use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::roots::{ListRootsRequestParams, ListRootsResult};
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};

method_enum! {
    /// A request the server needs the client to fulfil before it can complete a request
    /// (`CreateMessageRequest | ListRootsRequest | ElicitRequest`): `{method, params}`, with
    /// no JSON-RPC id.
    ///
    /// ```
    /// use mcpaxle::schema::InputRequest;
    /// let r: InputRequest = serde_json::from_str(r#"{"method": "roots/list"}"#).unwrap();
    /// assert_eq!(r, InputRequest::ListRoots(None));
    /// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"method":"roots/list"}"#);
    /// ```
    pub enum InputRequest {
        /// `elicitation/create`: ask the user for information.
        Elicit(ElicitRequestParams) = "elicitation/create",
        /// `sampling/createMessage`: sample an LLM (deprecated).
        CreateMessage(CreateMessageRequestParams) = "sampling/createMessage",
        /// `roots/list`: list the client's roots (deprecated); `params` may be omitted.
        ListRoots(Option<ListRootsRequestParams>) = "roots/list",
    }
}

/// Requests the client must fulfil, by server-assigned key.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The client's answers to [`InputRequests`], under the same keys. Untyped on the wire: the
/// server parses each value as the result of the request it made under that key (an
/// [`ElicitResult`], [`CreateMessageResult`] or [`ListRootsResult`]), or as an
/// [`InputResponse`].
pub type InputResponses = JsonObject;

/// One answer of [`InputResponses`] (`CreateMessageResult | ListRootsResult | ElicitResult`),
/// told apart by its required members (`model`, `roots`, `action`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// The answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// The answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// The answer to `elicitation/create`.
    Elicit(ElicitResult),
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicit(r)
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(r)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

/// A result telling the client that more input is needed before the request can complete
/// (`"resultType": "input_required"`). At least one of `input_requests` and `request_state`
/// must be present.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The kind of result: `input_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Requests to fulfil before retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client must send back unchanged with the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Members this schema revision does not define, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

impl InputRequiredResult {
    /// An `input_required` result with no requests and no state yet.
    pub fn new() -> Self {
        InputRequiredResult { result_type: Some(ResultType::InputRequired), ..Default::default() }
    }

    /// Adds an input request under `key`.
    pub fn with_input_request(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.input_requests.get_or_insert_with(BTreeMap::new).insert(key.into(), request);
        self
    }

    /// Sets the opaque request state.
    pub fn with_request_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

/// The retry members any client request's params may carry (`InputResponseRequestParams`);
/// parse any params as this to read them without knowing the method.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseRequestParams {
    /// Request metadata; see [`RequestMetaObject`](super::RequestMetaObject).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Answers to the previous `InputRequiredResult`'s requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The previous `InputRequiredResult`'s opaque state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// The method's own params, kept as received.
    #[serde(flatten)]
    pub extra: Meta,
}

/// The result of a request that may need input (`tools/call`, `prompts/get`,
/// `resources/read`): `T`, or an [`InputRequiredResult`] when `resultType` is
/// `"input_required"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResultOrInputRequired<T> {
    /// The request completed.
    Complete(T),
    /// The request needs input; retry with the answers.
    InputRequired(InputRequiredResult),
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for ResultOrInputRequired<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        if v.get("resultType").and_then(Value::as_str) == Some("input_required") {
            serde_json::from_value(v).map(ResultOrInputRequired::InputRequired).map_err(D::Error::custom)
        } else {
            serde_json::from_value(v).map(ResultOrInputRequired::Complete).map_err(D::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::CallToolResult;
    use super::*;
    use serde_json::json;

    #[test]
    fn result_type_selects_the_variant() {
        let r: ResultOrInputRequired<CallToolResult> =
            serde_json::from_value(json!({"resultType": "input_required", "requestState": "s"})).unwrap();
        assert!(matches!(r, ResultOrInputRequired::InputRequired(_)));
        let r: ResultOrInputRequired<CallToolResult> =
            serde_json::from_value(json!({"resultType": "complete", "content": []})).unwrap();
        assert!(matches!(r, ResultOrInputRequired::Complete(_)));
    }

    #[test]
    fn input_required_builder() {
        let r = InputRequiredResult::new()
            .with_input_request("roots", InputRequest::ListRoots(None))
            .with_request_state("s");
        assert_eq!(
            serde_json::to_value(r).unwrap(),
            json!({"resultType": "input_required", "inputRequests": {"roots": {"method": "roots/list"}}, "requestState": "s"})
        );
    }

    #[test]
    fn input_responses_are_told_apart() {
        let r: InputResponse = serde_json::from_value(json!({"action": "decline"})).unwrap();
        assert_eq!(r, InputResponse::Elicit(ElicitResult::decline()));
        let r: InputResponse = serde_json::from_value(json!({"roots": []})).unwrap();
        assert!(matches!(r, InputResponse::ListRoots(_)));
    }
}
