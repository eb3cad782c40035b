//! What a bridged envelope costs the database besides itself: the bridge
//! reads what it publishes with (forms, requests, threads, files) once per
//! batch, not once per envelope. Counted by the bridge
//! (`BridgeStatus::reads`), per kind, on both backends: a backlog (the
//! bridge catching up, many envelopes a batch) and one envelope at a time
//! (the bridge caught up, a batch each).

use std::time::Duration;

use lattice_agent::{Models, Runner};
use lattice_core::{Command, RunStatus, TenantRole, ThreadId};
use lattice_log::{Authenticated, LogService};
use lattice_testkit::nats::NatsServer;
use lattice_ui::form::Submissions;
use lattice_ui::submission::submission_id;
use serde_json::json;

/// Submissions of each kind made in a backlog.
const BACKLOG: usize = 20;
/// Submissions of each kind made one at a time.
const ONE_AT_A_TIME: usize = 5;

struct Place {
    log: LogService,
    alice: Authenticated,
    thread: ThreadId,
    form: String,
    form_with_file: String,
    js: async_nats::jetstream::Context,
    nats: NatsServer,
    /// The last envelope committed here: the bridge has caught up once
    /// it is the stream's last message.
    last: std::sync::Mutex<(i64, String)>,
}

impl Place {
    async fn new(backend: lattice_log::Backend) -> Self {
        let log = lattice_testkit::service(backend).await;
        let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
        let (_, thread) = crate::a_thread(&log, &alice, true).await;
        let poll = json!({"title": "Poll", "submissions": "many",
            "schema": {"type": "object", "properties": {"choice": {"enum": ["a", "b"]}}, "required": ["choice"]}});
        let form = log.execute(&alice, Command::CreateArtifact { thread: thread.clone(), id: None, kind: "form".into(), data: poll }).await.unwrap();
        let shot = json!({"title": "Shot", "submissions": "many",
            "schema": {"type": "object", "required": ["shot"], "properties": {"shot": {"type": "string", "format": "file", "accept": ["text/plain"]}}}});
        let with_file =
            log.execute(&alice, Command::CreateArtifact { thread: thread.clone(), id: None, kind: "form".into(), data: shot }).await.unwrap();
        let nats = NatsServer::start();
        let js = async_nats::jetstream::new(async_nats::connect(&nats.url).await.unwrap());
        let last = std::sync::Mutex::new((with_file.seq, with_file.envelope_id));
        Self { log, alice, thread, form: form.id.unwrap(), form_with_file: with_file.id.unwrap(), js, nats, last }
    }

    /// Runs a bridge until it has published everything committed, and
    /// answers what it sent and the reads it made for them.
    async fn bridge(&self, while_running: impl AsyncFnOnce()) -> (u64, u64) {
        let config = lattice_bridge::BridgeConfig {
            nats_url: self.nats.url.clone(),
            user: None,
            password: None,
            name: "bridge".into(),
            ca_file: None,
            stream_replicas: 1,
        };
        let bridge =
            lattice_bridge::Bridge::new(lattice_log::LogReader::of(&self.log), config).with_chains(self.log.authenticator().chains().clone());
        let status = bridge.status();
        // What was committed is below the horizon: a backlog is one batch.
        let (seq, _) = self.last.lock().unwrap().clone();
        assert!(self.log.horizon().wait_for(seq, Duration::from_secs(10)).await >= seq);
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let running = tokio::spawn(bridge.run(stop));
        while_running().await;
        self.caught_up().await;
        let _ = stop_tx.send(true);
        running.await.unwrap().unwrap();
        status.reads()
    }

    async fn submit(&self, form: &str, values: serde_json::Value) {
        let nonce = ulid::Ulid::generate().to_string().to_lowercase();
        let id = submission_id(form, Submissions::Many, "alice", Some(&nonce));
        self.commit(Command::CreateArtifact {
            thread: self.thread.clone(),
            id: Some(lattice_core::ArtifactId::parse("id", &id).unwrap()),
            kind: "submission".into(),
            data: json!({"form_id": form, "form_version": 1, "values": values, "nonce": nonce}),
        })
        .await;
    }

    async fn commit(&self, command: Command) {
        let committed = self.log.execute(&self.alice, command).await.unwrap();
        *self.last.lock().unwrap() = (committed.seq, committed.envelope_id);
    }

    async fn message(&self) {
        self.commit(Command::PostMessage { thread: self.thread.clone(), text: "hello".into() }).await;
    }

    /// Until the stream's last message is the last envelope committed here.
    async fn caught_up(&self) {
        let (_, last) = self.last.lock().unwrap().clone();
        until(async || {
            let mut stream = self.js.get_stream(lattice_bridge::STREAM).await.ok()?;
            let at = stream.info().await.ok()?.state.last_sequence;
            let message = stream.get_raw_message(at).await.ok()?;
            (message.headers.get("Nats-Msg-Id").map(|v| v.as_str()) == Some(last.as_str())).then_some(())
        })
        .await;
    }

    async fn submit_with_file(&self) {
        let mut upload = self.log.files().upload(&self.alice, &self.thread, "note.txt").await.unwrap();
        upload.push(b"a note").await.unwrap();
        let file = upload.finish().await.unwrap();
        let form = self.form_with_file.clone();
        self.submit(&form, json!({"shot": file.id})).await;
    }

    /// An ask_form put by a run and answered by alice.
    async fn ask_and_answer(&self) {
        let runner = Runner::new(lattice_testkit::trusted(&self.log), Models::scripted());
        let run = runner.start(&self.alice, self.thread.clone(), "report".into(), Some("scripted:ask_form".into()), None).await.unwrap();
        let call = until(async || {
            let view = self.log.run(&self.alice, &run).await.unwrap();
            (view.run.status == RunStatus::Paused).then(|| view.requests[0].tool_call_id.clone())
        })
        .await;
        runner.answer(&self.alice, &run, call, json!({"date": "2026-11-29", "severity": "high"})).await.unwrap();
        until(async || (self.log.run(&self.alice, &run).await.unwrap().run.status == RunStatus::Finished).then_some(())).await;
        // Something committed last here (a message reads nothing more).
        self.message().await;
    }
}

async fn until<T>(probe: impl AsyncFnMut() -> Option<T>) -> T {
    lattice_testkit::eventually("the bridge to catch up", probe).await
}

/// The reads the bridge made for what it published, per kind, in a
/// backlog and one at a time: `(what, reads, published)`.
async fn measure(backend: lattice_log::Backend) -> Vec<(&'static str, u64, u64)> {
    let place = Place::new(backend).await;
    let mut out = Vec::new();
    let message = async || place.message().await;
    let submission = async || place.submit(&place.form, json!({"choice": "a"})).await;
    let with_file = async || place.submit_with_file().await;

    // What the place was made with: a workspace, a thread, two forms.
    out.push(("setup", place.bridge(async || {}).await));
    for _ in 0..BACKLOG {
        message().await;
    }
    out.push(("message, a backlog", place.bridge(async || {}).await));
    for _ in 0..BACKLOG {
        submission().await;
    }
    out.push(("form submission, a backlog", place.bridge(async || {}).await));
    for _ in 0..BACKLOG {
        with_file().await;
    }
    out.push(("form submission with a file, a backlog", place.bridge(async || {}).await));
    place.ask_and_answer().await;
    out.push(("an ask_form's run", place.bridge(async || {}).await));

    // One at a time: the bridge catches up before the next commit.
    out.push(("message, one at a time", place.bridge(async || one_at_a_time(&place, &message).await).await));
    out.push(("form submission, one at a time", place.bridge(async || one_at_a_time(&place, &submission).await).await));
    out.push(("form submission with a file, one at a time", place.bridge(async || one_at_a_time(&place, &with_file).await).await));
    out.into_iter().map(|(what, (sent, reads))| (what, reads, sent)).collect()
}

async fn one_at_a_time(place: &Place, commit: &impl AsyncFn()) {
    for _ in 0..ONE_AT_A_TIME {
        commit().await;
        place.caught_up().await;
    }
}

lattice_testkit::both_backends! {
    async fn a_batch_reads_what_it_publishes_with_once_not_once_an_envelope(backend: Backend) {
        let measured = measure(backend).await;
        for (what, reads, sent) in &measured {
            println!("{what}: {reads} reads for {sent} published, {:.2} a published envelope", *reads as f64 / (*sent).max(1) as f64);
        }
        let reads = |what: &str| measured.iter().find(|m| m.0 == what).map(|m| m.1).unwrap();
        let (backlog, one) = (BACKLOG as u64, ONE_AT_A_TIME as u64);
        // Threads, once a batch (once a bridge here: it remembers them).
        assert_eq!(reads("message, a backlog"), 1);
        assert_eq!(reads("message, one at a time"), 1);
        // And the forms, once a batch.
        assert_eq!(reads("form submission, a backlog"), 2);
        assert_eq!(reads("form submission, one at a time"), 1 + one);
        // And the files' rows, once a batch; each file's bytes are a read
        // of their own (one for a file of a chunk).
        assert_eq!(reads("form submission with a file, a backlog"), 3 + backlog);
        assert_eq!(reads("form submission with a file, one at a time"), 1 + 3 * one);
        // The request an answer answers, once.
        assert_eq!(reads("an ask_form's run"), 2);
    }
}
