//! The host side of MCP Apps (REQUIREMENTS.md W5, W6): JSON-RPC over postMessage with
//! the sandbox proxy of each running app.
//!
//! A message counts only when it comes from a frame this page made
//! (`event.source`) on the apps origin; it is dropped when it is larger
//! than 64 KB, and a frame's requests beyond 60 a minute get no answer.
//! Nothing is sent to an app before it says `ui/notifications/initialized`.
//! `tools/call` reaches get_state, set_state and submit only (a connected
//! MCP server's app: that server's tools, which lattice's server sends on
//! to it), and each is handed to the server (`POST /v1/artifacts/{app}/calls`) with the app's
//! capability, which this page asks the server for (as an MCP host's view
//! is given its own) and keeps: the frame never sees it, nor the session's
//! token. The server decides with the deployment's policy, records the
//! decision with the call's effect, and says when the person must confirm;
//! the person's answer goes back as its own request, sent only from this
//! page's dialog. Nothing is decided here.
//!
//! The frames and their apps ([`frames`]), what apps send ([`incoming`]),
//! what the host tells them unasked ([`notifications`]), the requests that
//! reach past the frame ([`calls`]), display modes ([`modes`]) and the
//! host context ([`context`]). [`super::app_frame`] is the view that runs
//! a frame and registers it here.

mod calls;
mod context;
mod frames;
mod incoming;
mod modes;
mod notifications;

pub use context::context_changed;
pub use frames::{AppInfo, ServerOrigin, unregister};
pub use incoming::register;
pub use notifications::{run_cancelled, teardown, tool_input_partial, update};
