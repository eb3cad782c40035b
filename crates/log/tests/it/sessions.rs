//! The shared session table's bounds: a state at the limit is kept, one
//! byte more refused; a caller keeps at most SESSIONS_PER_CALLER sessions,
//! opening another forgets the oldest (and says which); a session is its
//! opener's, and lives while its row does; a week after it opened, by the
//! log's clock, it is forgotten. And which tenants switch flips concern,
//! for the MCP sessions' watchers.

use std::time::Duration;

use lattice_core::clock::ManualClock;
use lattice_core::envelope::DEPLOYMENT_TENANT;
use lattice_core::{Command, Error, Level, SwitchKey, SwitchState, TenantId, TenantRole, WorkspaceId};
use lattice_log::{SESSION_STATE_BYTES, SESSIONS_PER_CALLER};
use lattice_testkit::{both_backends, principal, service, service_with_clock, who};

both_backends! {
    async fn sessions_are_bounded_in_size_and_count_and_owned(backend: Backend) {
        let clock = ManualClock::new();
        let log = service_with_clock(backend, clock.clone()).await;
        let sessions = log.sessions();
        let ana = principal("t1", "ana", TenantRole::Member, false);
        let bob = principal("t1", "bob", TenantRole::Member, false);

        sessions.open("s-state", &ana).await.unwrap();
        sessions.keep_state("s-state", &"x".repeat(SESSION_STATE_BYTES)).await.unwrap();
        assert_eq!(sessions.state("s-state").await.unwrap().map(|s| s.len()), Some(SESSION_STATE_BYTES));
        let over = sessions.keep_state("s-state", &"x".repeat(SESSION_STATE_BYTES + 1)).await.unwrap_err();
        assert!(matches!(over, Error::TooLarge { .. }), "{over:?}");
        assert_eq!(sessions.owned_by("s-state", &ana).await.unwrap(), Some(true));
        assert_eq!(sessions.owned_by("s-state", &bob).await.unwrap(), Some(false));
        assert_eq!(sessions.owned_by("s-unknown", &ana).await.unwrap(), None);
        // A second open by another caller does not take it over.
        sessions.open("s-state", &bob).await.unwrap();
        assert_eq!(sessions.owned_by("s-state", &ana).await.unwrap(), Some(true));

        // Each opened later than the one before, by the log's clock.
        for i in 1..SESSIONS_PER_CALLER {
            clock.advance(Duration::from_millis(2));
            sessions.open(&format!("s-{i:03}"), &ana).await.unwrap();
        }
        // At the limit: every one is kept.
        assert_eq!(sessions.owned_by("s-state", &ana).await.unwrap(), Some(true));
        let forgotten = sessions.open("s-over", &ana).await.unwrap();
        assert_eq!(forgotten, vec!["s-state".to_owned()], "opening past the limit says what it forgot");
        assert_eq!(sessions.owned_by("s-state", &ana).await.unwrap(), None, "the oldest is forgotten");
        assert_eq!(sessions.owned_by("s-001", &ana).await.unwrap(), Some(true));
        assert_eq!(sessions.owned_by("s-over", &ana).await.unwrap(), Some(true));

        // What lives is what has its row and its owner.
        sessions.keep_state("s-ownerless", "{}").await.unwrap();
        let asked: Vec<String> = ["s-state", "s-001", "s-over", "s-ownerless", "s-unknown"].map(str::to_owned).into();
        let mut living = sessions.living(&asked).await.unwrap();
        living.sort();
        assert_eq!(living, ["s-001", "s-over"]);
        sessions.close("s-001").await.unwrap();
        assert_eq!(sessions.living(&asked).await.unwrap(), ["s-over"]);
        // More ids than one statement asks about.
        let many: Vec<String> = (0..1200).map(|i| format!("s-{i:03}")).collect();
        assert_eq!(sessions.living(&many).await.unwrap().len() as i64, SESSIONS_PER_CALLER - 2);
    }
}

both_backends! {
    async fn a_session_is_forgotten_a_week_after_it_opened(backend: Backend) {
        let clock = ManualClock::new();
        let log = service_with_clock(backend, clock.clone()).await;
        let sessions = log.sessions();
        let ana = principal("t1", "ana", TenantRole::Member, false);
        let bob = principal("t1", "bob", TenantRole::Member, false);
        sessions.open("s-old", &ana).await.unwrap();

        clock.advance(Duration::from_secs(7 * 24 * 3600));
        assert!(sessions.open("s-bob", &bob).await.unwrap().is_empty(), "a week to the millisecond is kept");
        assert_eq!(sessions.owned_by("s-old", &ana).await.unwrap(), Some(true));

        clock.advance(Duration::from_millis(1));
        assert_eq!(sessions.open("s-new", &bob).await.unwrap(), ["s-old"], "opening another says what it forgot");
        assert_eq!(sessions.owned_by("s-old", &ana).await.unwrap(), None);
        assert_eq!(sessions.owned_by("s-bob", &bob).await.unwrap(), Some(true));
    }
}

both_backends! {
    async fn switch_flips_name_the_tenants_they_concern(backend: Backend) {
        let log = service(backend).await;
        let sessions = log.sessions();
        let set = |level: Level| Command::SetSwitch { level, key: SwitchKey::Forms, state: SwitchState::Off, reason: "testing".into() };
        let t1 = who("t1", "root", TenantRole::TenantAdmin);
        let t2 = who("t2", "root", TenantRole::TenantAdmin);
        let ws = log.execute(&t2, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
        let before = log.horizon().current();

        let first = log.execute(&t1, set(Level::Tenant(TenantId::parse("t", "t1").unwrap()))).await.unwrap().seq;
        log.execute(&t2, set(Level::Workspace(WorkspaceId::parse("w", &ws).unwrap()))).await.unwrap();
        log.execute(&t1, set(Level::Tenant(TenantId::parse("t", "t1").unwrap()))).await.unwrap();
        let last = log.execute(&who("ops", "root", TenantRole::DeploymentAdmin), set(Level::Deployment)).await.unwrap().seq;

        // In order, each once; a workspace's flip is its tenant's.
        assert_eq!(sessions.tenants_flipped(before, last).await.unwrap(), ["t1", "t2", DEPLOYMENT_TENANT]);
        assert_eq!(sessions.tenants_flipped(first, last - 1).await.unwrap(), ["t2", "t1"]);
        assert!(sessions.tenants_flipped(last, last).await.unwrap().is_empty());
    }
}
