//! What a call of a connected server came to when it did not come back
//! with a result: said to the model as the tool's error, and to a person
//! as the app call's refusal.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// No answer within the bound.
    Timeout(Duration),
    /// The answer was larger than the server may send.
    TooLarge { limit: usize },
    /// The server cannot be reached (or may not be: an internal address).
    Unreachable(String),
    /// The session ended under the call: the server went away, or its
    /// answer passed the size it may send (the transport cuts such an
    /// answer off by ending the session, and says no more).
    Closed { limit: usize },
    /// The server answered with an error of its own.
    Server(String),
    /// The server answered something that is not what it should be.
    Malformed(String),
    /// The arguments are not an object.
    Arguments,
    /// As many sessions of the server run as it may hold.
    Busy(String),
    /// The person has not signed in to the server (or their sign-in no
    /// longer holds, or grants less than the call needs: `scope` is what
    /// the server asked for then): they must, before it is called for them.
    NeedsSignIn { server: String, scope: Option<String> },
    /// A sign-in to the server failed (its authorization server refused,
    /// or could not be discovered).
    SignIn(String),
}

impl CallError {
    /// What rmcp's error says, in words that carry none of the server's
    /// bytes but its own error message (which the model reads fenced, as
    /// any answer of a server): the transport's detail goes to the
    /// service's log, for the operator.
    pub(crate) fn from_service(e: &rmcp::service::ServiceError) -> Self {
        use rmcp::service::ServiceError;
        match e {
            ServiceError::McpError(e) => Self::Server(e.message.chars().take(1024).collect()),
            ServiceError::TransportClosed => Self::Closed { limit: 0 },
            ServiceError::Timeout { timeout } => Self::Timeout(*timeout),
            ServiceError::UnexpectedResponse => Self::Malformed("an answer of another kind".into()),
            ServiceError::TransportSend(detail) => {
                if let Some(needs) = Self::unauthorized(detail) {
                    return needs;
                }
                tracing::info!(error = %detail, "a connected server's transport failed");
                // rmcp says an unreadable answer only in its message.
                if detail.to_string().contains("parse") {
                    Self::Malformed("an answer that is not JSON-RPC".into())
                } else {
                    Self::Unreachable("its transport failed (the service's log says how)".into())
                }
            }
            other => {
                tracing::info!(error = %other, "a connected server's request failed");
                Self::Unreachable("the request failed (the service's log says how)".into())
            }
        }
    }
}

impl CallError {
    /// The person's sign-in is missing, no longer holds, or grants too
    /// little (the server answered 401, or 403 `insufficient_scope` with
    /// the scope it wants): `NeedsSignIn`, its server named by the caller.
    pub(crate) fn unauthorized(e: &(dyn std::error::Error + 'static)) -> Option<Self> {
        use rmcp::service::ClientInitializeError;
        use rmcp::transport::auth::AuthError;
        use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
        let mut at: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(error) = at {
            // A failed handshake holds the transport's error as a field, not
            // as its source: a 401 or 403 to `initialize` is found only there.
            match error.downcast_ref::<ClientInitializeError>() {
                Some(ClientInitializeError::TransportError { error, .. }) => {
                    at = Some(error);
                    continue;
                }
                Some(ClientInitializeError::LegacyFallbackFailed { fallback, .. }) => {
                    at = Some(fallback.as_ref());
                    continue;
                }
                _ => {}
            }
            if let Some(scope) = error.downcast_ref::<InsufficientScopeError>() {
                return Some(Self::NeedsSignIn { server: String::new(), scope: scope.get_required_scope().map(str::to_owned) });
            }
            if let Some(AuthError::InsufficientScope { required_scope, .. }) = error.downcast_ref::<AuthError>() {
                return Some(Self::NeedsSignIn { server: String::new(), scope: Some(required_scope.clone()) });
            }
            if error.downcast_ref::<AuthRequiredError>().is_some()
                || matches!(
                    error.downcast_ref::<AuthError>(),
                    Some(AuthError::AuthorizationRequired | AuthError::TokenExpired | AuthError::TokenRefreshFailed(_))
                )
            {
                return Some(Self::NeedsSignIn { server: String::new(), scope: None });
            }
            at = error.source();
        }
        None
    }

    /// The same error, a sign-in it asks for naming `server`.
    pub(crate) fn of_server(self, server: &str) -> Self {
        match self {
            Self::NeedsSignIn { scope, .. } => Self::NeedsSignIn { server: server.to_owned(), scope },
            other => other,
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Timeout(after) => write!(f, "the server did not answer within {} s", after.as_secs_f64()),
            Self::TooLarge { limit } => write!(f, "the server's answer is larger than the {limit} bytes it may send"),
            Self::Unreachable(why) => write!(f, "the server cannot be reached: {why}"),
            Self::Closed { limit } => {
                write!(f, "the connection to the server closed under the call (it went away, or its answer passed the {limit} bytes it may send)")
            }
            Self::Server(why) => write!(f, "the server refused: {why}"),
            Self::Malformed(why) => write!(f, "the server's answer is malformed: {why}"),
            Self::Arguments => f.write_str("a tool's arguments are an object"),
            Self::Busy(why) => write!(f, "the server is busy: {why}; try again later"),
            Self::NeedsSignIn { server, .. } => write!(f, "the person must connect {server} (sign in to it with their own account) first"),
            Self::SignIn(why) => write!(f, "signing in to the server failed: {why}"),
        }
    }
}

impl std::error::Error for CallError {}
