//! AG-UI: the official client (`@ag-ui/client`'s HttpAgent, `e2e/agui/client.mjs`)
//! runs the scripted ask_form to its interrupt, is refused an answer the
//! form does not take (a RUN_ERROR naming the field), and resumes it with
//! one it does; every event passes `@ag-ui/core`'s schemas, and the log
//! holds the answer by that caller.

use std::path::Path;
use std::process::Command;

use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

/// `client.mjs`'s session against `lattice up`, as it printed it.
pub(crate) fn session(base: &str, token: &str, thread: &str, model: Option<&str>) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("agui/client.mjs");
    let out = Command::new("node").arg(script).args([base, token, thread]).args(model).output().expect("node runs the AG-UI client");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("the client printed {text:?} ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)))
}

fn types(events: &Value) -> Vec<String> {
    events.as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap_or("?").to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ag_ui_client_runs_ask_form_to_its_interrupt_and_resumes_it() {
    let up = UpProcess::start().await;
    let alice = Client::sign_in_as(&up.base, json!({"tenant": "t-agui", "user": "alice"})).await;
    let ws = alice.ok("POST", "/v1/workspaces", json!({"name": "AG-UI"})).await["id"].as_str().unwrap().to_owned();
    let th = alice.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "AG-UI"})).await["id"].as_str().unwrap().to_owned();

    let session = session(&up.base, &alice.token, &th, None);
    println!("AG-UI session: {}", serde_json::to_string_pretty(&session).unwrap());
    assert_eq!(session["invalid"], json!([]), "every event passes @ag-ui/core's schemas");
    assert!(session.get("error").is_none(), "{session}");
    let runs = session["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);

    // To the interrupt: the form as its response schema.
    assert_eq!(types(&runs[0]), ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"]);
    let interrupt = &session["interrupt"];
    assert_eq!(interrupt["reason"], "lattice.ask_form");
    assert_eq!(interrupt["message"], "Report an incident");
    assert_eq!(interrupt["toolCallId"], "call_ask_form_1");
    assert_eq!(interrupt["responseSchema"]["required"], json!(["date", "severity"]));
    // The prompt asked for an hour's deadline: the interrupt says when it passes.
    let expires = interrupt["expiresAt"].as_str().expect("the interrupt carries expiresAt");
    let at = lattice_log::parse_rfc3339(expires).expect("expiresAt is RFC 3339");
    let left = at - lattice_core::clock::Clock::now_ms(&lattice_core::clock::SystemClock);
    assert!((3_500_000..=3_600_000).contains(&left), "expiresAt is an hour away: {expires}");
    assert_eq!(runs[0][2]["delta"].as_str().map(|d| serde_json::from_str::<Value>(d).unwrap()["title"].clone()), Some(json!("Report an incident")));

    // A refused answer: the run's error names the field; nothing is kept.
    assert_eq!(types(&runs[1]), ["RUN_STARTED", "RUN_ERROR"]);
    assert_eq!(runs[1][1]["code"], "ValidationFailed");
    assert!(runs[1][1]["message"].as_str().unwrap().contains("severity"), "{}", runs[1][1]);

    // The answer that fits: the run goes on to its reply and finishes.
    // The answer's receipt first (docs/AGUI.md; checked in seal.rs), then the rest of the run.
    assert_eq!(types(&runs[2]), ["RUN_STARTED", "CUSTOM", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]);
    assert_eq!(runs[2][1]["name"], "lattice.receipt");
    assert!(runs[2][3]["delta"].as_str().unwrap().starts_with("Thanks, I have the report."));
    assert_eq!(runs[2][5]["outcome"]["type"], "success");

    // A reconnect once the run is over: the thread as the client's messages.
    assert_eq!(types(&runs[3]), ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]);
    let messages = session["messages"].as_array().expect("the client took the snapshot");
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "{messages:?}");
    assert!(messages[0]["content"].as_str().unwrap().starts_with("We have an incident"));
    assert_eq!(messages[1]["toolCalls"][0]["function"]["name"], "ask_form");
    assert_eq!(
        (messages[2]["toolCallId"].as_str(), messages[2]["content"].as_str().map(|c| c.contains("\"high\""))),
        (Some("call_ask_form_1"), Some(true))
    );
    assert!(messages[3]["content"].as_str().unwrap().starts_with("Thanks, I have the report."));

    let events = alice.all_events(&th).await;
    let answers: Vec<&Value> = events.iter().filter(|e| e["type"] == "deferred_answered").collect();
    assert_eq!(answers.len(), 1, "the refused answer kept nothing");
    assert_eq!(answers[0]["actor"]["user"], "alice", "answered as the caller");
    assert_eq!(answers[0]["payload"]["answer"]["severity"], "high");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_model_reaches_an_ag_ui_client_as_it_writes() {
    let model = lattice_e2e::model::ModelService::default();
    let base_url = model.clone().start().await;
    let pieces = ["Three ", "incidents ", "are ", "open."];
    model.then(lattice_e2e::model::Reply::Stream {
        chunks: pieces.iter().map(|p| lattice_e2e::model::text(p)).collect(),
        pause: std::time::Duration::from_millis(100),
    });
    let up = UpProcess::start_with(&[("LATTICE_MODEL_BASE_URL", base_url.as_str()), ("LATTICE_MODEL_NAME", "agui-stream")]).await;
    let alice = Client::sign_in_as(&up.base, json!({"tenant": "t-agui", "user": "alice"})).await;
    let ws = alice.ok("POST", "/v1/workspaces", json!({"name": "AG-UI"})).await["id"].as_str().unwrap().to_owned();
    let th = alice.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "AG-UI"})).await["id"].as_str().unwrap().to_owned();

    let session = session(&up.base, &alice.token, &th, Some("agui-stream"));
    assert_eq!(session["invalid"], json!([]), "every event passes @ag-ui/core's schemas");
    let events = &session["runs"][0];
    let mut expected = vec!["RUN_STARTED", "TEXT_MESSAGE_START"];
    expected.extend(pieces.iter().map(|_| "TEXT_MESSAGE_CONTENT"));
    expected.extend(["TEXT_MESSAGE_END", "RUN_FINISHED"]);
    assert_eq!(types(events), expected, "one content event per piece the model wrote");
    let told: String =
        events.as_array().unwrap().iter().filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT").map(|e| e["delta"].as_str().unwrap()).collect();
    assert_eq!(told, pieces.concat());
}
