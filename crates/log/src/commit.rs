//! The commit: the envelope appended and the read models updated in one
//! transaction (L2), by the effect's own writer in the store.

use lattice_core::clock::SharedClock;
use lattice_core::event::Event;
use lattice_core::{Actor, Audit, Error, Principal};

use crate::effect::{Effect, Place};
use crate::horizon::Horizon;
use crate::scope::Scope;
use crate::store::access::Holds;
use crate::store::{Db, Writing, insert_envelope, record_audit};

/// What a committed command produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    pub seq: i64,
    pub envelope_id: String,
    /// The id of what was created or changed (workspace, thread, artifact).
    pub id: Option<String>,
    pub version: Option<u64>,
    pub digest: Option<String>,
}

impl Committed {
    /// What an answer gives back of its commit: the artifact's `{id,
    /// version, digest}` and the envelope's `seq`, whose sealed receipt is
    /// `GET /v1/receipts/{seq}` (docs/SEAL.md).
    pub fn receipt(&self) -> serde_json::Value {
        serde_json::json!({"id": self.id, "version": self.version, "digest": self.digest, "seq": self.seq})
    }
}

/// Commits effects: the store's writers in one transaction, stamped by the
/// log's clock, and the horizon told. The write path's last step, and the
/// only handle the deadline scheduler needs to answer a request.
#[derive(Clone)]
pub(crate) struct Committer {
    db: Db,
    clock: SharedClock,
    horizon: Horizon,
}

impl Committer {
    pub fn new(db: Db, clock: SharedClock, horizon: Horizon) -> Self {
        Self { db, clock, horizon }
    }

    /// Tells the horizon tracker of a commit of this process.
    pub fn told(&self, seq: i64) {
        self.horizon.committed(seq);
    }

    /// The write path's database work, a span of its own (`db.system.name`
    /// by the database conventions) inside `log.execute`. The caller tells
    /// the horizon ([`Committer::told`]) once it has done what must come
    /// first. `None`, and nothing written, when the scope's standing (what
    /// the command was authorized from) no longer holds.
    #[tracing::instrument(name = "log.commit", skip_all, fields(otel.kind = "client", db.system.name = self.db.backend().system_name()))]
    pub(crate) async fn commit(
        &self,
        p: &Principal,
        actor: &Actor,
        scope: &Scope,
        effect: Effect,
        attached: Option<&Audit>,
    ) -> Result<Option<Committed>, Error> {
        let db = &self.db;
        // SQLite has one writer; waiting here beats waiting on its busy lock.
        let _writer = db.writer().await;
        // An effect that is one row commits as one statement, without a
        // transaction around it; everything else writes read models too.
        let one_statement = attached.is_none() && effect.is_one_row();
        let mut commit = db.open_commit(one_statement).await?;
        let conn = commit.conn();

        let workspace = scope.access.as_ref().map(|a| a.workspace.to_string());
        let thread = scope.thread.as_ref().map(ToString::to_string);
        let writing = Writing {
            tenant: p.tenant.as_str(),
            workspace: workspace.as_deref(),
            thread: thread.as_deref(),
            user: p.user.as_str(),
            author: actor.name(),
            agent: actor.is_agent(),
            role: p.role,
            run: p.run.as_ref().map(lattice_core::RunId::as_str),
            at: self.clock.now_ms(),
        };
        let acting = Place {
            tenant: p.tenant.to_string(),
            workspace: workspace.clone(),
            thread: thread.clone(),
            run: p.run.as_ref().map(ToString::to_string),
        };
        let traceparent = crate::trace::current();
        // The audit row first: its once key, taken here, refuses a second
        // use before anything else is written.
        if let Some(audit) = attached {
            let event = record_audit(conn, &writing, audit).await?;
            let id = ulid::Ulid::generate().to_string();
            insert_envelope(conn, db.backend(), &acting.envelope(&id, &event, actor, writing.at, traceparent.as_deref()), None).await?;
        }
        let place = effect.place(&acting);
        let event = effect.write(conn, &writing).await?;
        let envelope_id = ulid::Ulid::generate().to_string();
        let holds = scope.standing.as_ref().zip(thread.as_deref()).map(|(standing, thread)| Holds { thread, user: p.user.as_str(), standing });
        let envelope = place.envelope(&envelope_id, &event, actor, writing.at, traceparent.as_deref());
        // Not written: a transaction is rolled back as it is dropped.
        let Some(seq) = insert_envelope(conn, db.backend(), &envelope, holds.as_ref()).await? else { return Ok(None) };
        commit.finish().await?;
        Ok(Some(Committed::of(seq, envelope_id, &event)))
    }
}

impl Committed {
    /// What the caller learns of a commit: the id of what it made or
    /// changed, and an artifact's version and digest.
    fn of(seq: i64, envelope_id: String, event: &Event) -> Self {
        let (id, version, digest) = match event {
            Event::WorkspaceCreated(e) => (Some(e.workspace.clone()), None, None),
            Event::ThreadCreated(e) => (Some(e.thread.clone()), None, None),
            Event::ArtifactCreated(e) => (Some(e.id.clone()), Some(e.version), Some(e.digest.clone())),
            Event::ArtifactChanged(e) => (Some(e.id.clone()), Some(e.version), Some(e.digest.clone())),
            Event::ArtifactArchived(e) => (Some(e.id.clone()), Some(e.version), None),
            other => (other.run_id().map(str::to_owned), None, None),
        };
        Self { seq, envelope_id, id, version, digest }
    }
}
