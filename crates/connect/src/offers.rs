//! What a server offers a person beside its tools: its prompts, run from
//! the composer as commands, and its resources, attached to a message as
//! context. Listed afresh each time they are asked for (nothing is kept,
//! so a server that says its prompts or resources changed is heard at
//! once), within bounds on how many and how long; read within the
//! server's `max_result_bytes`, as its tools' results are.

use rmcp::model::{GetPromptRequestParams, PaginatedRequestParams, ReadResourceRequestParams};
use serde_json::{Map, Value};

use crate::error::CallError;
use crate::server::{Behalf, Server};

/// At most this many prompts, and resources, of one server are listed.
pub const OFFERS_MAX: usize = 200;
/// Pages of a listing read at most.
const PAGES_MAX: usize = 10;
/// A name's longest, and a description's, in characters.
const NAME_CHARS: usize = 256;
const ABOUT_CHARS: usize = 1024;
/// At most this many arguments of one prompt.
const ARGUMENTS_MAX: usize = 16;

/// A prompt of the server, as it listed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerPrompt {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub arguments: Vec<PromptArgument>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    pub name: String,
    pub description: String,
    pub required: bool,
}

/// A resource of the server, as it listed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerResource {
    pub uri: String,
    pub name: String,
    pub description: String,
    pub mime_type: Option<String>,
}

/// A listing read page by page, at most [`PAGES_MAX`] pages and about
/// [`OFFERS_MAX`] items: `page` reads one from its cursor.
async fn pages<F, Fut>(mut page: F) -> Result<Vec<Value>, CallError>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<Value>, Option<String>), CallError>>,
{
    let mut out = Vec::new();
    let mut cursor = None;
    for _ in 0..PAGES_MAX {
        let params = cursor.take().map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let (items, next) = page(params).await?;
        out.extend(items);
        match next {
            Some(next) if out.len() < OFFERS_MAX => cursor = Some(next),
            _ => break,
        }
    }
    Ok(out)
}

fn text(value: Option<&Value>, chars: usize) -> String {
    lattice_core::name::clean(value.and_then(Value::as_str).unwrap_or_default()).chars().take(chars).collect()
}

impl Server {
    /// Its prompts, as `behalf`'s session lists them now.
    pub async fn prompts(&self, behalf: Behalf<'_>) -> Result<Vec<ServerPrompt>, CallError> {
        let listed = self
            .bounded(behalf, |session| {
                pages(move |params| {
                    let session = session.clone();
                    async move {
                        let page = session.peer().list_prompts(params).await.map_err(|e| CallError::from_service(&e))?;
                        Ok((page.prompts.iter().filter_map(|p| serde_json::to_value(p).ok()).collect(), page.next_cursor))
                    }
                })
            })
            .await?;
        Ok(listed
            .iter()
            .take(OFFERS_MAX)
            .map(|p| ServerPrompt {
                name: text(p.get("name"), NAME_CHARS),
                title: p.get("title").and_then(Value::as_str).map(|_| text(p.get("title"), NAME_CHARS)),
                description: text(p.get("description"), ABOUT_CHARS),
                arguments: p
                    .get("arguments")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .take(ARGUMENTS_MAX)
                    .map(|a| PromptArgument {
                        name: text(a.get("name"), NAME_CHARS),
                        description: text(a.get("description"), ABOUT_CHARS),
                        required: a.get("required").and_then(Value::as_bool).unwrap_or(false),
                    })
                    .collect(),
            })
            .filter(|p| !p.name.is_empty())
            .collect())
    }

    /// Its prompt `name` with `arguments` (strings, as MCP's prompts take),
    /// in `behalf`'s session: its messages as text, each headed by its
    /// role. What is not text (an image, a binary resource) is named, not
    /// passed on.
    pub async fn prompt(&self, behalf: Behalf<'_>, name: &str, arguments: Map<String, Value>) -> Result<String, CallError> {
        if arguments.values().any(|v| !v.is_string()) {
            return Err(CallError::Arguments);
        }
        let params = GetPromptRequestParams::new(name.to_owned()).with_arguments(arguments);
        let got =
            self.bounded(behalf, |session| async move { session.peer().get_prompt(params).await.map_err(|e| CallError::from_service(&e)) }).await?;
        let value = serde_json::to_value(got).map_err(|e| CallError::Malformed(e.to_string()))?;
        self.fits(&value)?;
        let mut said = Vec::new();
        for message in value.get("messages").and_then(Value::as_array).into_iter().flatten() {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("user");
            said.push(format!("{role}: {}", content_text(message.get("content").unwrap_or(&Value::Null))));
        }
        Ok(said.join("\n\n"))
    }

    /// Its resources, as `behalf`'s session lists them now.
    pub async fn resources(&self, behalf: Behalf<'_>) -> Result<Vec<ServerResource>, CallError> {
        let listed = self
            .bounded(behalf, |session| {
                pages(move |params| {
                    let session = session.clone();
                    async move {
                        let page = session.peer().list_resources(params).await.map_err(|e| CallError::from_service(&e))?;
                        Ok((page.resources.iter().filter_map(|r| serde_json::to_value(r).ok()).collect(), page.next_cursor))
                    }
                })
            })
            .await?;
        Ok(listed
            .iter()
            .take(OFFERS_MAX)
            .map(|r| ServerResource {
                uri: r.get("uri").and_then(Value::as_str).unwrap_or_default().chars().take(2048).collect(),
                name: text(r.get("title").or_else(|| r.get("name")), NAME_CHARS),
                description: text(r.get("description"), ABOUT_CHARS),
                mime_type: r.get("mimeType").and_then(Value::as_str).map(|m| text(Some(&Value::String(m.to_owned())), NAME_CHARS)),
            })
            .filter(|r| !r.uri.is_empty() && !r.uri.starts_with("ui://"))
            .collect())
    }

    /// The text of its resource `uri`, in `behalf`'s session, within its
    /// `max_result_bytes` (refused past it, as a tool's result is). A
    /// binary resource is refused: it is not text to pass on.
    pub async fn read_context(&self, behalf: Behalf<'_>, uri: &str) -> Result<String, CallError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let read = self
            .bounded(behalf, |session| async move { session.peer().read_resource(params).await.map_err(|e| CallError::from_service(&e)) })
            .await?;
        let value = serde_json::to_value(read).map_err(|e| CallError::Malformed(e.to_string()))?;
        self.fits(&value)?;
        let mut texts = Vec::new();
        for content in value.get("contents").and_then(Value::as_array).into_iter().flatten() {
            match content.get("text").and_then(Value::as_str) {
                Some(text) => texts.push(text.to_owned()),
                None => return Err(CallError::Malformed(format!("{uri} is binary: only text is attached"))),
            }
        }
        Ok(texts.join("\n"))
    }
}

/// At most this many completions of an argument are passed on.
pub const COMPLETIONS_MAX: usize = 100;

impl Server {
    /// What the server suggests for its prompt's `argument` as typed so far
    /// (`completion/complete`), given the arguments already chosen: none
    /// when it offers no completion.
    pub async fn complete(
        &self,
        behalf: Behalf<'_>,
        prompt: &str,
        argument: &str,
        typed: &str,
        chosen: &Map<String, Value>,
    ) -> Result<Vec<String>, CallError> {
        use rmcp::model::{ArgumentInfo, CompleteRequestParams, CompletionContext, PromptReference, Reference};
        let mut params = CompleteRequestParams::new(Reference::Prompt(PromptReference::new(prompt.to_owned())), ArgumentInfo::new(argument, typed));
        let known: std::collections::HashMap<String, String> = chosen.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect();
        if !known.is_empty() {
            let mut context = CompletionContext::new();
            context.arguments = Some(known);
            params = params.with_context(context);
        }
        let done =
            self.bounded(behalf, |session| async move { session.peer().complete(params).await.map_err(|e| CallError::from_service(&e)) }).await;
        let done = match done {
            Ok(done) => done,
            // A server that offers no completion says so with an error of its own.
            Err(CallError::Server(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let value = serde_json::to_value(done).map_err(|e| CallError::Malformed(e.to_string()))?;
        self.fits(&value)?;
        Ok(value
            .pointer("/completion/values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .take(COMPLETIONS_MAX)
            .map(|v| lattice_core::name::clean(v).chars().take(NAME_CHARS).collect())
            .collect())
    }
}

/// A prompt message's content as text.
fn content_text(content: &Value) -> String {
    match content.get("type").and_then(Value::as_str) {
        Some("text") => content.get("text").and_then(Value::as_str).unwrap_or_default().to_owned(),
        Some("resource") => match content.pointer("/resource/text").and_then(Value::as_str) {
            Some(text) => text.to_owned(),
            None => format!("[a binary resource: {}]", content.pointer("/resource/uri").and_then(Value::as_str).unwrap_or_default()),
        },
        Some(other) => format!("[{other} content, not passed on]"),
        None => String::new(),
    }
}
