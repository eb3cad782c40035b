//! A client of MCP 2026-07-28 (rmcp's, the official Rust SDK, in its
//! stateless era: `server/discover`, no `initialize`, no session) against
//! `lattice up`'s `/mcp`: `ask_form` asks the person through an
//! `InputRequiredResult` and takes the answer on the same call's retry; a
//! forged, misdirected or replayed `requestState` is refused; a declined
//! or refused answer leaves the request open; `subscriptions/listen`
//! tells of a new answer and of a change of the toolset. The same server
//! goes on serving 2025-11-25 clients their `elicitation/create` (`ask.rs`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lattice_e2e::{Client, UpProcess};
use lattice_ui::asks::ASK_FORM;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, InputResponses, ProtocolVersion,
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

/// A host whose person answers every form with `answer` (or declines
/// when it is `None`), and what it was asked.
#[derive(Clone)]
struct Person {
    answer: Option<Value>,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl Person {
    fn answering(answer: Option<Value>) -> Self {
        Self { answer, asked: Arc::default() }
    }
}

impl rmcp::ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        serde_json::from_value(json!({
            "protocolVersion": "2026-07-28",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "lattice-e2e", "version": "1"},
        }))
        .unwrap()
    }

    async fn create_elicitation(&self, request: ElicitRequestParams, _: RequestContext<RoleClient>) -> Result<ElicitResult, rmcp::ErrorData> {
        self.asked.lock().unwrap().push(serde_json::to_value(&request).unwrap());
        Ok(match &self.answer {
            Some(values) => ElicitResult::new(ElicitationAction::Accept).with_content(values.clone()),
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

/// A 2026-07-28 client of `base`'s `/mcp` as `token`'s holder.
async fn connect(base: &str, token: &str, person: Person) -> RunningService<RoleClient, Person> {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header(token.to_owned());
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    person.serve_with_lifecycle(StreamableHttpClientTransport::from_config(config), lifecycle).await.expect("server/discover answers")
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    let Value::Object(map) = value else { panic!("arguments are an object") };
    map
}

fn answered(response: CallToolResponse) -> Value {
    let CallToolResponse::Complete(result) = response else { panic!("a complete result, not {response:?}") };
    serde_json::to_value(result).unwrap()
}

/// The first round: the input required, as JSON.
fn required(response: CallToolResponse) -> Value {
    let CallToolResponse::InputRequired(required) = response else { panic!("input required, not {response:?}") };
    serde_json::to_value(required).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_asks_the_person_through_input_required_and_answers_in_the_retry() {
    let up = UpProcess::start().await;
    let (ana, bob, _, th) = super::leave_thread(&up.base).await;
    let schema =
        json!({"type": "object", "required": ["days"], "properties": {"days": {"title": "Days", "type": "integer", "minimum": 1, "maximum": 30}}});

    // Discovery, not a handshake: the version and what the server offers.
    let person = Person::answering(Some(json!({"days": 3})));
    let client = connect(&up.base, &ana.token, person.clone()).await;
    let info = client.peer_info().expect("discovered");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    let caps = serde_json::to_value(&info.capabilities).unwrap();
    assert_eq!(caps["resources"]["subscribe"], true, "{caps}");
    assert_eq!(caps["tools"]["listChanged"], true, "{caps}");

    // The SDK drives the rounds: asked, answered, retried, one call.
    let call = CallToolRequestParams::new(ASK_FORM).with_arguments(args(json!({"title": "How many days?", "schema": schema, "thread": th})));
    let result = serde_json::to_value(client.call_tool(call).await.expect("the call completes")).unwrap();
    assert_eq!(result["structuredContent"]["status"], "answered", "{result}");
    assert_eq!(result["structuredContent"]["answer"], json!({"days": 3}));
    let asked = person.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "asked once: {asked:?}");
    assert_eq!(asked[0]["message"], "How many days?");
    assert_eq!(asked[0]["requestedSchema"]["properties"]["days"], json!({"title": "Days", "type": "integer", "minimum": 1, "maximum": 30}));
    let form = result["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();
    let subs = ana.ok("GET", &format!("/v1/threads/{th}/artifacts?kind=submission&form_id={form}"), Value::Null).await;
    let subs = subs.as_array().unwrap();
    assert_eq!(subs.len(), 1, "the answer is in the thread once: {subs:?}");
    assert_eq!((subs[0]["author"].as_str(), subs[0]["data"]["values"]["days"].as_i64()), (Some("ana"), Some(3)), "as the caller");

    // The rounds by hand, as a client sees them.
    let arguments = args(json!({"title": "Which week?", "schema": schema, "thread": th}));
    let first = required(client.peer().call_tool_once(CallToolRequestParams::new(ASK_FORM).with_arguments(arguments.clone())).await.unwrap());
    println!("MRTR, the first round's answer: {}", serde_json::to_string_pretty(&first).unwrap());
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(first["inputRequests"]["answer"]["method"], "elicitation/create", "{first}");
    assert_eq!(first["inputRequests"]["answer"]["params"]["mode"], "form", "{first}");
    let state = first["requestState"].as_str().unwrap().to_owned();
    let answer: InputResponses = [("answer".to_owned(), json!({"action": "accept", "content": {"days": 5}}))].into();
    let retry = |state: &str, arguments: &serde_json::Map<String, Value>| {
        CallToolRequestParams::new(ASK_FORM)
            .with_arguments(arguments.clone())
            .with_input_responses(answer.clone())
            .with_request_state(state.to_owned())
    };
    let refusal = |e: rmcp::service::ServiceError| match e {
        rmcp::service::ServiceError::McpError(e) => e.message.to_string(),
        other => panic!("a JSON-RPC error, not {other}"),
    };

    // Forged: one character of the state changed.
    let mut forged = state.clone().into_bytes();
    let at = forged.len() - 3;
    forged[at] = if forged[at] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    let e = refusal(client.peer().call_tool_once(retry(&forged, &arguments)).await.expect_err("a forged state is refused"));
    assert!(e.starts_with("requestState: it does not open here"), "{e}");
    // Misdirected: the same state for another call, and by another caller.
    let mut other = arguments.clone();
    other.insert("title".into(), json!("Another question"));
    let e = refusal(client.peer().call_tool_once(retry(&state, &other)).await.expect_err("another call's state is refused"));
    assert!(e.starts_with("requestState: it does not open here"), "{e}");
    let bobs = connect(&up.base, &bob.token, Person::answering(None)).await;
    let e = refusal(bobs.peer().call_tool_once(retry(&state, &arguments)).await.expect_err("another caller's state is refused"));
    assert!(e.starts_with("requestState: it does not open here"), "{e}");

    // The retry: answered, as ana.
    let done = answered(client.peer().call_tool_once(retry(&state, &arguments)).await.unwrap());
    println!("MRTR, the retry's answer: {}", serde_json::to_string_pretty(&done["structuredContent"]).unwrap());
    assert_eq!(done["structuredContent"]["status"], "answered", "{done}");
    assert_eq!(done["structuredContent"]["answer"], json!({"days": 5}));
    let week = done["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();
    assert_eq!(first_form_of(&ana, &th, &week).await, vec![("ana".to_owned(), json!({"days": 5}))]);

    // Replayed: spent, on this replica or any.
    let e = refusal(client.peer().call_tool_once(retry(&state, &arguments)).await.expect_err("a replayed state is refused"));
    assert!(e.starts_with("requestState: already used"), "{e}");
    assert_eq!(first_form_of(&ana, &th, &week).await.len(), 1, "the replay sent nothing");

    // Refused: the answer is past the form's bounds. Said why; the state
    // is not spent, and the same request takes an answer that fits.
    let arguments = args(json!({"title": "Refused first?", "schema": schema, "thread": th}));
    let first = required(client.peer().call_tool_once(CallToolRequestParams::new(ASK_FORM).with_arguments(arguments.clone())).await.unwrap());
    let state = first["requestState"].as_str().unwrap().to_owned();
    let with = |days: i64| {
        let answer: InputResponses = [("answer".to_owned(), json!({"action": "accept", "content": {"days": days}}))].into();
        CallToolRequestParams::new(ASK_FORM).with_arguments(arguments.clone()).with_input_responses(answer).with_request_state(state.clone())
    };
    let refused = answered(client.peer().call_tool_once(with(99)).await.unwrap());
    assert_eq!(refused["structuredContent"]["status"], "pending", "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("The answer given in the client was refused") && text.contains("days"), "{text}");
    let fits = answered(client.peer().call_tool_once(with(4)).await.unwrap());
    assert_eq!((fits["structuredContent"]["status"].as_str(), fits["structuredContent"]["answer"]["days"].as_i64()), (Some("answered"), Some(4)));

    // Declined: said so, and the form stays open in lattice.
    let declines = connect(&up.base, &ana.token, Person::answering(None)).await;
    let call = CallToolRequestParams::new(ASK_FORM).with_arguments(args(json!({"title": "Declined?", "schema": schema, "thread": th})));
    let result = serde_json::to_value(declines.call_tool(call).await.unwrap()).unwrap();
    assert_eq!(result["structuredContent"]["status"], "pending", "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("did not answer in the client (decline)") && text.contains("form_submissions"), "{text}");
    let declined = result["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();
    assert!(first_form_of(&ana, &th, &declined).await.is_empty());
    let form = ana.ok("GET", &format!("/v1/artifacts/{declined}"), Value::Null).await;
    assert_ne!(form["archived"], true, "{form}");
}

/// The answers to `form` in `th`: by whom, what.
async fn first_form_of(who: &Client, th: &str, form: &str) -> Vec<(String, Value)> {
    let subs = who.ok("GET", &format!("/v1/threads/{th}/artifacts?kind=submission&form_id={form}"), Value::Null).await;
    subs.as_array().unwrap().iter().map(|s| (s["author"].as_str().unwrap().to_owned(), s["data"]["values"].clone())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_listen_tells_a_2026_client_of_a_new_answer() {
    let up = UpProcess::start().await;
    let (ana, bob, _, th) = super::leave_thread(&up.base).await;
    let schema = json!({"type": "object", "properties": {"days": {"type": "integer"}}});
    // Without elicitation: the form waits in lattice, and the client follows it.
    let client = connect(&up.base, &ana.token, Person::answering(None)).await;
    let call = CallToolRequestParams::new(ASK_FORM).with_arguments(args(json!({"title": "Days?", "schema": schema, "thread": th})));
    let asked = serde_json::to_value(client.call_tool(call).await.unwrap()).unwrap();
    let form = asked["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();

    let answers = format!("lattice://artifacts/{form}/submissions");
    let foreign = "https://example.com/not-lattice".to_owned();
    let filter = serde_json::from_value::<SubscriptionFilter>(json!({"resourceSubscriptions": [answers, foreign]})).unwrap();
    let mut listening = client.peer().listen(filter).await.expect("the listen is acknowledged");
    assert_eq!(listening.acknowledged().resource_subscriptions.as_deref(), Some(&[answers.clone()][..]), "only lattice's resources are followed");
    let id = lattice_ui::submission::submission_id(&form, lattice_ui::form::Submissions::Once, "bob", None);
    let body = json!({"id": id, "kind": "submission", "data": {"form_id": form, "form_version": 1, "values": {"days": 4}}});
    let sent = Instant::now();
    let (status, reply) = bob.post(&format!("/v1/threads/{th}/artifacts"), body).await.unwrap();
    assert!((200..300).contains(&status), "{status} {reply}");
    let told = tokio::time::timeout(Duration::from_secs(1), listening.next()).await.expect("told within 1 s").unwrap();
    let Some(ServerNotification::ResourceUpdatedNotification(updated)) = told else { panic!("a resource update, not {told:?}") };
    println!("notifications/resources/updated on the listen stream {} ms after the answer", sent.elapsed().as_millis());
    assert_eq!(updated.params.uri, answers);

    // The toolset, followed on a listen of its own: a flip that takes
    // dashboards away is told.
    let mut tools = client.peer().listen(serde_json::from_value(json!({"toolsListChanged": true})).unwrap()).await.expect("acknowledged");
    assert_eq!(tools.acknowledged().tools_list_changed, Some(true));
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:dashboards", json!({"state": "off", "reason": "the 2026-07-28 suite"})).await;
    let told = tokio::time::timeout(Duration::from_secs(5), tools.next()).await.expect("told of the flip").unwrap();
    assert!(matches!(told, Some(ServerNotification::ToolListChangedNotification(_))), "{told:?}");
}
