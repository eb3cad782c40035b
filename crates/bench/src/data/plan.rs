//! The seeded log's shape, worked out before a row is written: who is in
//! which workspace, what each thread holds (messages, forms and their
//! submissions, apps and their changes, agent runs), and when each
//! envelope was committed, which fixes its sequence number.
//!
//! The probe workspace (the one the reads are made in) comes from a seed
//! of its own, so it is the same, envelope for envelope, in the large log
//! and in the small one; the large log adds 999 more workspaces around it,
//! their envelopes interleaved with its own as half a year of use would
//! leave them.

use lattice_core::{Role, SwitchKey, SwitchState};

use crate::rng::Rng;
use lattice_ui::form::Submissions as Policy;
use lattice_ui::submission::submission_id;

/// 2026-01-01T00:00:00Z: when the log starts.
pub const LOG_START_MS: i64 = 1_767_225_600_000;
/// The log covers half a year, in microseconds (the timeline's unit).
pub const SPAN_US: u64 = 180 * 86_400 * 1_000_000;

pub const TENANTS: u32 = 100;
pub const WORKSPACES: u32 = 1_000;
pub const THREADS: u32 = 10_000;
/// Threads in the probe workspace: a large workspace (ten times the mean).
pub const PROBE_THREADS: u32 = 100;
/// Envelopes in the probe thread after its creation: more than a page.
const PROBE_THREAD_LENGTH: usize = 599;
/// People per tenant, of whom a workspace has a few.
const PEOPLE: u32 = 24;

pub fn at_ms(time_us: u64) -> i64 {
    LOG_START_MS + (time_us / 1000) as i64
}

/// Steps of one stream (a thread, a workspace, the deployment), each with
/// its time and, once the timeline is laid, its sequence number.
pub struct Steps<S> {
    pub steps: Vec<S>,
    pub times: Vec<u64>,
    pub seqs: Vec<i64>,
}

impl<S> Default for Steps<S> {
    fn default() -> Self {
        Self { steps: Vec::new(), times: Vec::new(), seqs: Vec::new() }
    }
}

impl<S> Steps<S> {
    fn push(&mut self, step: S, time: u64) {
        self.steps.push(step);
        self.times.push(time);
    }

    pub fn at(&self, i: usize) -> i64 {
        at_ms(self.times[i])
    }
}

pub struct Tenant {
    pub id: String,
}

pub struct Member {
    pub user: String,
    pub role: Role,
}

/// A switch set at the deployment or a tenant (the global stream).
pub enum GlobalStep {
    Switch { tenant: Option<u32>, key: SwitchKey, new: SwitchState },
}

pub enum WsStep {
    Created,
    Member(u8),
    Switch { key: SwitchKey, new: SwitchState },
}

pub struct Workspace {
    pub id: String,
    pub tenant: u32,
    pub name: String,
    /// The first is its creator, its admin.
    pub members: Vec<Member>,
    pub steps: Steps<WsStep>,
}

pub enum ArtKind {
    Form { policy: Policy },
    Submission { form: u16, nonce: Option<String> },
    Dashboard { run: u16 },
    App { run: u16 },
}

pub struct Art {
    pub id: String,
    pub kind: ArtKind,
    /// The member who made it (an agent acting for them, for a run's).
    pub author: u8,
    /// The step that created it.
    pub step: u32,
    /// The app's later versions: (step, member who changed it).
    pub changes: Vec<(u32, u8)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Model {
    AskForm,
    Dashboard,
    App,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::AskForm => "scripted:ask_form",
            Model::Dashboard => "scripted:dashboard",
            Model::App => "scripted:app",
        }
    }
}

pub struct Run {
    pub id: String,
    pub model: Model,
    pub starter: u8,
    /// Who answered its ask_form (an ask_form run that finished).
    pub answerer: Option<u8>,
    /// Its artifact (a dashboard or app run's).
    pub art: Option<u16>,
    /// Paused on its ask_form at the log's end.
    pub paused: bool,
    pub started_step: u32,
}

#[derive(Clone, Copy)]
pub enum Step {
    Created,
    Shared {
        member: u8,
        role: Role,
    },
    Message {
        author: u8,
    },
    ArtifactCreated {
        art: u16,
    },
    AppChanged {
        art: u16,
        version: u16,
    },
    RunStarted {
        run: u16,
    },
    /// The model's first reply (its tool call) or its last (its text).
    Replied {
        run: u16,
        last: bool,
    },
    Paused {
        run: u16,
    },
    Answered {
        run: u16,
    },
    Resumed {
        run: u16,
    },
    ToolReturned {
        run: u16,
    },
    AgentMessage {
        run: u16,
    },
    Finished {
        run: u16,
    },
}

pub struct Thread {
    pub id: String,
    pub ws: u32,
    pub title: String,
    pub restricted: bool,
    pub creator: u8,
    pub steps: Steps<Step>,
    pub arts: Vec<Art>,
    pub runs: Vec<Run>,
    /// How far members have read it: (member, step).
    pub marks: Vec<(u8, u32)>,
}

/// Where one envelope comes from.
#[derive(Clone, Copy)]
pub enum Place {
    Global(u32),
    Ws(u32, u32),
    Th(u32, u32),
}

/// What the measured reads ask for, in the probe workspace.
pub struct Probe {
    pub ws: u32,
    /// The long thread: its pages, its form's submissions.
    pub thread: u32,
    pub form: u16,
    /// The member who reads (an editor, not an admin).
    pub reader: u8,
}

pub struct Plan {
    pub tenants: Vec<Tenant>,
    pub global: Steps<GlobalStep>,
    pub workspaces: Vec<Workspace>,
    pub threads: Vec<Thread>,
    /// Every envelope in log order: sequence number n is `order[n - 1]`.
    pub order: Vec<Place>,
    pub probe: Probe,
}

impl Plan {
    /// The large log (`large`), or the probe workspace alone.
    pub fn new(large: bool) -> Self {
        let tenants = if large { TENANTS } else { 1 };
        let mut plan = Plan {
            tenants: (0..tenants).map(|t| Tenant { id: format!("t{t}") }).collect(),
            global: Steps::default(),
            workspaces: Vec::new(),
            threads: Vec::new(),
            order: Vec::new(),
            probe: Probe { ws: 0, thread: 0, form: 0, reader: 1 },
        };
        // An operator turns mini apps on (off by default) before anyone uses
        // the deployment; a third of the tenants' admins turn forms on.
        plan.global.push(GlobalStep::Switch { tenant: None, key: SwitchKey::MiniApps, new: SwitchState::On }, 0);
        for t in (0..tenants).filter(|t| t % 3 == 0) {
            let time = (Rng::new(0x7e4a_4700 + u64::from(t)).unit() * SPAN_US as f64) as u64;
            plan.global.push(GlobalStep::Switch { tenant: Some(t), key: SwitchKey::Forms, new: SwitchState::On }, time);
        }
        plan.global.sort_by_time();
        probe_workspace(&mut plan);
        if large {
            background(&mut plan);
        }
        plan.lay_timeline();
        plan
    }

    /// Orders every envelope by its time, which gives its sequence number.
    fn lay_timeline(&mut self) {
        let mut all: Vec<(u64, Place)> = Vec::new();
        all.extend(self.global.times.iter().enumerate().map(|(i, &t)| (t, Place::Global(i as u32))));
        for (w, ws) in self.workspaces.iter().enumerate() {
            all.extend(ws.steps.times.iter().enumerate().map(|(i, &t)| (t, Place::Ws(w as u32, i as u32))));
        }
        for (n, th) in self.threads.iter().enumerate() {
            all.extend(th.steps.times.iter().enumerate().map(|(i, &t)| (t, Place::Th(n as u32, i as u32))));
        }
        all.sort_by_key(|(t, _)| *t);
        self.global.seqs = vec![0; self.global.steps.len()];
        for ws in &mut self.workspaces {
            ws.steps.seqs = vec![0; ws.steps.steps.len()];
        }
        for th in &mut self.threads {
            th.steps.seqs = vec![0; th.steps.steps.len()];
        }
        for (n, (_, place)) in all.iter().enumerate() {
            let seq = n as i64 + 1;
            match *place {
                Place::Global(i) => self.global.seqs[i as usize] = seq,
                Place::Ws(w, i) => self.workspaces[w as usize].steps.seqs[i as usize] = seq,
                Place::Th(t, i) => self.threads[t as usize].steps.seqs[i as usize] = seq,
            }
        }
        self.order = all.into_iter().map(|(_, p)| p).collect();
    }

    /// The envelope at a place: its time.
    pub fn time_of(&self, place: Place) -> u64 {
        match place {
            Place::Global(i) => self.global.times[i as usize],
            Place::Ws(w, i) => self.workspaces[w as usize].steps.times[i as usize],
            Place::Th(t, i) => self.threads[t as usize].steps.times[i as usize],
        }
    }

    /// The workspace an envelope at `place` is in, if any.
    pub fn workspace_of(&self, place: Place) -> Option<u32> {
        match place {
            Place::Global(_) => None,
            Place::Ws(w, _) => Some(w),
            Place::Th(t, _) => Some(self.threads[t as usize].ws),
        }
    }

    /// Whether `member` of the thread's workspace sees it: not restricted,
    /// or an admin, its creator, or listed on it.
    pub fn sees(&self, thread: &Thread, member: u8) -> bool {
        let ws = &self.workspaces[thread.ws as usize];
        !thread.restricted
            || ws.members[member as usize].role == Role::Admin
            || member == thread.creator
            || thread.steps.steps.iter().any(|s| matches!(s, Step::Shared { member: m, .. } if *m == member))
    }
}

impl<S> Steps<S> {
    fn sort_by_time(&mut self) {
        let mut both: Vec<(u64, S)> = self.times.drain(..).zip(self.steps.drain(..)).collect();
        both.sort_by_key(|(t, _)| *t);
        for (t, s) in both {
            self.push(s, t);
        }
    }
}

/// The probe workspace: tenant t0's, created early, with 100 threads of
/// which one is long (more than a page, with a form taking many
/// submissions), three restricted (its reader listed on one).
fn probe_workspace(plan: &mut Plan) {
    let mut rng = Rng::new(0x9e0b_e000);
    let roles = [Role::Admin, Role::Editor, Role::Editor, Role::Respondent, Role::Viewer, Role::Editor];
    let members = roles.iter().enumerate().map(|(i, &role)| Member { user: format!("t0-u{i}"), role }).collect();
    let created = SPAN_US / 100;
    let ws = workspace(plan, &mut rng, 0, members, created, Some(SwitchKey::MiniApps));
    plan.probe.ws = ws;
    for k in 0..PROBE_THREADS {
        let start = if k == 0 { created + 10_000 } else { created + (SPAN_US * 9 / 10 - created) * u64::from(k) / u64::from(PROBE_THREADS) };
        let restricted = k > 0 && k % 30 == 0;
        let (length, long) = if k == 0 { (PROBE_THREAD_LENGTH, true) } else { (2 + rng.below(3) as usize, false) };
        // The admin starts the restricted ones.
        let creator = restricted.then_some(0);
        let t = thread(plan, &mut rng, ws, start, length, restricted, long, creator);
        if restricted {
            // The reader is listed on the first restricted thread only.
            let member = if k == 30 { 1 } else { 2 };
            share(plan, t, member, Role::Viewer);
        }
        if k == 0 {
            plan.probe.thread = t;
        }
    }
}

/// The other 999 workspaces, over 100 tenants, with 9,900 threads of about
/// a hundred envelopes each.
fn background(plan: &mut Plan) {
    let others = WORKSPACES - 1;
    let mut rng = Rng::new(0xb4c6_0000);
    let mut sizes: Vec<u32> = (0..others).map(|_| 2 + rng.below(17) as u32).collect();
    let want = THREADS - PROBE_THREADS;
    while sizes.iter().sum::<u32>() != want {
        let i = rng.below(u64::from(others)) as usize;
        if sizes.iter().sum::<u32>() > want {
            if sizes[i] > 2 {
                sizes[i] -= 1;
            }
        } else {
            sizes[i] += 1;
        }
    }
    for w in 1..=others {
        let mut rng = Rng::new(0xb4c6_0000 + u64::from(w));
        let tenant = w % TENANTS;
        let count = 3 + rng.below(6) as usize;
        let mut people: Vec<u32> = Vec::new();
        while people.len() < count {
            let p = rng.below(u64::from(PEOPLE)) as u32;
            if !people.contains(&p) {
                people.push(p);
            }
        }
        let members = people
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let role = match (i, rng.below(100)) {
                    (0, _) => Role::Admin,
                    (_, 0..70) => Role::Editor,
                    (_, 70..85) => Role::Respondent,
                    _ => Role::Viewer,
                };
                Member { user: format!("t{tenant}-u{p}"), role }
            })
            .collect();
        let created = SPAN_US / 100 + (rng.unit() * 0.6 * SPAN_US as f64) as u64;
        let switch = rng.chance(20).then_some(SwitchKey::MiniApps);
        let ws = workspace(plan, &mut rng, tenant, members, created, switch);
        for _ in 0..sizes[(w - 1) as usize] {
            let start = created + 1_000_000 + (rng.unit() * (SPAN_US as f64 * 0.95 - created as f64)) as u64;
            let restricted = rng.chance(5);
            let length = 10 + rng.below(181) as usize;
            let t = thread(plan, &mut rng, ws, start, length, restricted, false, None);
            if restricted {
                let n = plan.workspaces[ws as usize].members.len() as u64;
                let member = 1 + rng.below(n - 1) as u8;
                if member != plan.threads[t as usize].creator {
                    share(plan, t, member, Role::Viewer);
                }
            }
        }
    }
}

fn workspace(plan: &mut Plan, rng: &mut Rng, tenant: u32, members: Vec<Member>, created: u64, switch: Option<SwitchKey>) -> u32 {
    let id = rng.id("ws_", at_ms(created));
    let mut steps = Steps::default();
    steps.push(WsStep::Created, created);
    for m in 1..members.len() {
        steps.push(WsStep::Member(m as u8), created + 1_000 * m as u64);
    }
    if let Some(key) = switch {
        steps.push(WsStep::Switch { key, new: SwitchState::On }, created + 60_000_000);
    }
    let name = format!("{} {}", words(rng, 2), rng.below(100));
    plan.workspaces.push(Workspace { id, tenant, name, members, steps });
    (plan.workspaces.len() - 1) as u32
}

/// A listing on a restricted thread by the workspace's admin, just after
/// the thread began.
fn share(plan: &mut Plan, t: u32, member: u8, role: Role) {
    let thread = &mut plan.threads[t as usize];
    let time = thread.steps.times[0] + 1;
    thread.steps.steps.insert(1, Step::Shared { member, role });
    thread.steps.times.insert(1, time);
    for art in &mut thread.arts {
        art.step += 1;
        for change in &mut art.changes {
            change.0 += 1;
        }
    }
    for run in &mut thread.runs {
        run.started_step += 1;
    }
    for mark in &mut thread.marks {
        mark.1 += 1;
    }
}

/// Whose role lets them post and run (editors, admins), and answer
/// (respondents too).
fn posters(members: &[Member]) -> Vec<u8> {
    members.iter().enumerate().filter(|(_, m)| m.role >= Role::Editor).map(|(i, _)| i as u8).collect()
}

fn answerers(members: &[Member]) -> Vec<u8> {
    members.iter().enumerate().filter(|(_, m)| m.role >= Role::Respondent).map(|(i, _)| i as u8).collect()
}

/// A thread of about `length` envelopes after its creation, in blocks
/// spread over the rest of the log: messages (most), forms and their
/// submissions, agent runs (ask_form, dashboard, app), changes to apps.
/// `long` is the probe thread: a `many` form first, which takes every
/// submission. `creator`, when given, starts it.
#[allow(clippy::too_many_arguments)]
fn thread(plan: &mut Plan, rng: &mut Rng, ws: u32, start: u64, length: usize, restricted: bool, long: bool, creator: Option<u8>) -> u32 {
    let members = &plan.workspaces[ws as usize].members;
    let posters = posters(members);
    let answerers = answerers(members);
    let pick = |rng: &mut Rng, from: &[u8]| from[rng.below(from.len() as u64) as usize];
    let creator = creator.unwrap_or_else(|| pick(rng, &posters));
    let mut th = Thread {
        id: rng.id("th_", at_ms(start)),
        ws,
        title: words(rng, 3),
        restricted,
        creator,
        steps: Steps::default(),
        arts: Vec::new(),
        runs: Vec::new(),
        marks: Vec::new(),
    };
    let mut blocks: Vec<Vec<Step>> = vec![vec![Step::Created]];
    let mut arts: Vec<Art> = Vec::new();
    let mut runs: Vec<Run> = Vec::new();
    // What each block will create: (block, art) pairs resolved to steps below.
    let mut count = 0;
    let mut submitted: Vec<(u16, u8)> = Vec::new();
    if long {
        arts.push(Art { id: String::new(), kind: ArtKind::Form { policy: Policy::Many }, author: creator, step: 0, changes: Vec::new() });
        blocks.push(vec![Step::ArtifactCreated { art: 0 }]);
        count += 1;
    }
    while count < length {
        let roll = rng.below(1000);
        let forms: Vec<u16> = arts.iter().enumerate().filter(|(_, a)| matches!(a.kind, ArtKind::Form { .. })).map(|(i, _)| i as u16).collect();
        let apps: Vec<u16> = arts.iter().enumerate().filter(|(_, a)| matches!(a.kind, ArtKind::App { .. })).map(|(i, _)| i as u16).collect();
        let left = length - count;
        let block: Vec<Step> = match roll {
            0..40 if !long && forms.len() < 2 => {
                let policy = match rng.below(10) {
                    0..2 => Policy::Once,
                    2..7 => Policy::PerPerson,
                    _ => Policy::Many,
                };
                arts.push(Art { id: String::new(), kind: ArtKind::Form { policy }, author: pick(rng, &posters), step: 0, changes: Vec::new() });
                vec![Step::ArtifactCreated { art: (arts.len() - 1) as u16 }]
            }
            40..140 if !forms.is_empty() => {
                let form = if long { 0 } else { forms[rng.below(forms.len() as u64) as usize] };
                let ArtKind::Form { policy } = arts[form as usize].kind else { unreachable!() };
                let author = pick(rng, &answerers);
                let allowed = match policy {
                    Policy::Once => !submitted.iter().any(|(f, _)| *f == form),
                    Policy::PerPerson => !submitted.contains(&(form, author)),
                    Policy::Many => true,
                };
                if allowed {
                    submitted.push((form, author));
                    let nonce = (policy == Policy::Many).then(|| format!("n{:016x}", rng.next()));
                    arts.push(Art { id: String::new(), kind: ArtKind::Submission { form, nonce }, author, step: 0, changes: Vec::new() });
                    vec![Step::ArtifactCreated { art: (arts.len() - 1) as u16 }]
                } else {
                    vec![Step::Message { author: pick(rng, &posters) }]
                }
            }
            140..160 if left >= 8 => {
                let run = runs.len() as u16;
                let answerer = pick(rng, &answerers);
                runs.push(Run {
                    id: String::new(),
                    model: Model::AskForm,
                    starter: pick(rng, &posters),
                    answerer: Some(answerer),
                    art: None,
                    paused: false,
                    started_step: 0,
                });
                vec![
                    Step::RunStarted { run },
                    Step::Replied { run, last: false },
                    Step::Paused { run },
                    Step::Answered { run },
                    Step::Resumed { run },
                    Step::Replied { run, last: true },
                    Step::AgentMessage { run },
                    Step::Finished { run },
                ]
            }
            160..180 if left >= 7 => {
                let run = runs.len() as u16;
                let app = roll >= 175;
                let starter = pick(rng, &posters);
                let art = arts.len() as u16;
                let kind = if app { ArtKind::App { run } } else { ArtKind::Dashboard { run } };
                arts.push(Art { id: String::new(), kind, author: starter, step: 0, changes: Vec::new() });
                let model = if app { Model::App } else { Model::Dashboard };
                runs.push(Run { id: String::new(), model, starter, answerer: None, art: Some(art), paused: false, started_step: 0 });
                vec![
                    Step::RunStarted { run },
                    Step::Replied { run, last: false },
                    Step::ArtifactCreated { art },
                    Step::ToolReturned { run },
                    Step::Replied { run, last: true },
                    Step::AgentMessage { run },
                    Step::Finished { run },
                ]
            }
            180..220 if !apps.is_empty() => {
                let art = apps[rng.below(apps.len() as u64) as usize];
                let version = arts[art as usize].changes.len() as u16 + 2;
                arts[art as usize].changes.push((0, pick(rng, &posters)));
                vec![Step::AppChanged { art, version }]
            }
            _ => vec![Step::Message { author: pick(rng, &posters) }],
        };
        count += block.len();
        blocks.push(block);
    }
    // One thread in twenty ends waiting on an ask_form; the probe thread does.
    if long || rng.chance(5) {
        let run = runs.len() as u16;
        runs.push(Run {
            id: String::new(),
            model: Model::AskForm,
            starter: pick(rng, &posters),
            answerer: None,
            art: None,
            paused: true,
            started_step: 0,
        });
        blocks.push(vec![Step::RunStarted { run }, Step::Replied { run, last: false }, Step::Paused { run }]);
    }
    // Blocks spread from the thread's start to the log's end; a block's
    // steps a millisecond apart.
    let room = SPAN_US.saturating_sub(start + 10_000_000) as f64;
    let n = blocks.len();
    let mut changes_seen: Vec<usize> = vec![0; arts.len()];
    for (b, block) in blocks.into_iter().enumerate() {
        let base = if b == 0 { start } else { start + 5_000_000 + (room * (b as f64 - 1.0 + rng.unit() * 0.9) / n as f64) as u64 };
        for (s, step) in block.into_iter().enumerate() {
            let index = th.steps.steps.len() as u32;
            let time = base + 1_000 * s as u64;
            match step {
                Step::ArtifactCreated { art } => {
                    arts[art as usize].step = index;
                    arts[art as usize].id = match arts[art as usize].kind {
                        ArtKind::Submission { .. } => String::new(),
                        _ => rng.id("art_", at_ms(time)),
                    };
                }
                Step::AppChanged { art, .. } => {
                    let seen = &mut changes_seen[art as usize];
                    arts[art as usize].changes[*seen].0 = index;
                    *seen += 1;
                }
                Step::RunStarted { run } => {
                    runs[run as usize].started_step = index;
                    runs[run as usize].id = rng.id("run_", at_ms(time));
                }
                _ => {}
            }
            th.steps.push(step, time);
        }
    }
    // A submission's id is the one its form's policy derives (as every
    // client, and the write path's check, derive it).
    for i in 0..arts.len() {
        if let ArtKind::Submission { form, nonce } = &arts[i].kind {
            let ArtKind::Form { policy } = arts[*form as usize].kind else { unreachable!() };
            let submitter = &plan.workspaces[ws as usize].members[arts[i].author as usize].user;
            arts[i].id = submission_id(&arts[*form as usize].id, policy, submitter, nonce.as_deref());
        }
    }
    th.arts = arts;
    th.runs = runs;
    let t = plan.threads.len() as u32;
    plan.threads.push(th);
    // Read marks: each member who sees it has read about half the threads
    // most of the way.
    let len = plan.threads[t as usize].steps.steps.len();
    let members = plan.workspaces[ws as usize].members.len();
    let mut marks = Vec::new();
    for m in 0..members as u8 {
        if plan.sees(&plan.threads[t as usize], m) && rng.chance(50) {
            let step = (len as f64 * (0.6 + 0.4 * rng.unit())) as usize;
            marks.push((m, step.min(len - 1) as u32));
        }
    }
    plan.threads[t as usize].marks = marks;
    t
}

const WORDS: [&str; 64] = [
    "the",
    "report",
    "deploy",
    "queue",
    "latency",
    "customer",
    "invoice",
    "review",
    "draft",
    "schedule",
    "budget",
    "meeting",
    "incident",
    "release",
    "notes",
    "figures",
    "quarter",
    "support",
    "ticket",
    "approve",
    "plan",
    "team",
    "update",
    "question",
    "answer",
    "database",
    "dashboard",
    "form",
    "export",
    "migration",
    "backup",
    "server",
    "weekly",
    "monthly",
    "numbers",
    "please",
    "check",
    "before",
    "after",
    "friday",
    "monday",
    "looks",
    "good",
    "thanks",
    "agreed",
    "blocked",
    "waiting",
    "on",
    "for",
    "with",
    "and",
    "we",
    "should",
    "could",
    "ship",
    "test",
    "fix",
    "error",
    "retry",
    "timeout",
    "limit",
    "usage",
    "cost",
    "owner",
];

/// `n` words, for names and messages.
pub fn words(rng: &mut Rng, n: usize) -> String {
    let mut out = String::with_capacity(n * 7);
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
    }
    out
}
