//! The store: every SQL statement lattice runs, behind typed functions,
//! one file per table or topic. Nothing outside this folder writes SQL.
//!
//! The writers, one per effect, each return the event their envelope
//! records; only the write path's commit (src/commit.rs) calls them,
//! inside its transaction. The reads answer rows as they are stored; who
//! may read them is decided above the store (src/access.rs).
//!
//! This file only names the store's parts: each item lives in the file
//! named for it, which reads its siblings (never this file).

pub(crate) mod access;
mod artifacts;
mod audit;
pub(crate) mod connections;
pub(crate) mod credentials;
pub(crate) mod db;
pub(crate) mod deadlines;
pub(crate) mod envelopes;
pub(crate) mod files;
pub(crate) mod followers;
pub(crate) mod groups;
pub(crate) mod horizon;
pub(crate) mod lookups;
pub(crate) mod members;
pub(crate) mod notify;
pub(crate) mod people;
pub(crate) mod read_marks;
pub(crate) mod runs;
pub(crate) mod seals;
pub(crate) mod sessions;
pub(crate) mod sign_ins;
pub(crate) mod switches;
pub(crate) mod threads;
pub(crate) mod unread;
pub(crate) mod waiting;
mod workspaces;
mod writing;

pub use artifacts::ArtifactRow;
pub(crate) use artifacts::{Derived, archive_artifact, artifact_chain, change_artifact, create_artifact, list_artifacts, load_artifact};
pub(crate) use audit::record_audit;
pub use db::{Backend, Db, Schema};
pub use envelopes::StoredEnvelope;
pub(crate) use envelopes::{NewEnvelope, insert_envelope};
pub use members::{Listed, WorkspaceSummary};
pub(crate) use people::{end_sessions, provision_person, record_sign_in, remove_person};
pub(crate) use runs::{Answering, answer_request, record_step, start_run};
pub use runs::{RequestRow, RunRow};
pub(crate) use switches::set_switch;
pub use threads::ThreadSummary;
pub(crate) use workspaces::{add_member, create_thread, create_workspace, remove_member, share_thread, unshare_thread};
pub(crate) use writing::Writing;
