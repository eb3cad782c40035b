//! A flip that changes what a session's caller is offered reaches it as
//! `notifications/tools/list_changed` on its event stream. (That another
//! tenant's sessions are not woken is the dispatcher's unit test,
//! `crates/mcp/src/flips.rs`.)

use std::time::Duration;

use lattice_core::{Command, Level, SwitchKey, SwitchState, TenantId, TenantRole};

use super::{PATIENCE, Replica, Sse, token};

lattice_testkit::both_backends! {
    async fn a_flip_of_the_callers_tenant_reaches_its_session(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let r = Replica::unlimited(&log);
        let ana = token("ta", "ana", TenantRole::Member);
        let session = r.open(&ana).await;
        let mut events = Sse::new(r.events(&ana, &session).await);
        let admin = lattice_testkit::who("ta", "root", TenantRole::TenantAdmin);
        // The session starts watching just after it opens: a flip before
        // that is in what it first reads. So forms go off and on until one
        // flip is heard.
        let heard = async {
            for state in [SwitchState::Off, SwitchState::On].into_iter().cycle() {
                let flip = Command::SetSwitch {
                    level: Level::Tenant(TenantId::parse("tenant", "ta").unwrap()),
                    key: SwitchKey::Forms,
                    state,
                    reason: "forms come and go".into(),
                };
                log.execute(&admin, flip).await.unwrap();
                if let Ok(told) = tokio::time::timeout(Duration::from_secs(1), events.message()).await {
                    return told.expect("the event stream stays open");
                }
            }
            unreachable!("the states cycle")
        };
        let told = tokio::time::timeout(PATIENCE, heard).await.expect("the session hears of a flip");
        assert_eq!(told["method"], "notifications/tools/list_changed", "{told}");
    }
}
