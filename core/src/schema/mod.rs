//! Serde types for every message of the Model Context Protocol, revision 2026-07-28
//! (`spec/2026-07-28/schema.ts`, vendored from the specification), named as in the schema.
//!
//! Conventions:
//! * Fields are `snake_case` in Rust and `camelCase` on the wire; `_meta` is
//!   `meta: Option<Meta>`; every optional member is an `Option` that is omitted when `None`.
//! * Objects that may carry members this revision does not define (results, tools,
//!   resources, prompts, capabilities, params, ...) keep them in `extra`, so that they
//!   survive a round trip.
//! * Unions tagged by `type` (content blocks) are enums with `#[serde(tag = "type")]`;
//!   `{method, params}` unions ([`ClientRequest`], [`ServerNotification`], [`InputRequest`])
//!   are enums read with `from_parts` from a [`crate::jsonrpc`] envelope.
//! * Every result has `result_type`, and cacheable results `ttl_ms` and `cache_scope`; these
//!   are `Option`s so that the server can fill them in centrally (see [`CacheableResult`]).
//!   Constructors set `result_type` already.
//!
//! ```
//! use mcpaxle::schema::{CallToolResult, Tool};
//! use serde_json::json;
//! let tool = Tool::new("echo", "Echoes its input", json!({"type": "object"}));
//! let result = CallToolResult::text("hello");
//! assert_eq!(serde_json::to_value(&result).unwrap()["content"][0]["text"], "hello");
//! # let _ = tool;
//! ```
//!
//! The additions of the legacy 2025-11-25 era live in [`legacy`].

/// Defines a unit struct that serializes as one fixed string and accepts only that string
/// (a `const` member such as `"type": "object"`).
macro_rules! const_tag {
    ($(#[$attr:meta])* $name:ident = $value:literal) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            /// The string this tag stands for.
            pub const VALUE: &'static str = $value;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                if s == $value {
                    Ok($name)
                } else {
                    Err(<D::Error as serde::de::Error>::custom(format!(
                        concat!("expected \"", $value, "\", got {:?}"),
                        s
                    )))
                }
            }
        }
    };
}

/// Defines a `{method, params}` enum: one variant per method, holding that method's params
/// (an `Option` where `params` may be omitted), with `from_parts`/`to_parts` and serde impls.
macro_rules! method_enum {
    (
        $(#[$attr:meta])*
        pub enum $name:ident {
            $( $(#[$vattr:meta])* $variant:ident($ty:ty) = $method:literal, )+
        }
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $(#[$vattr])* $variant($ty), )+
        }

        impl $name {
            /// Every method this type covers.
            pub const METHODS: &'static [&'static str] = &[$($method),+];

            /// The method name.
            pub fn method(&self) -> &'static str {
                match self {
                    $( $name::$variant(_) => $method, )+
                }
            }

            /// Reads the message from its method and params (absent params read as `{}`
            /// where the method requires them).
            pub fn from_parts(
                method: &str,
                params: Option<serde_json::Value>,
            ) -> Result<Self, $crate::schema::MethodParseError> {
                match method {
                    $( $method => $crate::schema::messages::parse_params::<$ty>(params)
                        .map($name::$variant)
                        .map_err(|error| $crate::schema::MethodParseError::InvalidParams {
                            method: method.to_owned(),
                            error,
                        }), )+
                    _ => Err($crate::schema::MethodParseError::UnknownMethod(method.to_owned())),
                }
            }

            /// The method and the params as JSON (`None` when absent).
            pub fn to_parts(&self) -> (&'static str, Option<serde_json::Value>) {
                match self {
                    $( $name::$variant(p) => ($method, $crate::schema::messages::params_to_value(p)), )+
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let (method, params) = self.to_parts();
                let mut m = s.serialize_map(Some(1 + usize::from(params.is_some())))?;
                m.serialize_entry("method", method)?;
                if let Some(p) = &params {
                    m.serialize_entry("params", p)?;
                }
                m.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = <$crate::schema::messages::RawMethodCall as serde::Deserialize>::deserialize(d)?;
                Self::from_parts(&raw.method, raw.params).map_err(<D::Error as serde::de::Error>::custom)
            }
        }
    };
}

mod capabilities;
mod common;
mod completion;
mod content;
mod elicitation;
mod elicitation_schema;
mod errors;
pub mod legacy;
mod messages;
mod mrtr;
mod notifications;
mod number;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod subscriptions;
mod tasks;
mod tools;

pub use capabilities::*;
pub use common::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use elicitation_schema::*;
pub use errors::*;
pub use messages::*;
pub use mrtr::*;
pub use notifications::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use subscriptions::*;
pub use tasks::*;
pub use tools::*;
