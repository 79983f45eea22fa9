//! Every example of the specification (`spec/2026-07-28/examples/<TypeName>/*.json`, vendored)
//! parses into the Rust type of that name, serializes back to the same JSON, and validates
//! against `schema.json`; plus tests of the `support` validation helpers themselves.

mod support;

use std::path::Path;

use mcpaxle::jsonrpc::{self, ErrorObject, Outcome, Response};
use mcpaxle::schema::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Reads an example into a Rust value and serializes it back.
type Check = fn(&Value) -> Result<Value, String>;

fn parse<T: DeserializeOwned>(v: &Value) -> Result<T, String> {
    serde_json::from_value(v.clone()).map_err(|e| format!("does not parse as {}: {e}", std::any::type_name::<T>()))
}

fn to_json<T: Serialize>(t: &T) -> Result<Value, String> {
    serde_json::to_value(t).map_err(|e| format!("does not serialize: {e}"))
}

/// The example is a `T`.
fn plain<T: Serialize + DeserializeOwned>(v: &Value) -> Result<Value, String> {
    to_json(&parse::<T>(v)?)
}

/// The example is a member of the union `T` (e.g. a `TextContent` of `ContentBlock`), and
/// reads as the expected variant.
fn variant<T: Serialize + DeserializeOwned + std::fmt::Debug>(v: &Value, is: fn(&T) -> bool) -> Result<Value, String> {
    let t = parse::<T>(v)?;
    if !is(&t) {
        return Err(format!("read as the wrong variant: {t:?}"));
    }
    to_json(&t)
}

/// The example is a form-field schema, and `PrimitiveSchemaDefinition` reads it as that member.
fn primitive<T>(v: &Value) -> Result<Value, String>
where
    T: Serialize + DeserializeOwned + Clone + Into<PrimitiveSchemaDefinition>,
{
    let t = parse::<T>(v)?;
    let p = parse::<PrimitiveSchemaDefinition>(v)?;
    if p != t.clone().into() {
        return Err(format!("PrimitiveSchemaDefinition read it as another member: {p:?}"));
    }
    to_json(&t)
}

/// The example is a JSON-RPC request from the client, of `method`.
fn client_request(v: &Value, method: &str) -> Result<Value, String> {
    let envelope: jsonrpc::Request = parse(v)?;
    let typed = ClientRequest::from_request(&envelope).map_err(|e| e.to_string())?;
    if typed.method() != method {
        return Err(format!("read as {}, expected {method}", typed.method()));
    }
    to_json(&typed.to_request(envelope.id))
}

/// The example is a JSON-RPC notification from the server, of `method`.
fn server_notification(v: &Value, method: &str) -> Result<Value, String> {
    let envelope: jsonrpc::Notification = parse(v)?;
    let typed = ServerNotification::from_notification(&envelope).map_err(|e| e.to_string())?;
    if typed.method() != method {
        return Err(format!("read as {}, expected {method}", typed.method()));
    }
    to_json(&typed.to_notification())
}

/// The example is a JSON-RPC notification from the client, of `method`.
fn client_notification(v: &Value, method: &str) -> Result<Value, String> {
    let envelope: jsonrpc::Notification = parse(v)?;
    let typed = ClientNotification::from_notification(&envelope).map_err(|e| e.to_string())?;
    if typed.method() != method {
        return Err(format!("read as {}, expected {method}", typed.method()));
    }
    to_json(&typed.to_notification())
}

/// The example is an `{method, params}` input request (no JSON-RPC envelope) of `method`.
fn input_request(v: &Value, method: &str) -> Result<Value, String> {
    let typed: InputRequest = parse(v)?;
    if typed.method() != method {
        return Err(format!("read as {}, expected {method}", typed.method()));
    }
    to_json(&typed)
}

/// The example is an `InputResponses` map whose every value reads as an `InputResponse`.
fn input_responses(v: &Value) -> Result<Value, String> {
    let map: InputResponses = parse(v)?;
    for (key, answer) in &map {
        let typed: InputResponse = parse(answer).map_err(|e| format!("{key}: {e}"))?;
        if to_json(&typed)? != *answer {
            return Err(format!("{key}: InputResponse does not round-trip"));
        }
    }
    to_json(&map)
}

/// The example is a JSON-RPC result response whose result is a `T`.
fn result_response<T: Serialize + DeserializeOwned>(v: &Value) -> Result<Value, String> {
    let envelope: Response = parse(v)?;
    let (Some(id), Outcome::Result(result)) = (envelope.id, envelope.outcome) else {
        return Err("not a result response with an id".to_owned());
    };
    let typed: T = parse(&result)?;
    to_json(&Response::result(id, to_json(&typed)?))
}

/// The example is a JSON-RPC error response with `code`, whose `data` (if `D` is not `()`)
/// reads as `D`.
fn error_response<D: Serialize + DeserializeOwned>(v: &Value, code: i32) -> Result<Value, String> {
    let envelope: Response = parse(v)?;
    let Outcome::Error(mut error) = envelope.outcome else {
        return Err("not an error response".to_owned());
    };
    if error.code != code {
        return Err(format!("code {}, expected {code}", error.code));
    }
    if let Some(data) = error.data.take() {
        error.data = Some(to_json(&parse::<D>(&data)?)?);
    }
    to_json(&Response::error(envelope.id, error))
}

/// The example is a bare JSON-RPC error object with `code`.
fn error_object(v: &Value, code: i32) -> Result<Value, String> {
    let error: ErrorObject = parse(v)?;
    if error.code != code {
        return Err(format!("code {}, expected {code}", error.code));
    }
    to_json(&error)
}

/// Maps every example directory (a schema type name) to the check of its examples.
macro_rules! example_types {
    ($($dir:ident => $check:expr,)*) => {
        fn check_for(dir: &str) -> Option<Check> {
            match dir {
                $(stringify!($dir) => Some($check as Check),)*
                _ => None,
            }
        }
    };
}

example_types! {
    AudioContent => |v: &Value| variant::<ContentBlock>(v, |b| matches!(b, ContentBlock::Audio(_))),
    BlobResourceContents => |v: &Value| {
        variant::<ResourceContents>(v, |c| matches!(c, ResourceContents::Blob(_)))?;
        plain::<BlobResourceContents>(v)
    },
    BooleanSchema => primitive::<BooleanSchema>,
    CallToolRequest => |v: &Value| client_request(v, "tools/call"),
    CallToolRequestParams => plain::<CallToolRequestParams>,
    CallToolResult => plain::<CallToolResult>,
    CallToolResultResponse => result_response::<ResultOrInputRequired<CallToolResult>>,
    CancelledNotification => |v: &Value| {
        server_notification(v, "notifications/cancelled")?;
        client_notification(v, "notifications/cancelled")
    },
    CancelledNotificationParams => plain::<CancelledNotificationParams>,
    ClientCapabilities => plain::<ClientCapabilities>,
    CompleteRequest => |v: &Value| client_request(v, "completion/complete"),
    CompleteRequestParams => plain::<CompleteRequestParams>,
    CompleteResult => plain::<CompleteResult>,
    CompleteResultResponse => result_response::<CompleteResult>,
    CreateMessageRequest => |v: &Value| input_request(v, "sampling/createMessage"),
    CreateMessageRequestParams => plain::<CreateMessageRequestParams>,
    CreateMessageResult => |v: &Value| {
        variant::<InputResponse>(v, |r| matches!(r, InputResponse::CreateMessage(_)))?;
        plain::<CreateMessageResult>(v)
    },
    DiscoverRequest => |v: &Value| client_request(v, "server/discover"),
    DiscoverResult => plain::<DiscoverResult>,
    DiscoverResultResponse => result_response::<DiscoverResult>,
    ElicitRequest => |v: &Value| input_request(v, "elicitation/create"),
    ElicitRequestFormParams => |v: &Value| {
        variant::<ElicitRequestParams>(v, |p| matches!(p, ElicitRequestParams::Form(_)))?;
        plain::<ElicitRequestFormParams>(v)
    },
    ElicitRequestURLParams => |v: &Value| {
        variant::<ElicitRequestParams>(v, |p| matches!(p, ElicitRequestParams::Url(_)))?;
        plain::<ElicitRequestURLParams>(v)
    },
    ElicitResult => |v: &Value| {
        variant::<InputResponse>(v, |r| matches!(r, InputResponse::Elicit(_)))?;
        plain::<ElicitResult>(v)
    },
    EmbeddedResource => |v: &Value| variant::<ContentBlock>(v, |b| matches!(b, ContentBlock::Resource(_))),
    GetPromptRequest => |v: &Value| client_request(v, "prompts/get"),
    GetPromptRequestParams => plain::<GetPromptRequestParams>,
    GetPromptResult => plain::<GetPromptResult>,
    GetPromptResultResponse => result_response::<ResultOrInputRequired<GetPromptResult>>,
    HeaderMismatchError => |v: &Value| error_response::<Value>(v, jsonrpc::HEADER_MISMATCH),
    ImageContent => |v: &Value| variant::<ContentBlock>(v, |b| matches!(b, ContentBlock::Image(_))),
    InputRequests => plain::<InputRequests>,
    InputRequiredResult => plain::<InputRequiredResult>,
    InputResponses => input_responses,
    InternalError => |v: &Value| error_object(v, jsonrpc::INTERNAL_ERROR),
    InvalidParamsError => |v: &Value| error_object(v, jsonrpc::INVALID_PARAMS),
    ListPromptsRequest => |v: &Value| client_request(v, "prompts/list"),
    ListPromptsResult => plain::<ListPromptsResult>,
    ListPromptsResultResponse => result_response::<ListPromptsResult>,
    ListResourceTemplatesRequest => |v: &Value| client_request(v, "resources/templates/list"),
    ListResourceTemplatesResult => plain::<ListResourceTemplatesResult>,
    ListResourceTemplatesResultResponse => result_response::<ListResourceTemplatesResult>,
    ListResourcesRequest => |v: &Value| client_request(v, "resources/list"),
    ListResourcesResult => plain::<ListResourcesResult>,
    ListResourcesResultResponse => result_response::<ListResourcesResult>,
    ListRootsRequest => |v: &Value| input_request(v, "roots/list"),
    ListRootsResult => |v: &Value| {
        variant::<InputResponse>(v, |r| matches!(r, InputResponse::ListRoots(_)))?;
        plain::<ListRootsResult>(v)
    },
    ListToolsRequest => |v: &Value| client_request(v, "tools/list"),
    ListToolsResult => plain::<ListToolsResult>,
    ListToolsResultResponse => result_response::<ListToolsResult>,
    LoggingMessageNotification => |v: &Value| server_notification(v, "notifications/message"),
    LoggingMessageNotificationParams => plain::<LoggingMessageNotificationParams>,
    MethodNotFoundError => |v: &Value| error_object(v, jsonrpc::METHOD_NOT_FOUND),
    MissingRequiredClientCapabilityError => |v: &Value| {
        error_response::<MissingRequiredClientCapabilityErrorData>(v, jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY)
    },
    ModelPreferences => plain::<ModelPreferences>,
    NumberSchema => primitive::<NumberSchema>,
    PaginatedRequestParams => plain::<PaginatedRequestParams>,
    ParseError => |v: &Value| error_object(v, jsonrpc::PARSE_ERROR),
    ProgressNotification => |v: &Value| server_notification(v, "notifications/progress"),
    ProgressNotificationParams => plain::<ProgressNotificationParams>,
    PromptListChangedNotification => |v: &Value| server_notification(v, "notifications/prompts/list_changed"),
    ReadResourceRequest => |v: &Value| client_request(v, "resources/read"),
    ReadResourceResult => plain::<ReadResourceResult>,
    ReadResourceResultResponse => result_response::<ResultOrInputRequired<ReadResourceResult>>,
    Resource => plain::<Resource>,
    ResourceLink => |v: &Value| variant::<ContentBlock>(v, |b| matches!(b, ContentBlock::ResourceLink(_))),
    ResourceListChangedNotification => |v: &Value| server_notification(v, "notifications/resources/list_changed"),
    ResourceUpdatedNotification => |v: &Value| server_notification(v, "notifications/resources/updated"),
    ResourceUpdatedNotificationParams => plain::<ResourceUpdatedNotificationParams>,
    Root => plain::<Root>,
    SamplingMessage => plain::<SamplingMessage>,
    ServerCapabilities => plain::<ServerCapabilities>,
    StringSchema => primitive::<StringSchema>,
    SubscriptionsAcknowledgedNotification => |v: &Value| {
        server_notification(v, "notifications/subscriptions/acknowledged")
    },
    SubscriptionsListenRequest => |v: &Value| client_request(v, "subscriptions/listen"),
    SubscriptionsListenResult => plain::<SubscriptionsListenResult>,
    SubscriptionsListenResultResponse => result_response::<SubscriptionsListenResult>,
    TextContent => |v: &Value| variant::<ContentBlock>(v, |b| matches!(b, ContentBlock::Text(_))),
    TextResourceContents => |v: &Value| {
        variant::<ResourceContents>(v, |c| matches!(c, ResourceContents::Text(_)))?;
        plain::<TextResourceContents>(v)
    },
    TitledMultiSelectEnumSchema => primitive::<TitledMultiSelectEnumSchema>,
    TitledSingleSelectEnumSchema => primitive::<TitledSingleSelectEnumSchema>,
    Tool => plain::<Tool>,
    ToolListChangedNotification => |v: &Value| server_notification(v, "notifications/tools/list_changed"),
    ToolResultContent => |v: &Value| {
        variant::<SamplingMessageContentBlock>(v, |b| matches!(b, SamplingMessageContentBlock::ToolResult(_)))
    },
    ToolUseContent => |v: &Value| {
        variant::<SamplingMessageContentBlock>(v, |b| matches!(b, SamplingMessageContentBlock::ToolUse(_)))
    },
    UnsupportedProtocolVersionError => |v: &Value| {
        error_response::<UnsupportedProtocolVersionErrorData>(v, jsonrpc::UNSUPPORTED_PROTOCOL_VERSION)
    },
    UntitledMultiSelectEnumSchema => primitive::<UntitledMultiSelectEnumSchema>,
    UntitledSingleSelectEnumSchema => primitive::<UntitledSingleSelectEnumSchema>,
}

/// Members of examples that the Rust type does not model, dropped before comparing:
/// (type, member, why).
const UNMODELLED_MEMBERS: &[(&str, &str, &str)] = &[(
    "ListRootsRequest",
    "id",
    "the example carries a JSON-RPC id, but ListRootsRequest is an input request ({method, params?}) \
     and has none",
)];

/// The method of the request a response example answers, or of a notification example.
fn method_of_example(type_name: &str) -> Option<&'static str> {
    Some(match type_name {
        "CallToolResultResponse" => "tools/call",
        "CompleteResultResponse" => "completion/complete",
        "DiscoverResultResponse" => "server/discover",
        "GetPromptResultResponse" => "prompts/get",
        "ListPromptsResultResponse" => "prompts/list",
        "ListResourceTemplatesResultResponse" => "resources/templates/list",
        "ListResourcesResultResponse" => "resources/list",
        "ListToolsResultResponse" => "tools/list",
        "ReadResourceResultResponse" => "resources/read",
        "SubscriptionsListenResultResponse" => "subscriptions/listen",
        _ => return None,
    })
}

/// Server-message examples that `validate_server_message` rightly rejects, with why.
const SERVER_MESSAGE_QUIRKS: &[(&str, &str)] = &[(
    "ReadResourceResultResponse/read-resource-result-response.json",
    "its complete ReadResourceResult lacks the required ttlMs and cacheScope; the \
     ReadResourceResultResponse definition accepts it only because InputRequiredResult matches any result",
)];

fn sorted_entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    entries
}

#[test]
fn every_example_round_trips_and_validates() {
    let examples = support::examples_dir();
    assert!(examples.is_dir(), "no examples directory at {}", examples.display());
    let mut unmapped = Vec::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for type_dir in sorted_entries(&examples).into_iter().filter(|p| p.is_dir()) {
        let type_name = type_dir.file_name().and_then(|n| n.to_str()).expect("UTF-8 directory name").to_owned();
        let Some(check) = check_for(&type_name) else {
            unmapped.push(type_name);
            continue;
        };
        let files: Vec<_> =
            sorted_entries(&type_dir).into_iter().filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
        if files.is_empty() {
            failures.push(format!("{type_name}: no examples"));
        }
        for file in files {
            let label = format!("{type_name}/{}", file.file_name().and_then(|n| n.to_str()).unwrap_or("?"));
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("cannot read {label}: {e}"));
            let example: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{label} is not JSON: {e}"));
            checked += 1;

            if let Err(e) = support::validate_def(&type_name, &example) {
                failures.push(format!("{label}: schema.json rejects the example: {e}"));
            }

            let mut expected = example.clone();
            for (_, member, _) in UNMODELLED_MEMBERS.iter().filter(|(t, _, _)| *t == type_name) {
                if expected.as_object_mut().and_then(|o| o.remove(*member)).is_none() {
                    failures.push(format!("{label}: UNMODELLED_MEMBERS lists {member:?}, which the example lacks"));
                }
            }
            match check(&example) {
                Ok(back) if back == expected => {}
                Ok(back) => failures.push(format!(
                    "{label}: does not round-trip\nexpected: {}\n     got: {}",
                    serde_json::to_string(&expected).unwrap_or_default(),
                    serde_json::to_string(&back).unwrap_or_default()
                )),
                Err(e) => failures.push(format!("{label}: {e}")),
            }

            // The support helpers agree with the per-type validation on whole messages.
            let method = method_of_example(&type_name);
            let is_envelope = example.get("jsonrpc").is_some();
            let is_server_message =
                is_envelope && (type_name.ends_with("Notification") || type_name.ends_with("Error"));
            let server_check =
                (method.is_some() || is_server_message).then(|| support::validate_server_message(method, &example));
            let quirk = SERVER_MESSAGE_QUIRKS.iter().find(|(l, _)| *l == label);
            match (server_check, quirk) {
                (Some(Ok(())), Some(_)) => failures
                    .push(format!("{label}: now passes validate_server_message; drop it from SERVER_MESSAGE_QUIRKS")),
                (Some(Err(e)), None) => failures.push(format!("{label}: validate_server_message: {e}")),
                _ => {}
            }
            let client_check =
                (is_envelope && type_name.ends_with("Request")).then(|| support::validate_client_message(&example));
            if let Some(Err(e)) = client_check {
                failures.push(format!("{label}: validate_client_message: {e}"));
            }
        }
    }
    if !unmapped.is_empty() {
        failures.insert(
            0,
            format!(
                "example directories with no Rust type mapped (add them to example_types! in {}): {unmapped:?}",
                file!()
            ),
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures ({checked} examples checked):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(checked > 0, "no examples found in {}", examples.display());
}

/// Values built with the convenience constructors are valid on the wire.
#[test]
fn constructors_build_valid_messages() {
    let check = |def: &str, value: Value| {
        support::validate_def(def, &value).unwrap_or_else(|e| panic!("{def} {value}: {e}"));
    };
    let v = |t: &dyn erased::Ser| t.value();

    for block in [
        ContentBlock::text("hi"),
        ContentBlock::image("iVBORw0KGgo=", "image/png"),
        ContentBlock::audio("UklGRg==", "audio/wav"),
        ContentBlock::resource_link("file:///a.txt", "a.txt"),
        ContentBlock::embedded_text("file:///a.txt", "text/plain", "hello"),
        ContentBlock::embedded_blob("file:///a.bin", "application/octet-stream", "AAE="),
    ] {
        check("ContentBlock", v(&block));
    }
    check("CallToolResult", v(&CallToolResult::text("ok")));
    check("CallToolResult", v(&CallToolResult::error("bad input")));
    check("CallToolResult", v(&CallToolResult::structured(json!([{"id": 1}]))));
    let tool = Tool::new("add", "Adds", json!({"type": "object", "properties": {"a": {"type": "number"}}}))
        .with_title("Adder")
        .with_output_schema(json!({"type": "number"}))
        .with_annotations(ToolAnnotations { read_only_hint: Some(true), ..Default::default() })
        .with_icons(vec![Icon::new("https://example.com/i.png")]);
    check("Tool", v(&tool));
    let resource = Resource::new("file:///r.md", "r.md")
        .with_title("R")
        .with_description("d")
        .with_mime_type("text/markdown")
        .with_size(3)
        .with_annotations(Annotations { priority: Some(1.0), ..Default::default() });
    check("Resource", v(&resource));
    check("ContentBlock", v(&ContentBlock::ResourceLink(resource.clone().into())));
    check("ResourceTemplate", v(&ResourceTemplate::new("file:///{path}", "files").with_mime_type("text/plain")));
    let prompt = Prompt::new("review").with_title("Review").with_argument("code", "The code", true);
    check("Prompt", v(&prompt));
    check("PromptMessage", v(&PromptMessage::user_text("hi")));
    check("PromptMessage", v(&PromptMessage::assistant_text("hello")));
    check("GetPromptResult", v(&GetPromptResult::new(vec![PromptMessage::user_text("hi")]).with_description("d")));
    check("TextResourceContents", v(&TextResourceContents::new("file:///a", "text/plain", "x")));
    check("BlobResourceContents", v(&BlobResourceContents::new("file:///a", "image/png", "AAE=")));
    check("Implementation", v(&Implementation::new("mcpaxle", "0.1.0")));
    check("CompleteResult", v(&CompleteResult::new(vec!["a".into()])));
    check("SubscriptionsListenResult", v(&SubscriptionsListenResult::closed(&RequestId::from("listen-1"))));
    check("EmptyResult", v(&EmptyResult::complete()));

    // Cacheable results need their caching hints, which the server fills in.
    let mut tools = ListToolsResult::new(vec![tool]);
    assert!(support::validate_def("ListToolsResult", &v(&tools)).is_err());
    tools.set_cache_hints(60_000, CacheScope::Public);
    check("ListToolsResult", v(&tools));
    let mut discover = DiscoverResult::new(
        vec![LATEST_PROTOCOL_VERSION.to_owned()],
        ServerCapabilities { tools: Some(ToolsCapability::default()), ..Default::default() },
    );
    discover.set_cache_hints(0, CacheScope::Private);
    check("DiscoverResult", v(&discover));

    let form = ElicitRequestedSchema::new().with_property("name", StringSchema::default().into(), true).with_property(
        "age",
        NumberSchema { r#type: NumberType::Integer, ..Default::default() }.into(),
        false,
    );
    let asks = InputRequiredResult::new()
        .with_input_request("name", InputRequest::Elicit(ElicitRequestParams::form("Who are you?", form)))
        .with_input_request("key", InputRequest::Elicit(ElicitRequestParams::url("Set a key", "https://example.com/k")))
        .with_input_request(
            "capital",
            InputRequest::CreateMessage(CreateMessageRequestParams::new(vec![SamplingMessage::user_text("?")], 10)),
        )
        .with_input_request("roots", InputRequest::ListRoots(None))
        .with_request_state("opaque");
    check("InputRequiredResult", v(&asks));
    check(
        "ElicitResult",
        v(&ElicitResult::accept(Some(json!({"name": "x"}).as_object().cloned().unwrap_or_default()))),
    );
    check("ElicitResult", v(&ElicitResult::cancel()));

    let id = RequestId::from("listen-1");
    for n in [
        ServerNotification::Progress(ProgressNotificationParams::new(RequestId::Number(1), 50.0, Some(100.0), None)),
        ServerNotification::LoggingMessage(LoggingMessageNotificationParams::new(LoggingLevel::Info, None, json!("x"))),
        ServerNotification::ToolListChanged(Some(NotificationParams::for_subscription(&id))),
        ServerNotification::PromptListChanged(None),
        ServerNotification::ResourceUpdated(ResourceUpdatedNotificationParams::new("file:///a", Some(&id))),
        ServerNotification::SubscriptionsAcknowledged(SubscriptionsAcknowledgedNotificationParams::new(
            &id,
            SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() },
        )),
        ServerNotification::Cancelled(CancelledNotificationParams::new(id.clone(), None)),
    ] {
        let message = v(&n.to_notification());
        support::validate_server_message(None, &message).unwrap_or_else(|e| panic!("{message}: {e}"));
    }
    let error = Response::error(
        Some(RequestId::Number(1)),
        unsupported_protocol_version_error(vec![LATEST_PROTOCOL_VERSION.to_owned()], "1900-01-01"),
    );
    support::validate_server_message(Some("tools/list"), &v(&error)).unwrap();
}

/// `dyn`-friendly serialization for the table above.
mod erased {
    pub trait Ser {
        fn value(&self) -> serde_json::Value;
    }

    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> serde_json::Value {
            serde_json::to_value(self).expect("serializable")
        }
    }
}

mod support_helpers {
    use super::support::{validate_client_message, validate_def, validate_server_message};
    use serde_json::json;

    fn call_tool_response(result: serde_json::Value) -> serde_json::Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": result})
    }

    #[test]
    fn a_valid_call_tool_result_response_passes() {
        let r = call_tool_response(json!({"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}));
        validate_server_message(Some("tools/call"), &r).unwrap();
    }

    #[test]
    fn a_result_without_result_type_fails() {
        let r = call_tool_response(json!({"content": [{"type": "text", "text": "ok"}]}));
        let e = validate_server_message(Some("tools/call"), &r).unwrap_err();
        assert!(e.contains("resultType"), "{e}");
    }

    #[test]
    fn input_required_is_accepted_only_where_the_schema_allows_it() {
        let r = call_tool_response(json!({"resultType": "input_required", "requestState": "s"}));
        validate_server_message(Some("tools/call"), &r).unwrap();
        validate_server_message(Some("resources/read"), &r).unwrap();
        assert!(validate_server_message(Some("tools/list"), &r).is_err());
    }

    #[test]
    fn a_complete_read_result_needs_its_cache_hints() {
        let contents = json!([{"uri": "file:///a", "text": "x"}]);
        let r = call_tool_response(json!({"resultType": "complete", "contents": contents}));
        assert!(validate_server_message(Some("resources/read"), &r).is_err());
        let r = call_tool_response(
            json!({"resultType": "complete", "contents": contents, "ttlMs": 0, "cacheScope": "private"}),
        );
        validate_server_message(Some("resources/read"), &r).unwrap();
    }

    #[test]
    fn envelopes_are_checked() {
        let r = json!({"jsonrpc": "1.0", "id": 1, "result": {"resultType": "complete", "content": []}});
        assert!(validate_server_message(Some("tools/call"), &r).is_err());
        let r = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool: x"}});
        validate_server_message(Some("tools/call"), &r).unwrap();
        let r = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}, "result": {}});
        assert!(validate_server_message(Some("tools/call"), &r).is_err());
        let r = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602}});
        assert!(validate_server_message(Some("tools/call"), &r).is_err());
        // An MCP error code brings its own required data.
        let r =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version"}});
        assert!(validate_server_message(None, &r).is_err());
    }

    #[test]
    fn notifications_are_checked_by_method() {
        let n = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}});
        validate_server_message(None, &n).unwrap();
        let n = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}});
        assert!(validate_server_message(None, &n).is_err());
        let n = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        validate_server_message(None, &n).unwrap();
        let n = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "loud", "data": 1}});
        assert!(validate_server_message(None, &n).is_err());
    }

    #[test]
    fn unknown_methods_and_other_shapes_are_errors() {
        let r = call_tool_response(json!({"resultType": "complete"}));
        let e = validate_server_message(Some("ping"), &r).unwrap_err();
        assert!(e.contains("unknown method"), "{e}");
        let e = validate_server_message(None, &r).unwrap_err();
        assert!(e.contains("method of its request"), "{e}");
        let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let e = validate_server_message(None, &n).unwrap_err();
        assert!(e.contains("unknown method"), "{e}");
        let q = json!({"jsonrpc": "2.0", "id": 2, "method": "roots/list"});
        assert!(validate_server_message(None, &q).unwrap_err().contains("request"));
        let e = validate_client_message(&json!({"jsonrpc": "2.0", "id": 2, "method": "initialize"})).unwrap_err();
        assert!(e.contains("unknown method"), "{e}");
    }

    #[test]
    fn validate_def_reports_unknown_definitions_and_locations() {
        let e = validate_def("NoSuchType", &json!({})).unwrap_err();
        assert!(e.contains("no definition"), "{e}");
        let e = validate_def("Tool", &json!({"name": "t", "inputSchema": {"type": "string"}})).unwrap_err();
        assert!(e.contains("/inputSchema/type"), "{e}");
        // Formats are asserted.
        assert!(validate_def("Icon", &json!({"src": "not a uri"})).is_err());
        validate_def("Icon", &json!({"src": "https://example.com/i.png"})).unwrap();
    }
}
