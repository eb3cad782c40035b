//! SPEC B4: with the shipped configuration, only the bridge publishes in
//! the ui namespace.

use std::path::Path;
use std::time::Duration;

use lattice_testkit::nats::NatsServer;

#[tokio::test]
async fn only_the_bridge_publishes_under_ui() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../infra/nats/nats.conf");
    let env = vec![
        ("LATTICE_NATS_BRIDGE_PASSWORD".to_owned(), "bridge-secret".to_owned()),
        ("LATTICE_NATS_RULES_PASSWORD".to_owned(), "rules-secret".to_owned()),
        ("LATTICE_NATS_SERVICE_PASSWORD".to_owned(), "service-secret".to_owned()),
    ];
    let nats = NatsServer::start_with(Some(&config), env);
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
    let wrong = async_nats::ConnectOptions::with_user_and_password("bridge".into(), "nope".into())
        .connect(nats.url.clone())
        .await;
    assert!(wrong.is_err());
}
