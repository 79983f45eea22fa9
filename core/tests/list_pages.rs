//! The lists' pages served as JSON text and kept until their list changes
//! (`server/list_pages.rs`): what every request of a list sees is what the registry holds now,
//! page by page, for every principal, in both eras, through middleware too.

use futures_util::StreamExt;
use mcpaxle::jsonrpc::{JsonRpcVersion, Request, RequestId};
use mcpaxle::schema::{CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, Tool};
use mcpaxle::server::{Exchange, Item, Outgoing, RequestInfo, Server, TransportContext, Wire};
use serde_json::{Value, json};

fn meta() -> Value {
    json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} })
}

fn tool(name: &str) -> Tool {
    Tool::new(name, "a tool", json!({ "type": "object" }))
}

fn add_tool(s: &Server, name: &str) {
    s.add_tool(tool(name), |_a: Value, _c| async move { Ok(CallToolResult::text("ok")) }).unwrap();
}

fn server(tools: &[&str]) -> Server {
    let s = Server::builder("pages-test", "1.0.0").page_size(2).build();
    for t in tools {
        add_tool(&s, t);
    }
    s
}

/// The response of an exchange as a value: the JSON text it is written as when it has one
/// (checked to be the same as the response it streams), else the streamed response.
async fn response(mut exchange: Exchange) -> Value {
    let text = exchange.immediate_json().map(|b| serde_json::from_slice::<Value>(&b).unwrap());
    while let Some(o) = exchange.next().await {
        if let Outgoing::Response(r) = o {
            let streamed = serde_json::to_value(r).unwrap();
            if let Some(t) = &text {
                assert_eq!(t, &streamed, "the JSON text and the streamed response agree");
            }
            return streamed;
        }
    }
    panic!("no response")
}

async fn page(s: &Server, principal: Option<&str>, method: &str, cursor: Option<&str>) -> Value {
    let mut params = json!({ "_meta": meta() });
    if let Some(c) = cursor {
        params["cursor"] = json!(c);
    }
    let req =
        Request { jsonrpc: JsonRpcVersion, id: RequestId::Number(7), method: method.into(), params: Some(params) };
    let tc = TransportContext { principal: principal.map(str::to_owned), ..Default::default() };
    let r = response(s.handle_request(req, &tc)).await;
    assert_eq!(r["id"], 7);
    r["result"].clone()
}

/// Every page of a list: the names on each page.
async fn pages(s: &Server, principal: Option<&str>, method: &str, field: &str, key: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let r = page(s, principal, method, cursor.as_deref()).await;
        assert_eq!(r["resultType"], "complete", "{r}");
        assert_eq!(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "pages-test");
        out.push(r[field].as_array().unwrap().iter().map(|t| t[key].as_str().unwrap().to_owned()).collect());
        match r["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return out,
        }
    }
}

#[tokio::test]
async fn a_change_to_the_registry_is_seen_by_the_next_list() {
    let s = server(&["a", "b", "c"]);
    let list = || pages(&s, None, "tools/list", "tools", "name");
    assert_eq!(list().await, [vec!["a", "b"], vec!["c"]]);
    assert_eq!(list().await, [vec!["a", "b"], vec!["c"]], "the same from the kept pages");
    add_tool(&s, "bb");
    assert_eq!(list().await, [vec!["a", "b"], vec!["bb", "c"]], "added");
    assert!(s.remove_tool("a"));
    assert_eq!(list().await, [vec!["b", "bb"], vec!["c"]], "removed");
    // Re-registered under the same name with another definition: the new one is listed.
    s.add_tool(Tool::new("c", "changed", json!({ "type": "object" })), |_a: Value, _c| async move {
        Ok(CallToolResult::text("ok"))
    })
    .unwrap();
    let r = page(&s, None, "tools/list", None).await;
    let cursor = r["nextCursor"].as_str().unwrap().to_owned();
    assert_eq!(page(&s, None, "tools/list", Some(&cursor)).await["tools"][0]["description"], "changed");
}

#[tokio::test]
async fn a_cursor_goes_on_after_its_key_as_the_list_is_now() {
    let s = server(&["a", "b", "c", "d"]);
    let first = page(&s, None, "tools/list", None).await;
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    assert_eq!(page(&s, None, "tools/list", Some(&cursor)).await["tools"], json!([tool("c"), tool("d")]));
    // A page kept for that cursor is dropped when the list changes under it.
    add_tool(&s, "bz");
    let names: Vec<_> = page(&s, None, "tools/list", Some(&cursor)).await["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["bz", "c"]);
    let bad = json!({ "_meta": meta(), "cursor": "not-ours" });
    let req =
        Request { jsonrpc: JsonRpcVersion, id: RequestId::Number(1), method: "tools/list".into(), params: Some(bad) };
    let r = response(s.handle_request(req, &TransportContext::default())).await;
    assert_eq!(r["error"]["code"], -32602);
}

fn alice_only(item: &Item<'_>, who: &RequestInfo) -> bool {
    who.principal() == Some("alice") || !item.name.starts_with("secret")
}

#[tokio::test]
async fn each_principal_sees_its_own_pages_and_none_is_kept_for_another() {
    let s = server(&["a", "secret1", "secret2", "z"]);
    // Kept without visibility...
    assert_eq!(pages(&s, None, "tools/list", "tools", "name").await, [vec!["a", "secret1"], vec!["secret2", "z"]]);
    s.set_visibility(alice_only);
    // ...never served through it.
    assert_eq!(pages(&s, Some("bob"), "tools/list", "tools", "name").await, [vec!["a", "z"]]);
    assert_eq!(
        pages(&s, Some("alice"), "tools/list", "tools", "name").await,
        [vec!["a", "secret1"], vec!["secret2", "z"]]
    );
    assert_eq!(pages(&s, Some("bob"), "tools/list", "tools", "name").await, [vec!["a", "z"]], "bob again after alice");
    s.clear_visibility();
    assert_eq!(
        pages(&s, Some("bob"), "tools/list", "tools", "name").await,
        [vec!["a", "secret1"], vec!["secret2", "z"]]
    );
}

#[tokio::test]
async fn every_list_is_kept_apart_and_dropped_on_its_own_changes() {
    let s = server(&["t"]);
    let read = |_r: mcpaxle::server::ResourceRequest, _c| async move { Ok(ReadResourceResult::new(vec![])) };
    s.add_resource(Resource::new("test://one", "one"), None, read).unwrap();
    let get = |_a: serde_json::Map<String, Value>, _c| async move { Ok(GetPromptResult::new(vec![])) };
    s.add_prompt(Prompt::new("p1"), get).unwrap();
    assert_eq!(pages(&s, None, "resources/list", "resources", "uri").await, [vec!["test://one"]]);
    assert_eq!(pages(&s, None, "prompts/list", "prompts", "name").await, [vec!["p1"]]);
    s.add_resource(Resource::new("test://two", "two"), None, read).unwrap();
    assert_eq!(pages(&s, None, "resources/list", "resources", "uri").await, [vec!["test://one", "test://two"]]);
    assert_eq!(pages(&s, None, "prompts/list", "prompts", "name").await, [vec!["p1"]]);
    assert_eq!(pages(&s, None, "tools/list", "tools", "name").await, [vec!["t"]]);
    assert!(s.remove_prompt("p1"));
    assert_eq!(pages(&s, None, "prompts/list", "prompts", "name").await, [Vec::<String>::new()]);
}

#[tokio::test]
async fn through_middleware_a_list_is_a_value_the_chain_can_rewrite() {
    let s = server(&["a", "b"]);
    assert_eq!(pages(&s, None, "tools/list", "tools", "name").await, [vec!["a", "b"]]);
    s.use_middleware(mcpaxle::server::middleware::from_fn(|info, next| {
        Box::pin(async move {
            let reply = next.run().await?;
            if info.method() != "tools/list" {
                return Ok(reply);
            }
            let mut r = reply.into_value();
            r["tools"].as_array_mut().unwrap().retain(|t| t["name"] != "a");
            Ok(r.into())
        })
    }));
    assert_eq!(pages(&s, None, "tools/list", "tools", "name").await, [vec!["b"]]);
}

/// The bytes a transport writes for a list request (`Exchange::next_wire`): the response as
/// JSON text when its result is kept as text, else the streamed response serialized, and
/// which of the two it was.
async fn wire(s: &Server, method: &str) -> (bool, Value) {
    let req = Request {
        jsonrpc: JsonRpcVersion,
        id: RequestId::Number(9),
        method: method.into(),
        params: Some(json!({ "_meta": meta() })),
    };
    let mut exchange = s.handle_request(req, &TransportContext::default());
    if let Some(b) = exchange.immediate_json() {
        return (true, serde_json::from_slice(&b).unwrap());
    }
    loop {
        match exchange.next_wire().await.expect("a response") {
            Wire::Json(b) => return (true, serde_json::from_slice(&b).unwrap()),
            Wire::Message(Outgoing::Response(r)) => return (false, serde_json::to_value(r).unwrap()),
            Wire::Message(_) => {}
        }
    }
}

#[tokio::test]
async fn a_middleware_that_passes_a_list_on_passes_its_kept_text() {
    let s = server(&["a", "b"]);
    let bare = wire(&s, "tools/list").await;
    assert!(bare.0, "without middleware the page is written as kept text");
    // A middleware that only looks at the request: the page reaches the wire as the same text,
    // no value read from it or written again.
    s.use_middleware(mcpaxle::server::middleware::from_fn(|_info, next| next.run()));
    assert_eq!(wire(&s, "tools/list").await, bare);
    // One that reads it as a value answers a value; the client gets the same result.
    s.use_middleware(mcpaxle::server::middleware::from_fn(|_info, next| {
        Box::pin(async move { next.run().await.map(|r| r.into_value().into()) })
    }));
    assert_eq!(wire(&s, "tools/list").await, (false, bare.1));
}
