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
//! read is not found, as everywhere) and follows the resource's thread
//! (its live stream, the fan-out's) from where the log stood when the
//! request came: each commit after that which touches what the resource
//! reads (a new version, a new answer, archived) is read again as the
//! caller, and the session hears `notifications/resources/updated` for its
//! URI (not for an answer the caller may not see). The stream ends when the
//! caller may no longer read the thread (removed, unlisted, signed out), and
//! the subscription with it, without a word. It also ends with its session,
//! or at `resources/unsubscribe`. A 2026-07-28 client, which has no session,
//! names the URIs in a `subscriptions/listen` request instead, and hears on
//! that request's stream for as long as it keeps it open (`listen`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lattice_core::event::{ArtifactArchived, ArtifactChanged, ArtifactCreated, Event};
use lattice_core::{ArtifactId, Envelope, ThreadId};
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

/// The artifact a commit touches, when it is one `named` reads: the
/// artifact itself; for a form's answers, the form or any answer (whose
/// form the read then says); for a thread, any of its artifacts but an
/// answer (each form's own resource).
fn touched<'a>(named: &Named, event: &'a Event) -> Option<&'a str> {
    let (id, kind) = match event {
        Event::ArtifactCreated(e) => (e.id.as_str(), e.kind.as_str()),
        Event::ArtifactChanged(e) => (e.id.as_str(), e.kind.as_str()),
        Event::ArtifactArchived(e) => (e.id.as_str(), e.kind.as_str()),
        _ => return None,
    };
    let reads = match named {
        Named::Artifact(artifact) => id == artifact.as_str(),
        Named::Answers(form) => id == form.as_str() || kind == lattice_ui::SUBMISSION,
        Named::Thread(_) => kind != lattice_ui::SUBMISSION,
    };
    reads.then_some(id)
}

/// Whether the caller, reading `named` as `read`, sees what `id` is: an
/// answer only among the form's answers it may read.
fn sees(named: &Named, read: &Value, id: &str) -> bool {
    match named {
        Named::Answers(form) if id != form.as_str() => read["submissions"].as_array().is_some_and(|answers| answers.iter().any(|a| a["id"] == id)),
        _ => true,
    }
}

/// Follows `uri` for `who` from the log's position `from`: its thread's
/// live stream, every commit after `from` that touches what the resource
/// reads told, once the caller is seen to read it (so a change made while
/// the follower was being set up, after the client was told it follows, is
/// told too); `None` when the caller may not read it (not found, as
/// everywhere). The returned future tells `tell` until the caller may no
/// longer read the thread or nobody hears.
async fn follower(log: &LogService, who: Authenticated, uri: &str, from: i64, tell: Tell) -> Option<impl Future<Output = ()> + Send + 'static> {
    let named = named(uri)?;
    let thread = match &named {
        Named::Artifact(id) | Named::Answers(id) => ThreadId::from_trusted(log.artifact(&who, id, None).await.ok()?.thread),
        Named::Thread(thread) => thread.clone(),
    };
    now(log, &who, &named).await.ok()?;
    // The thread's live stream from `from`: woken by its commits only, and
    // ended when the caller may no longer read it (removed, unlisted,
    // signed out), as every live stream.
    let mut live = log.follow(&who, Follow::Thread(thread), from).await.ok()?;
    live.catch_up().await.ok()?;
    let (log, owned) = (log.clone(), uri.to_owned());
    Some(async move {
        loop {
            // Quiet for a while: only whether the session went away.
            let committed = match tokio::time::timeout(LOOK_EVERY, live.next_committed()).await {
                Ok(None) => return,
                Ok(Some(committed)) => committed,
                Err(_) if tell.gone() => return,
                Err(_) => continue,
            };
            if tell.gone() {
                return;
            }
            // A message, a run's step, another artifact: not what it reads.
            if !CHANGES.contains(&committed.event_type.as_str()) {
                continue;
            }
            let Ok(envelope) = serde_json::from_str::<Envelope>(&committed.json) else { continue };
            let Some(id) = touched(&named, &envelope.event) else { continue };
            // Read as the caller: gone (or no longer readable) ends it; an
            // answer it may not see is not told.
            let Ok(read) = now(&log, &who, &named).await else { return };
            if sees(&named, &read, id) && !tell.updated(&owned).await {
                return;
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
pub(crate) async fn listen(log: &LogService, who: &Authenticated, uris: &[String], from: i64, tell: &Tell) -> tokio::task::JoinSet<()> {
    let mut followers = tokio::task::JoinSet::new();
    for uri in uris {
        if let Some(follow) = follower(log, who.clone(), uri, from, tell.clone()).await {
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
        // The client hears it follows only once this is set up: from now
        // on, past this process's own commits.
        let from = log.horizon().caught_up().await;
        let follow = follower(log, who, uri, from, Tell::Session(peer)).await.ok_or_else(|| not_found(uri))?;
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_listen_follows_lattice_uris_only_and_at_most_per_session() {
        let ids: Vec<String> = (0..=super::PER_SESSION).map(|i| format!("lattice://artifacts/art_{i:026}")).collect();
        let mut asked = vec!["https://example.com/x".to_owned(), "lattice://artifacts/".to_owned()];
        asked.extend(ids[..super::PER_SESSION].iter().cloned());
        assert_eq!(super::listenable(&asked), ids[..super::PER_SESSION], "at the bound, all of lattice's");
        asked.push(ids[super::PER_SESSION].clone());
        assert_eq!(super::listenable(&asked).len(), super::PER_SESSION, "one over: the first 64");
        assert_eq!(super::listenable(&["lattice://threads/th_nope!".to_owned()]), Vec::<String>::new());
    }
}
