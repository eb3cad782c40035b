//! An app's calls over MCP pass the one door lattice's chat host's calls
//! pass (`lattice_app_calls::AppCalls::call`): the view's capability, bound to
//! the exact caller (a person's view is not that person's agent), then the
//! policy; a reader's calls leave a bounded trace; an `ask` put to a person
//! over MCP is answered there, never by a request holding the same token.

use lattice_agent::tools::CREATE_APP;
use lattice_core::TenantRole;
use lattice_ui::app_policy::{GET_STATE, SET_STATE, SUBMIT};
use serde_json::{Value, json};

use crate::{Stack, call, text, token};

struct Scene {
    s: Stack,
    ana: String,
    bot: String,
    vera: String,
    th: String,
    app: String,
    /// The capability the agent's view was given in create_app's result.
    bot_cap: String,
}

/// ana's workspace and thread, bot (an agent) an editor there, vera a
/// viewer; mini apps on; bot made an app over MCP.
async fn scene(backend: lattice_log::Backend) -> Scene {
    let s = Stack::new(backend, "get_state=allow,set_state=allow,submit=ask").await;
    let root = lattice_testkit::authenticator().mint(&lattice_testkit::principal("ops", "root", TenantRole::DeploymentAdmin, false));
    s.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", &root, Some(json!({"state": "on", "reason": "apps over MCP"}))).await;
    let (ana, bot, vera) = (token("t1", "ana", false), token("t1", "bot", true), token("t1", "vera", false));
    let ws = s.ok("POST", "/v1/workspaces", &ana, Some(json!({"name": "W"}))).await["id"].as_str().unwrap().to_owned();
    let th = s.ok("POST", &format!("/v1/workspaces/{ws}/threads"), &ana, Some(json!({"title": "T"}))).await["id"].as_str().unwrap().to_owned();
    for (user, role) in [("bot", "editor"), ("vera", "viewer")] {
        s.ok("POST", &format!("/v1/workspaces/{ws}/members"), &ana, Some(json!({"user": user, "role": role}))).await;
    }
    let session = s.mcp(&bot).await;
    let made = call(&session, CREATE_APP, json!({"title": "Counter", "summary": "Counts.", "html": "<p>0</p>", "thread": th})).await;
    assert_ne!(made["isError"], true, "{made}");
    let app = made["structuredContent"]["receipt"]["id"].as_str().expect("the app's receipt").to_owned();
    let bot_cap = made["_meta"]["lattice"]["capability"].as_str().expect("the view's capability").to_owned();
    Scene { s, ana, bot, vera, th, app, bot_cap }
}

impl Scene {
    /// The capability the chat host is given for the app, for `token`'s person.
    async fn host_capability(&self, token: &str) -> String {
        let given = self.s.ok("POST", &format!("/v1/artifacts/{}/capability", self.app), token, None).await;
        given["capability"].as_str().unwrap().to_owned()
    }

    /// The thread's envelopes, as ana reads them.
    async fn events(&self) -> Vec<Value> {
        let page = self.s.ok("GET", &format!("/v1/threads/{}/events?format=json&after=0", self.th), &self.ana, None).await;
        page["events"].as_array().unwrap().clone()
    }

    async fn app_version(&self) -> u64 {
        self.s.ok("GET", &format!("/v1/artifacts/{}", self.app), &self.ana, None).await["version"].as_u64().unwrap()
    }
}

lattice_testkit::both_backends! {
    async fn a_views_capability_is_its_callers_alone(backend: Backend) {
        let sc = scene(backend).await;
        let bot = sc.s.mcp(&sc.bot).await;
        let got = call(&bot, GET_STATE, json!({"capability": sc.bot_cap})).await;
        assert_ne!(got["isError"], true, "{got}");
        assert_eq!(got["structuredContent"], json!({"state": {}}));
        // Without the view's capability the same token gets nothing.
        let bare = call(&bot, GET_STATE, json!({"app": sc.app})).await;
        assert_eq!(bare["isError"], true);
        assert!(text(&bare).contains("app-only"), "{bare}");

        // A person's view and that person's agent are two callers, both ways.
        let anas_view = sc.host_capability(&sc.ana).await;
        let anas_agent = sc.s.mcp(&token("t1", "ana", true)).await;
        let refused = call(&anas_agent, GET_STATE, json!({"capability": anas_view})).await;
        assert_eq!(refused["isError"], true);
        assert!(text(&refused).contains("not to an agent"), "{refused}");
        let bot_as_person = sc.s.mcp(&token("t1", "bot", false)).await;
        let refused = call(&bot_as_person, GET_STATE, json!({"capability": sc.bot_cap})).await;
        assert_eq!(refused["isError"], true);
        assert!(text(&refused).contains("to an agent, not to the person"), "{refused}");

        // One rule however a call arrives: the capability the chat host was
        // given for ana works for ana over MCP, and the agent's view's over
        // the chat host's route.
        let ana = sc.s.mcp(&sc.ana).await;
        let got = call(&ana, GET_STATE, json!({"capability": anas_view})).await;
        assert_ne!(got["isError"], true, "{got}");
        let over_http = sc.s.send("POST", &format!("/v1/artifacts/{}/calls", sc.app), &sc.bot,
            Some(json!({"tool": GET_STATE, "capability": sc.bot_cap}))).await;
        assert_eq!(over_http.body["status"], "done", "{}", over_http.body);
        // An agent's token is never handed a capability by the chat host's route.
        let minted = sc.s.send("POST", &format!("/v1/artifacts/{}/capability", sc.app), &sc.bot, None).await;
        assert_eq!((minted.status.as_u16(), minted.body["error"]["type"].as_str()), (403, Some("Forbidden")), "{}", minted.body);
    }
}

lattice_testkit::both_backends! {
    async fn a_readers_calls_over_mcp_leave_a_bounded_trace(backend: Backend) {
        let sc = scene(backend).await;
        let cap = sc.host_capability(&sc.vera).await;
        let vera = sc.s.mcp(&sc.vera).await;
        let big = "x".repeat(40 * 1024);
        let before = sc.events().await.len();

        for _ in 0..3 {
            let read = call(&vera, GET_STATE, json!({"capability": cap, "junk": big})).await;
            assert_ne!(read["isError"], true, "a viewer reads the app's state: {read}");
        }
        assert_eq!(sc.events().await.len(), before, "a reader's read leaves no row");

        let writes = [
            (SET_STATE, json!({"capability": cap, "patch": [{"op": "add", "path": "/junk", "value": big}]})),
            (SUBMIT, json!({"capability": cap, "values": {"junk": big}})),
        ];
        for _ in 0..3 {
            for (tool, arguments) in &writes {
                let refused = call(&vera, tool, arguments.clone()).await;
                assert_eq!(refused["isError"], true, "{tool}");
                assert!(text(&refused).contains("may only read"), "{tool}: {}", text(&refused));
            }
        }
        let added: Vec<Value> = sc.events().await.split_off(before);
        assert_eq!(added.len(), 6, "one row per refused call, nothing else");
        for row in &added {
            let size = row.to_string().len();
            assert!(size < 1024, "a reader's row is small: {size} bytes");
            assert!(!row.to_string().contains("xxxxxxxx"), "never the arguments");
            let data = &row["payload"]["data"];
            assert_eq!((row["type"].as_str(), data["decision"].as_str(), data["via"].as_str()), (Some("audit_recorded"), Some("read_only"), Some("mcp")));
            assert!(data["arguments_bytes"].as_u64().unwrap() > 40 * 1024, "{data}");
            assert!(data["arguments_digest"].as_str().unwrap().starts_with("sha256:"), "{data}");
        }
        assert_eq!(sc.app_version().await, 1, "the app did not change");
    }
}

lattice_testkit::both_backends! {
    async fn an_ask_put_over_mcp_is_answered_there_only(backend: Backend) {
        let sc = scene(backend).await;
        let bot = sc.s.mcp(&sc.bot).await;
        // This client cannot ask its person: the call is refused and the
        // ask is left unanswered.
        let asked = call(&bot, SUBMIT, json!({"capability": sc.bot_cap, "values": {"n": 1}})).await;
        assert_eq!(asked["isError"], true);
        assert!(text(&asked).contains("elicitation"), "{asked}");
        let events = sc.events().await;
        let ask = events.iter().rfind(|e| e["payload"]["data"]["decision"] == "ask").expect("the ask's row");
        let confirmation = ask["id"].as_str().unwrap();
        // The same token cannot answer it through the chat host's route.
        let confirmed = sc.s.send("POST", &format!("/v1/app-calls/{confirmation}"), &sc.bot, Some(json!({"accept": true}))).await;
        assert_eq!((confirmed.status.as_u16(), confirmed.body["error"]["type"].as_str()), (409, Some("InvalidState")), "{}", confirmed.body);
        let subs = sc.s.ok("GET", &format!("/v1/threads/{}/artifacts?kind=submission", sc.th), &sc.ana, None).await;
        assert_eq!(subs, json!([]), "nothing was sent");
    }
}
