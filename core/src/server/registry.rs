//! The registries behind a [`Server`](super::Server): tools, resources, resource templates,
//! prompts and completions, each keyed and listed in a deterministic order (by key).

use crate::error::{Error, Result};
use crate::headers::{self, HeaderParam};
use crate::schema::{Prompt, Resource, ResourceTemplate, Tool};
use crate::server::handlers::{CompletionHandler, PromptHandler, ResourceHandler, ToolHandler};
use crate::server::input_schema::{self, CompiledSchema};
use crate::server::tasks::TaskSupport;
use crate::server::uri_template::UriTemplate;
use crate::server::{CacheHint, TemplateOptions, ToolOptions};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

pub(crate) struct ToolEntry {
    pub json: Value,
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
    pub cache: Option<CacheHint>,
    pub handler: Arc<dyn ResourceHandler>,
}

pub(crate) struct TemplateEntry {
    pub json: Value,
    pub template: UriTemplate,
    pub cache: Option<CacheHint>,
    pub options: TemplateOptions,
    pub handler: Arc<dyn ResourceHandler>,
}

pub(crate) struct PromptEntry {
    pub json: Value,
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

type Map<E> = RwLock<BTreeMap<String, Arc<E>>>;

#[derive(Default)]
pub(crate) struct Registries {
    pub tools: Map<ToolEntry>,
    pub resources: Map<ResourceEntry>,
    pub templates: Map<TemplateEntry>,
    pub prompts: Map<PromptEntry>,
    pub completions: RwLock<BTreeMap<CompletionRef, Arc<dyn CompletionHandler>>>,
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

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
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
        let task = options.task_support;
        let entry = ToolEntry {
            json: to_json(&tool),
            schema,
            output,
            header_params,
            timeout: options.timeout,
            task,
            defer_task: options.defer_task,
            handler,
        };
        write(&self.tools).insert(tool.name, Arc::new(entry));
        self.mark(|e| {
            e.tools = true;
            e.tasks |= task.allows_tasks();
        });
        Ok(())
    }

    pub fn remove_tool(&self, name: &str) -> bool {
        write(&self.tools).remove(name).is_some()
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
        let entry = ResourceEntry { json: to_json(&resource), cache, handler };
        write(&self.resources).insert(resource.uri, Arc::new(entry));
        self.mark(|e| e.resources = true);
        Ok(())
    }

    pub fn remove_resource(&self, uri: &str) -> bool {
        write(&self.resources).remove(uri).is_some()
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
        let entry = TemplateEntry { json: to_json(&template), template: parsed, cache, options, handler };
        write(&self.templates).insert(template.uri_template, Arc::new(entry));
        self.mark(|e| e.resources = true);
        Ok(())
    }

    pub fn remove_template(&self, uri_template: &str) -> bool {
        write(&self.templates).remove(uri_template).is_some()
    }

    pub fn add_prompt(&self, prompt: Prompt, handler: Arc<dyn PromptHandler>) -> Result<()> {
        if prompt.name.is_empty() {
            return Err(Error::usage("A prompt needs a non-empty name"));
        }
        let required =
            prompt.arguments.iter().flatten().filter(|a| a.required == Some(true)).map(|a| a.name.clone()).collect();
        let entry = PromptEntry { json: to_json(&prompt), required, handler };
        write(&self.prompts).insert(prompt.name, Arc::new(entry));
        self.mark(|e| e.prompts = true);
        Ok(())
    }

    pub fn remove_prompt(&self, name: &str) -> bool {
        write(&self.prompts).remove(name).is_some()
    }

    pub fn set_completion(&self, r: CompletionRef, handler: Arc<dyn CompletionHandler>) {
        write(&self.completions).insert(r, handler);
        self.mark(|e| e.completions = true);
    }

    pub fn remove_completion(&self, r: &CompletionRef) -> bool {
        write(&self.completions).remove(r).is_some()
    }
}
