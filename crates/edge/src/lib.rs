//! The edge (REQUIREMENTS.md E1, E2): two origins.
//!
//! - The portal host serves the chat host's files and, in `lattice serve
//!   edge`, proxies `/v1` (the live streams included) to the log service.
//!   Its policy allows frames from the apps origin only and no framing of
//!   itself.
//! - The apps origin serves the sandbox proxy document and the vendored MCP
//!   Apps SDK, and nothing else. It never sets a cookie and drops any it is
//!   sent, so there is nothing on it for an app to take.
//! - What the services behind it are told of the name and scheme a request
//!   came by (`X-Forwarded-Host`, `X-Forwarded-Proto`) is the edge's own
//!   word, or that of a proxy in front of it that it trusts (`forwarded`).

mod apps;
mod connections;
mod portal;
mod upstream;

pub use apps::{AppsOrigin, INNER_POLICY, apps_router, sdk_dir_of};
pub use portal::{PortalConfig, portal_router};
// The rule of whose forwarded headers are believed is every service's.
pub use lattice_http::forwarded::{self, TrustedProxies};
pub use upstream::{downloads_router_behind, mcp_router, mcp_router_behind, upstream_router, upstream_router_behind};
