//! lattice's OpenAI-compatible client against a real llama.cpp
//! `llama-server`, started here as a process with the real toolset
//! (`cargo xtask llama` builds it and runs this). Run only when
//! `LATTICE_LLAMA_SERVER` names the binary and `LATTICE_LLAMA_MODEL` a GGUF
//! model; otherwise it says so and passes. The server runs with `--jinja`
//! and a chat template that describes tools (`LATTICE_LLAMA_TEMPLATE`, by
//! default `tests/llama/tools.jinja`): the model file has none, and
//! llama.cpp's fallback ignores tools, so only with it does the server turn
//! the tools' schemas into a grammar and parse the model's calls.
//!
//! The model is small and a base model: its answers are poor. What is held
//! is lattice's side: a schema the server cannot convert is refused (the
//! control: without it, "accepted" would prove nothing), the real toolset
//! is accepted (no 400), a streamed reply arrives, a reply cut by
//! `max_tokens` comes back as cut and a run ends saying so, and a tool call
//! the model makes, if it makes one, is handled by the runner (done, or
//! refused with a reason) without a panic. Each finding is a `llama:` line
//! on stdout, which `cargo xtask llama` sums up.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lattice_agent::openai::OpenAiModel;
use lattice_agent::{Budget, ChatMessage, Delta, Deltas, Model, ModelError, ModelReply, ModelRequest, Models, Runner, tools};
use lattice_core::event::Event;
use lattice_core::{Command, RunId, RunStatus, TenantRole, ThreadId, ToolCall, WorkspaceId};
use lattice_log::LogService;
use lattice_testkit::who;
use serde_json::{Value, json};

/// How long a call may take: a small model on a busy machine is slow.
const PATIENCE: Duration = Duration::from_secs(600);

/// A running `llama-server`, killed when dropped.
struct Llama {
    child: tokio::process::Child,
    root: String,
    base: String,
    log: std::path::PathBuf,
}

impl Drop for Llama {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl Llama {
    /// The server's log so far, its last lines: what it said when a check failed.
    fn tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// Starts the server on a free port and waits until it is ready; `None`
/// when the environment names no server or model.
async fn llama() -> Option<Llama> {
    let (Ok(bin), Ok(model)) = (std::env::var("LATTICE_LLAMA_SERVER"), std::env::var("LATTICE_LLAMA_MODEL")) else {
        eprintln!("LATTICE_LLAMA_SERVER and LATTICE_LLAMA_MODEL are not both set: the llama-server checks are skipped");
        return None;
    };
    let template = std::env::var("LATTICE_LLAMA_TEMPLATE").unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/llama/tools.jinja").into());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let log = std::env::temp_dir().join(format!("lattice-llama-{port}.log"));
    // One slot with room for the whole toolset (its schemas are long).
    let args = ["-m", &model, "--jinja", "--chat-template-file", &template, "--host", "127.0.0.1", "--port", &port.to_string(), "-c", "16384"];
    let child = tokio::process::Command::new(&bin)
        .args(args)
        .args(["--parallel", "1"])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::options().append(true).open(&log).unwrap())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
    let root = format!("http://127.0.0.1:{port}");
    let llama = Llama { child, base: format!("{root}/v1"), root, log };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let health = http.get(format!("{}/health", llama.root)).send().await;
        if health.is_ok_and(|r| r.status().is_success()) {
            println!("llama: server ready in {:.1} s (template {template})", started.elapsed().as_secs_f64());
            return Some(llama);
        }
        assert!(started.elapsed() < Duration::from_secs(180), "llama-server was not ready in 180 s:\n{}", llama.tail());
        // A real process's start: its health answers when it is ready, and
        // nothing tells before (the 180 s bound names its log).
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn asking(prompt: &str, tools: Vec<lattice_agent::ToolDefinition>) -> ModelRequest {
    ModelRequest {
        messages: vec![ChatMessage::System { content: "You are a helpful assistant.".into() }, ChatMessage::User { content: prompt.into() }],
        tools,
    }
}

fn texts(deltas: &std::sync::Mutex<Vec<Delta>>) -> usize {
    deltas.lock().unwrap().iter().filter(|d| matches!(d, Delta::Text(_))).count()
}

/// At most `n` characters of `text`, on one line.
fn short(text: &str, n: usize) -> String {
    let line = text.replace('\n', " ");
    if line.chars().count() > n { format!("{}…", line.chars().take(n).collect::<String>()) } else { line }
}

/// The model, with a worked example of a tool call put before the
/// conversation: user asks, assistant calls ask_user, the tool answers,
/// assistant thanks. A base model copies the pattern (or not); what it
/// writes goes to lattice as it would from any model. The tool calls told
/// while they were written are kept (their last arguments, by id): a reply
/// cut later drops them, and they are what the model wrote.
struct Shown(OpenAiModel, Arc<std::sync::Mutex<Vec<(String, String, Value)>>>);

impl Shown {
    fn example() -> Vec<ChatMessage> {
        let call = ToolCall { id: "call_example".into(), name: tools::ASK_USER.into(), arguments: json!({"question": "What is your name?"}) };
        vec![
            ChatMessage::User { content: "Ask me my name.".into() },
            ChatMessage::Assistant { content: None, tool_calls: vec![call] },
            ChatMessage::Tool { tool_call_id: "call_example".into(), content: json!({"answer": "Ada"}).to_string() },
            ChatMessage::Assistant { content: Some("Thank you, Ada.".into()), tool_calls: vec![] },
        ]
    }
}

#[async_trait::async_trait]
impl Model for Shown {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        self.stream(request, &|_| {}).await
    }

    async fn stream(&self, mut request: ModelRequest, deltas: &Deltas) -> Result<ModelReply, ModelError> {
        let at = request.messages.iter().take_while(|m| matches!(m, ChatMessage::System { .. })).count();
        request.messages.splice(at..at, Self::example());
        // Told on, as they come, through a channel: the runner's sink is
        // borrowed for this call alone.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let written = self.1.clone();
        let spy = move |delta: Delta| {
            if let Delta::ToolInput { id, name, arguments } = &delta {
                let mut written = written.lock().unwrap();
                match written.iter_mut().find(|(known, ..)| known == id) {
                    Some(call) => call.2 = arguments.clone(),
                    None => written.push((id.clone(), name.clone(), arguments.clone())),
                }
            }
            let _ = tx.send(delta);
        };
        let reply = self.0.stream(request, &spy);
        tokio::pin!(reply);
        loop {
            tokio::select! {
                Some(delta) = rx.recv() => deltas(delta),
                reply = &mut reply => {
                    while let Ok(delta) = rx.try_recv() {
                        deltas(delta);
                    }
                    return reply;
                }
            }
        }
    }
}

/// Waits for the run to stop running; its status and its events.
async fn ended(log: &LogService, who: &lattice_log::Authenticated, run: &RunId) -> (RunStatus, Vec<Event>) {
    let status = lattice_testkit::eventually_within(PATIENCE, "the run to end", async || {
        Some(log.run(who, run).await.unwrap().run.status).filter(|s| !matches!(s, RunStatus::Running))
    })
    .await;
    let events = lattice_testkit::trusted(log).run_log(&who.principal().tenant, run).await.unwrap();
    (status, events.into_iter().map(|e| e.event).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_llama_server_streams_takes_the_toolset_and_cuts_at_max_tokens() {
    let Some(llama) = llama().await else { return };
    let model =
        |max_tokens: u32| OpenAiModel::new(&llama.base, None, "local", PATIENCE).unwrap().with_retries(0, Duration::ZERO).with_max_tokens(max_tokens);
    let deltas = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = {
        let deltas = deltas.clone();
        move |d: Delta| deltas.lock().unwrap().push(d)
    };

    // The control: a tool whose parameters hold a bare `true` sub-schema is
    // refused, so the server does convert the tools' schemas (with a
    // template that ignored tools, anything would be "accepted").
    let probe = json!({"model": "local", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "probe", "description": "A probe.",
            "parameters": {"type": "object", "properties": {"anything": true}}}}]});
    let refused = reqwest::Client::new().post(format!("{}/chat/completions", llama.base)).json(&probe).send().await.unwrap();
    let status = refused.status().as_u16();
    let body: Value = refused.json().await.unwrap();
    let message = body.pointer("/error/message").and_then(Value::as_str).unwrap_or_default().to_owned();
    assert_eq!(status, 400, "a bare `true` sub-schema was not refused: {body}\n{}", llama.tail());
    assert!(message.contains("Unrecognized schema: true"), "{message}");
    println!("llama: control (a tool with a bare `true` sub-schema): {status} {:?}", message);

    // A streamed reply arrives, told as it comes (whole, or cut at its bound).
    let started = Instant::now();
    let reply = model(48).stream(asking("Say hello in five words.", vec![]), &sink).await;
    let said = match &reply {
        Ok(reply) => {
            assert!(reply.text.as_deref().is_some_and(|t| !t.trim().is_empty()), "an empty reply: {reply:?}");
            format!("whole: {:?}", short(reply.text.as_deref().unwrap_or_default(), 80))
        }
        Err(ModelError::Cut { text, .. }) => {
            assert!(text.is_some(), "cut before any text");
            format!("cut at 48 tokens: {:?}", short(text.as_deref().unwrap_or_default(), 80))
        }
        Err(e) => panic!("no streamed reply: {e}\n{}", llama.tail()),
    };
    assert!(texts(&deltas) >= 2, "the text came in pieces: {:?}", deltas.lock().unwrap());
    println!("llama: streamed reply in {:.1} s, {} text deltas, {said}", started.elapsed().as_secs_f64(), texts(&deltas));

    // The real toolset is accepted: no 400 for its definitions.
    deltas.lock().unwrap().clear();
    let toolset = tools::all_tools();
    let names: Vec<String> = toolset.iter().map(|t| t.name.clone()).collect();
    let started = Instant::now();
    let with_tools = model(48).stream(asking("Ask me, with a form, when the incident started.", toolset), &sink).await;
    let outcome = match &with_tools {
        Ok(reply) => format!(
            "a whole reply, {} tool call(s), text {:?}, {:?} tokens",
            reply.tool_calls.len(),
            short(reply.text.as_deref().unwrap_or_default(), 60),
            reply.tokens
        ),
        Err(ModelError::Cut { reason, tokens, .. }) => format!("{reason} ({tokens:?} tokens)"),
        Err(e @ ModelError::Status { status: 400, .. }) => panic!("the toolset was refused: {e}"),
        Err(e) => panic!("with the toolset: {e}\n{}", llama.tail()),
    };
    println!("llama: the toolset ({}) accepted in {:.1} s: {outcome}", names.join(", "), started.elapsed().as_secs_f64());

    // A reply past max_tokens comes back as cut, with what came of it.
    let cut = model(8).stream(asking("Write a long essay about the history of the bicycle.", vec![]), &sink).await;
    match cut {
        Err(ModelError::Cut { reason, text, tokens }) => {
            assert_eq!(reason, "the reply was cut at the model's token limit");
            assert!(text.as_ref().is_some_and(|t| !t.is_empty()), "what came is kept");
            assert!(tokens.is_some(), "the service counted the tokens");
            println!("llama: max_tokens 8: {reason:?}, {tokens:?} tokens, kept {:?}", short(&text.unwrap_or_default(), 60));
        }
        other => panic!("an 8-token essay was not reported as cut: {other:?}"),
    }

    // And a run on it ends saying so, what came shown as cut.
    let log = lattice_testkit::service(lattice_log::Backend::Sqlite).await;
    let alice = who("t1", "alice", TenantRole::Member);
    let ws = WorkspaceId::parse("ws", &log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap()).unwrap();
    let thread = |title: &str| Command::CreateThread { workspace: ws.clone(), title: title.into(), restricted: false };
    let th = ThreadId::parse("th", &log.execute(&alice, thread("T")).await.unwrap().id.unwrap()).unwrap();
    let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("llama", Arc::new(model(8)) as Arc<dyn Model>, true));
    let run = runner.start(&alice, th, "Write a long essay about the history of the bicycle.".into(), None, None).await.unwrap();
    let (status, events) = ended(&log, &alice, &run).await;
    let failed = events.iter().find_map(|e| match e {
        Event::RunFailed(f) => Some(f.reason.clone()),
        _ => None,
    });
    assert_eq!(status, RunStatus::Failed, "{events:?}");
    let reason = failed.unwrap();
    assert!(reason.starts_with("the reply was cut at the model's token limit"), "{reason}");
    let said: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::MessagePosted(m) => Some(m.text.clone()),
            _ => None,
        })
        .collect();
    assert!(said.len() <= 1 && said.iter().all(|t| t.ends_with("[cut: the reply reached the model's token limit]")), "{said:?}");
    println!("llama: a run at max_tokens 8 failed: {reason:?}; the thread shows {} cut message(s)", said.len());

    // A tool call, if the model makes one (shown an example first): the
    // runner handles its arguments, a result or a refusal with a reason,
    // or the run fails saying why; it never stays running.
    let written = Arc::new(std::sync::Mutex::new(Vec::new()));
    let shown = Shown(model(96), written.clone());
    let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("llama", Arc::new(shown) as Arc<dyn Model>, true))
        .with_budget(Budget { model_calls: 3, tokens: 200_000, wall_time: PATIENCE });
    let th = ThreadId::parse("th", &log.execute(&alice, thread("Calls")).await.unwrap().id.unwrap()).unwrap();
    let started = Instant::now();
    let run = runner.start(&alice, th, "Ask me how old I am.".into(), None, None).await.unwrap();
    let (status, events) = ended(&log, &alice, &run).await;
    let mut calls = Vec::new();
    let mut handled = Vec::new();
    for event in &events {
        match event {
            Event::ModelReplied(r) => calls.extend(r.tool_calls.iter().map(|c| format!("{}({})", c.name, short(&c.arguments.to_string(), 80)))),
            Event::ToolReturned(t) if t.is_error => handled.push(format!("{} refused: {}", t.tool_name, short(&t.result.to_string(), 100))),
            Event::ToolReturned(t) => handled.push(format!("{} returned {}", t.tool_name, short(&t.result.to_string(), 100))),
            Event::RunPaused(p) => handled.extend(p.requests.iter().map(|r| format!("{} waits for a person", r.tool_name))),
            Event::RunFailed(f) => handled.push(format!("the run failed: {}", short(&f.reason, 120))),
            _ => {}
        }
    }
    assert!(!matches!(status, RunStatus::Running), "{events:?}");
    let reasons = events.iter().filter(|e| matches!(e, Event::RunFailed(f) if !f.reason.trim().is_empty())).count();
    assert!(status != RunStatus::Failed || reasons == 1, "a failed run says why: {events:?}");
    let written: Vec<String> =
        written.lock().unwrap().iter().map(|(_, name, arguments)| format!("{name}({})", short(&arguments.to_string(), 60))).collect();
    println!(
        "llama: a run shown a tool call ended {} in {:.1} s: the model wrote {} call(s) {:?}; {} whole in its replies {calls:?}; {handled:?}",
        status.as_str(),
        started.elapsed().as_secs_f64(),
        written.len(),
        written.iter().take(3).collect::<Vec<_>>(),
        calls.len()
    );
}
