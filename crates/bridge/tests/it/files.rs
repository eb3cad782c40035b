//! Files attached to answers reach rules without lattice's API: the bridge
//! puts a submission's files in the tenant's object store bucket before it
//! publishes `ui.form_submitted` with their references; the rules user
//! reads them and writes nothing there; an erasure takes them out. With
//! the shipped NATS configuration, on both backends.

use std::time::Duration;

use async_nats::jetstream;
use lattice_core::{Command, TenantRole};
use serde_json::{Value, json};
use sha2::Digest;
use tokio::io::AsyncReadExt;

/// A PNG's signature and more bytes than one chunk of the object store
/// (128 KiB) and of the log (256 KiB).
fn png() -> Vec<u8> {
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, b'I', b'H', b'D', b'R'];
    bytes.extend((0..300_000u32).map(|i| (i % 251) as u8));
    bytes
}

/// The first message on `filter`, read as a rule reads: through a
/// consumer of its own.
async fn next_on(js: &jetstream::Context, filter: &str) -> Value {
    use futures_util::StreamExt;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let stream =
        lattice_testkit::eventually_within(Duration::from_secs(20), "the stream", async || js.get_stream(lattice_bridge::STREAM).await.ok()).await;
    let consumer = stream
        .create_consumer(jetstream::consumer::pull::Config { filter_subject: filter.into(), ..Default::default() })
        .await
        .expect("rules make a consumer");
    let mut messages = consumer.messages().await.unwrap();
    let message = tokio::time::timeout_at(deadline, messages.next()).await.unwrap_or_else(|_| panic!("nothing on {filter}")).unwrap().unwrap();
    message.ack().await.unwrap();
    serde_json::from_slice(&message.payload).unwrap()
}

lattice_testkit::both_backends! {
    async fn a_submissions_files_are_in_the_object_store_before_its_message_and_leave_when_erased(backend: Backend) {
        let nats = crate::permissions::shipped_nats();
        let log = lattice_testkit::service_on(lattice_testkit::fresh_db(backend).await);
        let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
        let (_, thread) = crate::a_thread(&log, &alice, false).await;
        let schema = json!({"type": "object", "required": ["shot"], "properties": {"shot": {"type": "string", "format": "file", "accept": ["image/*"]}}});
        let form = log
            .execute(&alice, Command::CreateArtifact { thread: thread.clone(), id: None, kind: "form".into(),
                data: json!({"title": "Report", "schema": schema, "submissions": "once"}) })
            .await
            .unwrap()
            .id
            .unwrap();
        let bytes = png();
        let mut upload = log.files().upload(&alice, &thread, "shot.png").await.unwrap();
        for part in bytes.chunks(50_000) {
            upload.push(part).await.unwrap();
        }
        let reference = upload.finish().await.unwrap();
        let submitted = log
            .execute(&alice, Command::CreateArtifact { thread: thread.clone(), id: None, kind: "submission".into(),
                data: json!({"form_id": form, "form_version": 1, "values": {"shot": reference.id}}) })
            .await
            .unwrap();
        assert!(submitted.id.as_deref().is_some_and(|id| id.starts_with("sub_")));

        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let config = lattice_bridge::BridgeConfig {
            nats_url: nats.url.clone(),
            user: Some("bridge".into()),
            password: Some("bridge-secret".into()),
            name: "bridge".into(),
            ca_file: None,
            stream_replicas: 1,
        };
        let bridge = tokio::spawn(lattice_bridge::Bridge::new(lattice_log::LogReader::of(&log), config).run(stop));

        let rules = async_nats::ConnectOptions::with_user_and_password("rules".into(), "rules-secret".into()).connect(nats.url.clone()).await.unwrap();
        let mut js = jetstream::new(rules);
        js.set_timeout(Duration::from_secs(2));
        // The message carries the references.
        let message = next_on(&js, "lattice.*.*.ui.form_submitted").await;
        assert_eq!(message["files"], json!([reference]), "{message}");
        assert_eq!(message["values"]["shot"], json!(reference.id));

        // The rule reads the same bytes from its tenant's bucket.
        let store = js.get_object_store(lattice_bridge::bucket("t1")).await.expect("rules read the bucket");
        let mut object = store.get(&reference.id).await.expect("the file is there once its message is");
        let mut read = Vec::new();
        object.read_to_end(&mut read).await.unwrap();
        assert_eq!(read.len(), bytes.len());
        assert!(read == bytes, "the bytes uploaded");
        let digest: String = sha2::Sha256::digest(&read).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(digest, reference.sha256);
        let info = store.info(&reference.id).await.unwrap();
        assert_eq!((info.description.as_deref(), info.metadata.get("type").map(String::as_str)), (Some("shot.png"), Some("image/png")));

        // Nothing else writes there.
        let mut forged: &[u8] = b"forged";
        assert!(store.put("fil_forged", &mut forged).await.is_err(), "a rules user put a file");
        assert!(store.delete(&reference.id).await.is_err(), "a rules user deleted a file");
        assert!(js.delete_object_store(lattice_bridge::bucket("t1")).await.is_err(), "a rules user deleted the bucket");

        // Erased: the bytes leave the bucket after the audit row's message.
        log.erase_file(&alice, &reference.id, "a person asked").await.unwrap();
        lattice_testkit::eventually_within(Duration::from_secs(20), "the erased file to leave the object store", async || {
            (matches!(store.info(&reference.id).await, Ok(info) if info.deleted) || store.get(&reference.id).await.is_err()).then_some(())
        })
        .await;
        assert_eq!(next_on(&js, "lattice.*.*.audit.file_erased").await["payload"]["data"]["file"], json!(reference.id));
        stop_tx.send(true).unwrap();
        bridge.await.unwrap().unwrap();
    }
}

/// docs/BRIDGE.md's per-tenant rules user, as written there: it reads its
/// tenant's bucket (an object of several megabytes, through flow control)
/// and neither another tenant's nor writes its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_tenant_rules_user_reads_its_own_bucket_only() {
    let docs = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/BRIDGE.md")).unwrap();
    let start = docs.find("{\n  user: rules-acme").expect("the per-tenant user in docs/BRIDGE.md");
    let user = &docs[start..start + docs[start..].find("\n```").unwrap()];
    let config = format!(
        "jetstream: enabled\nauthorization {{ users = [\n{{ user: bridge, password: bridge-secret, permissions: {{ publish: {{ allow: [\"lattice.>\", \"$JS.API.>\", \"$O.>\"] }}, subscribe: {{ allow: [\"_INBOX.>\"] }} }} }}\n{user}\n] }}\n"
    );
    let path = std::env::temp_dir().join(format!("lattice-rules-acme-{}.conf", std::process::id()));
    std::fs::write(&path, config).unwrap();
    let nats = lattice_testkit::nats::NatsServer::start_with(Some(&path), vec![("LATTICE_NATS_RULES_ACME_PASSWORD".into(), "acme-secret".into())]);
    let connect =
        |user: &str, password: &str| async_nats::ConnectOptions::with_user_and_password(user.into(), password.into()).connect(nats.url.clone());
    let mut bridge = jetstream::new(connect("bridge", "bridge-secret").await.unwrap());
    bridge.set_timeout(Duration::from_secs(2));
    let bytes: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i % 249) as u8).collect();
    for tenant in ["acme", "globex"] {
        let store = bridge
            .create_object_store(async_nats::jetstream::object_store::Config { bucket: lattice_bridge::bucket(tenant), ..Default::default() })
            .await
            .unwrap();
        store.put("fil_one", &mut bytes.as_slice()).await.unwrap();
    }
    let mut rules = jetstream::new(connect("rules-acme", "acme-secret").await.unwrap());
    rules.set_timeout(Duration::from_secs(2));
    let own = rules.get_object_store(lattice_bridge::bucket("acme")).await.expect("its own bucket");
    let mut object = own.get("fil_one").await.expect("its own file");
    let mut read = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), object.read_to_end(&mut read)).await.expect("read to its end").unwrap();
    assert!(read == bytes, "{} bytes read of {}", read.len(), bytes.len());
    let mut forged: &[u8] = b"forged";
    assert!(own.put("fil_two", &mut forged).await.is_err(), "it wrote its own bucket");
    let other = rules.get_object_store(lattice_bridge::bucket("globex")).await;
    let reached = match other {
        Ok(store) => store.get("fil_one").await.is_ok(),
        Err(_) => false,
    };
    assert!(!reached, "it read another tenant's file");
    let _ = std::fs::remove_file(&path);
}

/// The log's seal checkpoints go out on `…log.checkpoint` (docs/SEAL.md),
/// each once, signed by the deployment's key: a copy held elsewhere
/// witnesses them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seals_checkpoints_are_published_signed() {
    let nats = lattice_testkit::nats::NatsServer::start();
    let log = lattice_testkit::service_on(lattice_testkit::fresh_db(lattice_log::Backend::Sqlite).await);
    let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
    let (ws, th) = crate::a_thread(&log, &alice, false).await;
    for n in 0..3 {
        log.execute(&alice, Command::PostMessage { thread: th.clone(), text: format!("m{n}") }).await.unwrap();
    }
    let key = log.authenticator().seal_key().clone();
    let reader = lattice_log::LogReader::of(&log);
    // Followed, the horizon is kept: the sealer reads up to it.
    let _following = reader.horizon();
    let sealer = lattice_log::Sealer::new(reader, key.clone());
    let mut sealed = 0;
    lattice_testkit::until("five envelopes sealed", async || {
        sealed += sealer.step().await.unwrap();
        sealed >= 5
    })
    .await;
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let bridge = crate::spawn_bridge(&log, &nats.url, stop);
    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let published: lattice_seal::Checkpoint = serde_json::from_value(next_on(&js, &format!("lattice.t1.{ws}.log.checkpoint")).await).unwrap();
    assert_eq!((published.tenant.as_str(), published.workspace.as_str()), ("t1", ws.as_str()), "{published:?}");
    assert!(published.n >= 5, "the workspace, its thread and three messages: {published:?}");
    assert!(published.verifies_with(&key.public()), "signed by the deployment's key");
    stop_tx.send(true).unwrap();
    bridge.await.unwrap().unwrap();
}
