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

/// One line of the table.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub action: Action,
    /// The least role in the workspace (or on the thread) it needs.
    pub needs: Role,
    /// What it is, in the words a refusal uses.
    pub doing: &'static str,
}

/// The whole policy, one line per action.
pub const RULES: [Rule; 12] = [
    Rule { action: Action::Read, needs: Role::Viewer, doing: "reading" },
    Rule { action: Action::Submit, needs: Role::Respondent, doing: "submitting to a form or answering an ask_form" },
    Rule { action: Action::Post, needs: Role::Editor, doing: "posting a message" },
    Rule { action: Action::Author, needs: Role::Editor, doing: "creating or changing an artifact" },
    Rule { action: Action::Archive, needs: Role::Editor, doing: "archiving an artifact" },
    Rule { action: Action::TellContext, needs: Role::Editor, doing: "telling the agent what an app shows" },
    Rule { action: Action::StartThread, needs: Role::Editor, doing: "starting a thread" },
    Rule { action: Action::Run, needs: Role::Editor, doing: "starting or stopping an agent turn, answering its ask_user" },
    Rule { action: Action::PublishEvent, needs: Role::Editor, doing: "publishing an application event" },
    Rule { action: Action::ManageMembers, needs: Role::Admin, doing: "managing the members" },
    Rule { action: Action::ManageListings, needs: Role::Admin, doing: "managing who is listed on a thread" },
    Rule { action: Action::Administer, needs: Role::Admin, doing: "administering the workspace (its switch, its audit)" },
];

/// The least role `action` needs.
pub const fn needs(action: Action) -> Role {
    // A match, so that a new action cannot go without a line.
    match action {
        Action::Read => RULES[0].needs,
        Action::Submit => RULES[1].needs,
        Action::Post => RULES[2].needs,
        Action::Author => RULES[3].needs,
        Action::Archive => RULES[4].needs,
        Action::TellContext => RULES[5].needs,
        Action::StartThread => RULES[6].needs,
        Action::Run => RULES[7].needs,
        Action::PublishEvent => RULES[8].needs,
        Action::ManageMembers => RULES[9].needs,
        Action::ManageListings => RULES[10].needs,
        Action::Administer => RULES[11].needs,
    }
}

fn rule(action: Action) -> &'static Rule {
    RULES.iter().find(|r| r.action == action).expect("every action has a line")
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
    let rule = rule(action);
    Err(Error::forbidden(format!("{} needs the {} role here; you are {}", rule.doing, rule.needs.as_str(), role.as_str())))
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
    for rule in &RULES {
        out.push_str(&format!("| {} | {} |", rule.doing, rule.needs.as_str()));
        for role in roles {
            out.push_str(if allows(role, rule.action) { " yes |" } else { " no |" });
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
        for (i, rule) in RULES.iter().enumerate() {
            assert_eq!(needs(rule.action), rule.needs, "{:?}", rule.action);
            assert_eq!(RULES.iter().filter(|r| r.action == rule.action).count(), 1, "line {i}");
        }
    }

    #[test]
    fn a_refusal_names_what_was_needed() {
        assert!(decide(Role::Editor, Action::Post).is_ok());
        let e = decide(Role::Respondent, Action::Post).unwrap_err();
        assert_eq!(e, Error::forbidden("posting a message needs the editor role here; you are respondent"));
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
