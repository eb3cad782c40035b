//! Access taken away (docs/ACCESS.md, "Taking access away"): a member
//! removed, a role lowered, a listing taken off, a person signed out. Each
//! reaches the streams its person has open before anything after it: the
//! stream's last item is `AccessLost`, and every read after it refuses.

use std::time::Duration;

use lattice_core::clock::ManualClock;
use lattice_core::{Command, Error, Role, TenantRole, ThreadId, UserId};
use lattice_log::{Authenticated, Follow, Live, LiveEvents, LogService};
use lattice_testkit::{both_backends, principal, service, service_with_clock, who};

use crate::workspace_with_thread;

fn user(name: &str) -> UserId {
    UserId::parse("user", name).unwrap()
}

/// A person as a token makes them: with the time it was issued, so that a
/// sign-out can end it.
fn signed_in(log: &LogService, tenant: &str, name: &str, role: TenantRole) -> Authenticated {
    log.authenticator().verify(&log.authenticator().mint(&principal(tenant, name, role, false))).unwrap()
}

/// The stream's next item within a second, skipping what is not kept.
async fn within_a_second(stream: &mut LiveEvents) -> Option<Live> {
    loop {
        let next = tokio::time::timeout(Duration::from_secs(1), stream.next()).await.expect("the stream answers within 1 s");
        if !matches!(next, Some(Live::Passing(_))) {
            return next;
        }
    }
}

async fn says(stream: &mut LiveEvents, event_type: &str) {
    match within_a_second(stream).await {
        Some(Live::Committed(d)) => assert_eq!(d.event_type, event_type),
        other => panic!("expected {event_type}, got {other:?}"),
    }
}

async fn ends(stream: &mut LiveEvents) {
    assert!(matches!(within_a_second(stream).await, Some(Live::AccessLost)), "the stream says access is lost");
    assert!(stream.next().await.is_none(), "and nothing after it");
}

/// The last sequence number in the log as `who` reads the workspace: a
/// stream followed from here hands on only what comes next.
async fn last(log: &LogService, who: &Authenticated, ws: &lattice_core::WorkspaceId) -> i64 {
    log.events(who, &Follow::Workspace(ws.to_string()), 0, 10_000).await.unwrap().last().map_or(0, |e| e.seq)
}

async fn post(log: &LogService, who: &Authenticated, thread: &ThreadId, text: &str) {
    log.execute(who, Command::PostMessage { thread: thread.clone(), text: text.into() }).await.unwrap();
}

both_backends! {
    async fn a_removed_member_loses_every_stream_and_read(backend: Backend) {
        let log = service(backend).await;
        let owner = who("t1", "owner", TenantRole::Member);
        let (ws, th) = workspace_with_thread(&log, &owner).await;
        log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user("ann"), role: Role::Editor }).await.unwrap();
        let secret = Command::CreateThread { workspace: ws.clone(), title: "Pay".into(), restricted: true };
        let secret = ThreadId::from_trusted(log.execute(&owner, secret).await.unwrap().id.unwrap());
        log.execute(&owner, Command::ShareThread { thread: secret.clone(), user: user("ann"), role: Role::Viewer }).await.unwrap();
        let ann = who("t1", "ann", TenantRole::Member);
        let after = last(&log, &owner, &ws).await;
        let mut thread = log.follow(&ann, Follow::Thread(th.clone()), after).await.unwrap();
        let mut listed = log.follow(&ann, Follow::Thread(secret.clone()), after).await.unwrap();
        let mut workspace = log.follow(&ann, Follow::Workspace(ws.to_string()), after).await.unwrap();
        post(&log, &owner, &th, "before").await;
        says(&mut thread, "message_posted").await;
        says(&mut workspace, "message_posted").await;

        let removed = log.execute(&owner, Command::RemoveMember { workspace: ws.clone(), user: user("ann") }).await.unwrap();
        post(&log, &owner, &th, "after").await;
        post(&log, &owner, &secret, "after").await;
        for stream in [&mut thread, &mut listed, &mut workspace] {
            ends(stream).await;
        }
        assert!(matches!(log.thread(&ann, &th).await, Err(Error::NotFound)));
        assert!(matches!(log.thread(&ann, &secret).await, Err(Error::NotFound)), "her listing went with her");
        assert!(matches!(log.follow(&ann, Follow::Workspace(ws.to_string()), 0).await, Err(Error::NotFound)));
        // The log says who did it, to whom, and what they had.
        let events = log.events(&owner, &Follow::Workspace(ws.to_string()), removed.seq - 1, 10).await.unwrap();
        let e = events.iter().find(|e| e.seq == removed.seq).unwrap();
        assert_eq!(e.event.name(), "member_removed");
        assert_eq!(e.event.payload(), serde_json::json!({"workspace": ws.as_str(), "user": "ann", "role": "editor", "listings": 1}));
        assert_eq!(e.actor.name(), "owner");
        // Nobody is removed twice, and only an admin removes.
        let again = log.execute(&owner, Command::RemoveMember { workspace: ws.clone(), user: user("ann") }).await;
        assert!(matches!(again, Err(Error::ValidationFailed { .. })), "{again:?}");
        log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user("ed"), role: Role::Editor }).await.unwrap();
        let ed = who("t1", "ed", TenantRole::Member);
        let by_editor = log.execute(&ed, Command::RemoveMember { workspace: ws.clone(), user: user("owner") }).await;
        assert!(matches!(by_editor, Err(Error::Forbidden { .. })), "{by_editor:?}");
    }
}

both_backends! {
    async fn a_lowered_role_reaches_the_workspace_stream_at_once(backend: Backend) {
        let log = service(backend).await;
        let owner = who("t1", "owner", TenantRole::Member);
        let (ws, open) = workspace_with_thread(&log, &owner).await;
        log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user("ada"), role: Role::Admin }).await.unwrap();
        let secret = Command::CreateThread { workspace: ws.clone(), title: "Pay".into(), restricted: true };
        let secret = ThreadId::from_trusted(log.execute(&owner, secret).await.unwrap().id.unwrap());
        let ada = who("t1", "ada", TenantRole::Member);
        let mut workspace = log.follow(&ada, Follow::Workspace(ws.to_string()), last(&log, &owner, &ws).await).await.unwrap();
        let mut restricted = log.follow(&ada, Follow::Thread(secret.clone()), last(&log, &owner, &ws).await).await.unwrap();
        // As an admin she reads the restricted thread live (and the
        // stream remembers that she does).
        post(&log, &owner, &secret, "as admin").await;
        says(&mut workspace, "message_posted").await;
        says(&mut restricted, "message_posted").await;

        log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user("ada"), role: Role::Viewer }).await.unwrap();
        ends(&mut restricted).await;
        post(&log, &owner, &secret, "not for viewers").await;
        post(&log, &owner, &open, "for everyone").await;
        // The workspace stream goes on, without the restricted thread.
        says(&mut workspace, "member_added").await;
        match within_a_second(&mut workspace).await {
            Some(Live::Committed(d)) => assert_eq!(d.thread.as_deref(), Some(open.as_str()), "the restricted thread's message is left out"),
            other => panic!("{other:?}"),
        }
    }
}

both_backends! {
    async fn a_listing_taken_off_ends_the_thread_stream(backend: Backend) {
        let log = service(backend).await;
        let owner = who("t1", "owner", TenantRole::Member);
        let (ws, th) = workspace_with_thread(&log, &owner).await;
        // An outsider the thread was shared with, read-only.
        log.execute(&owner, Command::ShareThread { thread: th.clone(), user: user("vic"), role: Role::Viewer }).await.unwrap();
        let vic = who("t1", "vic", TenantRole::Member);
        let mut stream = log.follow(&vic, Follow::Thread(th.clone()), last(&log, &owner, &ws).await).await.unwrap();
        post(&log, &owner, &th, "shared").await;
        says(&mut stream, "message_posted").await;
        let off = log.execute(&owner, Command::UnshareThread { thread: th.clone(), user: user("vic") }).await.unwrap();
        post(&log, &owner, &th, "private again").await;
        ends(&mut stream).await;
        assert!(matches!(log.thread(&vic, &th).await, Err(Error::NotFound)));
        let e = log.events(&owner, &Follow::Thread(th.clone()), off.seq - 1, 1).await.unwrap().remove(0);
        assert_eq!(e.event.payload(), serde_json::json!({"thread": th.as_str(), "user": "vic", "role": "viewer"}));
        let again = log.execute(&owner, Command::UnshareThread { thread: th.clone(), user: user("vic") }).await;
        assert!(matches!(again, Err(Error::ValidationFailed { .. })), "{again:?}");
    }
}

both_backends! {
    async fn signing_out_ends_every_token_issued_before_and_its_streams(backend: Backend) {
        let clock = ManualClock::new();
        let log = service_with_clock(backend, clock.clone()).await;
        let owner = who("t1", "owner", TenantRole::Member);
        let (ws, th) = workspace_with_thread(&log, &owner).await;
        log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user("ann"), role: Role::Editor }).await.unwrap();
        let ann = signed_in(&log, "t1", "ann", TenantRole::Member);
        let token = log.authenticator().mint(&ann.principal().clone());
        let header = format!("Bearer {token}");
        assert!(log.authenticate(Some(header.as_bytes())).await.is_ok());
        let mut stream = log.follow(&ann, Follow::Thread(th.clone()), last(&log, &owner, &ws).await).await.unwrap();

        // Another member may not sign her out; a tenant admin of another
        // tenant names a person of its own tenant, not hers.
        let ed = signed_in(&log, "t1", "ed", TenantRole::Member);
        let refused = log.execute(&ed, Command::EndSessions { user: user("ann"), session: None }).await;
        assert!(matches!(refused, Err(Error::Forbidden { .. })), "{refused:?}");
        let other = signed_in(&log, "t2", "root", TenantRole::TenantAdmin);
        log.execute(&other, Command::EndSessions { user: user("ann"), session: None }).await.unwrap();
        assert!(log.authenticate(Some(header.as_bytes())).await.is_ok(), "t2's ann is another person");

        let admin = signed_in(&log, "t1", "root", TenantRole::TenantAdmin);
        log.execute(&admin, Command::EndSessions { user: user("ann"), session: None }).await.unwrap();
        let refused = log.authenticate(Some(header.as_bytes())).await;
        assert!(matches!(refused, Err(Error::Unauthorized { ref reason, .. }) if reason.contains("sign-out")), "{refused:?}");
        ends(&mut stream).await;
        // A token issued afterwards, by the log's clock, is hers again.
        clock.advance(Duration::from_millis(2));
        let fresh = format!("Bearer {}", log.authenticator().mint(ann.principal()));
        let again = log.authenticate(Some(fresh.as_bytes())).await.unwrap();
        assert!(log.follow(&again, Follow::Thread(th.clone()), 0).await.is_ok());
        // She signs herself out too.
        log.execute(&again, Command::EndSessions { user: user("ann"), session: None }).await.unwrap();
        assert!(log.authenticate(Some(fresh.as_bytes())).await.is_err());
    }
}

/// What `who` posted in `thread`, by its text, from the log.
async fn posted_by(log: &LogService, reader: &Authenticated, thread: &ThreadId, who: &str) -> Vec<String> {
    let page = log.events(reader, &Follow::Thread(thread.clone()), 0, 10_000).await.unwrap();
    page.iter()
        .filter(|e| e.event.name() == "message_posted" && e.actor.name() == who)
        .map(|e| e.event.payload()["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

both_backends! {
    /// A message is authorized from the writer's standing as their last
    /// message there found it, and its commit writes only while that
    /// standing holds: each change of access below reaches the very next
    /// message of someone who wrote before it, a refusal and a grant alike.
    async fn a_change_of_access_reaches_the_next_message_of_someone_who_wrote_before(backend: Backend) {
        let log = service(backend).await;
        let owner = who("t1", "owner", TenantRole::Member);
        let (ws, open) = workspace_with_thread(&log, &owner).await;
        log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user("ann"), role: Role::Editor }).await.unwrap();
        let secret = Command::CreateThread { workspace: ws.clone(), title: "Pay".into(), restricted: true };
        let secret = ThreadId::from_trusted(log.execute(&owner, secret).await.unwrap().id.unwrap());
        log.execute(&owner, Command::ShareThread { thread: secret.clone(), user: user("ann"), role: Role::Editor }).await.unwrap();
        let ann = who("t1", "ann", TenantRole::Member);
        let say = |thread: &ThreadId, text: &str| log.execute(&ann, Command::PostMessage { thread: thread.clone(), text: text.into() });

        say(&open, "one").await.unwrap();
        say(&open, "two").await.unwrap();
        say(&secret, "listed").await.unwrap();

        // Lowered to viewer: refused.
        log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user("ann"), role: Role::Viewer }).await.unwrap();
        let lowered = say(&open, "as a viewer").await;
        assert!(matches!(lowered, Err(Error::Forbidden { .. })), "{lowered:?}");
        // Raised again: the refusal is not remembered.
        log.execute(&owner, Command::AddMember { workspace: ws.clone(), user: user("ann"), role: Role::Editor }).await.unwrap();
        say(&open, "three").await.unwrap();
        // Her listing on the restricted thread taken off: it is gone for her.
        log.execute(&owner, Command::UnshareThread { thread: secret.clone(), user: user("ann") }).await.unwrap();
        let unlisted = say(&secret, "after the listing").await;
        assert!(matches!(unlisted, Err(Error::NotFound)), "{unlisted:?}");
        // Removed: nothing of the workspace is hers to write in.
        log.execute(&owner, Command::RemoveMember { workspace: ws.clone(), user: user("ann") }).await.unwrap();
        let removed = say(&open, "after removal").await;
        assert!(matches!(removed, Err(Error::NotFound)), "{removed:?}");

        assert_eq!(posted_by(&log, &owner, &open, "ann").await, ["one", "two", "three"]);
        assert_eq!(posted_by(&log, &owner, &secret, "ann").await, ["listed"]);
    }
}
