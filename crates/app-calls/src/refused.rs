//! Refused calls, recorded in one place. Every step of a call or of a
//! person's answer that refuses hands back a [`Refused`]: the decision its
//! row records, what is known of the call, and the answer the caller gets.
//! [`AppCalls::refuse`] alone writes the row, then answers exactly what the
//! step answered (the same error, the same status and body).
//!
//! A refusal row is bounded whatever was sent: it holds the tool, the
//! decision, the host and the arguments' digest and size, never the
//! arguments. It costs the caller no more than the request did: each call
//! (`POST /v1/artifacts/{app}/calls`, an MCP `tools/call`) is one write
//! counted against the caller's write rate before it is decided (lattice's
//! guard), and writes at most one refusal row; `set_state`'s coalescing
//! (`state_writes.rs`) is for the versions of allowed writes and has
//! nothing to coalesce here. Writing the row never changes the answer: if
//! it cannot be written, a warning says so and the refusal is answered.

use lattice_core::Error;
use lattice_log::Authenticated;
use lattice_wire::Outcome;

use crate::{AppCalls, CallAudit, count};

/// The decision of a call refused because a switch is off where the app
/// lives (mini apps, or the server's key), or its server is not connected.
pub const SWITCHED_OFF: &str = "switched_off";
/// The decision of a call of a tool the app's host (lattice, or the app's
/// server) does not offer.
pub const NOT_OFFERED: &str = "not_offered";
/// The decision of a confirmation used before (or at the same time).
pub const USED: &str = "used";

/// The most of a tool's name a refusal's row keeps, in bytes.
const TOOL_MAX: usize = 128;

/// What is known of a refused call: the thread of its app, where the row
/// goes, and the row so far (the app, its version, the tool, the host; the
/// arguments' digest and size; the server and policy of a server's app; the
/// ask a refused answer answers).
#[derive(Clone)]
pub(crate) struct Known {
    pub(crate) thread: String,
    pub(crate) row: CallAudit,
    /// Whether the tool is one its host offers (or one of lattice's): only
    /// then is its name a label of the calls' counter, whose series a
    /// caller's made-up names must not multiply.
    pub(crate) offered: bool,
}

impl Known {
    /// Refused as `decision`, answered `error`.
    pub(crate) fn refuse(&self, decision: &'static str, error: Error) -> Refused {
        self.answer(decision, Err(error))
    }

    /// Refused, with `answer` (a policy's denial answers a refusal, 200).
    pub(crate) fn answer(&self, decision: &'static str, answer: Result<Outcome, Error>) -> Refused {
        Refused(Box::new(Refusal { decision, known: Some(self.clone()), answer }))
    }

    /// Refused by `error`, with the decision its type names.
    pub(crate) fn failed(&self, error: Error) -> Refused {
        self.refuse(decision_of(&error), error)
    }
}

/// A refused call: what [`AppCalls::refuse`] records and answers (boxed:
/// the steps' `Err` stays one pointer).
pub(crate) struct Refused(Box<Refusal>);

struct Refusal {
    decision: &'static str,
    /// `None`: no row. Nothing of an app is known, or nothing may be
    /// written: the capability is missing or is not this caller's, the
    /// artifact is not one the caller can read, or not an app, or the
    /// confirmation names no ask of an app the caller can read (no thread
    /// the caller may write to, or none that is an app's); or the step that
    /// failed was the writing of the call's own row, which another row
    /// would not get past either.
    known: Option<Known>,
    answer: Result<Outcome, Error>,
}

impl Refused {
    /// Refused with no row (see `Refusal::known`).
    pub(crate) fn unrecorded(error: Error) -> Self {
        Self(Box::new(Refusal { decision: "", known: None, answer: Err(error) }))
    }
}

/// Steps that fail with a typed error, refused as it names them.
pub(crate) trait OrRefused<T> {
    fn or_refused(self, known: &Known) -> Result<T, Refused>;
}

impl<T> OrRefused<T> for Result<T, Error> {
    fn or_refused(self, known: &Known) -> Result<T, Refused> {
        self.map_err(|e| known.failed(e))
    }
}

/// The decision a refusal by `error` records.
pub(crate) fn decision_of(error: &Error) -> &'static str {
    match error {
        Error::NotEnabled { .. } => SWITCHED_OFF,
        Error::Unavailable { .. } => "unavailable",
        Error::TooLarge { .. } => "too_large",
        Error::ValidationFailed { .. } | Error::Malformed { .. } => "invalid_arguments",
        // The log's refusal of a once key taken before (store/audit.rs).
        Error::Conflict { code: lattice_core::Code::AlreadyUsed, .. } => USED,
        Error::Conflict { .. } => "conflict",
        Error::Forbidden { .. } => "forbidden",
        Error::InvalidState { .. } => "invalid_state",
        Error::NotFound => "not_found",
        _ => "refused",
    }
}

impl AppCalls {
    /// The one place a refusal is recorded: its row (when an app is known),
    /// then the refusal's own answer, unchanged.
    pub(crate) async fn refuse(&self, who: &Authenticated, refused: Refused) -> Result<Outcome, Error> {
        let Refusal { decision, known, answer } = *refused.0;
        if let Some(Known { thread, mut row, offered }) = known {
            count(if offered { &row.tool } else { "other" }, decision, row.via);
            // The name of a tool no host offers is the caller's: the row
            // keeps its first bytes.
            if row.tool.len() > TOOL_MAX {
                let end = (0..=TOOL_MAX).rev().find(|&i| row.tool.is_char_boundary(i)).unwrap_or(0);
                row.tool = format!("{}…", &row.tool[..end]);
            }
            let (app, tool) = (row.app.clone(), row.tool.clone());
            if let Err(e) = self.record(who, &thread, row.decided(decision), None).await {
                tracing::warn!(%app, %tool, decision, error = %e, "an app's refused call was not recorded");
            }
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_names_its_decision() {
        let used = Error::conflict(lattice_core::Code::AlreadyUsed, "01JZ was already used");
        let stale = Error::version_conflict(1, 2);
        let cases = [
            (Error::NotEnabled { key: "ui:mini-apps".into() }, SWITCHED_OFF),
            (Error::unavailable("down"), "unavailable"),
            (Error::too_large(lattice_core::Code::DocumentTooLarge, 1, 2), "too_large"),
            (Error::field("tool", "enum", "no"), "invalid_arguments"),
            (used, USED),
            (stale, "conflict"),
            (Error::forbidden(lattice_core::Code::Forbidden, "no"), "forbidden"),
            (Error::invalid_state(lattice_core::Code::InvalidState, "no"), "invalid_state"),
        ];
        for (error, decision) in cases {
            assert_eq!(decision_of(&error), decision, "{error:?}");
        }
    }
}
