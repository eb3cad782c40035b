use lattice_core::{ArtifactId, Command, Error, Role, TenantRole, UserId};
use lattice_log::Follow;
use lattice_testkit::{both_backends, service, who};
use serde_json::json;

use crate::{dashboard, workspace_with_thread};

both_backends! {
    async fn a_command_appends_one_envelope_and_updates_the_read_model(backend: Backend) {
        let log = service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (ws, th) = workspace_with_thread(&log, &alice).await;
        let posted = log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "hello".into() }).await.unwrap();
        log.horizon().wait_for(posted.seq, std::time::Duration::from_secs(5)).await;
        let events = log.events(&alice, &Follow::Workspace(ws.to_string()), 0, 100).await.unwrap();
        let types: Vec<&str> = events.iter().map(|e| e.event_type()).collect();
        assert_eq!(types, ["workspace_created", "thread_created", "message_posted"]);
        let last = events.last().unwrap();
        assert_eq!(last.seq, posted.seq);
        assert_eq!(last.id, posted.envelope_id);
        assert_eq!(last.actor.name(), "alice");
        assert_eq!(last.event.payload()["text"], "hello");
        assert_eq!(last.thread.as_deref(), Some(th.as_str()));
        let seqs: Vec<i64> = events.iter().map(|e| e.seq).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
        let listed = log.workspaces(&alice).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].role, Role::Admin);
    }
}

both_backends! {
    async fn an_existing_id_is_refused_and_nothing_is_written(backend: Backend) {
        let log = service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (ws, th) = workspace_with_thread(&log, &alice).await;
        let id = ArtifactId::parse("id", "status").unwrap();
        let create = || Command::CreateArtifact { thread: th.clone(), id: Some(id.clone()), kind: "dashboard".into(), data: dashboard("A") };
        log.execute(&alice, create()).await.unwrap();
        let before = log.events(&alice, &Follow::Workspace(ws.to_string()), 0, 100).await.unwrap().len();
        let err = log.execute(&alice, create()).await.unwrap_err();
        assert!(matches!(&err, Error::Conflict { reason, .. } if reason.contains("already exists")), "{err:?}");
        let after = log.events(&alice, &Follow::Workspace(ws.to_string()), 0, 100).await.unwrap().len();
        assert_eq!(before, after);
        // Another tenant may use the same id: ids are scoped by tenant.
        let bob = who("t2", "bob", TenantRole::Member);
        let (_, th2) = workspace_with_thread(&log, &bob).await;
        log.execute(&bob, Command::CreateArtifact { thread: th2, id: Some(id.clone()), kind: "dashboard".into(), data: dashboard("B") })
            .await
            .unwrap();
        assert_eq!(log.artifact(&alice, &id, None).await.unwrap().data["title"], "A");
        assert_eq!(log.artifact(&bob, &id, None).await.unwrap().data["title"], "B");
    }
}

both_backends! {
    async fn edits_need_the_head_version_and_every_version_stays_readable(backend: Backend) {
        let log = service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (_, th) = workspace_with_thread(&log, &alice).await;
        let created = log
            .execute(&alice, Command::CreateArtifact { thread: th, id: None, kind: "dashboard".into(), data: dashboard("v1") })
            .await
            .unwrap();
        let id = ArtifactId::parse("id", created.id.as_deref().unwrap()).unwrap();
        let mut digests = vec![created.digest.clone().unwrap()];
        for (n, title) in ["v2", "v3"].iter().enumerate() {
            let patch = serde_json::from_value(json!([{"op": "replace", "path": "/title", "value": title}])).unwrap();
            let done = log.execute(&alice, Command::EditArtifact { id: id.clone(), expected_version: n as u64 + 1, patch }).await.unwrap();
            assert_eq!(done.version, Some(n as u64 + 2));
            digests.push(done.digest.unwrap());
        }
        let stale = serde_json::from_value(json!([{"op": "replace", "path": "/title", "value": "late"}])).unwrap();
        let err = log.execute(&alice, Command::EditArtifact { id: id.clone(), expected_version: 2, patch: stale }).await.unwrap_err();
        assert_eq!(err, Error::version_conflict(2, 3));
        for (i, title) in ["v1", "v2", "v3"].iter().enumerate() {
            let v = log.artifact(&alice, &id, Some(i as u64 + 1)).await.unwrap();
            assert_eq!(v.version, i as u64 + 1);
            assert_eq!(v.data["title"], *title);
            assert_eq!(v.digest, digests[i]);
            assert_eq!(v.digest, lattice_log::digest(&v.data));
        }
        assert_eq!(log.artifact(&alice, &id, Some(4)).await.unwrap_err(), Error::NotFound);
        assert_eq!(log.artifact(&alice, &id, None).await.unwrap().version, 3);
    }
}

both_backends! {
    async fn a_patch_that_breaks_the_shape_or_does_not_apply_is_refused(backend: Backend) {
        let log = service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (_, th) = workspace_with_thread(&log, &alice).await;
        let created = log
            .execute(&alice, Command::CreateArtifact { thread: th, id: None, kind: "dashboard".into(), data: dashboard("x") })
            .await
            .unwrap();
        let id = ArtifactId::parse("id", created.id.as_deref().unwrap()).unwrap();
        for patch in [
            json!([{"op": "remove", "path": "/title"}]),
            json!([{"op": "test", "path": "/title", "value": "not x"}]),
            json!([{"op": "replace", "path": "/nope/deeper", "value": 1}]),
        ] {
            let patch = serde_json::from_value(patch).unwrap();
            let err = log.execute(&alice, Command::EditArtifact { id: id.clone(), expected_version: 1, patch }).await.unwrap_err();
            assert!(matches!(err, Error::ValidationFailed { .. }), "{err:?}");
        }
        assert_eq!(log.artifact(&alice, &id, None).await.unwrap().version, 1);
    }
}

both_backends! {
    async fn roles_decide_who_writes_and_outsiders_see_nothing(backend: Backend) {
        let log = service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (ws, th) = workspace_with_thread(&log, &alice).await;
        let viewer = who("t1", "vera", TenantRole::Member);
        log.execute(&alice, Command::AddMember { workspace: ws.clone(), user: UserId::parse("u", "vera").unwrap(), role: Role::Viewer })
            .await
            .unwrap();
        let err = log.execute(&viewer, Command::PostMessage { thread: th.clone(), text: "hi".into() }).await.unwrap_err();
        assert!(matches!(err, Error::Forbidden { .. }), "{err:?}");
        // A stranger in the tenant and another tenant's admin: NotFound.
        for outsider in [who("t1", "sam", TenantRole::Member), who("t2", "root", TenantRole::TenantAdmin)] {
            let err = log.execute(&outsider, Command::PostMessage { thread: th.clone(), text: "hi".into() }).await.unwrap_err();
            assert_eq!(err, Error::NotFound);
            assert_eq!(log.events(&outsider, &Follow::Thread(th.clone()), 0, 10).await.unwrap_err(), Error::NotFound);
        }
        // The tenant's admin administers every workspace of the tenant.
        let admin = who("t1", "tina", TenantRole::TenantAdmin);
        log.execute(&admin, Command::PostMessage { thread: th, text: "as admin".into() }).await.unwrap();
    }
}

both_backends! {
    async fn a_stored_envelope_writes_the_json_its_decoding_does(backend: Backend) {
        let log = service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (_, th) = workspace_with_thread(&log, &alice).await;
        let posted = lattice_log::with_traceparent(Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into()), async {
            log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "quote \" and \u{e9} and \\n".into() }).await
        })
        .await
        .unwrap();
        log.horizon().wait_for(posted.seq, std::time::Duration::from_secs(5)).await;
        let reader = lattice_log::LogReader::of(&log);
        let stored = reader.read_stored(0, 100).await.unwrap();
        assert_eq!(stored.len(), 3);
        for e in &stored {
            let raw: serde_json::Value = serde_json::from_slice(&e.to_json()).unwrap();
            assert_eq!(raw, serde_json::to_value(e.decode().unwrap()).unwrap());
        }
        assert_eq!(reader.read(0, 100).await.unwrap(), stored.iter().map(|e| e.decode().unwrap()).collect::<Vec<_>>());
    }
}

/// On SQLite no commit waits for a checkpoint, yet what was committed
/// reaches the database file within a checkpointer's turn: the file alone,
/// copied without its WAL, holds it.
#[tokio::test]
async fn sqlite_commits_reach_the_database_file_off_the_write_path() {
    use sqlx::Connection;
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Sqlite).await;
    let db = lattice_log::Db::connect(&url, 4).await.unwrap();
    db.migrate().await.unwrap();
    let log = lattice_testkit::service_on(db);
    let alice = who("t1", "alice", TenantRole::Member);
    let (_, th) = workspace_with_thread(&log, &alice).await;
    log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "in the file".into() }).await.unwrap();
    let path = url.trim_start_matches("sqlite://").to_owned();
    let copy = format!("{path}.copy");
    lattice_testkit::until("the message in the database file, not only in the WAL", async || {
        let mut found = 0;
        std::fs::copy(&path, &copy).unwrap();
        if let Ok(mut conn) = sqlx::SqliteConnection::connect(&format!("sqlite://{copy}")).await {
            found = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM envelopes WHERE thread = ?1 AND type = 'message_posted'")
                .bind(th.as_str())
                .fetch_one(&mut conn)
                .await
                .unwrap_or(0);
            conn.close().await.unwrap();
        }
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{copy}{suffix}"));
        }
        found == 1
    })
    .await;
}
