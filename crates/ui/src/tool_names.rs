//! The names of the agent's tools that put UI in a chat: the runner offers
//! them, the MCP exporter lists them, and the chat draws a call of one while
//! its arguments arrive, so each name is written once, here.

pub use crate::asks::{ASK_FORM, ASK_USER};

pub const CREATE_FORM: &str = "create_form";
pub const SHOW_DASHBOARD: &str = "show_dashboard";
pub const UPDATE_DASHBOARD: &str = "update_dashboard";
pub const CREATE_APP: &str = "create_app";
pub const UPDATE_APP: &str = "update_app";
