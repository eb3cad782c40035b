//! Limits on the free text a command carries. Payload limits of artifact
//! kinds are the kinds' own (`ArtifactKind::max_bytes`).

use lattice_core::{Command, Error, FieldError};

pub const NAME_MAX: usize = 200;
pub const MESSAGE_MAX: usize = 16 * 1024;
pub const REASON_MAX: usize = 500;
pub const PATCH_OPS_MAX: usize = 1000;
pub const APP_EVENT_MAX: usize = 64 * 1024;
/// Namespaces that only lattice itself publishes in.
pub const RESERVED_NAMESPACES: [&str; 2] = ["ui", "log"];

pub(crate) fn check_command(command: &Command) -> Result<(), Error> {
    let mut errors = Vec::new();
    match command {
        Command::CreateWorkspace { name } => text(&mut errors, "name", name, 1, NAME_MAX),
        Command::CreateThread { title, .. } => text(&mut errors, "title", title, 1, NAME_MAX),
        Command::PostMessage { text: body, .. } => text(&mut errors, "text", body, 1, MESSAGE_MAX),
        Command::SetSwitch { reason, .. } => text(&mut errors, "reason", reason, 1, REASON_MAX),
        Command::EditArtifact { patch, .. } if patch.0.len() > PATCH_OPS_MAX => errors.push(FieldError::new(
            "patch",
            "maxItems",
            format!("{} operations exceed the limit {PATCH_OPS_MAX}", patch.0.len()),
        )),
        Command::AppEvent { namespace, name, data, .. } => {
            for (field, value) in [("namespace", namespace), ("name", name)] {
                let ok = !value.is_empty()
                    && value.len() <= 64
                    && value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
                if !ok {
                    errors.push(FieldError::new(field, "pattern", "1 to 64 of a-z, 0-9, _ and -: it becomes a NATS subject token"));
                }
            }
            let size = serde_json::to_vec(data).map(|v| v.len()).unwrap_or(usize::MAX);
            if size > APP_EVENT_MAX {
                return Err(Error::TooLarge { limit: APP_EVENT_MAX as u64, size: size as u64 });
            }
        }
        _ => {}
    }
    if errors.is_empty() { Ok(()) } else { Err(Error::ValidationFailed { errors }) }
}

fn text(errors: &mut Vec<FieldError>, field: &str, value: &str, min: usize, max: usize) {
    let trimmed = value.trim();
    if trimmed.chars().count() < min {
        errors.push(FieldError::new(field, "minLength", "must not be empty"));
    } else if value.len() > max {
        errors.push(FieldError::new(field, "maxLength", format!("{} bytes exceeds the limit {max}", value.len())));
    }
}
