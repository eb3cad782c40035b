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
