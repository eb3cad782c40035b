//! What every writer stamps on its rows.

/// Who writes, where and when: what every writer stamps on its rows.
pub(crate) struct Writing<'a> {
    pub tenant: &'a str,
    pub workspace: Option<&'a str>,
    pub thread: Option<&'a str>,
    /// The principal's user: who starts, creates, answers.
    pub user: &'a str,
    /// The actor's name: an artifact version's author.
    pub author: &'a str,
    /// Whether the actor is an agent.
    pub agent: bool,
    pub role: lattice_core::TenantRole,
    /// The run the principal acts in, if any.
    pub run: Option<&'a str>,
    pub at: i64,
}
