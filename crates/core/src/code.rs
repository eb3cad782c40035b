//! The stable codes of refusals: each [`Error`](crate::Error) carries one,
//! so a client branches on `form_closed` or `quota_exceeded` instead of
//! parsing English (as Meilisearch's and Stripe's error codes let it).
//!
//! The table below is the one place a code is declared: its wire string,
//! the error type it comes with, and what it means. The docs
//! (`docs/ERRORS.md`, `/docs/errors`, the OpenAPI document) are generated
//! from it. A wire string, once published, is never renamed: a test pins
//! the whole list.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! codes {
    ($( $variant:ident = $wire:literal, $ty:ident, $doc:literal; )*) => {
        /// Why a request was refused, as a stable snake_case string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( #[doc = $doc] $variant, )*
        }

        impl Code {
            /// Every code, in the table's order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The wire string: snake_case, stable across versions.
            pub const fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $wire,)* }
            }

            /// The `type` of the errors that carry this code.
            pub const fn type_name(self) -> &'static str {
                match self { $(Code::$variant => stringify!($ty),)* }
            }

            /// When it is returned and what a client should do.
            pub const fn doc(self) -> &'static str {
                match self { $(Code::$variant => $doc,)* }
            }

            /// An error of this code, with empty fields: what the docs
            /// read a code's status from.
            pub fn example(self) -> crate::Error {
                match self { $(Code::$variant => example!($ty, Code::$variant),)* }
            }
        }
    };
}

/// An error of type `$ty` carrying `$code`, its other fields empty.
macro_rules! example {
    (Malformed, $code:expr) => {
        crate::Error::Malformed { code: $code, reason: String::new() }
    };
    (Unauthorized, $code:expr) => {
        crate::Error::Unauthorized { code: $code, reason: String::new() }
    };
    (Forbidden, $code:expr) => {
        crate::Error::Forbidden { code: $code, reason: String::new() }
    };
    (InvalidState, $code:expr) => {
        crate::Error::InvalidState { code: $code, reason: String::new(), answered_by: None }
    };
    (Conflict, $code:expr) => {
        crate::Error::Conflict { code: $code, reason: String::new(), expected: None, actual: None }
    };
    (TooLarge, $code:expr) => {
        crate::Error::TooLarge { code: $code, limit: 0, size: 0 }
    };
    (NotFound, $code:expr) => {
        crate::Error::NotFound
    };
    (NotEnabled, $code:expr) => {
        crate::Error::NotEnabled { key: String::new() }
    };
    (ValidationFailed, $code:expr) => {
        crate::Error::ValidationFailed { errors: Vec::new(), more: 0 }
    };
    (RateLimited, $code:expr) => {
        crate::Error::RateLimited { retry_after_secs: 0 }
    };
    (MisdirectedRequest, $code:expr) => {
        crate::Error::MisdirectedRequest { host: String::new() }
    };
    (MethodNotAllowed, $code:expr) => {
        crate::Error::MethodNotAllowed { method: String::new() }
    };
    (NotAcceptable, $code:expr) => {
        crate::Error::NotAcceptable { reason: String::new() }
    };
    (UnsupportedMediaType, $code:expr) => {
        crate::Error::UnsupportedMediaType { reason: String::new() }
    };
    (Unavailable, $code:expr) => {
        crate::Error::Unavailable { reason: String::new() }
    };
}

codes! {
    // Malformed (400)
    Malformed = "malformed", Malformed, "The request could not be read (a bad path or header, or a refusal a library made by itself): fix the request; sending it again unchanged fails again.";
    MalformedBody = "malformed_body", Malformed, "The body is missing, is not valid JSON, was cut off, or is not of the form the route reads: send a complete body of the documented shape.";
    MalformedQuery = "malformed_query", Malformed, "A query parameter or a header such as `Last-Event-ID` could not be read: fix its syntax.";
    InvalidRedirectUri = "invalid_redirect_uri", Malformed, "The `redirect_uri` of a sign-in is not an absolute URL or is too long: send the page's own absolute URL.";
    MalformedCallback = "malformed_callback", Malformed, "A sign-in provider's answer to the callback is too long or lacks its code or state: start the sign-in again.";

    // Unauthorized (401)
    Unauthorized = "unauthorized", Unauthorized, "The request was not authenticated, for no more specific reason: send a valid bearer token.";
    TokenMissing = "token_missing", Unauthorized, "No bearer token was sent: send `Authorization: Bearer <token>`.";
    TokenInvalid = "token_invalid", Unauthorized, "The token does not verify, is malformed, names an unknown key or issuer, or is of a kind this route does not take: get a new token of the right kind.";
    TokenExpired = "token_expired", Unauthorized, "The token or the sign-in behind it has expired: renew it (`POST /v1/auth/renew`) or sign in again.";
    TokenRevoked = "token_revoked", Unauthorized, "The token was ended (a sign-out, a revoked key, a role changed in the directory): sign in again or use another key.";
    PersonDeactivated = "person_deactivated", Unauthorized, "The person is deactivated in, or gone from, the tenant's directory: a tenant admin must reinstate them.";
    SignInFailed = "sign_in_failed", Unauthorized, "The sign-in with an identity provider failed (the provider refused, the code was used or expired, another tab or provider began it): start the sign-in again.";

    // Forbidden (403)
    Forbidden = "forbidden", Forbidden, "The caller may not do this, for no more specific reason: do not retry with the same credentials.";
    RoleTooLow = "role_too_low", Forbidden, "The caller's role here does not allow the action (the reason names the role needed): ask an admin for that role.";
    NotActingFor = "not_acting_for", Forbidden, "A connected server's question in a run is answered only by the person the run acts for (the reason names them): they must answer it.";
    AdminOnly = "admin_only", Forbidden, "Only a tenant, deployment or workspace admin may do this: ask one to.";
    AgentNotAllowed = "agent_not_allowed", Forbidden, "An agent, or an agent's key, may not do this: a person must.";
    AgentOnly = "agent_only", Forbidden, "Only an agent may do this (such as making an app): a person cannot.";
    KeyOutOfScope = "key_out_of_scope", Forbidden, "The API key is scoped to one workspace and the action reaches beyond it: use a key of the tenant.";
    ReservedForLattice = "reserved_for_lattice", Forbidden, "The action is lattice's own (its runner, bridge or sign-in writes it): no client may do it.";
    NotAuthor = "not_author", Forbidden, "Only the artifact's author or a workspace admin may do this.";
    EditNotAllowed = "edit_not_allowed", Forbidden, "This artifact, or this part of it, is never edited by this caller (a submission, a connected server's app, an app's HTML): do not retry.";
    CapabilityMissing = "capability_missing", Forbidden, "The tool is app-only: only the app's view may call it, with the capability its host was given.";
    CapabilityInvalid = "capability_invalid", Forbidden, "The app's capability does not verify, has expired, or was given to another caller or artifact: ask the host for a new one.";
    FileLinkInvalid = "file_link_invalid", Forbidden, "The file's link does not verify, has expired, or is for another file: ask for a new link (`POST /v1/files/{id}/link`).";
    ReadOnly = "read_only", Forbidden, "The caller may only read here, and the call would change something.";
    ModelOnlyTool = "model_only_tool", Forbidden, "The tool is for the model only: an app's view may not call it.";
    PersonMustConfirm = "person_must_confirm", Forbidden, "An app's call is confirmed by a person in lattice's chat, not by an agent or a key.";

    // NotFound (404)
    NotFound = "not_found", NotFound, "Nothing is there, or nothing the caller may see (other tenants' ids are refused the same way): check the id.";

    // MethodNotAllowed (405)
    MethodNotAllowed = "method_not_allowed", MethodNotAllowed, "The path is not served with this method: use one the `Allow` header names.";

    // NotAcceptable (406)
    NotAcceptable = "not_acceptable", NotAcceptable, "The answer cannot be written in any type the `Accept` header takes: accept the documented type.";

    // InvalidState (409)
    InvalidState = "invalid_state", InvalidState, "The target is in a state that refuses this, for no more specific reason: read it again before retrying.";
    FormClosed = "form_closed", InvalidState, "The form was closed, or its `closes_at` has passed: it takes no more submissions.";
    ArtifactArchived = "artifact_archived", InvalidState, "The artifact (form, app…) is archived: it takes no more changes or submissions.";
    AlreadyAnswered = "already_answered", InvalidState, "The request was answered already; `answered_by` says by whom: nothing is left to answer.";
    RunNotWaiting = "run_not_waiting", InvalidState, "The run is not waiting for an answer (it is running or ended): read the run again.";
    RunEnded = "run_ended", InvalidState, "The run has ended or moved on: there is nothing left to cancel or record.";
    RequestExpired = "request_expired", InvalidState, "The run's request expired before it was answered.";
    ConfirmationExpired = "confirmation_expired", InvalidState, "The app call's confirmation expired: the app must call again.";
    WrongHost = "wrong_host", InvalidState, "The app call's confirmation was put to the person through another host: answer it there.";
    SignInExpired = "sign_in_expired", InvalidState, "The sign-in was finished already or took too long: start it again.";
    NotASignInToken = "not_a_sign_in_token", InvalidState, "The token was not given by a sign-in (an operator's or a dev token), so it is not renewed or signed out this way.";
    AlreadyRevoked = "already_revoked", InvalidState, "The key or token was revoked already.";
    UploadIncomplete = "upload_incomplete", InvalidState, "The resumable upload does not hold all of its bytes yet: send the rest first.";
    FileErased = "file_erased", InvalidState, "The file's bytes were erased: its reference stays, its bytes are gone.";
    NotSealedYet = "not_sealed_yet", InvalidState, "Nothing, or not this envelope, is sealed in a checkpoint yet: ask again in a moment.";
    LastAdmin = "last_admin", InvalidState, "A workspace keeps at least one admin: make another member admin first.";
    ServerSignInFailed = "server_sign_in_failed", InvalidState, "Signing in to a connected MCP server failed: begin the connection again.";
    ModelUnknown = "model_unknown", InvalidState, "The run names a model this deployment does not configure.";

    // Conflict (409)
    Conflict = "conflict", Conflict, "The request conflicts with what is stored, for no more specific reason: read again and retry.";
    VersionConflict = "version_conflict", Conflict, "The version sent is not the head (`expected`/`actual`): read the head again and reapply the change.";
    FormChanged = "form_changed", Conflict, "The form changed after the submission was filled in (`expected`/`actual` versions): reload the form and submit again.";
    AlreadyExists = "already_exists", Conflict, "Something with this id exists already: pick another id, or read the one there.";
    UserNameTaken = "user_name_taken", Conflict, "Another person of the tenant has this user name.";
    AlreadyUsed = "already_used", Conflict, "The once-only key (an idempotency key, a confirmation) was used already: the first use stands.";
    CredentialLimit = "credential_limit", Conflict, "The tenant holds as many API keys or SCIM tokens as it may: revoke one first.";
    UploadOffset = "upload_offset", Conflict, "The part was not sent from where the upload's stored bytes end (`actual` says where): send from there.";
    ConcurrentWrite = "concurrent_write", Conflict, "Another request wrote the same thing at the same time: read again and retry.";

    // TooLarge (413)
    TooLarge = "too_large", TooLarge, "Something sent is over its limit (`size` and `limit` say by how much): send less.";
    BodyTooLarge = "body_too_large", TooLarge, "The request body is over the route's limit: send a smaller body.";
    FileTooLarge = "file_too_large", TooLarge, "The file is over the largest file this deployment takes.";
    QuotaExceeded = "quota_exceeded", TooLarge, "The tenant's file quota (bytes or count) does not hold this upload: erase files or ask for more room.";
    DocumentTooLarge = "document_too_large", TooLarge, "An artifact's data, schema, values, HTML or state is over its limit: make it smaller.";
    PromptTooLarge = "prompt_too_large", TooLarge, "The run's prompt is over its limit: shorten it.";

    // UnsupportedMediaType (415)
    UnsupportedMediaType = "unsupported_media_type", UnsupportedMediaType, "The body's `Content-Type` is not taken here: send the documented type.";

    // ValidationFailed (422)
    ValidationFailed = "validation_failed", ValidationFailed, "The request was read but fields are refused; `errors` names each path, keyword and reason: fix those fields.";

    // NotEnabled (423)
    NotEnabled = "not_enabled", NotEnabled, "The feature (`key`) is switched off for this tenant or workspace: an admin may switch it on.";

    // RateLimited (429)
    RateLimited = "rate_limited", RateLimited, "Too many requests from this caller: wait `retry_after_secs` (also `Retry-After`) and retry.";

    // MisdirectedRequest (421)
    MisdirectedRequest = "misdirected_request", MisdirectedRequest, "The `Host` is not one this deployment answers for: use the deployment's own address.";

    // Unavailable (503)
    Unavailable = "unavailable", Unavailable, "A dependency (the database, NATS, a provider) did not answer, or the request took too long: retry later; it is never the client's fault.";
}

impl Code {
    /// The code of a wire string, if it is one.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == s)
    }

    /// The code an error of `type_name` carries when nothing more
    /// specific is known (the code spelt like its type).
    pub fn default_of(type_name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.type_name() == type_name && c.is_default())
    }

    /// Whether this is its type's generic code.
    pub fn is_default(self) -> bool {
        matches!(
            self,
            Code::Malformed
                | Code::Unauthorized
                | Code::Forbidden
                | Code::NotFound
                | Code::MethodNotAllowed
                | Code::NotAcceptable
                | Code::InvalidState
                | Code::Conflict
                | Code::TooLarge
                | Code::UnsupportedMediaType
                | Code::ValidationFailed
                | Code::NotEnabled
                | Code::RateLimited
                | Code::MisdirectedRequest
                | Code::Unavailable
        )
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown error code `{s}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    /// A published code is never renamed or dropped: a change to this
    /// list is a change to the contract.
    #[test]
    fn the_codes_are_stable() {
        let list = Code::ALL.iter().map(|c| format!("{} {}", c.type_name(), c.as_str())).collect::<Vec<_>>().join("\n");
        expect![[r#"
            Malformed malformed
            Malformed malformed_body
            Malformed malformed_query
            Malformed invalid_redirect_uri
            Malformed malformed_callback
            Unauthorized unauthorized
            Unauthorized token_missing
            Unauthorized token_invalid
            Unauthorized token_expired
            Unauthorized token_revoked
            Unauthorized person_deactivated
            Unauthorized sign_in_failed
            Forbidden forbidden
            Forbidden role_too_low
            Forbidden not_acting_for
            Forbidden admin_only
            Forbidden agent_not_allowed
            Forbidden agent_only
            Forbidden key_out_of_scope
            Forbidden reserved_for_lattice
            Forbidden not_author
            Forbidden edit_not_allowed
            Forbidden capability_missing
            Forbidden capability_invalid
            Forbidden file_link_invalid
            Forbidden read_only
            Forbidden model_only_tool
            Forbidden person_must_confirm
            NotFound not_found
            MethodNotAllowed method_not_allowed
            NotAcceptable not_acceptable
            InvalidState invalid_state
            InvalidState form_closed
            InvalidState artifact_archived
            InvalidState already_answered
            InvalidState run_not_waiting
            InvalidState run_ended
            InvalidState request_expired
            InvalidState confirmation_expired
            InvalidState wrong_host
            InvalidState sign_in_expired
            InvalidState not_a_sign_in_token
            InvalidState already_revoked
            InvalidState upload_incomplete
            InvalidState file_erased
            InvalidState not_sealed_yet
            InvalidState last_admin
            InvalidState server_sign_in_failed
            InvalidState model_unknown
            Conflict conflict
            Conflict version_conflict
            Conflict form_changed
            Conflict already_exists
            Conflict user_name_taken
            Conflict already_used
            Conflict credential_limit
            Conflict upload_offset
            Conflict concurrent_write
            TooLarge too_large
            TooLarge body_too_large
            TooLarge file_too_large
            TooLarge quota_exceeded
            TooLarge document_too_large
            TooLarge prompt_too_large
            UnsupportedMediaType unsupported_media_type
            ValidationFailed validation_failed
            NotEnabled not_enabled
            RateLimited rate_limited
            MisdirectedRequest misdirected_request
            Unavailable unavailable"#]]
        .assert_eq(&list);
    }

    #[test]
    fn every_code_is_unique_snake_case_documented_and_of_its_type() {
        let mut seen = std::collections::BTreeSet::new();
        for &code in Code::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(!s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{s} is not snake_case");
            assert!(!s.starts_with('_') && !s.ends_with('_') && !s.contains("__"), "{s}");
            assert!(code.doc().ends_with('.') && code.doc().len() > 20, "{s} has no sentence of documentation");
            assert_eq!(code.example().type_name(), code.type_name(), "{s}");
            assert_eq!(code.example().code(), code, "{s}");
            assert_eq!(Code::parse(s), Some(code));
        }
    }

    #[test]
    fn every_type_has_one_default_code() {
        let types: std::collections::BTreeSet<_> = Code::ALL.iter().map(|c| c.type_name()).collect();
        assert_eq!(types.len(), 15);
        for t in types {
            let defaults = Code::ALL.iter().filter(|c| c.type_name() == t && c.is_default()).count();
            assert_eq!(defaults, 1, "{t}");
        }
    }
}
