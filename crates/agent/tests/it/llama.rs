//! lattice's OpenAI-compatible client against a real llama.cpp
//! `llama-server`, started here as a process with the real toolset. Run
//! only when `LATTICE_LLAMA_SERVER` names the binary and
//! `LATTICE_LLAMA_MODEL` a GGUF model; otherwise it says so and passes.
//! What it holds is lattice's side: a streamed reply arrives, the tool
//! definitions are accepted (no 400), a reply cut by `max_tokens` comes
//! back as cut and a run ends saying so.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lattice_agent::openai::OpenAiModel;
use lattice_agent::{ChatMessage, Delta, Model, ModelError, ModelRequest, Models, Runner, tools};
use lattice_core::event::Event;
use lattice_core::{Command, RunStatus, TenantRole, ThreadId, WorkspaceId};
use lattice_testkit::who;

/// How long a call may take: a small model on a busy machine is slow.
const PATIENCE: Duration = Duration::from_secs(600);

/// A running `llama-server`, killed when dropped.
struct Llama {
    child: tokio::process::Child,
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
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let log = std::env::temp_dir().join(format!("lattice-llama-{port}.log"));
    let child = tokio::process::Command::new(&bin)
        .args(["-m", &model, "--jinja", "--host", "127.0.0.1", "--port", &port.to_string(), "-c", "4096", "--parallel", "1"])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::options().append(true).open(&log).unwrap())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
    let llama = Llama { child, base: format!("http://127.0.0.1:{port}/v1"), log };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let health = http.get(format!("http://127.0.0.1:{port}/health")).send().await;
        if health.is_ok_and(|r| r.status().is_success()) {
            return Some(llama);
        }
        assert!(started.elapsed() < Duration::from_secs(180), "llama-server was not ready in 180 s:\n{}", llama.tail());
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

    // A streamed reply arrives, told as it comes (whole, or cut at its bound).
    let reply = model(48).stream(asking("Say hello in five words.", vec![]), &sink).await;
    match &reply {
        Ok(reply) => assert!(reply.text.as_deref().is_some_and(|t| !t.trim().is_empty()), "an empty reply: {reply:?}"),
        Err(ModelError::Cut { text, .. }) => assert!(text.is_some(), "cut before any text"),
        Err(e) => panic!("no streamed reply: {e}\n{}", llama.tail()),
    }
    assert!(texts(&deltas) >= 2, "the text came in pieces: {:?}", deltas.lock().unwrap());

    // The real toolset is accepted: no 400 for its definitions.
    deltas.lock().unwrap().clear();
    let with_tools = model(48).stream(asking("Ask me, with a form, when the incident started.", tools::all_tools()), &sink).await;
    match &with_tools {
        Ok(reply) => eprintln!("with the toolset: text {:?}, calls {:?}", reply.text, reply.tool_calls),
        Err(ModelError::Cut { reason, .. }) => eprintln!("with the toolset: {reason}"),
        Err(e @ ModelError::Status { status: 400, .. }) => panic!("the toolset was refused: {e}"),
        Err(e) => panic!("with the toolset: {e}\n{}", llama.tail()),
    }

    // A reply past max_tokens comes back as cut, with what came of it.
    let cut = model(8).stream(asking("Write a long essay about the history of the bicycle.", vec![]), &sink).await;
    match cut {
        Err(ModelError::Cut { reason, text, tokens }) => {
            assert_eq!(reason, "the reply was cut at the model's token limit");
            assert!(text.is_some_and(|t| !t.is_empty()), "what came is kept");
            assert!(tokens.is_some(), "the service counted the tokens");
        }
        other => panic!("an 8-token essay was not reported as cut: {other:?}"),
    }

    // And a run on it ends saying so, what came shown as cut.
    let log = lattice_testkit::service(lattice_log::Backend::Sqlite).await;
    let alice = who("t1", "alice", TenantRole::Member);
    let ws = WorkspaceId::parse("ws", &log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap()).unwrap();
    let th = log.execute(&alice, Command::CreateThread { workspace: ws, title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
    let th = ThreadId::parse("th", &th).unwrap();
    let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("llama", Arc::new(model(8)) as Arc<dyn Model>, true));
    let run = runner.start(&alice, th.clone(), "Write a long essay about the history of the bicycle.".into(), None, None).await.unwrap();
    let started = Instant::now();
    let view = loop {
        let view = log.run(&alice, &run).await.unwrap();
        if !matches!(view.run.status, RunStatus::Running) {
            break view;
        }
        assert!(started.elapsed() < PATIENCE, "the run did not end");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let events = lattice_testkit::trusted(&log).run_log(&alice.principal().tenant, &run).await.unwrap();
    let failed = events.iter().find_map(|e| match &e.event {
        Event::RunFailed(f) => Some(f.reason.clone()),
        _ => None,
    });
    assert_eq!(view.run.status, RunStatus::Failed, "{events:?}");
    let reason = failed.unwrap();
    assert!(reason.starts_with("the reply was cut at the model's token limit"), "{reason}");
    let said: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.event {
            Event::MessagePosted(m) => Some(m.text.clone()),
            _ => None,
        })
        .collect();
    assert!(said.len() <= 1 && said.iter().all(|t| t.ends_with("[cut: the reply reached the model's token limit]")), "{said:?}");
    eprintln!("the run ended: {reason}; the thread shows {said:?}");
}
