use lattice_core::{ArtifactId, Command, Error, Level, Role, SwitchKey, SwitchState, TenantId, TenantRole, UserId};
use lattice_testkit::{both_backends, service, who};
use serde_json::json;

use crate::{dashboard, workspace_with_thread};

fn set(level: Level, key: SwitchKey, state: SwitchState, reason: &str) -> Command {
    Command::SetSwitch { level, key, state, reason: reason.into() }
}

both_backends! {
    async fn only_an_admin_of_a_level_sets_it_and_every_change_is_audited(backend: Backend) {
        let log = service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (ws, _) = workspace_with_thread(&log, &alice).await;
        log.execute(&alice, Command::AddMember { workspace: ws.clone(), user: UserId::parse("u", "ed").unwrap(), role: Role::Editor })
            .await
            .unwrap();
        let editor = who("t1", "ed", TenantRole::Member);
        let tenant_admin = who("t1", "tina", TenantRole::TenantAdmin);
        let ops = who("t1", "olga", TenantRole::DeploymentAdmin);
        let other_admin = who("t2", "root", TenantRole::TenantAdmin);
        let t1 = Level::Tenant(TenantId::parse("t", "t1").unwrap());
        let wsl = Level::Workspace(ws.clone());
        let key = SwitchKey::Dashboards;

        // Deployment: only a deployment admin.
        for refused in [&alice, &editor, &tenant_admin, &other_admin] {
            let err = log.execute(refused, set(Level::Deployment, key, SwitchState::Off, "no")).await.unwrap_err();
            assert!(matches!(err, Error::Forbidden { .. }), "{err:?}");
        }
        log.execute(&ops, set(Level::Deployment, SwitchKey::MiniApps, SwitchState::On, "opt in")).await.unwrap();
        // Tenant: only that tenant's admin; another tenant's admin finds nothing.
        for refused in [&alice, &editor, &ops] {
            let err = log.execute(refused, set(t1.clone(), key, SwitchState::Off, "no")).await.unwrap_err();
            assert!(matches!(err, Error::Forbidden { .. }), "{err:?}");
        }
        assert_eq!(log.execute(&other_admin, set(t1.clone(), key, SwitchState::Off, "no")).await.unwrap_err(), Error::NotFound);
        log.execute(&tenant_admin, set(t1.clone(), key, SwitchState::On, "tenant wants it")).await.unwrap();
        // Workspace: its admins (and the tenant admin); not an editor.
        let err = log.execute(&editor, set(wsl.clone(), key, SwitchState::Off, "no")).await.unwrap_err();
        assert!(matches!(err, Error::Forbidden { .. }), "{err:?}");
        assert_eq!(log.execute(&other_admin, set(wsl.clone(), key, SwitchState::Off, "no")).await.unwrap_err(), Error::NotFound);
        log.execute(&alice, set(wsl.clone(), key, SwitchState::Off, "too noisy")).await.unwrap();
        // A reason is required.
        let err = log.execute(&alice, set(wsl.clone(), key, SwitchState::On, "  ")).await.unwrap_err();
        assert!(matches!(err, Error::ValidationFailed { .. }), "{err:?}");

        let rows = log.audit(&tenant_admin, None, None).await.unwrap();
        let seen: Vec<(&str, &str, &str, &str, &str, &str)> = rows
            .iter()
            .map(|r| (r.actor.as_str(), r.change.level.as_str(), r.change.key.as_str(), r.change.old.as_str(), r.change.new.as_str(), r.change.reason.as_str()))
            .collect();
        let wsl_text = wsl.to_string();
        assert_eq!(seen, vec![
            ("tina", "tenant:t1", "ui:dashboards", "unset", "on", "tenant wants it"),
            ("alice", wsl_text.as_str(), "ui:dashboards", "unset", "off", "too noisy"),
        ]);
        assert!(rows.iter().all(|r| !r.at.is_empty()));
        let deployment_rows = log.audit(&ops, Some("_"), None).await.unwrap();
        assert_eq!(deployment_rows.len(), 1);
        assert_eq!((deployment_rows[0].change.old.as_str(), deployment_rows[0].change.new.as_str()), ("unset", "on"));
        // The workspace admin sees its workspace's trail only.
        let mine = log.audit(&alice, None, None).await.unwrap();
        assert_eq!(mine.len(), 1);
        assert_eq!(mine[0].change.reason, "too noisy");
        assert_eq!(log.audit(&other_admin, Some("t1"), None).await.unwrap_err(), Error::NotFound);
    }
}

both_backends! {
    async fn a_governed_kind_is_refused_while_its_switch_is_off(backend: Backend) {
        let log = service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (ws, th) = workspace_with_thread(&log, &alice).await;
        let created = log
            .execute(&alice, Command::CreateArtifact { thread: th.clone(), id: None, kind: "dashboard".into(), data: dashboard("x") })
            .await
            .unwrap();
        let id = ArtifactId::parse("id", created.id.as_deref().unwrap()).unwrap();
        log.execute(&alice, set(Level::Workspace(ws.clone()), SwitchKey::Dashboards, SwitchState::Off, "off")).await.unwrap();
        let effective = log.effective(&alice, ws.as_str()).await.unwrap();
        assert!(!effective[&SwitchKey::Dashboards].enabled);
        assert_eq!(effective[&SwitchKey::Dashboards].because, "ui:dashboards is off for the workspace");
        let not_enabled = Error::NotEnabled { key: "ui:dashboards".into() };
        let err = log
            .execute(&alice, Command::CreateArtifact { thread: th.clone(), id: None, kind: "dashboard".into(), data: dashboard("y") })
            .await
            .unwrap_err();
        assert_eq!(err, not_enabled);
        let patch = serde_json::from_value(json!([{"op": "replace", "path": "/title", "value": "z"}])).unwrap();
        let err = log.execute(&alice, Command::EditArtifact { id: id.clone(), expected_version: 1, patch }).await.unwrap_err();
        assert_eq!(err, not_enabled);
        // Forms are governed by their own key, still on.
        log.execute(&alice, Command::CreateArtifact {
            thread: th.clone(),
            id: None,
            kind: "form".into(),
            data: json!({"title": "F", "schema": {"type": "object", "properties": {}}}),
        })
        .await
        .unwrap();
        log.execute(&alice, set(Level::Workspace(ws), SwitchKey::Dashboards, SwitchState::Unset, "back")).await.unwrap();
        log.execute(&alice, Command::CreateArtifact { thread: th, id: None, kind: "dashboard".into(), data: dashboard("y") })
            .await
            .unwrap();
    }
}
