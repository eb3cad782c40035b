//! Who sees a thread (docs/ACCESS.md): a restricted thread its listed
//! members and the workspace's admins only, everywhere a thread's contents
//! go (its reads, the workspace's reads and its live stream); a thread
//! shared with someone outside the workspace, that person, in the role it
//! was shared with.

use std::time::Duration;

use lattice_core::{Command, Error, Role, TenantRole, ThreadId, UserId};
use lattice_log::{Follow, Live};
use lattice_testkit::{both_backends, service, who};

use crate::{dashboard, workspace_with_thread};

fn user(name: &str) -> UserId {
    UserId::parse("user", name).unwrap()
}

both_backends! {
    async fn a_restricted_thread_is_its_members_and_the_admins_alone(backend: Backend) {
        let log = service(backend).await;
        let owner = who("t1", "owner", TenantRole::Member);
        let (ws, open) = workspace_with_thread(&log, &owner).await;
        for (name, role) in [("ann", Role::Editor), ("ed", Role::Editor), ("ada", Role::Admin)] {
            log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user(name), role }).await.unwrap();
        }
        let (ann, ed, ada) = (who("t1", "ann", TenantRole::Member), who("t1", "ed", TenantRole::Member), who("t1", "ada", TenantRole::Member));
        let tina = who("t1", "tina", TenantRole::TenantAdmin);
        let restricted = Command::CreateThread { workspace: ws.clone(), title: "Salaries".into(), restricted: true };
        let secret = ThreadId::from_trusted(log.execute(&owner, restricted).await.unwrap().id.unwrap());
        log.execute(&owner, Command::ShareThread { thread: secret.clone(), user: user("ann"), role: Role::Viewer }).await.unwrap();
        let art = log
            .execute(&owner, Command::CreateArtifact { thread: secret.clone(), id: None, kind: "dashboard".into(), data: dashboard("Pay") })
            .await
            .unwrap();
        let art = lattice_core::ArtifactId::from_trusted(art.id.unwrap());

        // Ed, a member not listed: nothing of it, exactly as if it did not exist.
        let missing = ThreadId::from_trusted("th_nothing");
        assert!(matches!(log.thread(&ed, &secret).await, Err(Error::NotFound)));
        assert!(matches!(log.events(&ed, &Follow::Thread(secret.clone()), 0, 100).await, Err(Error::NotFound)));
        assert!(matches!(log.events(&ed, &Follow::Thread(missing), 0, 100).await, Err(Error::NotFound)));
        assert!(matches!(log.artifacts(&ed, &secret, None, None).await, Err(Error::NotFound)));
        assert!(matches!(log.artifact(&ed, &art, None).await, Err(Error::NotFound)));
        assert!(matches!(log.follow(&ed, Follow::Thread(secret.clone()), 0).await, Err(Error::NotFound)));
        let posted = log.execute(&ed, Command::PostMessage { thread: secret.clone(), text: "hi".into() }).await;
        assert!(matches!(posted, Err(Error::NotFound)), "{posted:?}");
        let listed: Vec<String> = log.threads(&ed, ws.as_str()).await.unwrap().into_iter().map(|t| t.id).collect();
        assert_eq!(listed, vec![open.to_string()]);
        let seen = log.events(&ed, &Follow::Workspace(ws.to_string()), 0, 1000).await.unwrap();
        assert!(seen.iter().all(|e| e.thread.as_deref() != Some(secret.as_str())), "the workspace's events leave the thread out");
        assert!(seen.iter().any(|e| e.thread.as_deref() == Some(open.as_str())));

        // Ann, listed as viewer: reads it, as a viewer.
        assert_eq!(log.thread(&ann, &secret).await.unwrap().role, Role::Viewer);
        assert!(log.artifact(&ann, &art, None).await.is_ok());
        assert_eq!(log.threads(&ann, ws.as_str()).await.unwrap().len(), 2);
        let posted = log.execute(&ann, Command::PostMessage { thread: secret.clone(), text: "hi".into() }).await;
        assert!(matches!(posted, Err(Error::Forbidden { .. })), "{posted:?}");
        // The workspace's admins and the tenant's admin read it as admins.
        for admin in [&ada, &tina, &owner] {
            assert_eq!(log.thread(admin, &secret).await.unwrap().role, Role::Admin);
        }
        // Only an admin lists people on a thread.
        let share = Command::ShareThread { thread: open.clone(), user: user("ed"), role: Role::Viewer };
        assert!(matches!(log.execute(&ann, share).await, Err(Error::Forbidden { .. })));
    }
}

both_backends! {
    async fn a_workspace_stream_leaves_out_what_its_reader_cannot_see(backend: Backend) {
        let log = service(backend).await;
        let owner = who("t1", "owner", TenantRole::Member);
        let (ws, open) = workspace_with_thread(&log, &owner).await;
        let added = log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user("ed"), role: Role::Editor }).await.unwrap();
        let ed = who("t1", "ed", TenantRole::Member);
        let after = added.seq;
        let mut stream = log.follow(&ed, Follow::Workspace(ws.to_string()), after).await.unwrap();
        stream.catch_up().await.unwrap();
        // Made while the stream is open: a restricted thread, a message in
        // it, then one in the open thread.
        let restricted = Command::CreateThread { workspace: ws.clone(), title: "Secret".into(), restricted: true };
        let secret = ThreadId::from_trusted(log.execute(&owner, restricted).await.unwrap().id.unwrap());
        log.execute(&owner, Command::PostMessage { thread: secret.clone(), text: "hidden".into() }).await.unwrap();
        log.execute(&owner, Command::PostMessage { thread: open.clone(), text: "shown".into() }).await.unwrap();
        let first = next(&mut stream).await;
        assert!(first.json.contains("shown"), "the first the stream hands on is the open thread's: {}", first.json);
        // Listed on it, ed is handed what happens there from then on.
        log.execute(&owner, Command::ShareThread { thread: secret.clone(), user: user("ed"), role: Role::Viewer }).await.unwrap();
        log.execute(&owner, Command::PostMessage { thread: secret.clone(), text: "now yours".into() }).await.unwrap();
        let shared = next(&mut stream).await;
        assert_eq!(shared.event_type, "thread_shared");
        assert!(next(&mut stream).await.json.contains("now yours"));
    }
}

both_backends! {
    async fn a_thread_shared_outside_the_workspace_reads_and_answers_only(backend: Backend) {
        let log = service(backend).await;
        let owner = who("t1", "owner", TenantRole::Member);
        let (ws, th) = workspace_with_thread(&log, &owner).await;
        let guest = who("t1", "guest", TenantRole::Member);
        // Not yet shared: nothing.
        assert!(matches!(log.thread(&guest, &th).await, Err(Error::NotFound)));
        // An outsider is never an editor of the thread.
        let as_editor = Command::ShareThread { thread: th.clone(), user: user("guest"), role: Role::Editor };
        assert!(matches!(log.execute(&owner, as_editor).await, Err(Error::ValidationFailed { .. })));
        log.execute(&owner, Command::ShareThread { thread: th.clone(), user: user("guest"), role: Role::Viewer }).await.unwrap();
        let found = log.thread(&guest, &th).await.unwrap();
        assert_eq!((found.role, found.thread.id.as_str()), (Role::Viewer, th.as_str()));
        assert!(log.events(&guest, &Follow::Thread(th.clone()), 0, 100).await.is_ok());
        assert_eq!(log.listed_threads(&guest).await.unwrap().len(), 1);
        assert_eq!(log.latest_thread(&guest).await.unwrap().map(|(t, _)| t), Some(th.clone()));
        // The workspace itself stays out of reach.
        assert!(matches!(log.threads(&guest, ws.as_str()).await, Err(Error::NotFound)));
        assert!(matches!(log.events(&guest, &Follow::Workspace(ws.to_string()), 0, 10).await, Err(Error::NotFound)));
        let posted = log.execute(&guest, Command::PostMessage { thread: th.clone(), text: "hi".into() }).await;
        assert!(matches!(posted, Err(Error::Forbidden { .. })), "{posted:?}");
        // Another tenant's admin gets nothing of it.
        let eve = who("t2", "guest", TenantRole::TenantAdmin);
        assert!(matches!(log.thread(&eve, &th).await, Err(Error::NotFound)));
    }
}

async fn next(stream: &mut lattice_log::LiveEvents) -> std::sync::Arc<lattice_log::Delivered> {
    loop {
        match tokio::time::timeout(Duration::from_secs(5), stream.next()).await.expect("the stream hands something on within 5 s") {
            Some(Live::Committed(d)) => return d,
            Some(Live::Passing(_)) => continue,
            Some(Live::AccessLost) => panic!("the stream lost access"),
            None => panic!("the stream ended"),
        }
    }
}
