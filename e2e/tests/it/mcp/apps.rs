//! Mini apps over MCP (REQUIREMENTS.md M3, M5): an agent's app as a `ui://` resource
//! with its policy; the app's calls through its host pass the app tool
//! policy (allow, ask through elicitation, deny by a per-app overlay), each
//! decision an audit row; set_state merged to one version per five seconds;
//! the kill switch and other tenants refused.

use lattice_agent::tools::{CREATE_APP, CREATE_FORM, SHOW_DASHBOARD, UPDATE_APP};
use lattice_e2e::{Client, UpProcess};
use lattice_mcp::SUBMIT_FORM;
use lattice_ui::app_policy::{GET_STATE, SET_STATE, SUBMIT};
use serde_json::{Value, json};

use super::{ServeMcp, steps, text};

const HTML: &str = "<!doctype html><html><body><p id=\"count\">0</p><script data-lattice-sdk=\"ext-apps\"></script><script>const app = new ExtApps.App({name: 'counter', version: '1'});</script></body></html>";

/// The decisions of the audit rows in a workspace, in order.
async fn decisions(ana: &Client, ws: &str) -> Vec<(String, String)> {
    let page = ana.ok("GET", &format!("/v1/workspaces/{ws}/events?format=json&after=0"), Value::Null).await;
    page["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "audit_recorded" && e["payload"]["name"] == "app_tool_call")
        .map(|e| {
            let d = &e["payload"]["data"];
            assert_eq!(d["via"], "mcp", "{e}");
            (d["tool"].as_str().unwrap().to_owned(), d["decision"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_over_mcp_pass_the_policy_and_leave_an_audit_row() {
    let up = UpProcess::start().await;
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", json!({"state": "on", "reason": "the MCP apps suite"})).await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "acme", "user": "ana", "role": "tenant_admin"})).await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Apps"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Apps"})).await["id"].as_str().unwrap().to_owned();
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bot", "role": "editor"})).await;
    let bot = Client::sign_in_as(&up.base, json!({"tenant": "acme", "user": "bot", "agent": true})).await;

    // The agent makes an app; its result names the app's own resource.
    let made =
        json!({"steps": [{"list": true}, {"call": CREATE_APP, "arguments": {"title": "Counter", "summary": "Counts.", "html": HTML, "thread": th}}]});
    let s = steps(&up.base, &bot.token, made).await;
    let listed = s["steps"][0].as_array().unwrap();
    let get_state = listed.iter().find(|t| t["name"] == GET_STATE).expect("get_state is offered while apps are on");
    assert_eq!(get_state["meta"]["ui"]["visibility"], json!(["app"]));
    let created = &s["steps"][1];
    let app = created["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();
    let uri = format!("ui://lattice/apps/{app}");
    assert_eq!(created["_meta"]["ui"]["resourceUri"], uri.as_str(), "{created}");
    assert!(text(created).starts_with("## Counter\n\nCounts."), "{}", text(created));
    // The view's capability rides in _meta, which hosts keep from models.
    let cap = created["_meta"]["lattice"]["capability"].as_str().expect("the view's capability").to_owned();
    assert!(!created["structuredContent"].to_string().contains(&cap) && !text(created).contains(&cap), "the capability is for the view only");

    // App-only means app-only: a caller without the view's capability (a
    // model with the same token) is refused, and so is a capability given
    // for another artifact or to another person.
    let form = steps(
        &up.base,
        &bot.token,
        json!({"steps": [{"call": CREATE_FORM, "arguments": {"title": "F", "thread": th,
        "schema": {"type": "object", "properties": {"x": {"type": "string"}}}}}]}),
    )
    .await;
    let form_cap = form["steps"][0]["_meta"]["lattice"]["capability"].as_str().unwrap().to_owned();
    let form_id = form["steps"][0]["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();
    let ana_cap = {
        let s =
            steps(&up.base, &ana.token, json!({"steps": [{"call": SHOW_DASHBOARD, "arguments": {"title": "D", "panels": [], "thread": th}}]})).await;
        s["steps"][0]["_meta"]["lattice"]["capability"].as_str().unwrap().to_owned()
    };
    let s = steps(
        &up.base,
        &bot.token,
        json!({"steps": [
            {"call": GET_STATE, "arguments": {"app": app}},
            {"call": GET_STATE, "arguments": {"app": app, "capability": form_cap}},
            {"call": GET_STATE, "arguments": {"app": app, "capability": ana_cap}},
            {"call": GET_STATE, "arguments": {"app": app, "capability": "not-a-capability"}},
            {"call": SUBMIT_FORM, "arguments": {"form": form_id, "form_version": 1, "values": {}, "capability": cap}},
        ]}),
    )
    .await;
    for (i, why) in ["app-only", "another artifact", "someone else", "does not verify", "another artifact"].iter().enumerate() {
        assert_eq!(s["steps"][i]["isError"], true, "{i}: {s}");
        assert!(text(&s["steps"][i]).contains(why), "{i}: {}", text(&s["steps"][i]));
    }

    // Read, state, a merged write, a refused path; submit without a way to ask.
    let plan = json!({"steps": [
        {"read": uri},
        {"call": GET_STATE, "arguments": {"capability": cap}},
        {"call": SET_STATE, "arguments": {"app": app, "capability": cap, "patch": [{"op": "add", "path": "/count", "value": 1}]}},
        {"parallel": [
            {"call": SET_STATE, "arguments": {"app": app, "capability": cap, "patch": [{"op": "replace", "path": "/count", "value": 2}]}},
            {"call": SET_STATE, "arguments": {"app": app, "capability": cap, "patch": [{"op": "add", "path": "/by", "value": "bot"}]}},
        ]},
        {"call": GET_STATE, "arguments": {"app": app, "capability": cap}},
        {"call": SET_STATE, "arguments": {"app": app, "capability": cap, "patch": [{"op": "replace", "path": "html", "value": "x"}]}},
        {"call": SUBMIT, "arguments": {"app": app, "capability": cap, "values": {"count": 2}}},
    ]});
    let started = std::time::Instant::now();
    let s = steps(&up.base, &bot.token, plan).await;
    let content = &s["steps"][0]["contents"][0];
    assert_eq!(content["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(content["_meta"]["ui"]["csp"], json!({"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}));
    let doc = content["text"].as_str().unwrap();
    assert!(doc.starts_with("<!doctype html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"), "{}", &doc[..200]);
    assert!(doc.contains("RTCPeerConnection"), "the prelude takes WebRTC away");
    assert!(
        doc.contains("_meta.lattice.capability") && doc.contains("A.prototype.callServerTool"),
        "the prelude keeps the capability and the SDK passes it"
    );
    assert!(doc.len() > HTML.len() + 100_000 && doc.contains("ExtApps"), "the vendored SDK is inlined");
    assert!(!doc.contains("data-lattice-sdk"), "the marker was replaced by the SDK");
    assert_eq!(s["steps"][1]["structuredContent"]["state"], json!({}), "{}", s["steps"][1]);
    assert_eq!(s["steps"][2]["structuredContent"]["receipt"]["version"], 2, "{}", s["steps"][2]);
    assert_eq!(s["steps"][2]["structuredContent"]["version"], 2, "the contract's {{version}}");
    let merged = s["steps"][3].as_array().unwrap();
    assert_eq!(merged[0]["structuredContent"]["receipt"]["version"], 3, "{merged:?}");
    assert_eq!(merged[1]["structuredContent"]["receipt"]["version"], 3, "two writes, one version");
    assert!(started.elapsed().as_secs_f64() >= 4.5, "the second write waited for the five seconds");
    assert_eq!(s["steps"][4]["structuredContent"]["state"], json!({"count": 2, "by": "bot"}));
    assert_eq!(s["steps"][5]["isError"], true);
    assert!(text(&s["steps"][5]).contains("JSON Pointer"), "{}", s["steps"][5]);
    assert_eq!(s["steps"][6]["isError"], true);
    assert!(text(&s["steps"][6]).contains("no way to ask"), "{}", s["steps"][6]);

    // The person is asked through the host: declined, then confirmed.
    let submit = json!({"call": SUBMIT, "arguments": {"app": app, "capability": cap, "values": {"count": 2}}});
    let s = steps(&up.base, &bot.token, json!({"elicit": "decline", "steps": [submit]})).await;
    assert!(text(&s["steps"][0]).contains("declined"), "{s}");
    let s = steps(&up.base, &bot.token, json!({"elicit": "accept", "steps": [submit]})).await;
    assert!(s["elicited"][0].as_str().unwrap().contains("\"count\": 2"), "the person saw the exact values: {s}");
    let sub = s["steps"][0]["structuredContent"]["submission"]["id"].as_str().expect("sent").to_owned();
    assert_eq!(s["steps"][0]["structuredContent"]["id"], sub.as_str(), "the contract's {{id}}");
    // The confirmed call's receipt proves it: its envelope, sealed under a
    // signed checkpoint (docs/SEAL.md), as `lattice up` seals behind it.
    let receipt = &s["steps"][0]["structuredContent"]["submission"];
    assert_eq!(receipt["proof"]["envelope"]["seq"], receipt["seq"], "{receipt}");
    assert!(receipt["proof"]["checkpoint"]["signature"].is_string(), "{receipt}");
    let row = ana.ok("GET", &format!("/v1/artifacts/{sub}"), Value::Null).await;
    assert_eq!((row["author"].as_str(), row["data"]["form_id"].as_str()), (Some("bot"), Some(app.as_str())), "the MCP caller's submission");

    // An operator's overlay for this app denies what the rest may do.
    let policy = format!("get_state=allow,set_state=allow,submit=ask,acme:{app}:get_state=deny");
    let overlaid = ServeMcp::start(&up.database_url(), &[("LATTICE_APP_TOOL_POLICY", policy.as_str())]).await;
    let s = steps(&overlaid.base, &bot.token, json!({"steps": [{"call": GET_STATE, "arguments": {"app": app, "capability": cap}}]})).await;
    assert!(text(&s["steps"][0]).contains("policy denies"), "{s}");
    // The overlay names acme's app: another tenant's app that took the same
    // id (ids are unique per tenant) is not touched by it.
    let root_globex = Client::sign_in_as(&up.base, json!({"tenant": "globex", "user": "gil", "role": "tenant_admin"})).await;
    let gws = root_globex.ok("POST", "/v1/workspaces", json!({"name": "Theirs"})).await["id"].as_str().unwrap().to_owned();
    let gth = root_globex.ok("POST", &format!("/v1/workspaces/{gws}/threads"), json!({"title": "Theirs"})).await["id"].as_str().unwrap().to_owned();
    root_globex.ok("POST", &format!("/v1/workspaces/{gws}/members"), json!({"user": "gbot", "role": "editor"})).await;
    let gbot = Client::sign_in_as(&up.base, json!({"tenant": "globex", "user": "gbot", "agent": true})).await;
    gbot.ok(
        "POST",
        &format!("/v1/threads/{gth}/artifacts"),
        json!({"id": app, "kind": "app", "data": {"title": "Same id", "summary": "s", "html": "<p>x</p>"}}),
    )
    .await;
    let made =
        steps(&up.base, &gbot.token, json!({"steps": [{"call": UPDATE_APP, "arguments": {"id": app, "html": "<p>y</p>", "thread": gth}}]})).await;
    let gcap = made["steps"][0]["_meta"]["lattice"]["capability"].as_str().expect("their view's capability").to_owned();
    let s = steps(&overlaid.base, &gbot.token, json!({"steps": [{"call": GET_STATE, "arguments": {"app": app, "capability": gcap}}]})).await;
    assert_eq!(s["steps"][0]["isError"], false, "globex's app is not acme's: {s}");
    drop(overlaid);

    // A write that merged two calls is one row; a call refused for its
    // arguments is one row saying so; an ask nobody could answer is
    // answered `cannot_ask`.
    let expected = [
        (GET_STATE, "allow"),
        (SET_STATE, "allow"),
        (SET_STATE, "allow"),
        (GET_STATE, "allow"),
        // The patch on a path no app may write: refused, and recorded.
        (SET_STATE, "invalid_arguments"),
        (SUBMIT, "ask"),
        // A host with no way to ask: the ask is answered as such.
        (SUBMIT, "cannot_ask"),
        (SUBMIT, "ask"),
        (SUBMIT, "declined"),
        (SUBMIT, "ask"),
        (SUBMIT, "confirmed"),
        (GET_STATE, "deny"),
    ];
    // The overlay's row was written by the other process: the log service
    // sees it once its horizon passes it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let rows = decisions(&ana, &ws).await;
        let rows: Vec<(&str, &str)> = rows.iter().map(|(t, d)| (t.as_str(), d.as_str())).collect();
        if rows.len() >= expected.len() || std::time::Instant::now() > deadline {
            assert_eq!(rows, expected, "one audit row per decision");
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    // Another tenant reads nothing; with apps off, nothing runs.
    let eve = Client::sign_in(&up.base, "globex", "eve").await;
    let s = steps(&up.base, &eve.token, json!({"steps": [{"read": uri}, {"call": GET_STATE, "arguments": {"app": app, "capability": cap}}]})).await;
    assert!(s["steps"][0]["error"].as_str().is_some_and(|e| e.contains("no app")), "{s}");
    assert_eq!(s["steps"][1]["isError"], true, "{s}");
    root.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", json!({"state": "off", "reason": "the MCP apps suite"})).await;
    let s = steps(
        &up.base,
        &bot.token,
        json!({"steps": [{"list": true}, {"read": uri}, {"call": GET_STATE, "arguments": {"app": app, "capability": cap}}]}),
    )
    .await;
    let names: Vec<&str> = s["steps"][0].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.iter().any(|n| [CREATE_APP, UPDATE_APP, GET_STATE, SET_STATE, SUBMIT].contains(n)), "{names:?}");
    assert!(s["steps"][1]["error"].as_str().is_some_and(|e| e.contains("mini apps are off")), "{s}");
    assert!(text(&s["steps"][2]).contains("switched off"), "{s}");
}
