//! A proof is handed over when it is sealed, not polled for: the waiters
//! below look again only once an hour of their own accord, so only the
//! seal's notification can wake them within the test's patience (this
//! process's sealer telling its service; on PostgreSQL, another replica's
//! sealer saying it with `NOTIFY`).

use std::time::{Duration, Instant};

use lattice_core::{Command, Error, TenantRole};
use lattice_log::{Backend, Db, LogReader, LogService, Sealer};
use lattice_testkit::{authenticator, fresh_url, who};

use crate::workspace_with_thread;

/// Longer than a seal's notification takes, far shorter than an hour.
const PATIENCE: Duration = Duration::from_secs(2);

async fn service(url: &str) -> LogService {
    let db = Db::connect(url, 8).await.unwrap();
    db.migrate().await.unwrap();
    LogService::builder(db, authenticator()).proof_recheck(Duration::from_secs(3600)).start()
}

/// A sealer that seals only when the test steps it, holding the lead so
/// that waiters know the log is sealed.
async fn sealer_by_hand(log: &LogService) -> Sealer {
    let reader = LogReader::of(log);
    assert!(reader.lead("sealer", "by-hand", Duration::from_secs(600)).await.unwrap());
    Sealer::new(reader, log.authenticator().seal_key().clone())
}

lattice_testkit::both_backends! {
    async fn a_proof_is_handed_over_as_soon_as_it_is_sealed(backend: Backend) {
        let log = service(&fresh_url(backend).await).await;
        let ana = who("t1", "ana", TenantRole::Member);
        let (_, thread) = workspace_with_thread(&log, &ana).await;
        let seq = log.execute(&ana, Command::PostMessage { thread, text: "prove me".into() }).await.unwrap().seq;

        // Nothing seals this log: no proof, and no wait for one.
        let asked = Instant::now();
        assert!(log.proof(&ana, seq).await.unwrap().is_none());
        assert!(asked.elapsed() < PATIENCE, "waited {:?} with no sealer", asked.elapsed());

        let sealer = sealer_by_hand(&log).await;
        let waiting = {
            let (log, ana) = (log.clone(), ana.clone());
            tokio::spawn(async move { log.proof_when_sealed(&ana, seq, Duration::from_secs(60)).await })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiting.is_finished(), "a proof came before its seal");
        // Another tenant learns nothing of it, sealed or not.
        let eve = who("t2", "eve", TenantRole::TenantAdmin);
        assert!(matches!(log.proof(&eve, seq).await, Err(Error::NotFound)));

        let sealed_at = Instant::now();
        assert!(sealer.step().await.unwrap() >= 1);
        let proof = tokio::time::timeout(PATIENCE, waiting).await.expect("the seal woke the waiter").unwrap().unwrap().expect("a proof");
        let latency = sealed_at.elapsed();
        eprintln!("{backend:?}: proof handed over {latency:?} after the seal began");
        assert_eq!(proof.envelope.seq, seq);
        assert!(proof.checkpoint.n >= proof.seal.n);
        // Sealed already: at once.
        let again = Instant::now();
        assert_eq!(log.proof(&ana, seq).await.unwrap().map(|p| p.seal), Some(proof.seal));
        assert!(again.elapsed() < PATIENCE);
    }
}

/// The sealer leads on one replica; a waiter on another hears of the seal
/// through PostgreSQL's `NOTIFY`, not by looking again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seal_on_one_replica_hands_the_proof_to_a_waiter_on_another() {
    let url = fresh_url(Backend::Postgres).await;
    let (a, b) = (service(&url).await, service(&url).await);
    let ana = who("t1", "ana", TenantRole::Member);
    let (_, thread) = workspace_with_thread(&a, &ana).await;
    let seq = a.execute(&ana, Command::PostMessage { thread, text: "prove me elsewhere".into() }).await.unwrap().seq;
    let sealer = sealer_by_hand(&a).await;
    let waiting = {
        let ana = ana.clone();
        tokio::spawn(async move { b.proof_when_sealed(&ana, seq, Duration::from_secs(60)).await })
    };
    // B's listener connects on its first waiter: given the time to.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!waiting.is_finished(), "a proof came before its seal");
    let sealed_at = Instant::now();
    assert!(sealer.step().await.unwrap() >= 1);
    let proof = tokio::time::timeout(PATIENCE, waiting).await.expect("A's seal woke B's waiter").unwrap().unwrap().expect("a proof");
    eprintln!("proof handed to another replica {:?} after the seal began", sealed_at.elapsed());
    assert_eq!(proof.envelope.seq, seq);
}
