//! Content blocks of tool results and prompts, and the contents of resources.

use serde::{Deserialize, Serialize};

use super::common::{Annotations, Icon, Meta};
use super::resources::Resource;

/// A block of content in a tool result or prompt message (`ContentBlock`), tagged by `type`.
///
/// ```
/// use mcpaxle::schema::ContentBlock;
/// let block = ContentBlock::text("hello");
/// assert_eq!(serde_json::to_string(&block).unwrap(), r#"{"type":"text","text":"hello"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ContentBlock {
    /// `"text"`: text for or from an LLM.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `"image"`: a base64-encoded image.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `"audio"`: base64-encoded audio.
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `"resource_link"`: a link to a resource the server can read.
    #[serde(rename = "resource_link")]
    ResourceLink(ResourceLink),
    /// `"resource"`: the contents of a resource, embedded.
    #[serde(rename = "resource")]
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image block from base64 data and its MIME type (e.g. `image/png`).
    pub fn image(base64_data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent {
            data: base64_data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An audio block from base64 data and its MIME type (e.g. `audio/wav`).
    pub fn audio(base64_data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent {
            data: base64_data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// A link to the resource at `uri`, named `name`.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(uri, name))
    }

    /// A text resource embedded in the content.
    pub fn embedded_text(uri: impl Into<String>, mime_type: impl Into<String>, text: impl Into<String>) -> Self {
        ContentBlock::Resource(EmbeddedResource::new(TextResourceContents::new(uri, mime_type, text)))
    }

    /// A binary resource (base64 `blob`) embedded in the content.
    pub fn embedded_blob(uri: impl Into<String>, mime_type: impl Into<String>, base64_blob: impl Into<String>) -> Self {
        ContentBlock::Resource(EmbeddedResource::new(BlobResourceContents::new(uri, mime_type, base64_blob)))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(c: ResourceLink) -> Self {
        ContentBlock::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::Resource(c)
    }
}

/// Text provided to or from an LLM (`"type": "text"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text content without annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent { text: text.into(), annotations: None, meta: None }
    }
}

/// An image provided to or from an LLM (`"type": "image"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// The base64-encoded image data.
    pub data: String,
    /// The MIME type of the image.
    pub mime_type: String,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Audio provided to or from an LLM (`"type": "audio"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// The base64-encoded audio data.
    pub data: String,
    /// The MIME type of the audio.
    pub mime_type: String,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A resource the server can read, linked from a prompt or tool result
/// (`"type": "resource_link"`; the same fields as [`Resource`]).
///
/// Resource links returned by tools need not appear in `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The URI of the resource.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource represents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Size of the raw content in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons a user interface can display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceLink {
    /// A link with a URI and name and nothing else.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            size: None,
            icons: None,
            meta: None,
        }
    }
}

impl From<Resource> for ResourceLink {
    /// Links to a listed resource (members the schema does not define are dropped).
    fn from(r: Resource) -> Self {
        ResourceLink {
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            mime_type: r.mime_type,
            annotations: r.annotations,
            size: r.size,
            icons: r.icons,
            meta: r.meta,
        }
    }
}

/// The contents of a resource embedded into a prompt or tool result (`"type": "resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The text or binary contents.
    pub resource: ResourceContents,
    /// Optional annotations for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds the given contents, without annotations.
    pub fn new(resource: impl Into<ResourceContents>) -> Self {
        EmbeddedResource { resource: resource.into(), annotations: None, meta: None }
    }
}

/// The contents of a resource: text or a base64 blob (`TextResourceContents |
/// BlobResourceContents`), told apart by which of `text` and `blob` is present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The URI of the contents.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(c: TextResourceContents) -> Self {
        ResourceContents::Text(c)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(c: BlobResourceContents) -> Self {
        ResourceContents::Blob(c)
    }
}

/// The text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The URI of the resource.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text (only for contents that really are text).
    pub text: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextResourceContents {
    /// Text contents of `uri` with a MIME type.
    pub fn new(uri: impl Into<String>, mime_type: impl Into<String>, text: impl Into<String>) -> Self {
        TextResourceContents { uri: uri.into(), mime_type: Some(mime_type.into()), text: text.into(), meta: None }
    }
}

/// The binary contents of a resource, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The URI of the resource.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The base64-encoded bytes.
    pub blob: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl BlobResourceContents {
    /// Binary contents of `uri` with a MIME type, from base64 data.
    pub fn new(uri: impl Into<String>, mime_type: impl Into<String>, base64_blob: impl Into<String>) -> Self {
        BlobResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: base64_blob.into(),
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn constructors_serialize_as_the_spec_shapes() {
        assert_eq!(
            serde_json::to_value(ContentBlock::image("AAA=", "image/png")).unwrap(),
            json!({"type": "image", "data": "AAA=", "mimeType": "image/png"})
        );
        assert_eq!(
            serde_json::to_value(ContentBlock::resource_link("file:///a", "a")).unwrap(),
            json!({"type": "resource_link", "uri": "file:///a", "name": "a"})
        );
        assert_eq!(
            serde_json::to_value(ContentBlock::embedded_text("file:///a", "text/plain", "hi")).unwrap(),
            json!({"type": "resource", "resource": {"uri": "file:///a", "mimeType": "text/plain", "text": "hi"}})
        );
    }

    #[test]
    fn resource_contents_are_told_apart_by_member() {
        let c: ResourceContents = serde_json::from_value(json!({"uri": "x:/", "blob": "AA=="})).unwrap();
        assert!(matches!(c, ResourceContents::Blob(_)));
        let c: ResourceContents = serde_json::from_value(json!({"uri": "x:/", "text": ""})).unwrap();
        assert!(matches!(c, ResourceContents::Text(_)));
    }
}
