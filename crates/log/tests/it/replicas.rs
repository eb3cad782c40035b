//! Replicas of the log service sharing one PostgreSQL database hear each
//! other's commits through `NOTIFY`: a live stream on one sees a message
//! committed on another, and a switch flip there, without waiting for a
//! poll. The replica under test polls once a minute, so only the
//! notification can wake it within the test's patience.

use std::time::Duration;

use lattice_core::{Command, Level, SwitchKey, SwitchState, TenantRole};
use lattice_log::{Backend, Db, Follow, LogService};
use lattice_testkit::{authenticator, fresh_url, who};

use crate::workspace_with_thread;

const PATIENCE: Duration = Duration::from_secs(10);

async fn replica(url: &str, idle_poll: Duration) -> LogService {
    let db = Db::connect(url, 8).await.unwrap();
    db.migrate().await.unwrap();
    let mut builder = LogService::builder(db, authenticator()).idle_poll(idle_poll);
    for kind in lattice_ui::kinds() {
        builder = builder.kind(kind);
    }
    builder.start()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_on_one_replica_wakes_the_streams_and_switches_of_another() {
    let url = fresh_url(Backend::Postgres).await;
    let a = replica(&url, Duration::from_millis(200)).await;
    let b = replica(&url, Duration::from_secs(60)).await;
    let alice = who("t1", "alice", TenantRole::Member);
    let (ws, thread) = workspace_with_thread(&a, &alice).await;

    // B's listener connects in the background: the first message may
    // arrive by B's first look; every later one only by notification.
    let first = a.execute(&alice, Command::PostMessage { thread: thread.clone(), text: "first".into() }).await.unwrap();
    assert!(b.horizon().wait_for(first.seq, PATIENCE).await >= first.seq, "B never saw the first message");

    let mut live = b.follow(&alice, Follow::Thread(thread.clone()), first.seq).await.unwrap();
    for i in 0..5 {
        let posted = a.execute(&alice, Command::PostMessage { thread: thread.clone(), text: format!("m{i}") }).await.unwrap();
        let seen = tokio::time::timeout(PATIENCE, live.next_committed()).await.expect("B's stream heard of A's commit").expect("a live envelope");
        assert_eq!(seen.seq, posted.seq);
        assert_eq!(seen.event_type, "message_posted");
    }

    let mut flips = b.switch_changes();
    flips.borrow_and_update();
    let admin = who("t1", "tina", TenantRole::TenantAdmin);
    let flipped = a
        .execute(&admin, Command::SetSwitch { level: Level::Workspace(ws), key: SwitchKey::Forms, state: SwitchState::Off, reason: "drill".into() })
        .await
        .unwrap();
    tokio::time::timeout(PATIENCE, flips.wait_for(|seq| *seq >= flipped.seq)).await.expect("B heard of the flip").unwrap();
}

/// Without notifications (SQLite, or a listener that cannot connect) the
/// poll still finds another process's commits.
#[tokio::test]
async fn polling_alone_still_finds_another_replicas_commits() {
    let url = fresh_url(Backend::Sqlite).await;
    let a = replica(&url, Duration::from_millis(200)).await;
    let b = replica(&url, Duration::from_millis(50)).await;
    let alice = who("t1", "alice", TenantRole::Member);
    let (_, thread) = workspace_with_thread(&a, &alice).await;
    let mut live = b.follow(&alice, Follow::Thread(thread.clone()), 0).await.unwrap();
    let posted = a.execute(&alice, Command::PostMessage { thread, text: "hello".into() }).await.unwrap();
    loop {
        let seen = tokio::time::timeout(PATIENCE, live.next_committed()).await.expect("B found A's commit").expect("a live envelope");
        if seen.seq == posted.seq {
            break;
        }
    }
}

/// Reads what a stream holds until it has been quiet for a moment.
async fn drain(live: &mut lattice_log::LiveEvents) -> Vec<lattice_log::Live> {
    let mut got = Vec::new();
    while let Ok(Some(next)) = tokio::time::timeout(Duration::from_millis(300), live.next()).await {
        got.push(next);
    }
    got
}

fn passed(got: &[lattice_log::Live]) -> Vec<String> {
    got.iter().filter_map(|l| if let lattice_log::Live::Passing(p) = l { Some(p.json.clone()) } else { None }).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_passes_on_one_replica_reaches_the_streams_of_another_once() {
    let url = fresh_url(Backend::Postgres).await;
    let a = replica(&url, Duration::from_millis(200)).await;
    let b = replica(&url, Duration::from_millis(200)).await;
    let alice = who("t1", "alice", TenantRole::Member);
    let (_, thread) = workspace_with_thread(&a, &alice).await;
    let mut on_a = a.follow(&alice, Follow::Thread(thread.clone()), 0).await.unwrap();
    let mut on_b = b.follow(&alice, Follow::Thread(thread.clone()), 0).await.unwrap();
    drain(&mut on_a).await;
    drain(&mut on_b).await;
    let trusted = lattice_testkit::trusted(&a);
    let pass = |json: String| trusted.pass(&thread, lattice_log::Passing { name: "delta", json });

    // B's listener connects in the background: say until B hears.
    let mut heard = false;
    for i in 0..50 {
        pass(format!("{{\"hello\":{i}}}"));
        if passed(&drain(&mut on_b).await).iter().any(|j| j.starts_with("{\"hello\"")) {
            heard = true;
            break;
        }
    }
    assert!(heard, "B never heard A's passing events");
    drain(&mut on_a).await;

    // Then each reaches B in order, and A's own stream once (A does not
    // hand on what it hears itself say).
    for i in 0..5 {
        pass(format!("{{\"n\":{i}}}"));
    }
    let expected: Vec<String> = (0..5).map(|i| format!("{{\"n\":{i}}}")).collect();
    assert_eq!(passed(&drain(&mut on_b).await), expected);
    assert_eq!(passed(&drain(&mut on_a).await), expected);

    // Larger than a notification carries: A's streams get it, B's do not.
    let big = format!("{{\"text\":\"{}\"}}", "x".repeat(9000));
    pass(big.clone());
    assert_eq!(passed(&drain(&mut on_a).await), [big]);
    assert!(passed(&drain(&mut on_b).await).is_empty());
}

/// Two processes on one SQLite file (a server, and `lattice switch` at a
/// terminal beside it) write at once: each waits its turn for the other's,
/// and no command fails for the file being busy. A transaction that reads
/// before it writes must ask for the write lock when it begins: SQLite
/// refuses at once, without waiting, to lift a reader to a writer while
/// another process writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_sqlite_file_write_at_once_without_failing() {
    let url = fresh_url(Backend::Sqlite).await;
    let a = replica(&url, Duration::from_millis(50)).await;
    let b = replica(&url, Duration::from_millis(50)).await;
    let alice = who("t1", "alice", TenantRole::Member);
    let admin = who("t1", "tina", TenantRole::TenantAdmin);
    let (ws, thread) = workspace_with_thread(&a, &alice).await;
    let writes = |log: LogService, name: &'static str| {
        let (alice, admin, ws, thread) = (alice.clone(), admin.clone(), ws.clone(), thread.clone());
        tokio::spawn(async move {
            for i in 0..60 {
                let command = if i % 3 == 0 {
                    let state = if i % 2 == 0 { SwitchState::Off } else { SwitchState::On };
                    (&admin, Command::SetSwitch { level: Level::Workspace(ws.clone()), key: SwitchKey::Forms, state, reason: format!("{name} {i}") })
                } else {
                    (&alice, Command::PostMessage { thread: thread.clone(), text: format!("{name} {i}") })
                };
                log.execute(command.0, command.1).await.unwrap_or_else(|e| panic!("{name}'s write {i} failed: {e}"));
            }
        })
    };
    let (on_a, on_b) = (writes(a.clone(), "a"), writes(b.clone(), "b"));
    on_a.await.unwrap();
    on_b.await.unwrap();
}

lattice_testkit::both_backends! {
    /// A member removed on one replica cannot post on another where she
    /// posted before: the other's commit checks the standing it authorized
    /// her from, which the removal changed, and it reads her standing anew.
    async fn a_removal_on_one_replica_reaches_a_message_on_another(backend: Backend) {
        let url = fresh_url(backend).await;
        let a = replica(&url, Duration::from_millis(200)).await;
        let b = replica(&url, Duration::from_millis(200)).await;
        let owner = who("t1", "owner", TenantRole::Member);
        let (ws, thread) = workspace_with_thread(&a, &owner).await;
        let ann_id = lattice_core::UserId::parse("user", "ann").unwrap();
        a.execute(&owner, Command::AddMember { workspace: ws.clone(), user: ann_id.clone(), role: lattice_core::Role::Editor }).await.unwrap();
        let ann = who("t1", "ann", TenantRole::Member);
        a.execute(&ann, Command::PostMessage { thread: thread.clone(), text: "on a".into() }).await.unwrap();
        b.execute(&owner, Command::RemoveMember { workspace: ws, user: ann_id }).await.unwrap();
        let after = a.execute(&ann, Command::PostMessage { thread, text: "after removal".into() }).await;
        assert!(matches!(after, Err(lattice_core::Error::NotFound)), "{after:?}");
    }
}
