//! The files a form's values name (docs/FILES.md): each must be a whole
//! file uploaded in the thread the values are given in, by whoever gives
//! them, not erased, of a type and size its field takes. The browser
//! checks the ids' shape; this, on the server, checks the files, and
//! answers their references, which the submission carries.

use lattice_core::{Error, FieldError, FileRef, WorkspaceView};
use serde_json::Value;

use crate::schema::CompiledForm;

/// Files one set of values may name.
pub const FILES_MAX: usize = 20;

/// The references of the files `values` name, in the form's order, or a
/// refusal at each field whose file is not one it may take.
pub async fn attached(view: &dyn WorkspaceView, form: &CompiledForm, values: &Value) -> Result<Vec<FileRef>, Error> {
    let named = named_files(form, values);
    if named.is_empty() {
        return Ok(Vec::new());
    }
    if named.len() > FILES_MAX {
        return Err(Error::field(&named[FILES_MAX].0, "maxItems", format!("{} files exceed the limit {FILES_MAX}", named.len())));
    }
    let mut errors = Vec::new();
    let mut references = Vec::with_capacity(named.len());
    for (path, rule, id) in named {
        let file = view.file(id).await?;
        let refusal = match file {
            None => Some(("file", "there is no such file here: upload it to this thread first".to_owned())),
            Some(f) if Some(&f.thread) != view.thread() => Some(("file", "the file was uploaded to another thread".to_owned())),
            Some(f) if f.uploader != view.principal().user.as_str() => Some(("file", "a file is attached by whoever uploaded it".to_owned())),
            Some(f) if f.erased => Some(("file", "the file was erased".to_owned())),
            Some(f) => match rule.admits(&f.reference.media_type, f.reference.size) {
                Ok(()) => {
                    references.push(f.reference);
                    None
                }
                Err((keyword, why)) => Some((keyword, why)),
            },
        };
        if let Some((keyword, message)) = refusal {
            errors.push(FieldError::new(path, keyword, message));
        }
    }
    Error::invalid(errors).map(|()| references)
}

/// The file ids the values name, in the form's order (the values checked
/// or not: what is not an id is left out).
pub fn file_ids<'a>(form: &'a CompiledForm, values: &'a Value) -> Vec<&'a str> {
    named_files(form, values).into_iter().map(|(_, _, id)| id).collect()
}

/// Each file id the values name, with its field's path and rule.
fn named_files<'a>(form: &'a CompiledForm, values: &'a Value) -> Vec<(String, &'a crate::schema::FileRule, &'a str)> {
    let mut named = Vec::new();
    for p in &form.properties {
        let Some(rule) = &p.file else { continue };
        match values.get(&p.name) {
            Some(Value::String(id)) => named.push((p.name.clone(), rule, id.as_str())),
            Some(Value::Array(items)) => {
                named.extend(items.iter().enumerate().filter_map(|(i, v)| Some((format!("{}.{i}", p.name), rule, v.as_str()?))));
            }
            _ => {}
        }
    }
    named
}
