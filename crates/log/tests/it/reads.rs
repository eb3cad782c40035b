use lattice_core::{Command, Role, TenantRole, UserId};
use lattice_testkit::{both_backends, service, who};

use crate::workspace_with_thread;

both_backends! {
    async fn the_latest_thread_is_the_newest_one_the_caller_can_read(backend: Backend) {
        let log = service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let bob = who("t1", "bob", TenantRole::Member);
        let tina = who("t1", "tina", TenantRole::TenantAdmin);
        let eve = who("t2", "eve", TenantRole::TenantAdmin);
        assert_eq!(log.latest_thread(&alice).await.unwrap(), None, "no thread yet");
        let (ws_a, th_a) = workspace_with_thread(&log, &alice).await;
        let (_, th_b) = workspace_with_thread(&log, &bob).await;
        // Alice is in her workspace only; bob's newer thread is not hers.
        assert_eq!(log.latest_thread(&alice).await.unwrap(), Some((th_a.clone(), ws_a.to_string())));
        assert_eq!(log.latest_thread(&bob).await.unwrap().map(|(t, _)| t), Some(th_b.clone()));
        // A tenant admin sees every workspace of the tenant; another tenant nothing.
        assert_eq!(log.latest_thread(&tina).await.unwrap().map(|(t, _)| t), Some(th_b.clone()));
        assert_eq!(log.latest_thread(&eve).await.unwrap(), None);
        // Made a member of bob's workspace, alice's latest is bob's thread.
        let ws_b = log.thread_workspace(&bob, &th_b).await.unwrap();
        let ws_b = lattice_core::WorkspaceId::parse("ws", &ws_b).unwrap();
        log.execute(&bob, Command::AddMember { workspace: ws_b, user: UserId::parse("u", "alice").unwrap(), role: Role::Viewer }).await.unwrap();
        assert_eq!(log.latest_thread(&alice).await.unwrap().map(|(t, _)| t), Some(th_b));
    }
}

both_backends! {
    /// A workspace's thread list holds its newest threads, at most
    /// `THREADS_LISTED_MAX`: at the bound all of them, one over, the oldest
    /// left out.
    async fn a_workspaces_thread_list_holds_at_most_its_newest_500(backend: Backend) {
        let clock = lattice_core::ManualClock::new();
        let log = lattice_testkit::service_with_clock(backend, clock.clone()).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (ws, first) = workspace_with_thread(&log, &alice).await;
        let ws_id = lattice_core::WorkspaceId::parse("ws", ws.as_str()).unwrap();
        // Apart in time from the rest, so that the order of creation is
        // the list's, whatever the ids within one millisecond.
        clock.advance(std::time::Duration::from_millis(3));
        for i in 1..lattice_log::THREADS_LISTED_MAX {
            let command = Command::CreateThread { workspace: ws_id.clone(), title: format!("T{i}"), restricted: false };
            log.execute(&alice, command).await.unwrap();
        }
        let listed = log.threads(&alice, ws.as_str()).await.unwrap();
        assert_eq!(listed.len(), lattice_log::THREADS_LISTED_MAX, "at the bound, every thread");
        assert_eq!(listed.last().unwrap().id, first.as_str(), "the oldest last");
        clock.advance(std::time::Duration::from_millis(3));
        let command = Command::CreateThread { workspace: ws_id, title: "One over".into(), restricted: false };
        log.execute(&alice, command).await.unwrap();
        let listed = log.threads(&alice, ws.as_str()).await.unwrap();
        assert_eq!(listed.len(), lattice_log::THREADS_LISTED_MAX, "one over: still the bound");
        assert_eq!(listed[0].title, "One over", "the newest first");
        assert!(listed.iter().all(|t| t.id != first.as_str()), "the oldest left out");
    }
}
