//! Agent runs (REQUIREMENTS.md A, L6): how UI gets into the chat.
//!
//! The [`Runner`] drives a run as a state machine whose every step is a
//! command through the log's write path (`RecordRun`), so a paused run
//! survives a restart and resumes, acting for whoever answered, when its
//! requests are answered. The toolset is defined once in [`tools`] and
//! offered per the workspace's switches at each model call; the MCP exporter
//! reuses the same definitions.

pub mod act;
pub mod context;
mod elicit;
pub mod files;
pub mod model;
pub mod openai;
pub mod partial;
mod runner;
pub mod scripted;
pub mod servers;
pub mod sign_ins;
pub mod tools;
mod transcript;

pub use model::{ChatMessage, Delta, Deltas, Model, ModelError, ModelReply, ModelRequest, Models};
pub use runner::{Budget, Runner};
pub use tools::{ToolDefinition, toolset};
/// The fence around what people and programs wrote, as every model reads it.
pub use transcript::untrusted;
