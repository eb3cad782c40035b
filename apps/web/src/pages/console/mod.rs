//! The admin console (REQUIREMENTS.md W7), for an incident: every level the viewer
//! administers, live (a flip by anyone, from anywhere, shows at once),
//! each key's state and effective value with why; a flip that needs a
//! reason, a confirmation naming what a deployment or tenant flip turns
//! off and how many workspaces it reaches, one action to turn everything
//! off at a level; the audit trail filtered, paged and exported as CSV;
//! each app's calls; the connected MCP servers with their calls; the keys
//! agents call lattice with, and the tenant's directory (SCIM).
//!
//! [`page`] is the console itself; a level's switches are in [`levels`],
//! who holds what in [`people`], the agents' API keys in [`keys`], the SCIM
//! base URL and tokens in [`scim`], the trail in [`audit`], the apps' calls
//! in [`app_calls`], the servers in [`servers`].

mod app_calls;
mod audit;
mod keys;
mod levels;
pub mod page;
mod people;
mod scim;
mod servers;
