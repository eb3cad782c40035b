//! Who may do what (docs/ACCESS.md): one table of actions and the least
//! role each needs, and the rule of who sees a thread. The log service
//! decides every command and read by it; the MCP exporter, AG-UI and the
//! chat host reach the log through the same commands and reads, and the
//! chat asks [`allows`] before it offers anything, so a surface can never
//! allow what another refuses. Plain code over a policy language: the
//! table is the whole rule, a decision is one comparison, and the docs'
//! table is generated from it (a test fails when they differ).

use crate::Error;
use crate::role::{Role, TenantRole};

/// What a caller does in a workspace or a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Reads a thread, its events, artifacts and runs; follows it live.
    Read,
    /// Sends a form's values (a submission), answers an ask_form.
    Submit,
    /// Posts a message.
    Post,
    /// Creates an artifact other than a submission, or edits one.
    Author,
    /// Archives an artifact (its author, or an admin: see [`archives`]).
    Archive,
    /// Tells the agent what an app shows.
    TellContext,
    /// Starts a thread in a workspace.
    StartThread,
    /// Starts an agent turn, answers its ask_user (a question in the
    /// chat: taking part in the turn), cancels a run.
    Run,
    /// Publishes an application event on the workspace's subjects.
    PublishEvent,
    /// Adds, removes and lists members, and changes their roles.
    ManageMembers,
    /// Lists people on a thread, takes them off it.
    ManageListings,
    /// Sets the workspace's switch, reads the workspace's audit.
    Administer,
}

/// The least role in the workspace (or on the thread) `action` needs,
/// and what it is in the words a refusal uses: the whole table. A match,
/// so that a new action cannot go without its line.
pub const fn rule(action: Action) -> (Role, &'static str) {
    match action {
        Action::Read => (Role::Viewer, "reading"),
        Action::Submit => (Role::Respondent, "submitting to a form or answering an ask_form"),
        Action::Post => (Role::Editor, "posting a message"),
        Action::Author => (Role::Editor, "creating or changing an artifact"),
        Action::Archive => (Role::Editor, "archiving an artifact"),
        Action::TellContext => (Role::Editor, "telling the agent what an app shows"),
        Action::StartThread => (Role::Editor, "starting a thread"),
        Action::Run => (Role::Editor, "starting or stopping an agent turn, answering its ask_user or a server call put to a person"),
        Action::PublishEvent => (Role::Editor, "publishing an application event"),
        Action::ManageMembers => (Role::Admin, "managing the members"),
        Action::ManageListings => (Role::Admin, "managing who is listed on a thread"),
        Action::Administer => (Role::Admin, "administering the workspace (its switch, its audit)"),
    }
}

/// Every action, in the order the docs' table lists them.
pub const ACTIONS: [Action; 12] = [
    Action::Read,
    Action::Submit,
    Action::Post,
    Action::Author,
    Action::Archive,
    Action::TellContext,
    Action::StartThread,
    Action::Run,
    Action::PublishEvent,
    Action::ManageMembers,
    Action::ManageListings,
    Action::Administer,
];

/// The least role `action` needs.
pub const fn needs(action: Action) -> Role {
    rule(action).0
}

/// Whether `role` may do `action`.
pub fn allows(role: Role, action: Action) -> bool {
    role >= needs(action)
}

/// [`allows`], as a refusal that says what was needed.
pub fn decide(role: Role, action: Action) -> Result<(), Error> {
    if allows(role, action) {
        return Ok(());
    }
    let (needed, doing) = rule(action);
    Err(Error::forbidden(crate::Code::RoleTooLow, format!("{doing} needs the {} role here; you are {}", needed.as_str(), role.as_str())))
}

/// Whether a caller of `role` archives an artifact `authored` by them or not:
/// its author, or an admin.
pub fn archives(role: Role, authored: bool) -> bool {
    allows(role, Action::Archive) && (authored || role == Role::Admin)
}

/// Who sees a thread, and as what: a tenant admin and the workspace's
/// admins see every thread as admins; a restricted thread only the people
/// listed on it, in the role they are listed with; any other thread the
/// workspace's members in their role, raised by a listing, and the people
/// outside the workspace it is shared with. `None`: the thread is as
/// missing to them.
pub fn thread_role(tenant_role: TenantRole, member: Option<Role>, restricted: bool, listed: Option<Role>) -> Option<Role> {
    if tenant_role == TenantRole::TenantAdmin || member == Some(Role::Admin) {
        return Some(Role::Admin);
    }
    if restricted {
        return listed;
    }
    match (member, listed) {
        (Some(m), Some(l)) => Some(m.max(l)),
        (m, l) => m.or(l),
    }
}

/// The table as docs/ACCESS.md shows it.
pub fn markdown_table() -> String {
    let roles = [Role::Viewer, Role::Respondent, Role::Editor, Role::Admin];
    let mut out = String::from("| action | needs |");
    for role in roles {
        out.push_str(&format!(" {} |", role.as_str()));
    }
    out.push_str("\n|---|---|---|---|---|---|\n");
    for action in ACTIONS {
        let (needed, doing) = rule(action);
        out.push_str(&format!("| {doing} | {} |", needed.as_str()));
        for role in roles {
            out.push_str(if allows(role, action) { " yes |" } else { " no |" });
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_has_one_line_and_needs_reads_it() {
        for (i, action) in ACTIONS.iter().enumerate() {
            assert_eq!(needs(*action), rule(*action).0, "{action:?}");
            assert_eq!(ACTIONS.iter().filter(|a| *a == action).count(), 1, "line {i}");
        }
    }

    #[test]
    fn a_refusal_names_what_was_needed() {
        assert!(decide(Role::Editor, Action::Post).is_ok());
        let e = decide(Role::Respondent, Action::Post).unwrap_err();
        assert_eq!(e, Error::forbidden(crate::Code::RoleTooLow, "posting a message needs the editor role here; you are respondent"));
        assert!(decide(Role::Respondent, Action::Submit).is_ok());
        assert!(decide(Role::Viewer, Action::Submit).is_err());
        assert!(archives(Role::Editor, true) && !archives(Role::Editor, false) && archives(Role::Admin, false) && !archives(Role::Respondent, true));
    }

    #[test]
    fn the_docs_show_the_table_as_it_is() {
        let docs = include_str!("../../../docs/ACCESS.md");
        assert!(docs.contains(&markdown_table()), "docs/ACCESS.md's table differs from the policy; it should read:\n{}", markdown_table());
    }

    #[test]
    fn who_sees_a_thread() {
        use Role::*;
        assert_eq!(thread_role(TenantRole::TenantAdmin, None, true, None), Some(Admin));
        assert_eq!(thread_role(TenantRole::Member, Some(Admin), true, None), Some(Admin));
        assert_eq!(thread_role(TenantRole::Member, Some(Editor), true, None), None);
        assert_eq!(thread_role(TenantRole::Member, Some(Editor), true, Some(Viewer)), Some(Viewer));
        assert_eq!(thread_role(TenantRole::Member, Some(Viewer), false, Some(Respondent)), Some(Respondent));
        assert_eq!(thread_role(TenantRole::Member, Some(Editor), false, Some(Viewer)), Some(Editor));
        assert_eq!(thread_role(TenantRole::Member, None, false, Some(Viewer)), Some(Viewer));
        assert_eq!(thread_role(TenantRole::Member, None, false, None), None);
    }
}
