//! REQUIREMENTS.md B4: with the shipped configuration, only the bridge publishes in
//! the ui namespace.

use std::path::Path;
use std::time::Duration;

use lattice_testkit::nats::NatsServer;

/// nats-server with the shipped configuration, the passwords set.
pub fn shipped_nats() -> NatsServer {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../infra/nats/nats.conf");
    let env = vec![
        ("LATTICE_NATS_BRIDGE_PASSWORD".to_owned(), "bridge-secret".to_owned()),
        ("LATTICE_NATS_RULES_PASSWORD".to_owned(), "rules-secret".to_owned()),
        ("LATTICE_NATS_SERVICE_PASSWORD".to_owned(), "service-secret".to_owned()),
    ];
    NatsServer::start_with(Some(&config), env)
}

#[tokio::test]
async fn only_the_bridge_publishes_under_ui() {
    let nats = shipped_nats();
    type Events = tokio::sync::mpsc::UnboundedReceiver<async_nats::Event>;
    let connect = |user: &'static str, password: &'static str| {
        let url = nats.url.clone();
        async move {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            let client = async_nats::ConnectOptions::with_user_and_password(user.into(), password.into())
                .event_callback(move |event| {
                    let tx = tx.clone();
                    async move {
                        let _ = tx.send(event);
                    }
                })
                .connect(url)
                .await
                .unwrap();
            (client, rx)
        }
    };
    // A refused publish is reported on the connection as a permissions violation.
    async fn publish_refused((client, events): &mut (async_nats::Client, Events), subject: &str) -> bool {
        client.publish(subject.to_owned(), "{}".into()).await.unwrap();
        client.flush().await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_millis(1500);
        while let Ok(Some(event)) = tokio::time::timeout_at(deadline, events.recv()).await {
            if let async_nats::Event::ServerError(e) = event {
                return e.to_string().to_lowercase().contains("permissions violation");
            }
        }
        false
    }
    let mut rules = connect("rules", "rules-secret").await;
    assert!(publish_refused(&mut rules, "lattice.t1.ws_1.ui.form_submitted").await, "a rules user published under ui");
    assert!(!publish_refused(&mut rules, "lattice.t1.ws_1.rules.escalated").await, "a rules user may publish its own events");
    let mut bridge = connect("bridge", "bridge-secret").await;
    assert!(!publish_refused(&mut bridge, "lattice.t1.ws_1.ui.form_submitted").await, "the bridge was refused");
    let mut service = connect("service", "service-secret").await;
    assert!(publish_refused(&mut service, "lattice.t1.ws_1.ui.form_submitted").await);
    // A wrong password does not connect at all.
    let wrong = async_nats::ConnectOptions::with_user_and_password("bridge".into(), "nope".into()).connect(nats.url.clone()).await;
    assert!(wrong.is_err());
}

/// The NATS contract with the shipped configuration: a rule's durable
/// consumer reads and acknowledges; purging, deleting or reconfiguring the
/// stream and publishing under ui, log or audit are refused by the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_consume_and_acknowledge_and_touch_nothing_else() {
    use async_nats::jetstream::{self, consumer, stream};
    use futures_util::StreamExt;

    let nats = shipped_nats();
    let client =
        |user: &str, password: &str| async_nats::ConnectOptions::with_user_and_password(user.into(), password.into()).connect(nats.url.clone());
    let bridge = client("bridge", "bridge-secret").await.unwrap();
    let mut bridge_js = jetstream::new(bridge);
    bridge_js.set_timeout(Duration::from_secs(1));
    // The bridge makes the stream (it is missing) and publishes into it.
    lattice_bridge::ensure_stream(&bridge_js).await.unwrap();
    for n in 0..3 {
        bridge_js.publish("lattice.t1.ws_1.ui.form_submitted".to_string(), format!("{{\"n\":{n}}}").into()).await.unwrap().await.unwrap();
    }

    let rules = client("rules", "rules-secret").await.unwrap();
    let mut js = jetstream::new(rules.clone());
    js.set_timeout(Duration::from_secs(1));
    let lattice = js.get_stream("LATTICE").await.expect("rules read the stream's info");
    let durable = lattice
        .get_or_create_consumer(
            "escalations",
            consumer::pull::Config {
                durable_name: Some("escalations".into()),
                filter_subject: "lattice.*.*.ui.form_submitted".into(),
                ..Default::default()
            },
        )
        .await
        .expect("rules make a durable consumer");
    let mut batch = durable.fetch().max_messages(3).messages().await.unwrap();
    let mut acked = 0;
    while let Some(message) = batch.next().await {
        let message = message.unwrap();
        // Acknowledged and confirmed by the server.
        message.double_ack().await.expect("rules acknowledge their messages");
        acked += 1;
    }
    assert_eq!(acked, 3);
    let mut durable = durable;
    let info = durable.info().await.unwrap();
    assert_eq!((info.num_ack_pending, info.ack_floor.stream_sequence), (0, 3), "every message acknowledged");

    // The stream is the operator's: no purge, no delete, no new settings.
    assert!(lattice.purge().await.is_err(), "a rules user purged the stream");
    assert!(js.delete_stream("LATTICE").await.is_err(), "a rules user deleted the stream");
    let changed = stream::Config { name: "LATTICE".into(), subjects: vec!["lattice.>".into()], max_messages: 1, ..Default::default() };
    assert!(js.update_stream(changed.clone()).await.is_err(), "a rules user reconfigured the stream");
    assert!(bridge_js.update_stream(changed).await.is_err(), "the bridge reconfigured the stream");
    assert!(bridge_js.delete_stream("LATTICE").await.is_err(), "the bridge deleted the stream");
    assert_eq!(js.get_stream("LATTICE").await.unwrap().info().await.unwrap().state.messages, 3, "the stream is whole");

    // Rules publish their own events, never lattice's namespaces.
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let watched = async_nats::ConnectOptions::with_user_and_password("rules".into(), "rules-secret".into())
        .event_callback(move |event| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(event);
            }
        })
        .connect(nats.url.clone())
        .await
        .unwrap();
    for (subject, refused) in [
        ("lattice.t1.ws_1.ui.form_submitted", true),
        ("lattice.t1.ws_1.log.message_posted", true),
        ("lattice.t1.ws_1.audit.app_tool_call", true),
        ("lattice.t1.ws_1.escalations.opened", false),
    ] {
        watched.publish(subject.to_owned(), "{}".into()).await.unwrap();
        watched.flush().await.unwrap();
        let mut violation = false;
        let deadline = tokio::time::Instant::now() + Duration::from_millis(800);
        while let Ok(Some(event)) = tokio::time::timeout_at(deadline, events.recv()).await {
            if let async_nats::Event::ServerError(e) = event {
                violation = e.to_string().to_lowercase().contains("permissions violation");
                break;
            }
        }
        assert_eq!(violation, refused, "{subject}");
    }
}

/// A stream that exists is the operator's: the bridge leaves its settings
/// as they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_leaves_an_operators_stream_settings_alone() {
    use async_nats::jetstream::{self, stream};
    let nats = NatsServer::start();
    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let operator = stream::Config {
        name: "LATTICE".into(),
        subjects: vec!["lattice.>".into()],
        max_age: Duration::from_secs(7 * 24 * 3600),
        duplicate_window: Duration::from_secs(1200),
        ..Default::default()
    };
    js.create_stream(operator).await.unwrap();
    lattice_bridge::ensure_stream(&js).await.unwrap();
    let config = js.get_stream("LATTICE").await.unwrap().info().await.unwrap().config.clone();
    assert_eq!((config.max_age, config.duplicate_window), (Duration::from_secs(7 * 24 * 3600), Duration::from_secs(1200)));
}
