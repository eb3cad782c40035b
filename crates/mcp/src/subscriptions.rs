//! Artifacts as resources a client reads and follows without polling
//! (MCP `resources/read`, `resources/subscribe`):
//!
//! - `lattice://artifacts/{id}`: an artifact's head (its kind, version,
//!   digest and data), JSON;
//! - `lattice://artifacts/{id}/submissions`: a form's answers the caller may
//!   read, JSON.
//!
//! A subscription is read when it is made (a resource the caller may not
//! read is not found, as everywhere) and again after each commit in the
//! resource's thread (its live stream, the fan-out's); when what it reads
//! changed (a new version, a new answer, archived) the session hears
//! `notifications/resources/updated` for its URI. The stream ends when the
//! caller may no longer read the thread (removed, unlisted, signed out), and
//! the subscription with it, without a word. It also ends with its session,
//! or at `resources/unsubscribe`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lattice_core::{ArtifactId, ThreadId};
use lattice_log::{Authenticated, Follow, LogService};
use rmcp::ErrorData as McpError;
use rmcp::model::{ResourceContents, ResourceTemplate, ResourceUpdatedNotificationParam};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::task::AbortHandle;

/// The artifacts' URIs begin so.
pub const ARTIFACTS: &str = "lattice://artifacts/";
const ANSWERS: &str = "/submissions";
/// Subscriptions one session holds at once.
pub const PER_SESSION: usize = 64;
/// How often a quiet subscription looks whether its session went away.
const LOOK_EVERY: Duration = Duration::from_secs(30);

/// What a URI names.
#[derive(Debug, Clone, PartialEq)]
enum Named {
    Artifact(ArtifactId),
    Answers(ArtifactId),
}

fn named(uri: &str) -> Option<Named> {
    let rest = uri.strip_prefix(ARTIFACTS)?;
    let (id, answers) = match rest.strip_suffix(ANSWERS) {
        Some(id) => (id, true),
        None => (rest, false),
    };
    let id = ArtifactId::parse("uri", id).ok()?;
    Some(if answers { Named::Answers(id) } else { Named::Artifact(id) })
}

pub fn templates() -> Vec<ResourceTemplate> {
    let template = |uri: &str, name: &str, about: &str| ResourceTemplate::new(uri, name).with_description(about).with_mime_type("application/json");
    vec![
        template("lattice://artifacts/{id}", "artifact", "An artifact's head: its kind, version, digest and data. Subscribe to hear of each change."),
        template("lattice://artifacts/{id}/submissions", "form submissions", "A form's answers you may read. Subscribe to hear of each new one."),
    ]
}

/// What a named resource says now, as the caller reads it.
async fn now(log: &LogService, who: &Authenticated, named: &Named) -> Result<Value, lattice_core::Error> {
    match named {
        Named::Artifact(id) => {
            let a = log.artifact(who, id, None).await?;
            Ok(json!({"id": a.id, "kind": a.kind, "thread": a.thread, "version": a.version, "digest": a.digest,
                "archived": a.archived, "data": a.data}))
        }
        Named::Answers(id) => {
            let form = log.artifact(who, id, None).await?;
            if form.kind != "form" {
                return Err(lattice_core::Error::NotFound);
            }
            let thread = ThreadId::from_trusted(form.thread.clone());
            let answers = log.artifacts(who, &thread, Some("submission"), Some(form.id.as_str())).await?;
            let listed: Vec<Value> = answers
                .iter()
                .map(|s| json!({"id": s.id, "by": s.author, "at": lattice_log::rfc3339(s.created_at), "values": s.data["values"]}))
                .collect();
            Ok(json!({"form": {"id": form.id, "version": form.version}, "submissions": listed}))
        }
    }
}

fn not_found(uri: &str) -> McpError {
    McpError::resource_not_found(format!("no resource {uri}"), None)
}

/// `uri`'s contents, if it names an artifact resource: `None` for another
/// URI.
pub async fn read(log: &LogService, who: &Authenticated, uri: &str) -> Option<Result<Vec<ResourceContents>, McpError>> {
    if !uri.starts_with(ARTIFACTS) {
        return None;
    }
    let Some(named) = named(uri) else { return Some(Err(not_found(uri))) };
    Some(match now(log, who, &named).await {
        Ok(value) => Ok(vec![ResourceContents::text(value.to_string(), uri).with_mime_type("application/json")]),
        Err(_) => Err(not_found(uri)),
    })
}

/// One session's subscriptions, by URI.
#[derive(Clone, Default)]
pub struct Subscriptions(Arc<Mutex<HashMap<String, AbortHandle>>>);

impl Subscriptions {
    /// Follows `uri` for `who`, telling `peer` of each change.
    pub async fn subscribe(&self, log: &LogService, who: Authenticated, uri: &str, peer: Peer<RoleServer>) -> Result<(), McpError> {
        let named = named(uri).ok_or_else(|| not_found(uri))?;
        let id = match &named {
            Named::Artifact(id) | Named::Answers(id) => id,
        };
        let thread = log.artifact(&who, id, None).await.map_err(|_| not_found(uri))?.thread;
        // The thread's live stream from here on: woken by its commits only,
        // and ended when the caller may no longer read it (removed,
        // unlisted, signed out), as every live stream.
        let mut live = log.follow(&who, Follow::Thread(ThreadId::from_trusted(thread)), log.horizon().current()).await.map_err(|_| not_found(uri))?;
        live.catch_up().await.map_err(|_| not_found(uri))?;
        let mut last = now(log, &who, &named).await.map_err(|_| not_found(uri))?;
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if held.len() >= PER_SESSION && !held.contains_key(uri) {
            return Err(McpError::invalid_params(format!("a session follows at most {PER_SESSION} resources; unsubscribe from one first"), None));
        }
        let (log, owned) = (log.clone(), uri.to_owned());
        let task = tokio::spawn(async move {
            loop {
                // Quiet for a while: only whether the session went away.
                if let Ok(None) = tokio::time::timeout(LOOK_EVERY, live.next_committed()).await {
                    return;
                }
                if peer.is_transport_closed() {
                    return;
                }
                // Gone (or no longer readable): ends.
                let Ok(seen) = now(&log, &who, &named).await else { return };
                if seen != last {
                    last = seen;
                    if peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(owned.clone())).await.is_err() {
                        return;
                    }
                }
            }
        });
        if let Some(before) = held.insert(uri.to_owned(), task.abort_handle()) {
            before.abort();
        }
        Ok(())
    }

    /// Stops following `uri` (nothing to do for one not followed).
    pub fn unsubscribe(&self, uri: &str) {
        if let Some(task) = self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(uri) {
            task.abort();
        }
    }
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        // The last handle of a session's subscriptions: they end with it.
        if Arc::strong_count(&self.0) == 1 {
            for task in self.0.lock().unwrap_or_else(PoisonError::into_inner).values() {
                task.abort();
            }
        }
    }
}
