//! What waits for a person's answer, as the log keeps it: the write path
//! keeps what a form asks beside it at every version (`ArtifactKind::asks`),
//! and migration 0011 reads the forms kept before it the same way.

use std::borrow::Cow;
use std::path::Path;

use lattice_core::{ArtifactId, Command, TenantRole};
use lattice_log::{AskingTool, Backend, parse_rfc3339};
use lattice_testkit::{fresh_url, who};
use serde_json::json;
use sqlx::Row;

use crate::workspace_with_thread;

fn form(title: &str, extra: serde_json::Value) -> serde_json::Value {
    let mut data = json!({"title": title, "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}});
    data.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    data
}

lattice_testkit::both_backends! {
    async fn a_form_asks_while_it_is_open_and_until_it_is_answered(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let ana = who("t1", "ana", TenantRole::Member);
        let (ws, th) = workspace_with_thread(&log, &ana).await;
        log.execute(&ana, Command::AddMember { workspace: ws.clone(), user: lattice_core::UserId::parse("user", "rob").unwrap(), role: lattice_core::Role::Respondent }).await.unwrap();
        let rob = who("t1", "rob", TenantRole::Member);
        let made = log
            .execute(&ana, Command::CreateArtifact { thread: th.clone(), id: None, kind: "form".into(), data: form("Lunch", json!({"submissions": "per_person"})) })
            .await
            .unwrap();
        let id = ArtifactId::parse("id", made.id.as_deref().unwrap()).unwrap();
        let titles = |items: Vec<lattice_log::WaitingItem>| items.into_iter().map(|i| i.title).collect::<Vec<_>>();
        let tools: [AskingTool; 0] = [];
        assert_eq!(titles(log.waiting(&rob, &tools, 200).await.unwrap()), ["Lunch"]);
        // Closed: it asks nothing; opened again with a new title: it asks again.
        let edit = |version: u64, op: serde_json::Value| Command::EditArtifact { id: id.clone(), expected_version: version, patch: serde_json::from_value(json!([op])).unwrap() };
        log.execute(&ana, edit(1, json!({"op": "add", "path": "/closed", "value": true}))).await.unwrap();
        assert!(log.waiting(&rob, &tools, 200).await.unwrap().is_empty());
        log.execute(&ana, edit(2, json!({"op": "replace", "path": "/closed", "value": false}))).await.unwrap();
        log.execute(&ana, edit(3, json!({"op": "replace", "path": "/title", "value": "Dinner"}))).await.unwrap();
        let items = log.waiting(&rob, &tools, 200).await.unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!((items[0].title.as_str(), &items[0].waits), ("Dinner", &lattice_log::Waits::Artifact { id: id.to_string(), kind: "form".into(), version: 4 }));
        // A limit of 0 lists nothing; one above the most lists the most.
        assert!(log.waiting(&rob, &tools, 0).await.unwrap().is_empty());
        assert_eq!(log.waiting(&rob, &tools, lattice_log::WAITING_MAX + 1).await.unwrap().len(), 1);
        // An agent's form says so.
        let bot = lattice_testkit::agent("t1", "bot");
        log.execute(&ana, Command::AddMember { workspace: ws.clone(), user: lattice_core::UserId::parse("user", "bot").unwrap(), role: lattice_core::Role::Editor }).await.unwrap();
        log.execute(&bot, Command::CreateArtifact { thread: th.clone(), id: None, kind: "form".into(), data: form("Bot's", json!({})) }).await.unwrap();
        let items = log.waiting(&rob, &tools, 200).await.unwrap();
        assert_eq!((items[0].title.as_str(), items[0].asked_by.as_str(), items[0].asked_by_agent), ("Bot's", "bot", true));
        assert_eq!((items[1].asked_by.as_str(), items[1].asked_by_agent), ("ana", false));
    }
}

/// An artifact's id and what it asks as kept: whose answer ends it, its
/// title, its deadline, whether an agent made it.
type Kept = (String, Option<String>, Option<String>, Option<i64>, i64);

/// Every migration but the last ones, from the backend's folder.
async fn migrate_until(pool: &sqlx::AnyPool, backend: Backend, before: i64) {
    let folder = match backend {
        Backend::Postgres => "migrations/postgres",
        Backend::Sqlite => "migrations/sqlite",
    };
    let mut migrator = sqlx::migrate::Migrator::new(Path::new(env!("CARGO_MANIFEST_DIR")).join(folder)).await.unwrap();
    migrator.migrations = Cow::Owned(migrator.migrations.iter().filter(|m| m.version < before).cloned().collect());
    migrator.run(pool).await.unwrap();
}

lattice_testkit::both_backends! {
    async fn the_forms_kept_before_the_migration_ask_as_their_kind_says(backend: Backend) {
        let url = fresh_url(backend).await;
        // The database (a SQLite file) made, nothing migrated.
        lattice_log::Db::connect(&url, 1).await.unwrap().close().await;
        let pool = sqlx::AnyPool::connect(&url).await.unwrap();
        migrate_until(&pool, backend, 11).await;
        let rows = [
            ("f_once", "form", form("Once", json!({"closes_at": "2999-01-01T00:00:00.500Z"})), 0),
            ("f_many", "form", form("Many", json!({"submissions": "many", "closes_at": "2030-06-01T12:00:00+02:00"})), 0),
            ("f_closed", "form", form("Closed", json!({"closed": true})), 0),
            ("f_bad", "form", form("Bad deadline", json!({"submissions": "per_person", "closes_at": "soon"})), 0),
            ("f_archived", "form", form("Archived", json!({})), 1),
            ("f_agent", "form", form("Agent's", json!({"closed": false})), 0),
            ("d", "dashboard", json!({"title": "D", "as_of": "2026-11-29T12:00:00Z", "panels": []}), 0),
        ];
        for (i, (id, kind, data, archived)) in rows.iter().enumerate() {
            sqlx::query("INSERT INTO artifacts (tenant, id, workspace, thread, kind, version, data, digest, author, created_at, updated_at, archived) \
                 VALUES ('t1', $1, 'ws_1', 'th_1', $2, 1, $3, 'd', 'ana', $4, $4, $5)")
                .bind(*id).bind(*kind).bind(data.to_string()).bind(1000 + i as i64).bind(*archived as i64)
                .execute(&pool).await.unwrap();
        }
        // Who made each: an agent the one, a person the others.
        for (i, (id, ..)) in rows.iter().enumerate() {
            let actor = if *id == "f_agent" { json!({"kind": "agent", "tenant": "t1", "user": "bot"}) } else { json!({"kind": "person", "tenant": "t1", "user": "ana"}) };
            sqlx::query("INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload) VALUES ($1, 't1', 'ws_1', 'th_1', $2, $3, 'artifact_created', $4)")
                .bind(format!("e{i}")).bind(actor.to_string()).bind(1000 + i as i64).bind(json!({"id": id, "kind": "form", "version": 1}).to_string())
                .execute(&pool).await.unwrap();
        }
        pool.close().await;
        let db = lattice_log::Db::connect(&url, 2).await.unwrap();
        db.migrate().await.unwrap();
        db.close().await;
        let pool = sqlx::AnyPool::connect(&url).await.unwrap();
        let got: Vec<Kept> =
            sqlx::query("SELECT id, asks, asks_title, asks_until, author_agent FROM artifacts ORDER BY id")
                .fetch_all(&pool).await.unwrap().iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
                .collect();
        let ms = |t: &str| parse_rfc3339(t);
        let s = |t: &str| Some(t.to_owned());
        assert_eq!(got, [
            ("d".to_owned(), None, None, None, 0),
            ("f_agent".to_owned(), s("anyone"), s("Agent's"), None, 1),
            ("f_archived".to_owned(), None, None, None, 0),
            ("f_bad".to_owned(), s("each"), s("Bad deadline"), None, 0),
            ("f_closed".to_owned(), None, None, None, 0),
            ("f_many".to_owned(), s("each"), s("Many"), ms("2030-06-01T12:00:00+02:00"), 0),
            ("f_once".to_owned(), s("anyone"), s("Once"), ms("2999-01-01T00:00:00.500Z"), 0),
        ]);
    }
}

lattice_testkit::both_backends! {
    async fn more_places_than_one_statement_binds_are_read_in_several_and_merged(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let ana = who("t1", "ana", TenantRole::Member);
        let rob = who("t1", "rob", TenantRole::Member);
        let places = lattice_log::WAITING_PLACES + 1;
        let mut forms = Vec::new();
        for i in 0..places {
            let (ws, th) = workspace_with_thread(&log, &ana).await;
            let role = lattice_core::Role::Respondent;
            log.execute(&ana, Command::AddMember { workspace: ws, user: lattice_core::UserId::parse("user", "rob").unwrap(), role }).await.unwrap();
            // The first workspace's form is due last of the two with a
            // deadline, the last one's (in the second statement) first.
            let closes_at = match i {
                0 => json!({"closes_at": "2999-01-02T00:00:00Z"}),
                i if i == places - 1 => json!({"closes_at": "2999-01-01T00:00:00Z"}),
                _ => json!({}),
            };
            let data = form(&format!("F{i}"), closes_at);
            forms.push(log.execute(&ana, Command::CreateArtifact { thread: th, id: None, kind: "form".into(), data }).await.unwrap().id.unwrap());
        }
        let tools: [AskingTool; 0] = [];
        let items = log.waiting(&rob, &tools, lattice_log::WAITING_MAX).await.unwrap();
        assert_eq!(items.len(), lattice_log::WAITING_MAX);
        let title = |i: usize| items[i].title.clone();
        assert_eq!((title(0), title(1)), (format!("F{}", places - 1), "F0".to_owned()));
        // Then the newest without a deadline: from the second statement's
        // place back, across both.
        assert_eq!(title(2), format!("F{}", places - 2));
        assert_eq!(title(lattice_log::WAITING_MAX - 1), format!("F{}", places - (lattice_log::WAITING_MAX - 1)));
        // A small limit cuts the merged list, not each statement's.
        let few = log.waiting(&rob, &tools, 3).await.unwrap();
        assert_eq!(few.iter().map(|i| i.title.clone()).collect::<Vec<_>>(), [format!("F{}", places - 1), "F0".to_owned(), format!("F{}", places - 2)]);
    }
}
