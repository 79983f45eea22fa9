//! The registries behind a [`Server`](super::Server): tools, resources, resource templates,
//! prompts and completions, each keyed and listed in a deterministic order (by key). Every
//! change to a list drops its kept pages (`list_pages.rs`), under the list's write lock.

use crate::error::{Error, Result};
use crate::headers::{self, HeaderParam};
use crate::schema::{Prompt, Resource, ResourceTemplate, Tool};
use crate::server::handlers::{CompletionHandler, PromptHandler, ResourceHandler, ToolHandler};
use crate::server::input_schema::{self, CompiledSchema};
use crate::server::list_pages::{self, Listed, PageCache};
use crate::server::tasks::TaskSupport;
use crate::server::uri_template::UriTemplate;
use crate::server::{CacheHint, TemplateOptions, ToolOptions};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

pub(crate) struct ToolEntry {
    pub json: Value,
    /// `json` serialized, for the pages of its list.
    pub serialized: Box<str>,
    pub schema: CompiledSchema,
    /// The compiled `outputSchema`: every successful result's `structuredContent` must match.
    pub output: Option<CompiledSchema>,
    pub header_params: Vec<HeaderParam>,
    /// The tool's own handler timeout ([`ToolOptions::timeout`]).
    pub timeout: Option<Duration>,
    /// Whether its calls may run as tasks ([`ToolOptions::task_support`]).
    pub task: TaskSupport,
    /// Whether its task is created when the handler asks ([`ToolOptions::defer_task`]).
    pub defer_task: bool,
    pub handler: Arc<dyn ToolHandler>,
}

pub(crate) struct ResourceEntry {
    pub json: Value,
    /// `json` serialized, for the pages of its list.
    pub serialized: Box<str>,
    pub cache: Option<CacheHint>,
    pub handler: Arc<dyn ResourceHandler>,
}

pub(crate) struct TemplateEntry {
    pub json: Value,
    /// `json` serialized, for the pages of its list.
    pub serialized: Box<str>,
    pub template: UriTemplate,
    pub cache: Option<CacheHint>,
    pub options: TemplateOptions,
    pub handler: Arc<dyn ResourceHandler>,
}

pub(crate) struct PromptEntry {
    pub json: Value,
    /// `json` serialized, for the pages of its list.
    pub serialized: Box<str>,
    pub required: Vec<String>,
    pub handler: Arc<dyn PromptHandler>,
}

/// What a completion handler completes: a prompt's arguments or a resource template's
/// variables (`ref/prompt` / `ref/resource` in `completion/complete`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CompletionRef {
    /// A prompt, by name.
    Prompt(String),
    /// A resource template, by its URI template.
    ResourceTemplate(String),
}

impl CompletionRef {
    /// The completion target a binding names by `kind` (`"prompt"` or `"resource"`, a resource
    /// template) and `name`; another kind is a usage error.
    pub fn from_kind(kind: &str, name: String) -> Result<Self> {
        match kind {
            "prompt" => Ok(CompletionRef::Prompt(name)),
            "resource" => Ok(CompletionRef::ResourceTemplate(name)),
            other => {
                Err(Error::usage(format!("a completion is for a \"prompt\" or a \"resource\" template, not {other:?}")))
            }
        }
    }
}

macro_rules! listed {
    ($($entry:ty),*) => {$(
        impl Listed for $entry {
            fn definition(&self) -> &Value {
                &self.json
            }
            fn serialized(&self) -> &str {
                &self.serialized
            }
        }
    )*};
}
listed!(ToolEntry, ResourceEntry, TemplateEntry, PromptEntry);

type Map<E> = RwLock<BTreeMap<String, Arc<E>>>;

/// The kept pages of each list.
#[derive(Default)]
pub(crate) struct Pages {
    pub tools: PageCache,
    pub resources: PageCache,
    pub templates: PageCache,
    pub prompts: PageCache,
}

#[derive(Default)]
pub(crate) struct Registries {
    pub tools: Map<ToolEntry>,
    pub resources: Map<ResourceEntry>,
    pub templates: Map<TemplateEntry>,
    pub prompts: Map<PromptEntry>,
    pub completions: RwLock<BTreeMap<CompletionRef, Arc<dyn CompletionHandler>>>,
    pub pages: Pages,
    /// Whether each kind was ever registered (capabilities are advertised from then on).
    pub ever: RwLock<Ever>,
}

#[derive(Default, Clone, Copy)]
pub(crate) struct Ever {
    pub tools: bool,
    pub resources: bool,
    pub prompts: bool,
    pub completions: bool,
    /// A tool that may run as a task (the Tasks extension is advertised from then on).
    pub tasks: bool,
}

/// A definition as JSON, and serialized.
fn to_json<T: serde::Serialize>(v: &T) -> (Value, Box<str>) {
    let json = serde_json::to_value(v).unwrap_or(Value::Null);
    let serialized = list_pages::serialize(&json);
    (json, serialized)
}

/// Inserts into (`Some`) or removes from (`None`) a list, dropping its kept pages under the
/// same write lock; whether the key was there.
fn change<E>(list: &Map<E>, pages: &PageCache, key: &str, entry: Option<Arc<E>>) -> bool {
    let mut map = write(list);
    let was = match entry {
        Some(e) => map.insert(key.to_owned(), e).is_some(),
        None => map.remove(key).is_some(),
    };
    pages.invalidate();
    was
}

fn write<K: Ord, V>(m: &RwLock<BTreeMap<K, V>>) -> std::sync::RwLockWriteGuard<'_, BTreeMap<K, V>> {
    m.write().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn read<K: Ord, V>(m: &RwLock<BTreeMap<K, V>>) -> std::sync::RwLockReadGuard<'_, BTreeMap<K, V>> {
    m.read().unwrap_or_else(|e| e.into_inner())
}

impl Registries {
    fn mark(&self, f: impl FnOnce(&mut Ever)) {
        f(&mut self.ever.write().unwrap_or_else(|e| e.into_inner()));
    }

    pub fn ever(&self) -> Ever {
        *self.ever.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn add_tool(&self, tool: Tool, options: ToolOptions, handler: Arc<dyn ToolHandler>) -> Result<()> {
        if tool.name.is_empty() {
            return Err(Error::usage("A tool needs a non-empty name"));
        }
        let schema = input_schema::compile(&tool.input_schema)
            .map_err(|e| Error::usage(format!("Tool {:?} has an unusable inputSchema: {e}", tool.name)))?;
        let output = match &tool.output_schema {
            Some(schema) => Some(
                input_schema::compile(schema)
                    .map_err(|e| Error::usage(format!("Tool {:?} has an unusable outputSchema: {e}", tool.name)))?,
            ),
            None => None,
        };
        let header_params = headers::header_params(&tool.input_schema)
            .map_err(|e| Error::usage(format!("Tool {:?} has an invalid x-mcp-header annotation: {e}", tool.name)))?;
        let (json, serialized) = to_json(&tool);
        let task = options.task_support;
        let entry = ToolEntry {
            json,
            serialized,
            schema,
            output,
            header_params,
            timeout: options.timeout,
            task,
            defer_task: options.defer_task,
            handler,
        };
        change(&self.tools, &self.pages.tools, &tool.name, Some(Arc::new(entry)));
        self.mark(|e| {
            e.tools = true;
            e.tasks |= task.allows_tasks();
        });
        Ok(())
    }

    pub fn remove_tool(&self, name: &str) -> bool {
        change(&self.tools, &self.pages.tools, name, None)
    }

    pub fn tool(&self, name: &str) -> Option<Arc<ToolEntry>> {
        read(&self.tools).get(name).cloned()
    }

    pub fn add_resource(
        &self,
        resource: Resource,
        cache: Option<CacheHint>,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<()> {
        if resource.uri.is_empty() {
            return Err(Error::usage("A resource needs a non-empty uri"));
        }
        let (json, serialized) = to_json(&resource);
        let entry = ResourceEntry { json, serialized, cache, handler };
        change(&self.resources, &self.pages.resources, &resource.uri, Some(Arc::new(entry)));
        self.mark(|e| e.resources = true);
        Ok(())
    }

    pub fn remove_resource(&self, uri: &str) -> bool {
        change(&self.resources, &self.pages.resources, uri, None)
    }

    pub fn add_template(
        &self,
        template: ResourceTemplate,
        cache: Option<CacheHint>,
        options: TemplateOptions,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<()> {
        let parsed = UriTemplate::parse(&template.uri_template).map_err(|e| {
            Error::usage(format!("Resource template {:?} is not a valid RFC 6570 template: {e}", template.uri_template))
        })?;
        let (json, serialized) = to_json(&template);
        let entry = TemplateEntry { json, serialized, template: parsed, cache, options, handler };
        change(&self.templates, &self.pages.templates, &template.uri_template, Some(Arc::new(entry)));
        self.mark(|e| e.resources = true);
        Ok(())
    }

    pub fn remove_template(&self, uri_template: &str) -> bool {
        change(&self.templates, &self.pages.templates, uri_template, None)
    }

    pub fn add_prompt(&self, prompt: Prompt, handler: Arc<dyn PromptHandler>) -> Result<()> {
        if prompt.name.is_empty() {
            return Err(Error::usage("A prompt needs a non-empty name"));
        }
        let required =
            prompt.arguments.iter().flatten().filter(|a| a.required == Some(true)).map(|a| a.name.clone()).collect();
        let (json, serialized) = to_json(&prompt);
        let entry = PromptEntry { json, serialized, required, handler };
        change(&self.prompts, &self.pages.prompts, &prompt.name, Some(Arc::new(entry)));
        self.mark(|e| e.prompts = true);
        Ok(())
    }

    pub fn remove_prompt(&self, name: &str) -> bool {
        change(&self.prompts, &self.pages.prompts, name, None)
    }

    pub fn set_completion(&self, r: CompletionRef, handler: Arc<dyn CompletionHandler>) {
        write(&self.completions).insert(r, handler);
        self.mark(|e| e.completions = true);
    }

    pub fn remove_completion(&self, r: &CompletionRef) -> bool {
        write(&self.completions).remove(r).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::CallToolResult;
    use crate::server::context::RequestContext;
    use crate::server::list_pages::PageKey;
    use serde_json::json;

    fn handler() -> Arc<dyn ToolHandler> {
        Arc::new(|_a: Value, _c: RequestContext| async move { Ok(CallToolResult::text("x")) })
    }

    fn page(pages: &PageCache, text: &str) -> String {
        pages.get_or_write(PageKey { legacy: false, after: None }, || text.to_owned()).to_string()
    }

    #[test]
    fn a_change_to_a_list_drops_its_kept_pages_and_no_other_list_s() {
        let r = Registries::default();
        let tool = || Tool::new("t", "d", json!({ "type": "object" }));
        assert_eq!(page(&r.pages.tools, "tools"), "tools");
        assert_eq!(page(&r.pages.prompts, "prompts"), "prompts");
        r.add_tool(tool(), ToolOptions::default(), handler()).unwrap();
        assert_eq!(page(&r.pages.tools, "after add"), "after add");
        assert_eq!(page(&r.pages.prompts, "other"), "prompts", "another list keeps its pages");
        assert_eq!(page(&r.pages.tools, "again"), "after add", "kept until the next change");
        assert!(r.remove_tool("t"));
        assert_eq!(page(&r.pages.tools, "after remove"), "after remove");
        r.add_prompt(
            crate::schema::Prompt::new("p"),
            Arc::new(|_a: serde_json::Map<String, Value>, _c: RequestContext| async move {
                Ok(crate::schema::GetPromptResult::new(vec![]))
            }),
        )
        .unwrap();
        assert_eq!(page(&r.pages.prompts, "after prompt"), "after prompt");
    }

    #[test]
    fn an_entry_keeps_its_definition_serialized_as_it_lists() {
        let r = Registries::default();
        r.add_tool(Tool::new("t", "d \"q\"", json!({ "type": "object" })), ToolOptions::default(), handler()).unwrap();
        let t = r.tool("t").unwrap();
        assert_eq!(serde_json::from_str::<Value>(&t.serialized).unwrap(), t.json);
    }
}
