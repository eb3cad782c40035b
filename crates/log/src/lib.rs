//! The log service: lattice's one write path and its storage.
//!
//! [`LogService::execute`] runs every command: authenticate (an
//! [`Authenticated`] comes only from a verified token) → authorize →
//! integration gate → checks → commit, which appends one envelope and updates
//! the read models in one transaction. Nothing else in lattice writes to the
//! database. Reads go through the same access rules.

mod access;
mod auth;
mod authorize;
pub mod chain;
mod clock;
mod commit;
mod db;
mod deadlines;
mod digest;
mod effect;
mod fanout;
mod follow;
mod gate;
mod horizon;
pub mod limits;
mod prepare;
mod read;
mod relay;
mod runs;
mod service;
mod sessions;
mod sign_outs;
mod store;
mod switches;
mod trace;
mod trusted;
mod view;

pub use access::Access;
pub use auth::{Authenticated, Authenticator, CAPABILITY_TTL, Issued};
pub use clock::{now_ms, parse_rfc3339, rfc3339};
pub use db::{Backend, Db, Schema};
pub use deadlines::{DEADLINE_ACTOR, EXPIRED, Expired};
pub use digest::digest;
pub use fanout::{AccessWatch, Delivered, Live, LiveEvents, Passing};
pub use follow::LogReader;
pub use horizon::{Following, Horizon, WRITER_LOCK};
pub use read::{AuditRow, Follow, KeyState, LevelStates, Listed, ThreadAccess, ThreadSummary, WorkspaceSummary};
pub use runs::{RequestRow, RunRow, RunView};
pub use service::{Builder, Committed, LogService};
pub use sessions::{SESSION_STATE_BYTES, SESSIONS_PER_CALLER, Sessions};
pub use sign_outs::FRESH as SIGN_OUT_FRESH;
pub use store::{ArtifactRow, StoredEnvelope};
pub use switches::SwitchStore;
pub use trace::{is_traceparent, with_traceparent};
pub use trusted::Trusted;
