//! What the agent is told of the files a person attached to a form's
//! answer (docs/FILES.md): each file's name, type and size, and a text
//! file's first bytes, fenced as untrusted like the answer itself. Never
//! the bytes of anything else: a model is no place for a PDF or an image.

use lattice_core::{Error, TenantId};
use lattice_log::Trusted;
use serde_json::{Value, json};

use crate::model::ChatMessage;
use crate::transcript::untrusted;

/// The bytes of a text file the agent reads, at most.
pub const TEXT_BYTES: usize = 16 * 1024;

/// Adds to each form answer that names files what the agent may know of
/// them.
pub(crate) async fn describe(
    trusted: &Trusted,
    tenant: &TenantId,
    workspace: &str,
    messages: &mut [ChatMessage],
    attachments: &[(usize, String, Vec<String>)],
) -> Result<(), Error> {
    for (index, author, ids) in attachments {
        let mut files = Vec::with_capacity(ids.len());
        for id in ids {
            let Some((reference, erased, text)) = trusted.file_for_agent(tenant, workspace, id, TEXT_BYTES).await? else { continue };
            let mut file = json!({"id": reference.id, "name": reference.name, "type": reference.media_type, "size": reference.size});
            if erased {
                file["erased"] = Value::Bool(true);
            }
            if let Some(text) = text {
                file["truncated"] = Value::Bool(reference.size as usize > text.len());
                file["text"] = Value::String(text);
            }
            files.push(file);
        }
        if let Some(ChatMessage::Tool { content, .. }) = messages.get_mut(*index)
            && !files.is_empty()
        {
            content.push_str("\nThe files it names:\n");
            content.push_str(&untrusted("attached files", author, &Value::Array(files)));
        }
    }
    Ok(())
}
