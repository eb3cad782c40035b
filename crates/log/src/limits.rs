//! Limits on what a command carries: its free text, and the nesting and
//! size of every JSON document in it (`lattice_core::document`), checked
//! before anything else so that nothing is stored that cannot be read
//! back. Payload limits of artifact kinds are the kinds' own
//! (`ArtifactKind::max_bytes`).

use json_patch::PatchOperation;
use lattice_core::document::{self, MAX_BYTES};
use lattice_core::{Audit, Command, Error, FieldError, RunStep, name};

pub const NAME_MAX: usize = 200;
pub const MESSAGE_MAX: usize = 16 * 1024;
/// A run's prompt: what a person asks, as long as a message may be (it is
/// kept in the run's first envelope and read back with every step).
pub const PROMPT_MAX: usize = MESSAGE_MAX;
pub const REASON_MAX: usize = 500;
pub const PATCH_OPS_MAX: usize = 1000;
pub const APP_EVENT_MAX: usize = 64 * 1024;
/// What an app may tell the agent: its text, and its structured content.
pub const APP_CONTEXT_MAX: usize = 8 * 1024;
/// A chain id: what a rule passes on from the event it reacts to.
pub const CHAIN_MAX: usize = 128;
/// Namespaces that only lattice itself publishes in.
pub const RESERVED_NAMESPACES: [&str; 3] = ["ui", "log", "audit"];

/// The names a command carries, as kept (`lattice_core::name`): a name a
/// person gave with an invisible or direction-changing character is
/// refused; one an identity provider sent is cleaned (it is the
/// provider's to fix, and refusing would keep the person out).
pub(crate) fn names(command: &mut Command) -> Result<(), Error> {
    let mut errors = Vec::new();
    let mut given = |field: &str, value: &mut String| match name::check(field, value) {
        Ok(kept) => *value = kept,
        Err(e) => errors.push(e),
    };
    match command {
        Command::CreateWorkspace { name } => given("name", name),
        Command::CreateThread { title, .. } => given("title", title),
        Command::ProvisionPerson { person, .. } => {
            given("userName", &mut person.user_name);
            person.display_name = person.display_name.as_deref().map(name::clean);
        }
        Command::RecordSignIn { person } => {
            given("user_name", &mut person.user_name);
            person.display_name = person.display_name.as_deref().map(name::clean);
        }
        Command::ProvisionGroup { group, .. } => given("displayName", &mut group.display_name),
        Command::CreateApiKey { key } => given("name", &mut key.name),
        _ => {}
    }
    Error::invalid(errors)
}

pub(crate) fn check_command(command: &Command) -> Result<(), Error> {
    let mut errors = Vec::new();
    match command {
        Command::CreateWorkspace { name } => text(&mut errors, "name", name, 1, NAME_MAX),
        Command::CreateThread { title, .. } => text(&mut errors, "title", title, 1, NAME_MAX),
        Command::PostMessage { text: body, .. } => text(&mut errors, "text", body, 1, MESSAGE_MAX),
        Command::SetSwitch { reason, .. } => text(&mut errors, "reason", reason, 1, REASON_MAX),
        Command::EditArtifact { patch, .. } if patch.0.len() > PATCH_OPS_MAX => {
            errors.push(FieldError::new("patch", "maxItems", format!("{} operations exceed the limit {PATCH_OPS_MAX}", patch.0.len())))
        }
        Command::EditArtifact { patch, .. } => {
            for (i, op) in patch.0.iter().enumerate() {
                let value = match op {
                    PatchOperation::Add(op) => &op.value,
                    PatchOperation::Replace(op) => &op.value,
                    PatchOperation::Test(op) => &op.value,
                    _ => continue,
                };
                document::check(value, &format!("patch.{i}.value"), MAX_BYTES)?;
            }
        }
        // The kind's own limit is checked once its kind is known (prepare);
        // this bounds what is read before.
        Command::CreateArtifact { data, .. } => document::check(data, "data", document::KIND_MAX_BYTES)?,
        Command::AnswerDeferred { answer, .. } => document::check(answer, "answer", MAX_BYTES)?,
        Command::RecordRun { step, .. } => check_step(step)?,
        Command::StartRun { prompt, chain, context, .. } => {
            if prompt.len() > PROMPT_MAX {
                return Err(Error::too_large(lattice_core::Code::PromptTooLarge, PROMPT_MAX as u64, prompt.len() as u64));
            }
            if context.len() > lattice_core::run::CONTEXT_MAX_ITEMS {
                let max = lattice_core::run::CONTEXT_MAX_ITEMS;
                errors.push(FieldError::new("context", "maxItems", format!("{} pieces of a server's context exceed the limit {max}", context.len())));
            }
            let bytes: usize = context.iter().map(|c| c.text.len() + c.name.len() + c.server.len()).sum();
            if bytes > lattice_core::run::CONTEXT_MAX_BYTES {
                return Err(Error::too_large(lattice_core::Code::PromptTooLarge, lattice_core::run::CONTEXT_MAX_BYTES as u64, bytes as u64));
            }
            if chain.as_deref().is_some_and(|chain| !chain_token(chain)) {
                errors.push(FieldError::new("chain", "pattern", format!("1 to {CHAIN_MAX} of A-Z, a-z, 0-9, _, -, . and :")));
            }
        }
        Command::SetAppContext { text: said, structured, .. } => {
            if said.len() > APP_CONTEXT_MAX {
                errors.push(FieldError::new("text", "maxLength", format!("{} bytes exceed the limit {APP_CONTEXT_MAX}", said.len())));
            }
            if let Some(structured) = structured {
                document::check(structured, "structured", APP_CONTEXT_MAX)?;
            }
        }
        Command::RecordAudit { audit, .. } => check_audit(audit)?,
        Command::AppEvent { namespace, name, data, .. } => {
            for (field, value) in [("namespace", namespace), ("name", name)] {
                if !subject_token(value) {
                    errors.push(FieldError::new(field, "pattern", "1 to 64 of a-z, 0-9, _ and -: it becomes a NATS subject token"));
                }
            }
            document::check(data, "data", APP_EVENT_MAX)?;
        }
        _ => {}
    }
    Error::invalid(errors)
}

fn text(errors: &mut Vec<FieldError>, field: &str, value: &str, min: usize, max: usize) {
    let trimmed = value.trim();
    if trimmed.chars().count() < min {
        errors.push(FieldError::new(field, "minLength", "must not be empty"));
    } else if value.len() > max {
        errors.push(FieldError::new(field, "maxLength", format!("{} bytes exceeds the limit {max}", value.len())));
    }
}

/// A run's step carries what a model wrote: its tool calls' arguments and
/// what the tools returned obey the same bounds as any stored document.
fn check_step(step: &RunStep) -> Result<(), Error> {
    if let RunStep::Paused { requests } | RunStep::Asked { requests } = step
        && let Some(r) = requests.iter().find(|r| r.expires_in_secs.is_some_and(|s| s == 0 || s > lattice_core::run::MAX_EXPIRES_IN_SECS))
    {
        return Err(Error::field(
            "step.requests.expires_in_secs",
            "maximum",
            format!("{:?} is not 1 to {} seconds", r.expires_in_secs, lattice_core::run::MAX_EXPIRES_IN_SECS),
        ));
    }
    let value = serde_json::to_value(step).map_err(|e| Error::field("step", "type", e.to_string()))?;
    document::check(&value, "step", MAX_BYTES)
}

/// An audit row: a name that becomes a NATS subject token, bounded data, a
/// bounded once key.
pub(crate) fn check_audit(audit: &Audit) -> Result<(), Error> {
    if !subject_token(&audit.name) {
        return Err(Error::field("audit.name", "pattern", "1 to 64 of a-z, 0-9, _ and -: it becomes a NATS subject token"));
    }
    if audit.once.as_ref().is_some_and(|k| k.is_empty() || k.len() > 128) {
        return Err(Error::field("audit.once", "maxLength", "a once key has 1 to 128 bytes"));
    }
    document::check(&audit.data, "audit.data", APP_EVENT_MAX)
}

fn chain_token(value: &str) -> bool {
    !value.is_empty() && value.len() <= CHAIN_MAX && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b))
}

fn subject_token(value: &str) -> bool {
    !value.is_empty() && value.len() <= 64 && value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}
