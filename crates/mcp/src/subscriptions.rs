//! Artifacts as resources a client reads and follows without polling
//! (MCP `resources/read`, `resources/subscribe`):
//!
//! - `lattice://artifacts/{id}`: an artifact's head (its kind, version,
//!   digest and data), JSON;
//! - `lattice://artifacts/{id}/submissions`: a form's answers the caller may
//!   read, JSON;
//! - `lattice://threads/{thread}`: a thread the caller can read, its title
//!   and workspace and its artifacts' heads, JSON.
//!
//! A subscription is read when it is made (a resource the caller may not
//! read is not found, as everywhere) and again after each commit of an
//! artifact in the resource's thread (its live stream, the fan-out's); when what it reads
//! changed (a new version, a new answer, archived) the session hears
//! `notifications/resources/updated` for its URI. The stream ends when the
//! caller may no longer read the thread (removed, unlisted, signed out), and
//! the subscription with it, without a word. It also ends with its session,
//! or at `resources/unsubscribe`. A 2026-07-28 client, which has no session,
//! names the URIs in a `subscriptions/listen` request instead, and hears on
//! that request's stream for as long as it keeps it open (`listen`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lattice_core::event::{ArtifactArchived, ArtifactChanged, ArtifactCreated};
use lattice_core::{ArtifactId, ThreadId};
use lattice_log::{Authenticated, Follow, LogService};
use rmcp::ErrorData as McpError;
use rmcp::model::{ResourceContents, ResourceTemplate};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::task::AbortHandle;

use crate::tell::Tell;

/// The artifacts' URIs begin so.
pub const ARTIFACTS: &str = "lattice://artifacts/";
/// The threads' URIs begin so.
pub const THREADS: &str = "lattice://threads/";
/// The artifacts a thread's resource lists at most, newest first.
const THREAD_ARTIFACTS: usize = 500;
const ANSWERS: &str = "/submissions";
/// Subscriptions one session holds at once.
pub const PER_SESSION: usize = 64;
/// The events that change what a resource here reads: an artifact's (a
/// form's, an answer's, one of a thread's).
const CHANGES: [&str; 3] = [ArtifactCreated::NAME, ArtifactChanged::NAME, ArtifactArchived::NAME];
/// How often a quiet subscription looks whether its session went away.
const LOOK_EVERY: Duration = Duration::from_secs(30);

/// What a URI names.
#[derive(Debug, Clone, PartialEq)]
enum Named {
    Artifact(ArtifactId),
    Answers(ArtifactId),
    Thread(ThreadId),
}

fn named(uri: &str) -> Option<Named> {
    if let Some(thread) = uri.strip_prefix(THREADS) {
        return ThreadId::parse("uri", thread).ok().map(Named::Thread);
    }
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
        template(
            "lattice://threads/{thread}",
            "thread",
            "A thread you can read: its title, its workspace and its artifacts' heads, newest first. Subscribe to hear of each new artifact or version.",
        ),
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
        Named::Thread(thread) => {
            let head = log.thread(who, thread).await?.thread;
            let mut artifacts = log.artifacts(who, thread, None, None).await?;
            artifacts.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.id.cmp(&a.id)));
            // Answers are each form's own resource (`…/submissions`).
            artifacts.retain(|a| a.kind != "submission");
            let more = artifacts.len() > THREAD_ARTIFACTS;
            let listed: Vec<Value> = artifacts
                .iter()
                .take(THREAD_ARTIFACTS)
                .map(|a| json!({"id": a.id, "kind": a.kind, "version": a.version, "title": a.data.get("title"), "archived": a.archived}))
                .collect();
            Ok(json!({"id": head.id, "title": head.title, "workspace": head.workspace, "artifacts": listed, "more": more}))
        }
    }
}

fn not_found(uri: &str) -> McpError {
    McpError::resource_not_found(format!("no resource {uri}"), None)
}

/// `uri`'s contents, if it names an artifact resource: `None` for another
/// URI.
pub async fn read(log: &LogService, who: &Authenticated, uri: &str) -> Option<Result<Vec<ResourceContents>, McpError>> {
    if !uri.starts_with(ARTIFACTS) && !uri.starts_with(THREADS) {
        return None;
    }
    let Some(named) = named(uri) else { return Some(Err(not_found(uri))) };
    Some(match now(log, who, &named).await {
        Ok(value) => Ok(vec![ResourceContents::text(value.to_string(), uri).with_mime_type("application/json")]),
        Err(_) => Err(not_found(uri)),
    })
}

/// Follows `uri` for `who` from now on: its thread's live stream, read
/// once now; `None` when the caller may not read it (not found, as
/// everywhere). The returned future tells `tell` of each change until the
/// caller may no longer read the thread or nobody hears.
async fn follower(log: &LogService, who: Authenticated, uri: &str, tell: Tell) -> Option<impl Future<Output = ()> + Send + 'static> {
    let named = named(uri)?;
    let thread = match &named {
        Named::Artifact(id) | Named::Answers(id) => ThreadId::from_trusted(log.artifact(&who, id, None).await.ok()?.thread),
        Named::Thread(thread) => thread.clone(),
    };
    // The thread's live stream from here on: woken by its commits only,
    // and ended when the caller may no longer read it (removed,
    // unlisted, signed out), as every live stream.
    let mut live = log.follow(&who, Follow::Thread(thread), log.horizon().current()).await.ok()?;
    live.catch_up().await.ok()?;
    let mut last = now(log, &who, &named).await.ok()?;
    let (log, owned) = (log.clone(), uri.to_owned());
    Some(async move {
        loop {
            // Quiet for a while: only whether the session went away.
            let committed = match tokio::time::timeout(LOOK_EVERY, live.next_committed()).await {
                Ok(None) => return,
                Ok(Some(committed)) => Some(committed),
                Err(_) => None,
            };
            if tell.gone() {
                return;
            }
            // What these resources read changes only with an artifact: a
            // message, a run's step, is not read for.
            if committed.is_some_and(|c| !CHANGES.contains(&c.event_type.as_str())) {
                continue;
            }
            // Gone (or no longer readable): ends.
            let Ok(seen) = now(&log, &who, &named).await else { return };
            if seen != last {
                last = seen;
                if !tell.updated(&owned).await {
                    return;
                }
            }
        }
    })
}

/// Of the URIs a `subscriptions/listen` asks to follow, those it may:
/// lattice's artifact URIs, at most [`PER_SESSION`]. Whether the caller may
/// read each is not said here (the acknowledgment would tell what exists):
/// one it may not is followed as one that never changes.
pub fn listenable(requested: &[String]) -> Vec<String> {
    requested.iter().filter(|uri| named(uri).is_some()).take(PER_SESSION).cloned().collect()
}

/// Follows each of `uris` for `who` on one `subscriptions/listen` stream,
/// until each follower ends.
pub(crate) async fn listen(log: &LogService, who: &Authenticated, uris: &[String], tell: &Tell) -> tokio::task::JoinSet<()> {
    let mut followers = tokio::task::JoinSet::new();
    for uri in uris {
        if let Some(follow) = follower(log, who.clone(), uri, tell.clone()).await {
            followers.spawn(follow);
        }
    }
    followers
}

/// One session's subscriptions, by URI.
#[derive(Clone, Default)]
pub struct Subscriptions(Arc<Mutex<HashMap<String, AbortHandle>>>);

impl Subscriptions {
    /// Follows `uri` for `who`, telling `peer` of each change.
    pub async fn subscribe(&self, log: &LogService, who: Authenticated, uri: &str, peer: Peer<RoleServer>) -> Result<(), McpError> {
        let follow = follower(log, who, uri, Tell::Session(peer)).await.ok_or_else(|| not_found(uri))?;
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if held.len() >= PER_SESSION && !held.contains_key(uri) {
            return Err(McpError::invalid_params(format!("a session follows at most {PER_SESSION} resources; unsubscribe from one first"), None));
        }
        let task = tokio::spawn(follow);
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
