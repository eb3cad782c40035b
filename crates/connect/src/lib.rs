//! MCP servers an operator connects (docs/MCP.md, "Connecting a server"):
//! lattice's agent calls their tools and the chat shows their apps.
//!
//! - [`config`]: a server as lattice.toml names it, checked at start.
//! - [`Connections`]: the deployment's servers, each a [`Server`] with a
//!   client session (rmcp) per tenant, or per person, made when first
//!   needed and ended when idle, within bounds on how many run; every
//!   request bounded in time and answer size, and only the configured
//!   address contacted ([`address`]).
//! - `process`: a stdio server's process, started with nothing of
//!   lattice's (environment, descriptors), in a folder of its own, within
//!   limits, its stderr to the log.
//! - `sign_in`: each person's own sign-in to a server that asks for one
//!   (OAuth 2.1 by rmcp's client), kept by the log through a [`Keeper`].
//! - [`naming`]: a tool is offered as `<server>__<tool>`.
//! - [`policy`]: allow, deny or ask, per tool, with the `mcp-app:<server>`
//!   overlay for calls made from the server's apps.
//!
//! Nothing here records or authorizes: the runner and the app calls decide
//! with [`policy::decide`], record in the log, and call through here. Calls
//! leave from the server side only.

pub mod address;
mod asking;
pub mod config;
mod connections;
mod error;
mod host;
pub mod naming;
mod offers;
pub mod policy;
mod process;
mod scopes;
mod server;
mod sign_in;

pub use asking::{Answer, Asker, Question, Withdrawn};
pub use config::ServerConfig;
pub use connections::Connections;
pub use error::CallError;
pub use host::{APP_MIME, APPS_EXTENSION};
pub use offers::{OFFERS_MAX, PromptArgument, ServerPrompt, ServerResource};
pub use scopes::scope_is_valid;
pub use server::{AppDocument, Behalf, Server, ServerTool, TOOLS_MAX};
pub use sign_in::{Keeper, Owner, SignIns};
