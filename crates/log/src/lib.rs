//! The log service: lattice's one write path and its storage.
//!
//! [`LogService::execute`] runs every command: authenticate (an
//! [`Authenticated`] comes only from a verified token) → authorize →
//! integration gate → checks → commit, which appends one envelope and updates
//! the read models in one transaction. Nothing else in lattice writes the
//! log; beside it, only what is derived from it (`unread`, `seal`) and
//! bookkeeping (read marks, sessions, checkpoints, leases). Reads go through
//! the same access rules.
//!
//! The crate's parts, and what each may name. Every part may name the
//! leaves (`clock`, `limits`, `digest`, `chain`, `trace`); none names
//! `service` but the two that hand out what the service is built of.
//!
//! - `store/`: every SQL statement, behind typed functions over a [`Db`]
//!   (its `db.rs`: the pool, the backends, migrations), one file per table
//!   or topic. Names only its own files; `mod.rs` only names them.
//! - `auth`: tokens and capabilities, issued and expired by its clock. Names `chain`.
//! - `registry`: the kinds and checks the service was built with. Names nothing.
//! - `access`: who sees and does what. Names the store.
//! - `scope`: what authorization found, for the later steps. Names `access`, the store.
//! - `authorize`: a command's scope, or its refusal. Names `access`, `registry`, `scope`, the store.
//! - `view`: the workspace as checks read it. Names `access`, `scope`, the store.
//! - `switches`: the switch store (the Integrations port). Names the store.
//! - `gate`: the integration gate. Names `registry`, `scope`, `switches`, `view`, the store.
//! - `prepare`: what a command will write. Names `registry`, `scope`, `effect`, the store.
//! - `effect`: an effect's place and its writer. Names the store.
//! - `horizon`: how far the log may be read. Names the store.
//! - `commit`: the transaction, stamped by the clock; tells the horizon. Names `effect`, `horizon`, `scope`, the store.
//! - `deadlines`: the scheduler, which commits through `commit` alone. Names `commit`, `access`, `effect`, `scope`, the store.
//! - `subscribers`: the fan-out's lists and what passes through them. Names the store.
//! - `passing`: what passes on a stream unkept, said to and heard from the other replicas. Names `subscribers`, the store.
//! - `fanout`: one reader of the log for every stream. Names `passing`, `subscribers`, the store.
//! - `bearer`: who a bearer token is, of every kind (lattice's, an API key, a provider's). Names `auth`, `credentials`.
//! - `sign_in`: sign-in sessions, their one-time codes and renewals. Names `auth`, `bearer`, `credentials`, the store.
//! - `directory`: the tenant's directory and credentials as its admins read them. Names `access`, `auth`, the store.
//! - `connections`: people's sign-ins to connected MCP servers, sealed (`vault`). Names `auth`, `vault`, the store.
//! - `credentials`: whether what vouched for a caller still stands (sign-outs, the directory, sessions, keys), by the clock. Names `auth`, the store.
//! - `reads`: every read as a caller. Names `access`, `auth`, `horizon`, `switches`, the store.
//! - `runs`: the API's reads of runs. Names `access`, `auth`, the store.
//! - `live`: one live stream, an access watch. Names `access`, `auth`, `fanout`, `horizon`, `reads`, `credentials`, `subscribers`, the store.
//! - `sessions`: protocol sessions replicas share, by the clock. Names the store.
//! - `unread`: the fold of what makes threads unread into their rows, beside the write path. Names `horizon`, the store.
//! - `service`: [`LogService`] and its [`Builder`], which wire all of the above.
//! - `trusted`: what in-process parts may do. Names `service` (whose parts it is
//!   handed), `auth`, `deadlines`, `fanout`, `reads`, `subscribers`, `switches`, the store.
//! - `follow`: the bridge's and the sealer's reader of the whole log. Names `service`, `horizon`, `sealed`, the store.
//! - `lookups`: what the bridge reads beside a batch of envelopes, one statement a kind. Names `follow`, the store.
//! - `sealed`: how far the log is sealed, as heard (this process's sealer, other replicas' by `NOTIFY`). Names the store.
//! - `receipts`: what the seal proves, read as a caller; a proof handed over when sealed. Names `access`, `auth`, `sealed`, the store.
//! - `seal`: the sealer, which tells `sealed` of each batch. Names `follow`, `receipts`, `sealed`, the store.
//! - `waiting`: what waits for a person's answer, and its live stream. Names `access`, `auth`, `fanout`,
//!   `registry`, `credentials`, `subscribers`, the store.

mod access;
mod auth;
mod authorize;
mod bearer;
pub mod chain;
mod clock;
mod commit;
mod connections;
mod credentials;
mod deadlines;
mod digest;
mod directory;
mod effect;
mod fanout;
mod files;
mod follow;
mod gate;
mod horizon;
pub mod limits;
mod live;
mod lookups;
mod passing;
mod prepare;
mod reads;
mod receipts;
mod registry;
mod runs;
mod scope;
pub mod seal;
mod sealed;
mod service;
mod sessions;
mod sign_in;
mod store;
mod subscribers;
mod switches;
mod trace;
mod trusted;
mod unread;
mod vault;
mod view;
mod waiting;

pub use access::Access;
pub use auth::{Authenticated, Authenticator, CAPABILITY_TTL, FILE_LINK_TTL, Issued, Via};
pub use bearer::{API_KEY_PREFIX, MAX_TOKEN_BYTES, SCIM_TOKEN_PREFIX};
pub use clock::{parse_rfc3339, rfc3339};
pub use commit::Committed;
pub use connections::ConnectionRow;
pub use credentials::FRESH as SIGN_OUT_FRESH;
pub use deadlines::{DEADLINE_ACTOR, EXPIRED, Expired};
pub use digest::digest;
pub use directory::DIRECTORY_PAGE;
pub use files::{CHUNK_BYTES, FILE_ERASED, FILE_PREFIX, FileLimits, Files, Upload, file_name, sniff};
pub use follow::LogReader;
pub use horizon::{Following, Horizon};
pub use live::{AccessWatch, Live, LiveEvents};
pub use reads::{Follow, KeyState, LevelStates, ThreadAccess};
pub use runs::RunView;
pub use seal::{SealStatus, Sealer};
pub use service::{Builder, LogService, QUESTION_ACTOR};
pub use sessions::{SESSION_STATE_BYTES, SESSIONS_PER_CALLER, Sessions};
pub use sign_in::{SessionLimits, SessionToken, derived_user_id};
pub use store::credentials::CredentialRow;
pub use store::files::FileRow;
pub use store::groups::GroupRow;
pub use store::horizon::WRITER_LOCK;
pub use store::lookups::{ArtifactAt, KEYS_PER_QUERY as LOOKUP_KEYS_PER_QUERY};
pub use store::people::PersonRow;
pub use store::sign_ins::Attempt as SignInAttempt;
pub use store::threads::LISTED_MAX as THREADS_LISTED_MAX;
pub use store::waiting::PLACES as WAITING_PLACES;
pub use store::{ArtifactRow, Backend, Db, Listed, RequestRow, RunRow, Schema, StoredEnvelope, ThreadSummary, WorkspaceSummary};
pub use subscribers::{Delivered, Passing};
pub use switches::SwitchStore;
pub use trace::{is_traceparent, with_traceparent};
pub use trusted::Trusted;
pub use waiting::{AskingTool, WAITING_MAX, WaitingItem, WaitingNext, WaitingStream, Waits};
