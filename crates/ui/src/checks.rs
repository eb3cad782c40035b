//! The UI model's checks on the write path (REQUIREMENTS.md L5, U8, U9): what a
//! submission must be, and who may change what.

use std::sync::Arc;

use lattice_core::kind::SharedCheck;
use lattice_core::{Actor, Check, Command, CommandType, Error, Role, SwitchKey, WorkspaceView};
use serde_json::Value;

use crate::asks::{AskFormAnswer, AskUserAnswer, ElicitationAnswer, ServerCallAnswer};
use crate::attached::attached;
use crate::form::{Form, Submissions};
use crate::kinds::{prefixed, shape};
use crate::schema;
use crate::submission::{SUBMISSION_PREFIX, Submission, nonce_ok, submission_id};

/// Every check this crate registers, with the command type it guards.
pub fn checks() -> Vec<(CommandType, SharedCheck)> {
    vec![
        (CommandType::CreateArtifact, Arc::new(SubmissionCheck)),
        (CommandType::CreateArtifact, Arc::new(AppsAreAgents)),
        (CommandType::EditArtifact, Arc::new(EditRules)),
        (CommandType::AnswerDeferred, Arc::new(AskFormAnswer)),
        (CommandType::AnswerDeferred, Arc::new(AskUserAnswer)),
        (CommandType::AnswerDeferred, Arc::new(ServerCallAnswer)),
        (CommandType::AnswerDeferred, Arc::new(ElicitationAnswer)),
    ]
}

/// A submission: to a form (or app) that exists here, in the same thread,
/// is open, at its head version; values valid; the id its derivation. The
/// `sub_` ids are submissions' alone. A submission sent without an id is
/// given the one its form's policy derives.
pub struct SubmissionCheck;

/// The policy of the form (or app) a submission names, if it is one.
async fn policy_of(view: &dyn WorkspaceView, form_id: &lattice_core::ArtifactId) -> Result<Option<Submissions>, Error> {
    let Some(target) = view.artifact(form_id, None).await? else { return Ok(None) };
    Ok(match target.kind.as_str() {
        "form" => Some(shape::<Form>(&target.data)?.submissions),
        "app" => Some(Submissions::Many),
        _ => None,
    })
}

#[async_trait::async_trait]
impl Check for SubmissionCheck {
    async fn complete(&self, view: &dyn WorkspaceView, _actor: &Actor, command: &mut Command) {
        let Command::CreateArtifact { id, kind, data, .. } = command else { return };
        if kind != "submission" {
            return;
        }
        let Ok(submission) = shape::<Submission>(data) else { return };
        let Ok(form_id) = lattice_core::ArtifactId::parse("form_id", &submission.form_id) else { return };
        if submission.files.is_empty()
            && may_name_files(&submission.values)
            && let Some(files) = files_of(view, &form_id, &submission.values).await
            && !files.is_empty()
            && let Ok(files) = serde_json::to_value(files)
            && let Some(map) = data.as_object_mut()
        {
            map.insert("files".to_owned(), files);
        }
        if id.is_none() {
            let Ok(Some(policy)) = policy_of(view, &form_id).await else { return };
            let derived = submission_id(&submission.form_id, policy, view.principal().user.as_str(), submission.nonce.as_deref());
            *id = lattice_core::ArtifactId::parse("id", &derived).ok();
        }
    }

    async fn check(&self, view: &dyn WorkspaceView, _actor: &Actor, command: &Command) -> Result<(), Error> {
        let Command::CreateArtifact { thread, id, kind, data } = command else { return Ok(()) };
        if kind != "submission" {
            if id.as_ref().is_some_and(|id| id.as_str().starts_with(SUBMISSION_PREFIX)) {
                return Err(Error::field("id", "reserved", format!("{SUBMISSION_PREFIX} ids are submissions' alone")));
            }
            return Ok(());
        }
        let submission: Submission = shape(data)?;
        let form_id = lattice_core::ArtifactId::parse("form_id", &submission.form_id)?;
        let Some(target) = view.artifact(&form_id, None).await? else {
            return Err(Error::field("form_id", "exists", "there is no such form here"));
        };
        if target.archived {
            return Err(Error::invalid_state(lattice_core::Code::ArtifactArchived, "the form is archived"));
        }
        if &target.thread != thread {
            return Err(Error::field("form_id", "thread", "a submission is sent in its form's thread"));
        }
        // A respondent submits to forms, not to apps.
        if target.kind != "form" && !writes_to_apps(view.role()) {
            return Err(Error::forbidden(lattice_core::Code::RoleTooLow, "a respondent submits to forms only"));
        }
        let policy = match target.kind.as_str() {
            "form" => {
                let form: Form = shape(&target.data)?;
                if form.closed {
                    return Err(Error::invalid_state(lattice_core::Code::FormClosed, "the form is closed"));
                }
                if form.closed_at(view.now_ms()) {
                    return Err(Error::invalid_state(
                        lattice_core::Code::FormClosed,
                        format!("the form closed at {}", form.closes_at.as_deref().unwrap_or_default()),
                    ));
                }
                if submission.form_version != target.version {
                    return Err(Error::Conflict {
                        code: lattice_core::Code::FormChanged,
                        reason: format!("This form changed: it is at version {}", target.version),
                        expected: Some(submission.form_version),
                        actual: Some(target.version),
                    });
                }
                let compiled = schema::compile(&form.schema).map_err(|e| prefixed("form.schema", e))?;
                compiled.validate(&submission.values).map_err(|e| prefixed("values", e))?;
                let files = attached(view, &compiled, &submission.values).await.map_err(|e| prefixed("values", e))?;
                if files != submission.files {
                    return Err(Error::field(
                        "files",
                        "files",
                        "a submission's files are the references of the files its values name, as the log holds them",
                    ));
                }
                form.submissions
            }
            // An app's submissions are its own business: any object of values.
            "app" => Submissions::Many,
            other => return Err(Error::field("form_id", "kind", format!("names a {other}, which takes no submissions"))),
        };
        match (policy, submission.nonce.as_deref()) {
            (Submissions::Many, Some(n)) if nonce_ok(n) => {}
            (Submissions::Many, _) => {
                return Err(Error::field(
                    "nonce",
                    "nonce",
                    "this form takes many submissions: each needs a nonce of 8 to 64 letters, digits, - or _",
                ));
            }
            (_, Some(_)) => return Err(Error::field("nonce", "nonce", "only a form that takes many submissions takes a nonce")),
            (_, None) => {}
        }
        let expected = submission_id(&submission.form_id, policy, view.principal().user.as_str(), submission.nonce.as_deref());
        if id.as_ref().map(|i| i.as_str()) != Some(expected.as_str()) {
            return Err(Error::field("id", "derived", format!("a submission's id is derived from its form: it must be {expected}")));
        }
        Ok(())
    }
}

/// Whether values hold something that reads as a file id: most do not,
/// and they skip a second look at their form.
fn may_name_files(values: &Value) -> bool {
    let is_id = |v: &Value| v.as_str().is_some_and(|s| s.starts_with(lattice_core::FileId::PREFIX));
    values.as_object().is_some_and(|m| m.values().any(|v| is_id(v) || v.as_array().is_some_and(|a| a.iter().any(is_id))))
}

/// The references of the files a form's values name, if they all resolve
/// (the check refuses them otherwise, naming each).
async fn files_of(view: &dyn WorkspaceView, form_id: &lattice_core::ArtifactId, values: &Value) -> Option<Vec<lattice_core::FileRef>> {
    let target = view.artifact(form_id, None).await.ok()??;
    let form = shape::<Form>(&target.data).ok().filter(|_| target.kind == "form")?;
    attached(view, &schema::compile(&form.schema).ok()?, values).await.ok()
}

/// Who changes an app's state or submits to it: whoever changes
/// artifacts (the policy's `Author`; a respondent submits to forms only, a
/// viewer reads). `lattice-app-calls` asks it before a call, so that of a
/// reader's call it records no more than the refusal.
pub fn writes_to_apps(role: Role) -> bool {
    lattice_core::policy::allows(role, lattice_core::policy::Action::Author)
}

/// Only an agent creates an app: the HTML that runs is always an agent's.
/// An app of a connected MCP server only lattice's runner puts in the
/// log, inside a run, from the server's own answer (no token can name a
/// server for HTML it wrote, and so reach that server's tools), and only
/// while the server's key is on as well as mini apps'.
pub struct AppsAreAgents;

/// The server an app's data says it came from, if any.
fn server_of(data: &Value) -> Option<&str> {
    data.pointer("/server/name").and_then(Value::as_str)
}

#[async_trait::async_trait]
impl Check for AppsAreAgents {
    async fn switches(&self, _view: &dyn WorkspaceView, command: &Command) -> Result<Vec<SwitchKey>, Error> {
        let Command::CreateArtifact { kind, data, .. } = command else { return Ok(Vec::new()) };
        let Some(server) = server_of(data).filter(|_| kind == "app") else { return Ok(Vec::new()) };
        let key = format!("{}{server}", lattice_core::ServerKey::PREFIX);
        match SwitchKey::parse(&key) {
            Some(key) => Ok(vec![key]),
            None => Err(Error::NotEnabled { key }),
        }
    }

    async fn check(&self, view: &dyn WorkspaceView, actor: &Actor, command: &Command) -> Result<(), Error> {
        match command {
            Command::CreateArtifact { kind, .. } if kind == "app" && !actor.is_agent() => {
                Err(Error::forbidden(lattice_core::Code::AgentOnly, "only an agent creates an app"))
            }
            Command::CreateArtifact { kind, data, .. } if kind == "app" && server_of(data).is_some() && view.principal().run.is_none() => {
                Err(Error::forbidden(
                    lattice_core::Code::ReservedForLattice,
                    "a connected server's app is put in a thread by lattice's runner only, from the server's answer",
                ))
            }
            _ => Ok(()),
        }
    }
}

/// Who may change what (U9): nobody edits a submission; a form's `closed`,
/// deadline (`closes_at`), schema and submission policy change only by its
/// author or a workspace admin; a person edits an app under `/state` only.
pub struct EditRules;

/// A form's fields only its author or a workspace admin changes.
const FORM_AUTHORS_FIELDS: [&str; 4] = ["closed", "closes_at", "schema", "submissions"];

#[async_trait::async_trait]
impl Check for EditRules {
    async fn check(&self, view: &dyn WorkspaceView, actor: &Actor, command: &Command) -> Result<(), Error> {
        let Command::EditArtifact { id, patch, .. } = command else { return Ok(()) };
        let Some(head) = view.artifact(id, None).await? else { return Err(Error::NotFound) };
        match head.kind.as_str() {
            "submission" => Err(Error::forbidden(lattice_core::Code::EditNotAllowed, "nobody edits a submission")),
            "form" => {
                let after = lattice_core::patch::apply(&head.data, patch, crate::form::FORM_MAX_BYTES)?;
                let changes = |key: &str| head.data.get(key) != after.get(key);
                // The deadline closes the form as `closed` does: moved into
                // the past it refuses every answer, removed it keeps open
                // what its author meant to close.
                let governed = FORM_AUTHORS_FIELDS.iter().any(|key| changes(key));
                if governed && head.author != actor.name() && view.role() < Role::Admin {
                    return Err(Error::forbidden(
                        lattice_core::Code::NotAuthor,
                        "only the form's author or a workspace admin changes its schema, its submissions, its deadline or closes it",
                    ));
                }
                Ok(())
            }
            "app" if head.data.get("server").is_some() => {
                Err(Error::forbidden(lattice_core::Code::EditNotAllowed, "a connected server's app is its server's: nobody edits it"))
            }
            "app" if patch_touches(patch, "/server") => {
                Err(Error::forbidden(lattice_core::Code::EditNotAllowed, "an app's server is set when the app is made, never after"))
            }
            "app" if !actor.is_agent() => {
                let under_state = |path: &str| path == "/state" || path.starts_with("/state/");
                let ops = serde_json::to_value(patch).unwrap_or(Value::Null);
                let touches_only_state = ops.as_array().is_some_and(|ops| {
                    ops.iter().all(|op| {
                        op.get("path").and_then(Value::as_str).is_some_and(under_state)
                            && op.get("from").and_then(Value::as_str).is_none_or(under_state)
                    })
                });
                if touches_only_state {
                    Ok(())
                } else {
                    Err(Error::forbidden(lattice_core::Code::EditNotAllowed, "a person edits an app's /state only; its HTML is always an agent's"))
                }
            }
            _ => Ok(()),
        }
    }
}

/// Whether an operation of `patch` writes at or under `at`.
fn patch_touches(patch: &impl serde::Serialize, at: &str) -> bool {
    let under = |path: &str| path == at || path.starts_with(&format!("{at}/")) || path.is_empty();
    let ops = serde_json::to_value(patch).unwrap_or(Value::Null);
    ops.as_array().is_some_and(|ops| ops.iter().any(|op| op.get("path").and_then(Value::as_str).is_some_and(under)))
}
