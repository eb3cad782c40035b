//! The `/v1` handlers, one file per area.

pub mod agui;
pub mod app_calls;
pub mod artifacts;
pub mod auth;
pub mod connections;
pub mod events;
pub mod files;
pub mod integrations;
pub mod keys;
pub mod me;
pub mod people;
pub mod runs;
pub mod scim;
pub mod seal;
pub mod system;
pub mod workspaces;

use lattice_core::Error;

/// An id from a path: one that cannot be an id names nothing.
pub(crate) fn path_id<T>(parse: impl FnOnce(&str, &str) -> Result<T, Error>, value: &str) -> Result<T, Error> {
    parse("id", value).map_err(|_| Error::NotFound)
}
