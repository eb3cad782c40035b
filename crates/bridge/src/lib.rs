//! The projection bridge (REQUIREMENTS.md B): follows the log in order from a durable
//! checkpoint and publishes each bridged envelope to NATS JetStream, with
//! `Nats-Msg-Id` = the envelope id, moving the checkpoint only once
//! JetStream has acknowledged.
//!
//! Delivery: every bridged envelope reaches the stream at least once, in log
//! order; JetStream drops a repeat of the same id within its duplicate
//! window ([`DUPLICATE_WINDOW`]), and the bridge only repeats what it
//! published since its last checkpoint (one batch), so there is no
//! duplicate unless the bridge stays down, mid-batch, for longer than the
//! window.

mod files;
mod found;
mod lookups;
mod payloads;
mod projections;
mod publisher;

pub use files::{BUCKET_PREFIX, bucket};
pub use payloads::{AppSubmitted, AuthorKind, FormRef, FormSubmitted, Marks, Origin, bridge_schema};
pub use projections::{BRIDGED, FileCopies, NOT_BRIDGED, Outgoing, Projector, subject};
pub use publisher::{Bridge, BridgeConfig, BridgeStatus, DUPLICATE_WINDOW, STREAM, ensure_stream};
