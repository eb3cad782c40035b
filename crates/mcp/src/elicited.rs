//! What asking the person a form through the client came to: shared by
//! the two ways of asking (`calls.rs`'s elicitation in the call, `rounds.rs`'s
//! input request of 2026-07-28) and the answers sent from them
//! (`form_answers.rs`).

use serde_json::Value;

/// What asking the form through the client came to.
pub(crate) enum Elicited {
    /// The person answered; the answer is in the thread, as the caller's.
    Answered { values: Value, submission: Value },
    /// Not asked there (no form elicitation, a form that does not fit it),
    /// or declined, or refused: the form waits in lattice; why, if worth saying.
    NotAsked(Option<String>),
    /// To be asked by a 2026-07-28 client, which calls again with the
    /// answer (`rounds`).
    Required(rmcp::model::InputRequiredResult),
}

/// Why a form is not asked in a client that has form elicitation.
pub(crate) const BEYOND: &str = "This form is more than a client's form can ask (constrained fields).";
