//! Submissions (REQUIREMENTS.md U8): a person's values for a form (or an app), kept as
//! an artifact whose id is derived from the form, the policy and the
//! submitter, so a retried submit is one artifact and the log's refusal of
//! an existing id holds the policy.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::form::Submissions;

/// The `data` of a `submission` artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Submission {
    pub form_id: String,
    /// The form's version the values were filled against; it must be the head.
    pub form_version: u64,
    #[schemars(schema_with = "crate::wire::any_value")]
    pub values: Value,
    /// Made by the client once per submit, for forms that take many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// The files the values name, as the log refers to them (filled in by
    /// the write path; one sent must be the same).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<lattice_core::FileRef>,
}

/// What every submission's id starts with, and no other artifact's.
pub const SUBMISSION_PREFIX: &str = "sub_";

/// The id a submission must have: `sub_` and 32 hex digits of SHA-256 over
/// the form id (`once`), with the submitter (`per_person`) or the nonce
/// (`many`).
pub fn submission_id(form_id: &str, policy: Submissions, submitter: &str, nonce: Option<&str>) -> String {
    let mut h = Sha256::new();
    h.update(b"lattice.submission.v1\0");
    h.update(form_id.as_bytes());
    match policy {
        Submissions::Once => h.update(b"\0once"),
        Submissions::PerPerson => {
            h.update(b"\0per_person\0");
            h.update(submitter.as_bytes());
        }
        Submissions::Many => {
            h.update(b"\0many\0");
            h.update(nonce.unwrap_or_default().as_bytes());
        }
    }
    format!("{SUBMISSION_PREFIX}{}", &hex::encode(h.finalize())[..32])
}

impl Submission {
    /// A person's values for a form (or an app), as every client sends
    /// them: with the id the form's policy derives for `submitter`, and a
    /// nonce from `nonce` when the policy takes many (the write path checks
    /// the same derivation).
    pub fn to_form(
        form_id: &str,
        form_version: u64,
        policy: Submissions,
        submitter: &str,
        values: Value,
        nonce: impl FnOnce() -> String,
    ) -> (String, Self) {
        let submission = Self::new(form_id, form_version, policy, values, nonce);
        (submission_id(form_id, policy, submitter, submission.nonce.as_deref()), submission)
    }

    /// The same values without their id, for a client that lets the write
    /// path give it (the chat host: it then ships no hashing of its own).
    pub fn new(form_id: &str, form_version: u64, policy: Submissions, values: Value, nonce: impl FnOnce() -> String) -> Self {
        let nonce = (policy == Submissions::Many).then(nonce);
        Self { form_id: form_id.to_owned(), form_version, values, nonce, files: Vec::new() }
    }

    /// The artifact's data.
    pub fn data(&self) -> Value {
        serde_json::to_value(self).expect("a submission serializes")
    }
}

/// A nonce: 8 to 64 letters, digits, `-` or `_`.
pub fn nonce_ok(nonce: &str) -> bool {
    (8..=64).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_submission_to_a_form_carries_the_id_its_policy_derives() {
        let (id, sub) = Submission::to_form("art_f", 3, Submissions::Many, "alice", serde_json::json!({"a": 1}), || "nonce-0001".into());
        assert_eq!(id, submission_id("art_f", Submissions::Many, "bob", Some("nonce-0001")));
        assert_eq!(sub.data(), serde_json::json!({"form_id": "art_f", "form_version": 3, "values": {"a": 1}, "nonce": "nonce-0001"}));
        let (id, sub) = Submission::to_form("art_f", 3, Submissions::PerPerson, "alice", serde_json::json!({}), || unreachable!());
        assert_eq!(id, submission_id("art_f", Submissions::PerPerson, "alice", None));
        assert_eq!(sub.nonce, None);
    }

    #[test]
    fn the_policy_decides_what_the_id_depends_on() {
        let once_a = submission_id("f1", Submissions::Once, "alice", None);
        assert_eq!(once_a, submission_id("f1", Submissions::Once, "bob", None));
        assert_ne!(once_a, submission_id("f2", Submissions::Once, "alice", None));
        let per = submission_id("f1", Submissions::PerPerson, "alice", None);
        assert_ne!(per, submission_id("f1", Submissions::PerPerson, "bob", None));
        assert_ne!(per, once_a);
        let many = submission_id("f1", Submissions::Many, "alice", Some("nonce-0001"));
        assert_eq!(many, submission_id("f1", Submissions::Many, "bob", Some("nonce-0001")));
        assert_ne!(many, submission_id("f1", Submissions::Many, "alice", Some("nonce-0002")));
        assert!(once_a.starts_with("sub_") && once_a.len() == 36);
    }
}
