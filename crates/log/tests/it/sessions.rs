//! The shared session table's bounds: a state at the limit is kept, one
//! byte more refused; a caller keeps at most SESSIONS_PER_CALLER sessions,
//! opening another forgets the oldest; a session is its opener's.

use lattice_core::{Error, TenantRole};
use lattice_log::{SESSION_STATE_BYTES, SESSIONS_PER_CALLER};
use lattice_testkit::{both_backends, principal, service};

both_backends! {
    async fn sessions_are_bounded_in_size_and_count_and_owned(backend: Backend) {
        let log = service(backend).await;
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

        for i in 1..SESSIONS_PER_CALLER {
            sessions.open(&format!("s-{i:03}"), &ana).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        // At the limit: every one is kept.
        assert_eq!(sessions.owned_by("s-state", &ana).await.unwrap(), Some(true));
        sessions.open("s-over", &ana).await.unwrap();
        assert_eq!(sessions.owned_by("s-state", &ana).await.unwrap(), None, "the oldest is forgotten");
        assert_eq!(sessions.owned_by("s-001", &ana).await.unwrap(), Some(true));
        assert_eq!(sessions.owned_by("s-over", &ana).await.unwrap(), Some(true));
    }
}
