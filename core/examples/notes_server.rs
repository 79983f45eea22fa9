//! A small notes server: the mcpaxle server API in one file.
//!
//! ```text
//! cargo run --release -p mcpaxle --example notes_server -- --http 127.0.0.1:3000   # endpoint /mcp
//! cargo run --release -p mcpaxle --example notes_server -- --stdio
//! ```
//!
//! `make demo` builds it and drives it end to end over HTTP with `scripts/demo.py`.
//!
//! What it offers, and what each part shows:
//!
//! | offers                    | shows                                                       |
//! |---------------------------|-------------------------------------------------------------|
//! | tool `add_note`           | typed arguments, an `outputSchema`, a structured result     |
//! | tool `search_notes`       | text plus `structuredContent`                               |
//! | tool `delete_note`        | MRTR elicitation (the user confirms), tool errors           |
//! | tool `summarize_notes`    | MRTR sampling (the client's LLM), with a fallback           |
//! | tool `export_notes`       | progress notifications                                      |
//! | resource `notes://index`  | a direct resource                                           |
//! | template `note://{id}`    | an RFC 6570 resource template, "resource not found" errors  |
//! | `MAX_NOTES`, `maxLength`  | bounds on what a client may store (count and sizes)         |
//! | prompt `review_note(id)`  | a prompt with an embedded resource, argument completion     |
//!
//! Adding or deleting a note announces `notifications/resources/updated` for `notes://index`
//! and `notifications/resources/list_changed` to the `subscriptions/listen` streams that asked
//! for them.

use mcpaxle::schema::{
    BooleanSchema, CacheScope, CallToolResult, CompleteResult, ContentBlock, CreateMessageRequestParams, ElicitAction,
    ElicitRequestParams, ElicitRequestedSchema, ElicitResult, GetPromptResult, Prompt, PromptMessage,
    ReadResourceResult, Resource, ResourceTemplate, Role, SamplingMessage, TextResourceContents, Tool, ToolAnnotations,
};
use mcpaxle::server::{
    CacheDefaults, CacheHint, CompletionRef, CompletionRequest, RequestContext, ResourceRequest, ServerEvent,
};
use mcpaxle::transport::http::{self, HttpOptions};
use mcpaxle::{Error, Result, Server};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

const INDEX_URI: &str = "notes://index";
const NOTE_TEMPLATE: &str = "note://{id}";

// Limits. Every client shares this store, so none can grow it without bound: a copied example
// that goes on the internet must not let one caller fill the server's memory.
/// The most notes the notebook holds; `add_note` beyond it is a tool error.
const MAX_NOTES: usize = 1_000;
/// The longest title, in characters (`maxLength` in `add_note`'s `inputSchema`).
const MAX_TITLE: usize = 200;
/// The longest body, in characters.
const MAX_BODY: usize = 20_000;
/// The most tags of one note.
const MAX_TAGS: usize = 20;
/// The longest tag, in characters.
const MAX_TAG: usize = 40;

// ─── The store ──────────────────────────────────────────────────────────────────────────

#[derive(Debug, Clone)]
struct Note {
    id: u64,
    title: String,
    body: String,
    tags: Vec<String>,
}

impl Note {
    fn uri(&self) -> String {
        format!("note://{}", self.id)
    }

    fn markdown(&self) -> String {
        let mut md = format!("# {}\n\n{}\n", self.title, self.body);
        if !self.tags.is_empty() {
            md.push_str(&format!("\nTags: {}\n", self.tags.join(", ")));
        }
        md
    }
}

#[derive(Default)]
struct Store {
    next_id: u64,
    notes: BTreeMap<u64, Note>,
}

/// What every handler shares: the notes, and the server (to announce changes).
///
/// Handlers run concurrently on the tokio runtime. A std `Mutex` is enough for the store
/// because no handler holds the lock across an `.await`.
#[derive(Clone)]
struct App {
    store: Arc<Mutex<Store>>,
    server: Server,
}

impl App {
    fn notes(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, id: u64) -> Option<Note> {
        self.notes().notes.get(&id).cloned()
    }

    fn all(&self) -> Vec<Note> {
        self.notes().notes.values().cloned().collect()
    }

    /// Announces a change of the note set to `subscriptions/listen` streams. The registries
    /// announce their own changes (`add_tool`, `add_resource`, ...), but notes live behind
    /// the `note://{id}` template, so a change of them is ours to announce.
    fn announce_change(&self, id: u64) {
        self.server.notify_resource_updated(INDEX_URI);
        self.server.notify_resource_updated(&format!("note://{id}"));
        self.server.publish(ServerEvent::ResourcesListChanged);
    }

    /// Turns `async fn handler(self, input, ctx)` into the `Fn(input, ctx) -> Future` closure
    /// the server registers (a tool, resource, prompt or completion handler). A plain
    /// `|args, ctx| async move { ... }` closure works as well; this just keeps handlers tidy.
    fn bind<I, F, Fut>(&self, handler: F) -> impl Fn(I, RequestContext) -> Fut + Send + Sync + 'static
    where
        F: Fn(App, I, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
    {
        let app = self.clone();
        move |input, ctx| handler(app.clone(), input, ctx)
    }
}

// ─── Tools ──────────────────────────────────────────────────────────────────────────────

/// Arguments of `add_note`. The server has already checked them against the tool's
/// `inputSchema`, so deserializing a call that reached the handler does not fail.
#[derive(Deserialize)]
struct AddNote {
    title: String,
    body: String,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Deserialize)]
struct Search {
    query: String,
}

#[derive(Deserialize)]
struct ById {
    id: u64,
}

impl App {
    async fn add_note(self, args: Value, _ctx: RequestContext) -> Result<CallToolResult> {
        // The inputSchema bounds title and body (the server checks it before this runs); the
        // tags and the count of notes are ours to check.
        let AddNote { title, body, tags } = serde_json::from_value(args)?;
        if tags.len() > MAX_TAGS || tags.iter().any(|t| t.chars().count() > MAX_TAG) {
            return Err(Error::tool(format!(
                "A note has at most {MAX_TAGS} tags of at most {MAX_TAG} characters each"
            )));
        }
        let note = {
            let mut store = self.notes();
            if store.notes.len() >= MAX_NOTES {
                return Err(Error::tool(format!(
                    "The notebook is full ({MAX_NOTES} notes): delete a note with delete_note before adding another"
                )));
            }
            store.next_id += 1;
            let note = Note { id: store.next_id, title, body, tags };
            store.notes.insert(note.id, note.clone());
            note
        };
        self.announce_change(note.id);
        // `structured` also puts the JSON text in `content`, for clients that only read text.
        Ok(CallToolResult::structured(json!({ "id": note.id, "title": note.title })))
    }

    async fn search_notes(self, args: Value, _ctx: RequestContext) -> Result<CallToolResult> {
        let Search { query } = serde_json::from_value(args)?;
        let q = query.to_lowercase();
        let hits: Vec<Note> = self
            .all()
            .into_iter()
            .filter(|n| {
                n.title.to_lowercase().contains(&q)
                    || n.body.to_lowercase().contains(&q)
                    || n.tags.iter().any(|t| t.to_lowercase().contains(&q))
            })
            .collect();
        let names: Vec<String> = hits.iter().map(|n| format!("#{} {}", n.id, n.title)).collect();
        let list: Vec<Value> = hits.iter().map(|n| json!({ "id": n.id, "title": n.title, "tags": n.tags })).collect();
        // A readable line first, then the structured list (and its JSON text). An object, not
        // a bare array: legacy (2025-11-25) clients read the same tool list, and their
        // `outputSchema` must describe an object.
        let mut result = CallToolResult::structured(json!({ "notes": list }));
        let line = format!("{} note(s) match {query:?}: {}", hits.len(), names.join(", "));
        result.content.insert(0, ContentBlock::text(line));
        Ok(result)
    }

    async fn delete_note(self, args: Value, ctx: RequestContext) -> Result<CallToolResult> {
        let ById { id } = serde_json::from_value(args)?;
        // `Error::tool` becomes an `isError` result, which the model reads.
        let note = self.get(id).ok_or_else(|| Error::tool(format!("There is no note #{id}")))?;

        // MRTR. On the first call there is no answer yet: `elicit` records the question and
        // `?` ends this run with an InputRequiredResult. The client asks its user, then
        // retries with the answer, and this handler runs again from the top; this time
        // `elicit` returns the answer. So: only reads before an ask, side effects after.
        let answer = ctx.elicit("confirm", confirm_form(&note)?).await?;
        let answer: ElicitResult = serde_json::from_value(answer)?;
        let confirmed = answer.action == ElicitAction::Accept
            && answer.content.as_ref().and_then(|c| c.get("confirm")) == Some(&json!(true));
        if !confirmed {
            return Err(Error::tool(format!("Kept note #{id}: the user did not confirm")));
        }

        if self.notes().notes.remove(&id).is_none() {
            return Err(Error::tool(format!("Note #{id} was already deleted")));
        }
        self.announce_change(id);
        Ok(CallToolResult::text(format!("Deleted note #{id} ({:?})", note.title)))
    }

    async fn summarize_notes(self, _args: Value, ctx: RequestContext) -> Result<CallToolResult> {
        let notes = self.all();
        if notes.is_empty() {
            return Ok(CallToolResult::text("There are no notes yet."));
        }
        // Ask only for what the client declared (an ask it did not declare fails with
        // -32021). Capabilities come with every request in 2026-07-28, so check per call.
        if !ctx.client_supports("sampling") {
            let names: Vec<String> = notes.iter().map(|n| format!("#{} {}", n.id, n.title)).collect();
            return Ok(CallToolResult::text(format!("{} note(s): {}", notes.len(), names.join("; "))));
        }
        let text: Vec<String> = notes.iter().map(Note::markdown).collect();
        let prompt = format!("Summarize these notes:\n\n{}", text.join("\n---\n"));
        let request = CreateMessageRequestParams {
            system_prompt: Some("You summarize a person's notes in at most two sentences.".into()),
            ..CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 200)
        };
        let answer = ctx.sample("summary", serde_json::to_value(request)?).await?;
        // The answer is a `CreateMessageResult`; one text block is the common case.
        let summary = answer.pointer("/content/text").and_then(Value::as_str).unwrap_or("(no text)");
        let model = answer["model"].as_str().unwrap_or("the model");
        Ok(CallToolResult::text(format!("{summary}\n(summarized by {model})")))
    }

    async fn export_notes(self, _args: Value, ctx: RequestContext) -> Result<CallToolResult> {
        let notes = self.all();
        let total = notes.len() as f64;
        let mut doc = format!("# Notes export ({} notes)\n", notes.len());
        // `progress` sends nothing unless the request carried a progress token.
        ctx.progress(0.0, Some(total), Some("Starting the export"));
        for (i, note) in notes.iter().enumerate() {
            // Stands for real work. If the client goes away (HTTP disconnect, stdio
            // cancellation) this future is dropped: no need to poll for cancellation here.
            tokio::time::sleep(Duration::from_millis(200)).await;
            doc.push('\n');
            doc.push_str(&note.markdown());
            let message = format!("Exported note #{}", note.id);
            ctx.progress((i + 1) as f64, Some(total), Some(&message));
        }
        Ok(CallToolResult::text(doc))
    }
}

/// The confirmation form of `delete_note`: one required boolean field.
fn confirm_form(note: &Note) -> Result<Value> {
    let confirm = BooleanSchema { title: Some("Delete it".into()), default: Some(false), ..Default::default() };
    let form = ElicitRequestParams::form(
        format!("Delete note #{} {:?}? This cannot be undone.", note.id, note.title),
        ElicitRequestedSchema::new().with_property("confirm", confirm.into(), true),
    );
    Ok(serde_json::to_value(form)?)
}

// ─── Resources, prompt, completion ──────────────────────────────────────────────────────

impl App {
    async fn read_index(self, req: ResourceRequest, _ctx: RequestContext) -> Result<ReadResourceResult> {
        let notes: Vec<Value> = self
            .all()
            .iter()
            .map(|n| json!({ "id": n.id, "title": n.title, "tags": n.tags, "uri": n.uri() }))
            .collect();
        let body = json!({ "count": notes.len(), "notes": notes }).to_string();
        let contents = TextResourceContents::new(req.uri, "application/json", body);
        Ok(ReadResourceResult::new(vec![contents.into()]))
    }

    async fn read_note(self, req: ResourceRequest, _ctx: RequestContext) -> Result<ReadResourceResult> {
        // `variables` holds what the template matched in the URI: {"id": "…"}. The server has
        // already refused values that could climb out of a directory (`..`, `%2F`, `\`, an
        // absolute path, NUL); still, treat a variable as untrusted input: parse it into what
        // it must be (here a number) rather than pasting it into a file path.
        let id = req.variables.get("id").and_then(Value::as_str).and_then(|s| s.parse().ok());
        let Some(note) = id.and_then(|id| self.get(id)) else {
            // The spec's "resource not found": -32602, with the URI in `data`.
            let message = format!("Resource not found: {} (no such note)", req.uri);
            return Err(Error::invalid_params(message).with_data(json!({ "uri": req.uri })));
        };
        let contents = TextResourceContents::new(req.uri, "text/markdown", note.markdown());
        Ok(ReadResourceResult::new(vec![contents.into()]))
    }

    async fn review_note(self, args: Map<String, Value>, _ctx: RequestContext) -> Result<GetPromptResult> {
        // Prompt arguments are strings; the server checked that the required `id` is there.
        let raw = args.get("id").and_then(Value::as_str).unwrap_or_default();
        let note = raw
            .parse()
            .ok()
            .and_then(|id| self.get(id))
            .ok_or_else(|| Error::invalid_params(format!("Invalid params: there is no note with id {raw:?}")))?;
        let messages = vec![
            PromptMessage::new(Role::User, ContentBlock::embedded_text(note.uri(), "text/markdown", note.markdown())),
            PromptMessage::user_text(
                "Review the note above: is it clear and complete, and are its tags useful? \
                 Suggest concrete edits.",
            ),
        ];
        Ok(GetPromptResult::new(messages).with_description(format!("Review of note #{}", note.id)))
    }

    /// Completes a note id, by prefix, from the ids that exist.
    async fn complete_id(self, req: CompletionRequest, _ctx: RequestContext) -> Result<CompleteResult> {
        let ids = self.all().into_iter().map(|n| n.id.to_string());
        Ok(CompleteResult::new(ids.filter(|id| id.starts_with(&req.value)).collect()))
    }
}

// ─── The server ─────────────────────────────────────────────────────────────────────────

/// Caching hints. The lists (tools, prompts, templates, the one direct resource) change only
/// with this program: clients may keep them for a minute, and share them. Notes change at
/// any time and are the user's own: reads are stale at once, and private.
fn cache_hints() -> CacheDefaults {
    let minute = CacheHint::new(60_000, CacheScope::Public);
    CacheDefaults {
        discover: minute.clone(),
        tools: minute.clone(),
        prompts: minute.clone(),
        resources: minute.clone(),
        templates: minute,
        read: CacheHint::new(0, CacheScope::Private),
    }
}

fn no_args() -> Value {
    json!({ "type": "object", "properties": {} })
}

fn read_only() -> ToolAnnotations {
    ToolAnnotations { read_only_hint: Some(true), ..Default::default() }
}

fn build() -> Result<Server> {
    let server = Server::builder("notes", env!("CARGO_PKG_VERSION"))
        .title("Notes")
        .instructions(
            "A notebook: add, search, summarize, export and delete notes. \
             notes://index lists them; note://{id} reads one.",
        )
        .cache_defaults(cache_hints())
        .build();
    let app = App { store: Arc::default(), server: server.clone() };

    // Tools. Arguments are validated against `inputSchema` before a handler runs; a call
    // that does not match gets an `isError` result saying why.
    let add_note = Tool::new(
        "add_note",
        "Add a note; returns its id",
        json!({
            "type": "object",
            "properties": {
                "title": { "type": "string", "minLength": 1, "maxLength": MAX_TITLE, "description": "A short title" },
                "body": { "type": "string", "maxLength": MAX_BODY, "description": "The text of the note" },
                "tags": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["title", "body"],
            "additionalProperties": false
        }),
    )
    .with_output_schema(json!({
        "type": "object",
        "properties": { "id": { "type": "integer" }, "title": { "type": "string" } },
        "required": ["id", "title"]
    }));
    server.add_tool(add_note, app.bind(App::add_note))?;

    let search_notes = Tool::new(
        "search_notes",
        "Find notes by text in their title, body or tags",
        json!({
            "type": "object",
            "properties": { "query": { "type": "string", "description": "Text to look for" } },
            "required": ["query"]
        }),
    )
    .with_output_schema(json!({
        "type": "object",
        "properties": {
            "notes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": { "type": "integer" },
                        "title": { "type": "string" },
                        "tags": { "type": "array", "items": { "type": "string" } }
                    },
                    "required": ["id", "title", "tags"]
                }
            }
        },
        "required": ["notes"]
    }))
    .with_annotations(read_only());
    server.add_tool(search_notes, app.bind(App::search_notes))?;

    let delete_note = Tool::new(
        "delete_note",
        "Delete a note, after the user confirms",
        json!({
            "type": "object",
            "properties": { "id": { "type": "integer", "minimum": 1 } },
            "required": ["id"]
        }),
    )
    .with_annotations(ToolAnnotations { destructive_hint: Some(true), ..Default::default() });
    server.add_tool(delete_note, app.bind(App::delete_note))?;

    let summarize =
        Tool::new("summarize_notes", "Summarize the notes (with the client's LLM when it can sample)", no_args());
    server.add_tool(summarize.with_annotations(read_only()), app.bind(App::summarize_notes))?;

    let export = Tool::new("export_notes", "Export every note as Markdown (slow; reports progress)", no_args());
    server.add_tool(export.with_annotations(read_only()), app.bind(App::export_notes))?;

    // Resources: one direct resource, and a template for every note. `None`: the default
    // caching hint of reads (`cache_hints().read`).
    let index = Resource::new(INDEX_URI, "index")
        .with_title("All notes")
        .with_description("Id, title, tags and URI of every note")
        .with_mime_type("application/json");
    server.add_resource(index, None, app.bind(App::read_index))?;
    let note = ResourceTemplate::new(NOTE_TEMPLATE, "note")
        .with_title("One note")
        .with_description("A note as Markdown, by id")
        .with_mime_type("text/markdown");
    server.add_resource_template(note, None, app.bind(App::read_note))?;

    // A prompt, and completion of note ids for it and for the template's `{id}`.
    let review = Prompt::new("review_note")
        .with_title("Review a note")
        .with_description("Ask the model to review one note")
        .with_argument("id", "The note's id", true);
    server.add_prompt(review, app.bind(App::review_note))?;
    server.set_completion(CompletionRef::Prompt("review_note".into()), app.bind(App::complete_id));
    server.set_completion(CompletionRef::ResourceTemplate(NOTE_TEMPLATE.into()), app.bind(App::complete_id));
    Ok(server)
}

fn usage() -> ! {
    eprintln!("usage: notes_server --http HOST:PORT | --stdio      (e.g. --http 127.0.0.1:3000)");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = build()?;
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--stdio"] => mcpaxle::transport::stdio::serve(server).await,
        ["--http", addr] => {
            let addr: SocketAddr = addr.parse().unwrap_or_else(|_| usage());
            eprintln!("notes_server: listening on http://{addr}/mcp");
            // Serves until SIGINT or SIGTERM, then ends open listen streams gracefully.
            http::serve(server, addr, HttpOptions::default()).await
        }
        _ => usage(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use mcpaxle::jsonrpc::{JsonRpcVersion, Request, RequestId};
    use mcpaxle::server::{Outgoing, TransportContext};

    async fn add_note(server: &Server, arguments: Value) -> Value {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        let params = json!({ "name": "add_note", "arguments": arguments, "_meta": meta });
        let request = Request {
            jsonrpc: JsonRpcVersion,
            id: RequestId::Number(1),
            method: "tools/call".into(),
            params: Some(params),
        };
        let mut exchange = server.handle_request(request, &TransportContext::default());
        if let Some(r) = exchange.immediate() {
            return serde_json::to_value(r).unwrap();
        }
        while let Some(o) = exchange.next().await {
            if let Outgoing::Response(r) = o {
                return serde_json::to_value(r).unwrap();
            }
        }
        panic!("no response")
    }

    #[tokio::test]
    async fn notes_are_bounded_in_size_and_count() {
        let server = build().unwrap();
        let ok = json!({ "title": "t", "body": "b".repeat(MAX_BODY), "tags": vec!["x".repeat(MAX_TAG); MAX_TAGS] });
        for oversized in [
            json!({ "title": "t".repeat(MAX_TITLE + 1), "body": "" }),
            json!({ "title": "t", "body": "b".repeat(MAX_BODY + 1) }),
            json!({ "title": "t", "body": "", "tags": vec!["x"; MAX_TAGS + 1] }),
            json!({ "title": "t", "body": "", "tags": ["x".repeat(MAX_TAG + 1)] }),
        ] {
            let r = add_note(&server, oversized.clone()).await;
            assert_eq!(r["result"]["isError"], json!(true), "{oversized:.80}: {r:.200}");
        }
        for i in 0..MAX_NOTES {
            let r = add_note(&server, ok.clone()).await;
            assert_eq!(r["result"]["structuredContent"]["id"], json!(i + 1), "{r:.200}");
        }
        let full = add_note(&server, json!({ "title": "one too many", "body": "" })).await;
        assert_eq!(full["result"]["isError"], json!(true));
        let text = full["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("full") && text.contains(&MAX_NOTES.to_string()), "{text}");
    }
}
