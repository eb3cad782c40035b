//! How a server's tool is named where the agent sees it: `<server>__<tool>`.
//! A server name holds no underscore (`ServerKey::check_name`), so the
//! first `__` splits the name one way only, and none of lattice's own tools
//! has one: a server cannot offer a tool that passes for lattice's.

/// What separates the server from its tool.
pub const SEPARATOR: &str = "__";
/// The longest tool name models take (OpenAI's limit).
pub const OFFERED_MAX: usize = 64;

/// The name the agent sees, if the server's tool name can be offered: a
/// name of letters, digits, `_` and `-` that fits [`OFFERED_MAX`].
pub fn offered(server: &str, tool: &str) -> Option<String> {
    let name = format!("{server}{SEPARATOR}{tool}");
    let fits = !tool.is_empty() && name.len() <= OFFERED_MAX;
    (fits && tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')).then_some(name)
}

/// The server and its tool, if `name` is one offered for a server
/// (lattice_core's rule: the write path and the transcript read it too).
pub fn split(name: &str) -> Option<(&str, &str)> {
    lattice_core::ServerKey::split_tool(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_go_there_and_back() {
        assert_eq!(offered("budget", "get_budget_data").as_deref(), Some("budget__get_budget_data"));
        assert_eq!(split("budget__get_budget_data"), Some(("budget", "get_budget_data")));
        assert_eq!(split("budget__a__b"), Some(("budget", "a__b")));
        assert_eq!(split("ask_form"), None, "lattice's own tools are no server's");
        assert_eq!(split("Budget__x"), None);
        assert_eq!(offered("b", "has space"), None);
        assert_eq!(offered("b", "x".repeat(61).as_str()).map(|n| n.len()), Some(64));
        assert_eq!(offered("b", "x".repeat(62).as_str()), None);
        assert_eq!(offered("b", ""), None);
    }
}
