//! Who takes part: two tenants, each with a workspace of three threads,
//! five people who chat there (editors), a form in each thread that takes
//! any number of answers, and one person each for the MCP and the AG-UI
//! client. Mini apps are switched on for the deployment, so that
//! `scripted:app` makes its app.

use std::sync::Arc;
use std::sync::atomic::AtomicI64;

use serde_json::{Value, json};

use super::client::{Api, Request};
use super::stats::Stats;

pub const TENANTS: [&str; 2] = ["acme", "globex"];
pub const PEOPLE: [&str; 5] = ["ana", "bob", "cy", "dee", "eli"];
const THREADS: usize = 3;

pub struct Person {
    pub tenant: usize,
    pub user: String,
    pub token: String,
}

pub struct Thread {
    pub tenant: usize,
    pub id: String,
    pub form: String,
}

pub struct Scene {
    pub people: Vec<Person>,
    /// The MCP client's person and the AG-UI client's, one per tenant each.
    pub mcp: Vec<Person>,
    pub agui: Vec<Person>,
    pub threads: Vec<Thread>,
    /// The highest log position any answer named: where a stream that
    /// opens now starts from (a little before it).
    pub latest: Arc<AtomicI64>,
}

impl Scene {
    pub fn threads_of(&self, tenant: usize) -> Vec<&Thread> {
        self.threads.iter().filter(|t| t.tenant == tenant).collect()
    }
}

/// A request of the set-up: it must succeed.
async fn must(api: &Api, request: Request<'_>) -> Value {
    let what = format!("{} {}", request.method, request.path);
    api.call("setup", request).await.unwrap_or_else(|| panic!("the soak's set-up failed at {what}: {:?}", api.stats.failures()))
}

async fn token(api: &Api, request: Value) -> String {
    must(api, Request::post("/v1/dev/token", "", &request)).await["token"].as_str().expect("a token").to_owned()
}

pub async fn build(portal: &str) -> Scene {
    let api = Api::new(portal, Arc::new(Stats::default()));
    let root = token(&api, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    let on = json!({"state": "on", "reason": "the soak's agents make apps"});
    must(&api, Request::new(reqwest::Method::PUT, "/v1/integrations/deployment/ui:mini-apps", &root, Some(&on))).await;
    let (mut people, mut mcp, mut agui, mut threads) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (t, tenant) in TENANTS.iter().enumerate() {
        let mut here = Vec::new();
        for user in PEOPLE.iter().map(|u| (*u).to_owned()).chain(["mia".into(), "aga".into()]) {
            here.push(Person { tenant: t, token: token(&api, json!({"tenant": tenant, "user": user})).await, user });
        }
        let admin = &here[0].token;
        let ws = must(&api, Request::post("/v1/workspaces", admin, &json!({"name": format!("{tenant} soak")}))).await["id"]
            .as_str()
            .expect("a workspace")
            .to_owned();
        for person in &here[1..] {
            must(&api, Request::post(&format!("/v1/workspaces/{ws}/members"), admin, &json!({"user": person.user, "role": "editor"}))).await;
        }
        for n in 0..THREADS {
            let th = must(&api, Request::post(&format!("/v1/workspaces/{ws}/threads"), admin, &json!({"title": format!("Soak {n}")}))).await["id"]
                .as_str()
                .expect("a thread")
                .to_owned();
            let form = json!({"kind": "form", "data": lunch_form()});
            let form =
                must(&api, Request::post(&format!("/v1/threads/{th}/artifacts"), admin, &form)).await["id"].as_str().expect("a form").to_owned();
            threads.push(Thread { tenant: t, id: th, form });
        }
        agui.push(here.pop().expect("aga"));
        mcp.push(here.pop().expect("mia"));
        people.extend(here);
    }
    Scene { people, mcp, agui, threads, latest: Arc::default() }
}

/// A form people answer again and again.
fn lunch_form() -> Value {
    json!({
        "title": "Lunch order",
        "schema": {
            "type": "object",
            "properties": {
                "dish": {"type": "string", "title": "Dish", "enum": ["soup", "salad", "pasta"]},
                "note": {"type": "string", "title": "Note", "maxLength": 200}
            },
            "required": ["dish"]
        },
        "submissions": "many",
        "closed": false
    })
}
