//! Writers of workspaces, their members and their threads.

use lattice_core::event::{Event, MemberAdded, MemberRemoved, ThreadCreated, ThreadShared, ThreadUnshared, WorkspaceCreated};
use lattice_core::{Error, Role, ThreadId, WorkspaceId};
use sqlx::AnyConnection;

use super::db::{budget_turn, db_error};
use super::writing::Writing;

/// A workspace, its creator its first admin.
pub(crate) async fn create_workspace(conn: &mut AnyConnection, w: &Writing<'_>, id: &WorkspaceId, name: &str) -> Result<Event, Error> {
    sqlx::query("INSERT INTO workspaces (id, tenant, name, created_by, created_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(id.as_str())
        .bind(w.tenant)
        .bind(name)
        .bind(w.user)
        .bind(w.at)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    set_role(conn, ON_WORKSPACE, id.as_str(), w.user, Role::Admin).await?;
    Ok(WorkspaceCreated { workspace: id.to_string(), name: name.to_owned(), admin: w.user.to_owned() }.into())
}

/// A member of the writing's workspace, or a new role for one.
pub(crate) async fn add_member(conn: &mut AnyConnection, w: &Writing<'_>, user: &str, role: Role) -> Result<Event, Error> {
    let workspace = w.workspace.expect("a member is added to a workspace");
    budget_turn(conn, &format!("admins:{workspace}")).await?;
    set_role(conn, ON_WORKSPACE, workspace, user, role).await?;
    keeps_an_admin(conn, workspace).await?;
    Ok(MemberAdded { workspace: workspace.to_owned(), user: user.to_owned(), role }.into())
}

/// A member taken out of the writing's workspace, and off every thread of
/// it they were listed on: leaving a workspace leaves its threads too.
pub(crate) async fn remove_member(conn: &mut AnyConnection, w: &Writing<'_>, user: &str) -> Result<Event, Error> {
    let workspace = w.workspace.expect("a member is removed from a workspace");
    budget_turn(conn, &format!("admins:{workspace}")).await?;
    let role = take_role(conn, "DELETE FROM members WHERE workspace = $1 AND user_id = $2 RETURNING role", workspace, user).await?;
    keeps_an_admin(conn, workspace).await?;
    let listings = sqlx::query("DELETE FROM thread_members WHERE user_id = $1 AND thread IN (SELECT id FROM threads WHERE workspace = $2)")
        .bind(user)
        .bind(workspace)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?
        .rows_affected();
    Ok(MemberRemoved { workspace: workspace.to_owned(), user: user.to_owned(), role, listings }.into())
}

/// A workspace lives with at least one person as its admin: the change
/// that would leave it none (its last admin leaving, removed, or given
/// another role) is refused, and its transaction with it. Decided in the
/// workspace's turn (`budget_turn`): two admins demoting each other at
/// once do not both succeed.
async fn keeps_an_admin(conn: &mut AnyConnection, workspace: &str) -> Result<(), Error> {
    let admins: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM members WHERE workspace = $1 AND role = 'admin' AND substr(user_id, 1, 4) <> 'key_'")
        .bind(workspace)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)?;
    if admins == 0 {
        return Err(Error::invalid_state(
            lattice_core::Code::LastAdmin,
            "a workspace keeps at least one admin: its last admin cannot leave, be removed or be given another role; make another member admin first",
        ));
    }
    Ok(())
}

/// A person's listing taken off the writing's thread.
pub(crate) async fn unshare_thread(conn: &mut AnyConnection, w: &Writing<'_>, user: &str) -> Result<Event, Error> {
    let thread = w.thread.expect("a thread is unshared");
    let role = take_role(conn, "DELETE FROM thread_members WHERE thread = $1 AND user_id = $2 RETURNING role", thread, user).await?;
    Ok(ThreadUnshared { thread: thread.to_owned(), user: user.to_owned(), role }.into())
}

/// Deletes a person's role on a workspace or thread, answering the role
/// they had; `NotFound` when they had none (nothing is written then).
async fn take_role(conn: &mut AnyConnection, delete: &'static str, on: &str, user: &str) -> Result<Role, Error> {
    let row = sqlx::query(delete).bind(on).bind(user).fetch_optional(&mut *conn).await.map_err(db_error)?;
    let Some(row) = row else {
        return Err(Error::field("user", "enum", format!("{user} holds no role here")));
    };
    let role: String = sqlx::Row::try_get(&row, 0).map_err(db_error)?;
    Role::parse(&role).ok_or_else(|| Error::unavailable(format!("stored role {role:?} is unknown")))
}

/// A thread in the writing's workspace.
pub(crate) async fn create_thread(conn: &mut AnyConnection, w: &Writing<'_>, id: &ThreadId, title: &str, restricted: bool) -> Result<Event, Error> {
    let workspace = w.workspace.expect("a thread is started in a workspace");
    sqlx::query("INSERT INTO threads (id, workspace, title, created_by, created_at, restricted) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(id.as_str())
        .bind(workspace)
        .bind(title)
        .bind(w.user)
        .bind(w.at)
        .bind(i64::from(restricted))
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    if restricted {
        // Its starter sees it, whatever becomes of the starter's role.
        set_role(conn, ON_THREAD, id.as_str(), w.user, Role::Editor).await?;
    }
    Ok(ThreadCreated { thread: id.to_string(), title: title.to_owned(), restricted }.into())
}

/// A person listed on the writing's thread, or a new role for one.
pub(crate) async fn share_thread(conn: &mut AnyConnection, w: &Writing<'_>, user: &str, role: Role) -> Result<Event, Error> {
    let thread = w.thread.expect("a thread is shared");
    set_role(conn, ON_THREAD, thread, user, role).await?;
    Ok(ThreadShared { thread: thread.to_owned(), user: user.to_owned(), role }.into())
}

/// A person's role on a workspace (`members`) or a thread
/// (`thread_members`): listed, or the role they had replaced.
const ON_WORKSPACE: &str = "INSERT INTO members (workspace, user_id, role) VALUES ($1, $2, $3) \
     ON CONFLICT (workspace, user_id) DO UPDATE SET role = excluded.role";
const ON_THREAD: &str = "INSERT INTO thread_members (thread, user_id, role) VALUES ($1, $2, $3) \
     ON CONFLICT (thread, user_id) DO UPDATE SET role = excluded.role";

async fn set_role(conn: &mut AnyConnection, upsert: &'static str, on: &str, user: &str, role: Role) -> Result<(), Error> {
    sqlx::query(upsert).bind(on).bind(user).bind(role.as_str()).execute(&mut *conn).await.map_err(db_error)?;
    Ok(())
}
