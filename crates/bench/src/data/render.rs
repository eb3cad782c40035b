//! The rows a plan's commands would have left: each envelope as
//! `store::insert_envelope` appends it (its payload the event struct of
//! lattice-core, its actor as the write path names it), and each read
//! model as its writer in crates/log/src/store leaves it at the log's
//! end (an artifact's head and every version, a run's last status, who
//! is listed where, read marks, switches). What the product derives
//! (digests, submission ids, a form's `asks`, a submission's parent) is
//! derived by the product's own functions.

use lattice_core::event::{
    ArtifactChanged, ArtifactCreated, DeferredAnswered, Event, MemberAdded, MessagePosted, ModelReplied, RunFinished, RunPaused, RunResumed,
    RunStarted, SwitchSet, ThreadCreated, ThreadShared, ToolReturned, WorkspaceCreated,
};
use lattice_core::{Actor, ArtifactKind, DeferredRequest, Level, RunId, SwitchState, TenantId, TenantRole, ToolCall, UserId, WorkspaceId};
use serde_json::{Value, json};

use super::plan::{ArtKind, GlobalStep, Model, Place, Plan, Step, Thread, WsStep, words};
use super::sink::{Sink, Table, Val};
use crate::rng::Rng;

/// Who sets the deployment's switch: an operator (a deployment admin).
const OPERATOR: (&str, &str) = ("t0", "ops");
const ASK_FORM_CALL: &str = "call_ask_form_1";

fn person(tenant: &str, user: &str) -> String {
    serde_json::to_string(&Actor::Person { tenant: TenantId::from_trusted(tenant), user: UserId::from_trusted(user) }).unwrap()
}

/// The agent acting for `user` inside a run.
fn agent(tenant: &str, user: &str, run: &str) -> String {
    let actor = Actor::Agent { tenant: TenantId::from_trusted(tenant), user: UserId::from_trusted(user), run: Some(RunId::from_trusted(run)) };
    serde_json::to_string(&actor).unwrap()
}

/// Writes every row of `plan`: the envelopes in log order, then the read
/// models.
pub async fn seed(plan: &Plan, sink: &mut Sink) {
    let mut rng = Rng::new(0xe11e_0000);
    // In log order: the n-th row takes sequence number n.
    for place in &plan.order {
        let row = envelope(plan, *place, &mut rng);
        sink.put(Table::Envelopes, row).await;
    }
    for ws in &plan.workspaces {
        let tenant = &plan.tenants[ws.tenant as usize].id;
        let admin = &ws.members[0].user;
        sink.put(
            Table::Workspaces,
            vec![ws.id.as_str().into(), tenant.as_str().into(), ws.name.as_str().into(), admin.as_str().into(), ws.steps.at(0).into()],
        )
        .await;
        for m in &ws.members {
            sink.put(Table::Members, vec![ws.id.as_str().into(), m.user.as_str().into(), m.role.as_str().into()]).await;
        }
        for step in &ws.steps.steps {
            if let WsStep::Switch { key, new } = step {
                let level = Level::Workspace(WorkspaceId::from_trusted(ws.id.clone())).to_string();
                sink.put(Table::Switches, vec![level.into(), key.as_str().into(), new.as_str().into()]).await;
            }
        }
    }
    for step in &plan.global.steps {
        let GlobalStep::Switch { tenant, key, new } = step;
        sink.put(Table::Switches, vec![level_of(plan, *tenant).into(), key.as_str().into(), new.as_str().into()]).await;
    }
    for th in &plan.threads {
        thread_rows(plan, th, sink).await;
    }
}

fn level_of(plan: &Plan, tenant: Option<u32>) -> String {
    match tenant {
        None => Level::Deployment.to_string(),
        Some(t) => Level::Tenant(TenantId::from_trusted(plan.tenants[t as usize].id.clone())).to_string(),
    }
}

/// One envelope, as `insert_envelope` binds it.
fn envelope(plan: &Plan, place: Place, rng: &mut Rng) -> Vec<Val> {
    let at = super::plan::at_ms(plan.time_of(place));
    let id = rng.ulid(at).to_string();
    let (tenant, workspace, thread, actor, event, run): (String, Option<&str>, Option<&str>, String, Event, Option<&str>) = match place {
        Place::Global(i) => {
            let GlobalStep::Switch { tenant, key, new } = &plan.global.steps[i as usize];
            let (envelope_tenant, actor) = match tenant {
                None => (lattice_core::envelope::DEPLOYMENT_TENANT.to_owned(), person(OPERATOR.0, OPERATOR.1)),
                Some(t) => {
                    let id = &plan.tenants[*t as usize].id;
                    (id.clone(), person(id, &format!("{id}-admin")))
                }
            };
            let event = switch_set(level_of(plan, *tenant), *key, *new);
            (envelope_tenant, None, None, actor, event, None)
        }
        Place::Ws(w, i) => {
            let ws = &plan.workspaces[w as usize];
            let tenant = plan.tenants[ws.tenant as usize].id.clone();
            let admin = &ws.members[0].user;
            let actor = person(&tenant, admin);
            let event: Event = match &ws.steps.steps[i as usize] {
                WsStep::Created => WorkspaceCreated { workspace: ws.id.clone(), name: ws.name.clone(), admin: admin.clone() }.into(),
                WsStep::Member(m) => {
                    let m = &ws.members[*m as usize];
                    MemberAdded { workspace: ws.id.clone(), user: m.user.clone(), role: m.role }.into()
                }
                WsStep::Switch { key, new } => switch_set(Level::Workspace(WorkspaceId::from_trusted(ws.id.clone())).to_string(), *key, *new),
            };
            (tenant, Some(ws.id.as_str()), None, actor, event, None)
        }
        Place::Th(t, i) => {
            let th = &plan.threads[t as usize];
            let ws = &plan.workspaces[th.ws as usize];
            let tenant = plan.tenants[ws.tenant as usize].id.clone();
            let (actor, event, run) = thread_event(plan, th, i as usize, &tenant, at);
            (tenant, Some(ws.id.as_str()), Some(th.id.as_str()), actor, event, run)
        }
    };
    vec![
        id.into(),
        tenant.into(),
        workspace.into(),
        thread.into(),
        actor.into(),
        at.into(),
        event.name().into(),
        event.payload_json().into(),
        Val::Null,
        run.into(),
    ]
}

/// Every switch is set once, from unset.
fn switch_set(level: String, key: lattice_core::SwitchKey, new: SwitchState) -> Event {
    SwitchSet {
        level,
        key: key.as_str().into(),
        old: SwitchState::Unset.as_str().into(),
        new: new.as_str().into(),
        reason: "turned on for the team".into(),
    }
    .into()
}

/// A thread's envelope: its actor, its event and its run.
fn thread_event<'a>(plan: &Plan, th: &'a Thread, i: usize, tenant: &str, at: i64) -> (String, Event, Option<&'a str>) {
    let members = &plan.workspaces[th.ws as usize].members;
    let user = |m: u8| members[m as usize].user.as_str();
    let run_of = |r: u16| &th.runs[r as usize];
    // Who a run's agent acts for at this step: its starter, then whoever
    // answered its ask_form.
    let acting = |r: u16| {
        let run = run_of(r);
        user(run.answerer.unwrap_or(run.starter))
    };
    match th.steps.steps[i] {
        Step::Created => {
            let event = ThreadCreated { thread: th.id.clone(), title: th.title.clone(), restricted: th.restricted };
            (person(tenant, user(th.creator)), event.into(), None)
        }
        Step::Shared { member, role } => {
            (person(tenant, user(0)), ThreadShared { thread: th.id.clone(), user: user(member).into(), role }.into(), None)
        }
        Step::Message { author } => (person(tenant, user(author)), MessagePosted { thread: th.id.clone(), text: message(th, i) }.into(), None),
        Step::ArtifactCreated { art } => {
            let a = &th.arts[art as usize];
            let data = art_data(th, art, 1, at);
            let digest = lattice_log::digest(&data);
            let event = ArtifactCreated { id: a.id.clone(), kind: kind_name(&a.kind).into(), version: 1, data, digest };
            match a.kind {
                ArtKind::Dashboard { run } | ArtKind::App { run } => {
                    let run = run_of(run);
                    (agent(tenant, user(run.starter), &run.id), event.into(), Some(run.id.as_str()))
                }
                _ => (person(tenant, user(a.author)), event.into(), None),
            }
        }
        Step::AppChanged { art, version } => {
            let a = &th.arts[art as usize];
            let (_, by) = a.changes[version as usize - 2];
            let data = art_data(th, art, u64::from(version), at);
            let patch = serde_json::from_value(json!([{"op": "add", "path": "/state/count", "value": version - 1}])).unwrap();
            let event =
                ArtifactChanged { id: a.id.clone(), kind: "app".into(), version: u64::from(version), patch, digest: lattice_log::digest(&data) };
            (person(tenant, user(by)), event.into(), None)
        }
        Step::RunStarted { run } => {
            let r = run_of(run);
            let event = RunStarted {
                run_id: r.id.clone(),
                prompt: prompt(r.model).into(),
                model: r.model.name().into(),
                started_by: user(r.starter).into(),
                chain: None,
                context: Vec::new(),
            };
            (person(tenant, user(r.starter)), event.into(), Some(r.id.as_str()))
        }
        Step::Replied { run, last } => {
            let r = run_of(run);
            let event = if last {
                ModelReplied { run_id: r.id.clone(), text: Some(closing(r.model)), tool_calls: Vec::new(), tokens: None }
            } else {
                let (name, arguments) = tool_call(r.model);
                ModelReplied {
                    run_id: r.id.clone(),
                    text: None,
                    tool_calls: vec![ToolCall { id: call_id(r.model).into(), name: name.into(), arguments }],
                    tokens: None,
                }
            };
            let who = if last { acting(run) } else { user(r.starter) };
            (agent(tenant, who, &r.id), event.into(), Some(r.id.as_str()))
        }
        Step::Paused { run } => {
            let r = run_of(run);
            let event = RunPaused { run_id: r.id.clone(), requests: vec![ask_form_request()] };
            (agent(tenant, user(r.starter), &r.id), event.into(), Some(r.id.as_str()))
        }
        Step::Answered { run } => {
            let r = run_of(run);
            let by = user(r.answerer.expect("an answered run has its answerer"));
            let event = DeferredAnswered {
                run_id: r.id.clone(),
                turn_id: r.id.clone(),
                tool_call_id: ASK_FORM_CALL.into(),
                tool_name: lattice_ui::asks::ASK_FORM.into(),
                answer: answer(),
                approved: true,
                author: by.into(),
                expired: false,
                chain: None,
            };
            (person(tenant, by), event.into(), Some(r.id.as_str()))
        }
        Step::Resumed { run } => {
            let r = run_of(run);
            let event = RunResumed { run_id: r.id.clone(), actor: acting(run).into(), role: TenantRole::Member };
            (agent(tenant, acting(run), &r.id), event.into(), Some(r.id.as_str()))
        }
        Step::ToolReturned { run } => {
            let r = run_of(run);
            let art = r.art.expect("a dashboard or app run made its artifact");
            let a = &th.arts[art as usize];
            let made_at = th.steps.at(a.step as usize);
            let digest = lattice_log::digest(&art_data(th, art, 1, made_at));
            // What the commit answered (`Committed::receipt`).
            let result = json!({"id": a.id, "version": 1, "digest": digest, "seq": th.steps.seqs[a.step as usize]});
            let (name, _) = tool_call(r.model);
            let event = ToolReturned { run_id: r.id.clone(), tool_call_id: call_id(r.model).into(), tool_name: name.into(), result, is_error: false };
            (agent(tenant, user(r.starter), &r.id), event.into(), Some(r.id.as_str()))
        }
        Step::AgentMessage { run } => {
            let r = run_of(run);
            (agent(tenant, acting(run), &r.id), MessagePosted { thread: th.id.clone(), text: closing(r.model) }.into(), Some(r.id.as_str()))
        }
        Step::Finished { run } => {
            let r = run_of(run);
            (agent(tenant, acting(run), &r.id), RunFinished { run_id: r.id.clone(), text: Some(closing(r.model)) }.into(), Some(r.id.as_str()))
        }
    }
}

fn kind_name(kind: &ArtKind) -> &'static str {
    match kind {
        ArtKind::Form { .. } => lattice_ui::FORM,
        ArtKind::Submission { .. } => lattice_ui::SUBMISSION,
        ArtKind::Dashboard { .. } => lattice_ui::DASHBOARD,
        ArtKind::App { .. } => lattice_ui::APP,
    }
}

/// A message of 6 to 40 words, the same for the same place.
fn message(th: &Thread, i: usize) -> String {
    let mut rng = Rng::new(th.steps.times[0] ^ ((i as u64) << 40));
    let n = 6 + rng.below(35) as usize;
    let mut text = words(&mut rng, n);
    text.push('.');
    text
}

fn prompt(model: Model) -> &'static str {
    match model {
        Model::AskForm => "Collect the incident report",
        Model::Dashboard => "Show me the service health",
        Model::App => "Make a counter for the stand-up",
    }
}

fn call_id(model: Model) -> &'static str {
    match model {
        Model::AskForm => ASK_FORM_CALL,
        Model::Dashboard => "call_show_dashboard_1",
        Model::App => "call_create_app_1",
    }
}

fn closing(model: Model) -> String {
    match model {
        Model::AskForm => format!("Thanks, I have the report. You sent:\n\n{}", answer()),
        Model::Dashboard => "Here is the dashboard of service health.".into(),
        Model::App => "I made a small counter app.".into(),
    }
}

/// The model's tool call: the scripted models' own arguments.
fn tool_call(model: Model) -> (&'static str, Value) {
    match model {
        Model::AskForm => (lattice_ui::asks::ASK_FORM, lattice_agent::scripted::incident_form()),
        Model::Dashboard => (lattice_ui::tool_names::SHOW_DASHBOARD, json!({"title": "Service health", "panels": panels()})),
        Model::App => {
            (lattice_ui::tool_names::CREATE_APP, json!({"title": "Counter", "summary": APP_SUMMARY, "html": lattice_agent::scripted::COUNTER_APP}))
        }
    }
}

fn ask_form_request() -> DeferredRequest {
    let (name, args) = tool_call(Model::AskForm);
    DeferredRequest { tool_call_id: ASK_FORM_CALL.into(), tool_name: name.into(), args, expires_in_secs: None, expires_at: None, sign_in: None }
}

fn answer() -> Value {
    json!({"date": "2026-03-02", "severity": "medium", "affected": ["API"], "note": "Timeouts on search since the deploy."})
}

const APP_SUMMARY: &str = "Counts your clicks, keeps the count, and submits it when you ask.";

fn panels() -> Value {
    json!([
        {"type": "metric", "label": "Open incidents", "value": 3, "delta": -1},
        {"type": "line", "title": "Requests per minute", "x": ["09:00", "10:00", "11:00", "12:00"],
            "series": [{"name": "api", "values": [1200, 1350, 1280, 1410]}, {"name": "web", "values": [800, 870, 910, 880]}]},
        {"type": "table", "title": "Slowest endpoints", "columns": ["endpoint", {"label": "p99", "format": "number", "unit": "ms"}],
            "rows": [["/v1/search", 412], ["/v1/export", 388], ["/v1/login", 120]]}
    ])
}

/// An artifact's data at `version`, made at `at` (a dashboard's `as_of`).
fn art_data(th: &Thread, art: u16, version: u64, at: i64) -> Value {
    let a = &th.arts[art as usize];
    match &a.kind {
        ArtKind::Form { policy } => {
            let mut rng = Rng::new(th.steps.times[a.step as usize]);
            json!({"title": format!("{} form", words(&mut rng, 2)), "schema": {
                "type": "object",
                "properties": {
                    "answer": {"type": "string", "title": "Your answer", "maxLength": 500},
                    "score": {"type": "integer", "title": "How sure are you?", "minimum": 1, "maximum": 5}
                },
                "required": ["answer"]
            }, "submissions": policy})
        }
        ArtKind::Submission { form, nonce } => {
            let mut rng = Rng::new(th.steps.times[a.step as usize]);
            let values = json!({"answer": words(&mut rng, 8), "score": 1 + rng.below(5)});
            let form = &th.arts[*form as usize];
            let submission =
                lattice_ui::submission::Submission { form_id: form.id.clone(), form_version: 1, values, nonce: nonce.clone(), files: Vec::new() };
            submission.data()
        }
        // As the runner's show_dashboard makes it (crates/agent/src/act.rs).
        ArtKind::Dashboard { .. } => json!({"title": "Service health", "as_of": lattice_log::rfc3339(at), "panels": panels()}),
        // As create_app makes it; each change counts once more.
        ArtKind::App { .. } => {
            let state = if version == 1 { json!({}) } else { json!({"count": version - 1}) };
            json!({"title": "Counter", "summary": APP_SUMMARY, "html": lattice_agent::scripted::COUNTER_APP, "state": state})
        }
    }
}

/// A thread's read models: the thread, who is listed on it, its
/// artifacts (head and versions), its runs and their requests, its read
/// marks.
async fn thread_rows(plan: &Plan, th: &Thread, sink: &mut Sink) {
    let ws = &plan.workspaces[th.ws as usize];
    let tenant = plan.tenants[ws.tenant as usize].id.as_str();
    let user = |m: u8| ws.members[m as usize].user.as_str();
    let created = th.steps.at(0);
    sink.put(
        Table::Threads,
        vec![
            th.id.as_str().into(),
            ws.id.as_str().into(),
            th.title.as_str().into(),
            user(th.creator).into(),
            created.into(),
            i64::from(th.restricted).into(),
        ],
    )
    .await;
    // A restricted thread's starter is listed on it as an editor; each
    // listing after sets the person's role (the writers' upsert).
    let mut listed: Vec<(u8, lattice_core::Role)> = Vec::new();
    if th.restricted {
        listed.push((th.creator, lattice_core::Role::Editor));
    }
    for step in &th.steps.steps {
        if let Step::Shared { member, role } = *step {
            match listed.iter_mut().find(|(m, _)| *m == member) {
                Some(entry) => entry.1 = role,
                None => listed.push((member, role)),
            }
        }
    }
    for (member, role) in listed {
        sink.put(Table::ThreadMembers, vec![th.id.as_str().into(), user(member).into(), role.as_str().into()]).await;
    }
    for (n, a) in th.arts.iter().enumerate() {
        let made = th.steps.at(a.step as usize);
        let (author, agent) = match a.kind {
            ArtKind::Dashboard { run } | ArtKind::App { run } => (user(th.runs[run as usize].starter), 1),
            _ => (user(a.author), 0),
        };
        let version = 1 + a.changes.len() as u64;
        let head = art_data(th, n as u16, version, made);
        let updated = a.changes.last().map_or(made, |(step, _)| th.steps.at(*step as usize));
        let kind: &dyn ArtifactKind = match a.kind {
            ArtKind::Form { .. } => &lattice_ui::FormKind,
            ArtKind::Submission { .. } => &lattice_ui::SubmissionKind,
            ArtKind::Dashboard { .. } => &lattice_ui::DashboardKind,
            ArtKind::App { .. } => &lattice_ui::AppKind,
        };
        let asks = kind.asks(&head);
        sink.put(
            Table::Artifacts,
            vec![
                tenant.into(),
                a.id.as_str().into(),
                ws.id.as_str().into(),
                th.id.as_str().into(),
                kind_name(&a.kind).into(),
                (version as i64).into(),
                serde_json::to_string(&head).unwrap().into(),
                lattice_log::digest(&head).into(),
                author.into(),
                made.into(),
                updated.into(),
                0i64.into(),
                kind.parent(&head).into(),
                Val::Null,
                asks.as_ref().map(|a| a.answered_by.as_str()).into(),
                asks.as_ref().map(|a| a.title.as_str()).into(),
                asks.as_ref().and_then(|a| a.closes_at_ms).into(),
                i64::from(agent).into(),
            ],
        )
        .await;
        let first = art_data(th, n as u16, 1, made);
        let mut versions = vec![(1u64, first, author, made)];
        for (k, (step, by)) in a.changes.iter().enumerate() {
            let at = th.steps.at(*step as usize);
            versions.push((k as u64 + 2, art_data(th, n as u16, k as u64 + 2, at), user(*by), at));
        }
        for (v, data, by, at) in versions {
            let row = vec![
                tenant.into(),
                a.id.as_str().into(),
                (v as i64).into(),
                serde_json::to_string(&data).unwrap().into(),
                lattice_log::digest(&data).into(),
                by.into(),
                at.into(),
            ];
            sink.put(Table::ArtifactVersions, row).await;
        }
    }
    for r in &th.runs {
        let start = r.started_step as usize;
        // The last step that moved its status: the pause, or the finish.
        let (status, last) = match (r.paused, r.model) {
            (true, _) => ("paused", start + 2),
            (false, Model::AskForm) => ("finished", start + 7),
            (false, _) => ("finished", start + 6),
        };
        let acting = user(r.answerer.unwrap_or(r.starter));
        let member = TenantRole::Member.as_str();
        sink.put(
            Table::Runs,
            vec![
                tenant.into(),
                r.id.as_str().into(),
                ws.id.as_str().into(),
                th.id.as_str().into(),
                status.into(),
                r.model.name().into(),
                user(r.starter).into(),
                acting.into(),
                member.into(),
                member.into(),
                th.steps.at(start).into(),
                th.steps.at(last).into(),
                Val::Null,
                Val::Null,
                Val::Null,
            ],
        )
        .await;
        if r.model == Model::AskForm {
            let request = ask_form_request();
            let answered = r.answerer.map(user);
            sink.put(
                Table::RunRequests,
                vec![
                    tenant.into(),
                    r.id.as_str().into(),
                    request.tool_call_id.into(),
                    request.tool_name.into(),
                    request.args.to_string().into(),
                    answered.into(),
                    answered.map(|_| answer().to_string()).into(),
                    Val::Null,
                ],
            )
            .await;
        }
    }
    for (m, step) in &th.marks {
        sink.put(Table::ReadMarks, vec![th.id.as_str().into(), user(*m).into(), th.steps.seqs[*step as usize].into()]).await;
    }
}
