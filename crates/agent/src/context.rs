//! What a person brings from connected servers to a run they start
//! (docs/MCP.md, "Prompts and resources"): a server's prompt run as a
//! command (`/server:prompt`, its arguments given), and resources attached.
//! Offered, and read, only from servers offered to the tenant whose key
//! is on in the thread's workspace, in the person's own session (or their
//! tenant's); read within the server's bound, and given to the model
//! fenced as a program's words (crate::transcript).

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_connect::{CallError, Connections, Server, ServerPrompt, ServerResource};
use lattice_core::policy::Action;
use lattice_core::{ContextKind, Error, RunContext, SwitchKey, ThreadId};
use lattice_log::{Authenticated, LogService};
use lattice_wire::{CompleteArgument, OfferedArgument, OfferedPrompt, OfferedResource, RunAttachment, RunCommand, ServerOffers, Unavailable};

use crate::servers::behalf;

/// The servers whose key is on where `thread` is, for `who`, who may
/// start a run there.
async fn servers_here(connections: &Connections, log: &LogService, who: &Authenticated, thread: &ThreadId) -> Result<Vec<Arc<Server>>, Error> {
    let access = log.thread(who, thread).await?;
    // Only whoever may start a run here is offered, or brings, anything.
    lattice_core::policy::decide(access.role, Action::Run)?;
    let effective = log.effective(who, &access.thread.workspace).await?;
    let on: BTreeMap<SwitchKey, bool> = effective.into_iter().map(|(k, e)| (k, e.enabled)).collect();
    Ok(connections.offered_to(&who.principal().tenant).filter(|s| on.get(&SwitchKey::Server(s.key())).copied().unwrap_or(false)).cloned().collect())
}

/// What the servers on in `thread` offer `who` now.
pub async fn offers(connections: &Connections, log: &LogService, who: &Authenticated, thread: &ThreadId) -> Result<ServerOffers, Error> {
    let mut out = ServerOffers::default();
    for server in servers_here(connections, log, who, thread).await? {
        let name = server.name();
        match server.prompts(behalf(who)).await {
            Ok(prompts) => out.prompts.extend(prompts.into_iter().map(|p| offered_prompt(name, p))),
            // A server with no prompts says so with an error of its own.
            Err(CallError::Server(_)) => {}
            Err(e) => out.unavailable.push(Unavailable { server: name.to_owned(), reason: e.to_string() }),
        }
        match server.resources(behalf(who)).await {
            Ok(resources) => out.resources.extend(resources.into_iter().map(|r| offered_resource(name, r))),
            Err(CallError::Server(_)) => {}
            Err(e) => out.unavailable.push(Unavailable { server: name.to_owned(), reason: e.to_string() }),
        }
    }
    out.unavailable.dedup();
    Ok(out)
}

fn offered_prompt(server: &str, p: ServerPrompt) -> OfferedPrompt {
    OfferedPrompt {
        server: server.to_owned(),
        command: format!("/{server}:{}", p.name),
        name: p.name,
        title: p.title,
        description: p.description,
        arguments: p.arguments.into_iter().map(|a| OfferedArgument { name: a.name, description: a.description, required: a.required }).collect(),
    }
}

fn offered_resource(server: &str, r: ServerResource) -> OfferedResource {
    OfferedResource { server: server.to_owned(), uri: r.uri, name: r.name, description: r.description, mime_type: r.mime_type }
}

/// What a server on in `thread` suggests for its prompt's argument as
/// typed so far, given the arguments already chosen.
pub async fn complete(
    connections: &Connections,
    log: &LogService,
    who: &Authenticated,
    thread: &ThreadId,
    asked: &CompleteArgument,
) -> Result<Vec<String>, Error> {
    let here = servers_here(connections, log, who, thread).await?;
    let server = here
        .iter()
        .find(|s| s.name() == asked.server)
        .ok_or_else(|| Error::field("server", "enum", format!("no server {:?} is on here", asked.server)))?;
    server.complete(behalf(who), &asked.prompt, &asked.argument, &asked.value, &asked.arguments).await.map_err(|e| refused("argument", &e))
}

/// Reads a command's messages and the attachments' text for a run `who`
/// starts in `thread`: each from a server on there, within its bound;
/// the first that cannot be read refuses the start, saying which.
pub async fn read(
    connections: &Connections,
    log: &LogService,
    who: &Authenticated,
    thread: &ThreadId,
    command: Option<&RunCommand>,
    attachments: &[RunAttachment],
) -> Result<Vec<RunContext>, Error> {
    if command.is_none() && attachments.is_empty() {
        return Ok(Vec::new());
    }
    if attachments.len() + usize::from(command.is_some()) > lattice_core::run::CONTEXT_MAX_ITEMS {
        let max = lattice_core::run::CONTEXT_MAX_ITEMS;
        return Err(Error::field("attachments", "maxItems", format!("at most {max} pieces of a server's context, the command included")));
    }
    let here = servers_here(connections, log, who, thread).await?;
    let server = |field: &str, name: &str| {
        here.iter().find(|s| s.name() == name).ok_or_else(|| Error::field(field, "enum", format!("no server {name:?} is on here")))
    };
    let mut out = Vec::new();
    if let Some(c) = command {
        let s = server("command.server", &c.server)?;
        let text = s.prompt(behalf(who), &c.prompt, c.arguments.clone()).await.map_err(|e| refused("command", &e))?;
        out.push(RunContext { server: c.server.clone(), kind: ContextKind::Prompt, name: c.prompt.clone(), text });
    }
    for (i, a) in attachments.iter().enumerate() {
        let s = server(&format!("attachments.{i}.server"), &a.server)?;
        let text = s.read_context(behalf(who), &a.uri).await.map_err(|e| refused(&format!("attachments.{i}"), &e))?;
        out.push(RunContext { server: a.server.clone(), kind: ContextKind::Resource, name: a.uri.clone(), text });
    }
    Ok(out)
}

/// A server's refusal, as the person's error: too large says its bound.
fn refused(field: &str, e: &CallError) -> Error {
    match e {
        CallError::TooLarge { limit } => {
            Error::field(field, "maxLength", format!("{e}: over the {limit} bytes the server may send (its max_result_bytes); it is not attached"))
        }
        // The transport ends a session whose answer passes the bound, and
        // says no more: the bound is named, with the other cause.
        CallError::Closed { .. } => Error::field(field, "maxLength", format!("{e} (its max_result_bytes); nothing is attached")),
        CallError::Arguments => Error::field(field, "type", "a prompt's arguments are text"),
        other => Error::field(field, "server", other.to_string()),
    }
}
