//! One seeded log served as a deployment serves it: the log service on
//! its database, the API's router in process, and what the reads ask for
//! (the probe workspace's ids, the cursors, a member's bearer token).

use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use lattice_core::TenantRole;
use lattice_log::LogService;
use tower::ServiceExt;

use super::plan::{ArtKind, Plan};

/// What the probe workspace holds, as the reads ask for it and as their
/// answers must show it.
pub struct Probe {
    pub ws: String,
    pub thread: String,
    pub form: String,
    /// The reader's bearer token: a member (an editor) of the tenant.
    pub token: String,
    /// A later page of the thread starts after its 100th envelope.
    pub thread_after: i64,
    /// An old cursor into the workspace: its 50th envelope.
    pub ws_after: i64,
    pub thread_length: usize,
    pub thread_later: usize,
    /// The workspace's envelopes after `ws_after` the reader sees.
    pub ws_later: usize,
    pub visible_threads: usize,
    pub submissions: usize,
    /// The thread's run waiting on an ask_form.
    pub paused_run: String,
    /// An app of the thread and its version.
    pub app: Option<(String, u64)>,
    pub last_seq: i64,
}

impl Probe {
    pub fn of(plan: &Plan) -> Self {
        let p = &plan.probe;
        let ws = &plan.workspaces[p.ws as usize];
        let th = &plan.threads[p.thread as usize];
        let reader = p.reader;
        let thread_after = th.steps.seqs[100];
        let ws_seqs: Vec<(i64, bool)> = plan
            .order
            .iter()
            .enumerate()
            .filter(|(_, place)| plan.workspace_of(**place) == Some(p.ws))
            .map(|(n, place)| {
                let seen = match place {
                    super::plan::Place::Th(t, _) => plan.sees(&plan.threads[*t as usize], reader),
                    _ => true,
                };
                (n as i64 + 1, seen)
            })
            .collect();
        let ws_after = ws_seqs[49].0;
        let threads: Vec<_> = plan.threads.iter().filter(|t| t.ws == p.ws).collect();
        let app = th.arts.iter().find(|a| matches!(a.kind, ArtKind::App { .. })).map(|a| (a.id.clone(), 1 + a.changes.len() as u64));
        Self {
            ws: ws.id.clone(),
            thread: th.id.clone(),
            form: th.arts[p.form as usize].id.clone(),
            token: lattice_testkit::token(&plan.tenants[ws.tenant as usize].id, &ws.members[reader as usize].user, TenantRole::Member),
            thread_after,
            ws_after,
            thread_length: th.steps.steps.len(),
            thread_later: th.steps.seqs.iter().filter(|&&s| s > thread_after).count(),
            ws_later: ws_seqs.iter().filter(|(s, seen)| *s > ws_after && *seen).count(),
            visible_threads: threads.iter().filter(|t| plan.sees(t, reader)).count(),
            submissions: th.arts.iter().filter(|a| matches!(a.kind, ArtKind::Submission { form, .. } if form == p.form)).count(),
            paused_run: th.runs.iter().find(|r| r.paused).map(|r| r.id.clone()).expect("the probe thread has a paused run"),
            app,
            last_seq: plan.order.len() as i64,
        }
    }
}

pub struct Side {
    pub log: LogService,
    router: axum::Router,
    pub probe: Probe,
    _stop: tokio::sync::watch::Sender<bool>,
}

impl Side {
    /// The log service and the API over a seeded database, once the
    /// horizon has reached the log's end.
    pub async fn serve(url: &str, probe: Probe) -> Self {
        let db = lattice_log::Db::connect(url, 8).await.expect("connecting");
        let log = lattice_testkit::service_on(db);
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        // One caller writes hundreds of messages a second here: the
        // per-caller write limit (which refuses a runaway client) is off.
        let limits = lattice_api::guard::Limits { writes_per_sec: 0, ..lattice_api::guard::Limits::default() };
        let state = crate::setup::api_state(&log, limits, shutdown);
        let reached = log.horizon().wait_for(probe.last_seq, Duration::from_secs(120)).await;
        assert!(reached >= probe.last_seq, "the horizon reached {reached} of {}", probe.last_seq);
        // What says a thread is unread is folded into the threads' rows by
        // the service itself, from the seeded log, as after an upgrade.
        let folding = Instant::now();
        loop {
            let folded = log.unread_folded().await.expect("reading the fold's checkpoint");
            if folded >= probe.last_seq {
                break;
            }
            assert!(folding.elapsed() < Duration::from_secs(600), "the fold reached {folded} of {} in 600 s", probe.last_seq);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        println!("data: the service folded what makes threads unread, {} envelopes, in {:.1} s", probe.last_seq, folding.elapsed().as_secs_f64());
        if url.starts_with("postgres") {
            // The fold rewrote every thread's row: what autovacuum would do
            // soon after, done now rather than while the reads are timed
            // (as after the seeding).
            let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(url).await.unwrap();
            sqlx::raw_sql("VACUUM (ANALYZE)").execute(&mut conn).await.unwrap();
        } else {
            // On SQLite the fold's rewrite is in the WAL, which every read
            // of the large log then searches (frames no write resets while
            // the reads are timed); what the next write would start over,
            // started over now, as the seeding's end does.
            let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(url).await.unwrap();
            sqlx::raw_sql("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut conn).await.unwrap();
        }
        Self { log, router: lattice_api::router(state), probe, _stop: stop }
    }

    /// One request through the router, as the reader: its status, its
    /// body, and how long it took until the body was read.
    pub async fn call(&self, method: &str, uri: &str, body: Option<String>) -> (StatusCode, Bytes, Duration) {
        let mut req =
            Request::builder().method(method).uri(uri).header("host", "localhost").header("authorization", format!("Bearer {}", self.probe.token));
        if body.is_some() {
            req = req.header("content-type", "application/json");
        }
        let req = req.body(body.map_or_else(Body::empty, Body::from)).unwrap();
        let start = Instant::now();
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        (status, bytes, start.elapsed())
    }

    pub async fn json(&self, uri: &str) -> serde_json::Value {
        let (status, body, _) = self.call("GET", uri, None).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {}", String::from_utf8_lossy(&body));
        serde_json::from_slice(&body).unwrap()
    }

    pub async fn close(self) {
        self.log.close().await;
    }
}
