//! The MCP exporter (SPEC M1–M3), a first slice: an rmcp server that
//! declares the MCP Apps extension, offers the agent toolset per the
//! caller's workspace switches, runs `show_dashboard` as the caller, and
//! serves a dashboard's view as a `ui://` resource.

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_agent::tools;
use lattice_core::{Command, SwitchKey, ThreadId, WorkspaceId};
use lattice_log::{Authenticated, LogService};
use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ExtensionCapabilities, Implementation,
    ListToolsResult, MetaObject, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

pub const UI_MIME: &str = "text/html;profile=mcp-app";
pub const DASHBOARD_VIEW: &str = "ui://lattice/views/dashboard";

#[derive(Clone)]
pub struct Exporter {
    log: LogService,
    /// The caller over stdio (one token for the process); over HTTP each
    /// request carries its own.
    fixed: Option<Arc<Authenticated>>,
}

impl Exporter {
    pub fn over_http(log: LogService) -> Self {
        Self { log, fixed: None }
    }

    pub fn as_caller(log: LogService, who: Authenticated) -> Self {
        Self { log, fixed: Some(Arc::new(who)) }
    }

    fn caller(&self, context: &RequestContext<RoleServer>) -> Result<Authenticated, McpError> {
        if let Some(who) = &self.fixed {
            return Ok((**who).clone());
        }
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let token = parts
            .and_then(|p| p.headers.get(axum::http::header::AUTHORIZATION))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(|| McpError::invalid_request("a bearer token is needed", None))?;
        self.log.authenticator().verify(token).map_err(|e| McpError::invalid_request(e.to_string(), None))
    }

    /// The thread tools act in: the caller's most recent, or a workspace
    /// and a thread named "MCP" made for it.
    async fn thread_for(&self, who: &Authenticated, given: Option<&str>) -> Result<(ThreadId, String), McpError> {
        let refused = |e: lattice_core::Error| McpError::invalid_request(e.to_string(), None);
        if let Some(th) = given {
            let id = ThreadId::parse("thread", th).map_err(refused)?;
            let ws = self.log.thread_workspace(who, &id).await.map_err(refused)?;
            return Ok((id, ws));
        }
        for ws in self.log.workspaces(who).await.map_err(refused)? {
            if let Some(t) = self.log.threads(who, &ws.id).await.map_err(refused)?.into_iter().max_by(|a, b| a.created_at.cmp(&b.created_at)) {
                return Ok((ThreadId::from_trusted(t.id), ws.id));
            }
        }
        let ws = self.log.execute(who, Command::CreateWorkspace { name: "MCP".into() }).await.map_err(refused)?.id.unwrap_or_default();
        let th = self
            .log
            .execute(who, Command::CreateThread { workspace: WorkspaceId::from_trusted(ws.clone()), title: "MCP".into() })
            .await
            .map_err(refused)?
            .id
            .unwrap_or_default();
        Ok((ThreadId::from_trusted(th), ws))
    }

    async fn enabled(&self, who: &Authenticated, workspace: &str) -> Result<BTreeMap<SwitchKey, bool>, McpError> {
        let effective = self.log.effective(who, workspace).await.map_err(|e| McpError::invalid_request(e.to_string(), None))?;
        Ok(effective.into_iter().map(|(k, e)| (k, e.enabled)).collect())
    }
}

fn meta(value: Value) -> MetaObject {
    let mut m = MetaObject::new();
    if let Value::Object(map) = value {
        for (k, v) in map {
            m.insert(k, v);
        }
    }
    m
}

impl ServerHandler for Exporter {
    fn get_info(&self) -> ServerConfig {
        let mut extensions = ExtensionCapabilities::new();
        let ui = json!({"mimeTypes": [UI_MIME]});
        extensions.insert("io.modelcontextprotocol/ui".into(), ui.as_object().cloned().unwrap_or_default());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().enable_extensions_with(extensions).build())
            .with_server_info(Implementation::new("lattice", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListToolsResult, McpError> {
        let who = self.caller(&context)?;
        let (_, ws) = self.thread_for(&who, None).await?;
        let enabled = self.enabled(&who, &ws).await?;
        let listed = tools::toolset(&enabled)
            .into_iter()
            .map(|t| {
                let mut schema = t.parameters.as_object().cloned().unwrap_or_default();
                if let Some(Value::Object(props)) = schema.get_mut("properties") {
                    props.insert("thread".into(), json!({"type": "string", "description": "A thread id; the most recent thread when left out."}));
                }
                let tool = Tool::new(t.name.clone(), t.description.clone(), Arc::new(schema));
                if t.name == tools::SHOW_DASHBOARD {
                    tool.with_meta(meta(json!({"ui": {"resourceUri": DASHBOARD_VIEW}, "ui/resourceUri": DASHBOARD_VIEW})))
                } else {
                    tool
                }
            })
            .collect();
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        let who = self.caller(&context)?;
        let args = request.arguments.clone().map(Value::Object).unwrap_or_else(|| json!({}));
        let (thread, ws) = self.thread_for(&who, args.get("thread").and_then(Value::as_str)).await?;
        let enabled = self.enabled(&who, &ws).await?;
        if !tools::toolset(&enabled).iter().any(|t| t.name == request.name) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!("{} is not offered here", request.name))]).into());
        }
        if request.name != tools::SHOW_DASHBOARD {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!("{} is not exported over MCP yet", request.name))]).into());
        }
        let data = json!({"title": args.get("title"), "as_of": lattice_log::rfc3339(lattice_log::now_ms()), "panels": args.get("panels")});
        let done = match self.log.execute(&who, Command::CreateArtifact { thread, id: None, kind: "dashboard".into(), data: data.clone() }).await {
            Ok(done) => done,
            // A refusal is a tool error the model can act on.
            Err(e) => return Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into()),
        };
        let receipt = json!({"id": done.id, "version": done.version, "digest": done.digest});
        let mut result = CallToolResult::success(vec![ContentBlock::text(markdown(&data, &receipt))]);
        result.structured_content = Some(json!({"dashboard": data, "receipt": receipt}));
        result.meta = Some(meta(json!({"ui": {"resourceUri": DASHBOARD_VIEW}, "ui/resourceUri": DASHBOARD_VIEW})));
        Ok(result.into())
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, McpError> {
        self.caller(&context)?;
        if request.uri != DASHBOARD_VIEW {
            return Err(McpError::resource_not_found(format!("no resource {}", request.uri), None));
        }
        let contents = ResourceContents::text(include_str!("dashboard_view.html"), DASHBOARD_VIEW)
            .with_mime_type(UI_MIME)
            .with_meta(meta(json!({"ui": {"csp": {}, "prefersBorder": true}})));
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// The text fallback: the whole dashboard in Markdown, and its receipt.
fn markdown(data: &Value, receipt: &Value) -> String {
    let mut out = format!("## {}\n\nFigures as of {}.\n\n", data["title"].as_str().unwrap_or_default(), data["as_of"].as_str().unwrap_or_default());
    for panel in data["panels"].as_array().into_iter().flatten() {
        match panel["type"].as_str() {
            Some("metric") => out.push_str(&format!("- **{}**: {}{}\n", panel["label"].as_str().unwrap_or_default(), panel["value"], panel["unit"].as_str().map(|u| format!(" {u}")).unwrap_or_default())),
            Some("line" | "bar") => {
                out.push_str(&format!("\n### {}\n\n| |", panel["title"].as_str().unwrap_or_default()));
                let series = panel["series"].as_array().cloned().unwrap_or_default();
                for s in &series {
                    out.push_str(&format!(" {} |", s["name"].as_str().unwrap_or_default()));
                }
                out.push_str(&format!("\n|---|{}\n", "---|".repeat(series.len())));
                for (i, x) in panel["x"].as_array().into_iter().flatten().enumerate() {
                    out.push_str(&format!("| {} |", x.as_str().unwrap_or_default()));
                    for s in &series {
                        out.push_str(&format!(" {} |", s["values"][i]));
                    }
                    out.push('\n');
                }
            }
            Some("table") => {
                let columns: Vec<String> = panel["columns"].as_array().into_iter().flatten().map(|c| c.as_str().unwrap_or_default().to_owned()).collect();
                out.push_str(&format!("\n| {} |\n|{}\n", columns.join(" | "), "---|".repeat(columns.len())));
                for row in panel["rows"].as_array().into_iter().flatten() {
                    let cells: Vec<String> = row.as_array().into_iter().flatten().map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned)).collect();
                    out.push_str(&format!("| {} |\n", cells.join(" | ")));
                }
            }
            Some("text") => out.push_str(&format!("\n{}\n", panel["markdown"].as_str().unwrap_or_default())),
            Some("action") => out.push_str(&format!("- Action: {}\n", panel["label"].as_str().unwrap_or_default())),
            _ => {}
        }
    }
    out.push_str(&format!("\nReceipt: artifact {} version {} digest {}\n", receipt["id"].as_str().unwrap_or_default(), receipt["version"], receipt["digest"].as_str().unwrap_or_default()));
    out
}
