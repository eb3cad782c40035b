//! Works out what a command will write, refusing what cannot be written:
//! unknown kinds, payloads of the wrong shape or size, patches that do not
//! apply, stale versions, steps a run's state does not allow.

use lattice_core::event::CredentialKind;
use lattice_core::{ArtifactId, ArtifactKind, Command, Error, RunFailure, RunId, RunStatus, RunStep, ThreadId, WorkspaceId};
use serde_json::Value;

use crate::chain::ChainKey;
use crate::digest::digest;
use crate::effect::Effect;
use crate::registry::Registry;
use crate::scope::Scope;
use crate::store::Answering;

/// What `prepare` reads besides the command and its scope.
pub(crate) struct Preparing<'a> {
    pub registry: &'a Registry,
    /// The key a run's chain is checked and recorded under.
    pub chains: &'a ChainKey,
    /// The log's clock, now: what a request's deadline is held against.
    pub now_ms: i64,
    /// How groups become tenant roles: a directory's writers keep each
    /// person's role by them.
    pub rules: &'a std::sync::Arc<lattice_core::identity::GroupRules>,
    /// Who the command is for: a server's question is answered only by
    /// the person its run acts for.
    pub principal: &'a lattice_core::Principal,
}

impl Preparing<'_> {
    pub(crate) fn prepare(&self, scope: &Scope, command: &Command) -> Result<Effect, Error> {
        Ok(match command {
            Command::CreateWorkspace { name } => Effect::Workspace { id: WorkspaceId::generate(), name: name.clone() },
            Command::AddMember { user, role, .. } => Effect::Member { user: user.to_string(), role: *role },
            Command::CreateThread { title, restricted, .. } => {
                Effect::Thread { id: ThreadId::generate(), title: title.clone(), restricted: *restricted }
            }
            Command::ShareThread { user, role, .. } => Effect::Shared { user: user.to_string(), role: *role },
            Command::RemoveMember { user, .. } => Effect::MemberRemoved { user: user.to_string() },
            Command::UnshareThread { user, .. } => Effect::Unshared { user: user.to_string() },
            Command::EndSessions { user, session } => Effect::SessionsEnded { user: user.to_string(), session: session.clone() },
            Command::ProvisionPerson { user, person, create, expected_version } => {
                check_name("userName", &person.user_name)?;
                if lattice_core::directory::is_key_user(user.as_str()) {
                    return Err(Error::field("user", "id", "ids beginning with key_ are API keys'"));
                }
                Effect::PersonProvisioned {
                    user: user.to_string(),
                    person: person.clone(),
                    create: *create,
                    expected_version: *expected_version,
                    rules: self.rules.clone(),
                }
            }
            Command::RecordSignIn { person } => {
                check_name("user_name", &person.user_name)?;
                if person.groups.len() > lattice_core::directory::MAX_GROUPS {
                    return Err(Error::field(
                        "groups",
                        "maxItems",
                        format!("{} groups exceed the limit {}", person.groups.len(), lattice_core::directory::MAX_GROUPS),
                    ));
                }
                Effect::SignedIn { person: person.clone(), rules: self.rules.clone() }
            }
            Command::RemovePerson { user } => Effect::PersonRemoved { user: user.to_string() },
            Command::ProvisionGroup { id, group, create, expected_version } => {
                check_name("displayName", &group.display_name)?;
                check_name("id", id)?;
                if group.members.len() > lattice_core::directory::MAX_MEMBERS {
                    return Err(Error::field(
                        "members",
                        "maxItems",
                        format!("{} members exceed the limit {}", group.members.len(), lattice_core::directory::MAX_MEMBERS),
                    ));
                }
                Effect::GroupProvisioned {
                    id: id.clone(),
                    group: group.clone(),
                    create: *create,
                    expected_version: *expected_version,
                    rules: self.rules.clone(),
                }
            }
            Command::RemoveGroup { id } => Effect::GroupRemoved { id: id.clone(), rules: self.rules.clone() },
            Command::CreateApiKey { key } => {
                check_name("name", &key.name)?;
                if !lattice_core::directory::is_key_user(key.id.as_str()) {
                    return Err(Error::field("id", "id", "an API key's id begins with key_"));
                }
                Effect::KeyIssued(key.clone())
            }
            Command::RevokeApiKey { id } => Effect::Revoked { id: id.to_string(), kind: CredentialKind::ApiKey },
            Command::IssueScimToken { id, digest } => Effect::ScimTokenIssued { id: id.clone(), digest: digest.clone() },
            Command::RevokeScimToken { id } => Effect::Revoked { id: id.clone(), kind: CredentialKind::ScimToken },
            Command::PostMessage { text, .. } => Effect::Message { text: text.clone() },
            Command::CreateArtifact { id, kind, data, .. } => {
                let spec = self.registry.kind(kind)?;
                check_payload(spec.as_ref(), data)?;
                Effect::Created {
                    id: id.clone().unwrap_or_else(ArtifactId::generate),
                    kind: kind.clone(),
                    digest: digest(data),
                    parent: spec.parent(data),
                    asks: spec.asks(data),
                    data: data.clone(),
                }
            }
            Command::EditArtifact { expected_version, patch, .. } => {
                let head = scope.artifact.clone().expect("authorize loads the head of an edited artifact");
                if *expected_version != head.version {
                    return Err(Error::version_conflict(*expected_version, head.version));
                }
                let spec = self.registry.kind(&head.kind)?;
                // Applied within the kind's size and the nesting limit,
                // operation by operation: a patch that would grow the
                // document past either stops there.
                let data = lattice_core::patch::apply(&head.data, patch, spec.max_bytes())?;
                check_payload(spec.as_ref(), &data)?;
                Effect::Changed { digest: digest(&data), asks: spec.asks(&data), data, patch: patch.clone(), head }
            }
            Command::ArchiveArtifact { .. } => {
                Effect::Archived { head: scope.artifact.clone().expect("authorize loads the head of an archived artifact") }
            }
            Command::SetSwitch { level, key, state, reason } => {
                Effect::Switch { level: level.clone(), key: *key, state: *state, reason: reason.clone() }
            }
            Command::AppEvent { namespace, name, data, .. } => {
                Effect::AppEvent { namespace: namespace.clone(), name: name.clone(), data: data.clone() }
            }
            Command::RecordAudit { audit, .. } => Effect::Audit(audit.clone()),
            Command::StartRun { prompt, model, chain, context, .. } => {
                // Only a chain lattice minted for this tenant, kept in the
                // form no run may be started with; who passed it (the
                // rule) is the run's starter, recorded beside it.
                let tenant = &scope.access.as_ref().expect("authorize reads the thread a run starts in").tenant;
                let chain = chain.as_deref().map(|chain| self.chains.record(tenant.as_str(), chain)).transpose()?;
                Effect::RunStarted { id: RunId::generate(), prompt: prompt.clone(), model: model.clone(), chain, context: context.clone() }
            }
            Command::AnswerDeferred { tool_call_id, answer, approved, .. } => {
                let loaded = scope.run.as_ref().expect("authorize loads the run");
                let Some(request) = loaded.request(tool_call_id) else {
                    return Err(Error::field("tool_call_id", "exists", "this run has no such request"));
                };
                if let Some(by) = &request.answered_by {
                    return Err(Error::already_answered(by.clone()));
                }
                // A connected server's question is answered while its run
                // goes on (the server holds the call open for it), and only
                // by the person the run acts for: what they give goes to a
                // server under their name, so nobody else may give it.
                let question = request.tool_name == lattice_core::run::ELICITATION;
                if question {
                    let p = self.principal;
                    if p.agent || p.user.as_str() != loaded.run.acting_for {
                        return Err(Error::forbidden(
                            lattice_core::Code::NotActingFor,
                            format!("only {}, whom the run acts for, answers a server's question", loaded.run.acting_for),
                        ));
                    }
                }
                let waiting = if question { RunStatus::Running } else { RunStatus::Paused };
                if loaded.run.status != waiting {
                    return Err(Error::invalid_state(
                        lattice_core::Code::RunNotWaiting,
                        format!("the run is {}, not waiting for an answer", loaded.run.status.as_str()),
                    ));
                }
                if let Some(at) = request.expires_at
                    && at <= self.now_ms
                {
                    return Err(Error::invalid_state(
                        lattice_core::Code::RequestExpired,
                        format!("the request expired at {}", crate::clock::rfc3339(at)),
                    ));
                }
                Effect::Answered(Answering {
                    run: loaded.run.id.clone(),
                    tool_call_id: tool_call_id.clone(),
                    tool_name: request.tool_name.clone(),
                    answer: answer.clone(),
                    approved: *approved,
                    expired: false,
                    chain: loaded.run.chain.clone(),
                })
            }
            Command::SetAppContext { text, structured, .. } => {
                let head = scope.artifact.as_ref().expect("authorize loads the artifact");
                if !self.registry.kind(&head.kind).is_ok_and(|kind| kind.tells_context()) {
                    return Err(Error::field("artifact", "kind", format!("a {} does not tell the agent what it shows", head.kind)));
                }
                Effect::AppContext { artifact: head.id.clone(), text: text.clone(), structured: structured.clone() }
            }
            Command::CancelRun { .. } => {
                let loaded = scope.run.as_ref().expect("authorize loads the run");
                if !matches!(loaded.run.status, RunStatus::Running | RunStatus::Paused) {
                    return Err(Error::invalid_state(
                        lattice_core::Code::RunEnded,
                        format!("the run is {}: there is nothing to cancel", loaded.run.status.as_str()),
                    ));
                }
                let step = RunStep::Failed { reason: "cancelled".into(), failure: Some(RunFailure::Cancelled) };
                Effect::Step { run: loaded.run.id.clone(), step }
            }
            Command::RecordRun { step, .. } => {
                let loaded = scope.run.as_ref().expect("authorize loads the run");
                let status = loaded.run.status;
                let allowed = match step {
                    RunStep::Resumed { .. } => status == RunStatus::Paused && loaded.requests.iter().all(|r| r.answered_by.is_some()),
                    RunStep::Failed { .. } => matches!(status, RunStatus::Running | RunStatus::Paused),
                    RunStep::Asked { requests } => {
                        status == RunStatus::Running && requests.iter().all(|r| r.tool_name == lattice_core::run::ELICITATION)
                    }
                    _ => status == RunStatus::Running,
                };
                if !allowed {
                    return Err(Error::invalid_state(lattice_core::Code::RunEnded, format!("a {} run cannot record this step", status.as_str())));
                }
                Effect::Step { run: loaded.run.id.clone(), step: step.clone() }
            }
        })
    }
}

/// A name a person reads (a user name, a group's, a key's): not empty, within
/// its bound, no control characters.
fn check_name(field: &str, name: &str) -> Result<(), Error> {
    let max = lattice_core::directory::MAX_NAME_BYTES;
    if name.trim().is_empty() {
        return Err(Error::field(field, "minLength", "must not be empty"));
    }
    if name.len() > max {
        return Err(Error::field(field, "maxLength", format!("{} bytes exceed the limit {max}", name.len())));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::field(field, "pattern", "must not hold control characters"));
    }
    Ok(())
}

/// A payload within the kind's size and the nesting limit every stored
/// document keeps, and of the kind's shape.
fn check_payload(spec: &dyn ArtifactKind, data: &Value) -> Result<(), Error> {
    lattice_core::document::check(data, "data", spec.max_bytes().min(lattice_core::document::KIND_MAX_BYTES))?;
    spec.check(data)
}
