//! A mini app (REQUIREMENTS.md U7): one HTML file written by an agent, run sandboxed.
//! HTML naming an external URL is refused here, as a first filter; the
//! sandbox and its policy are the guard.

use lattice_core::{Error, FieldError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const HTML_MAX_BYTES: usize = 256 * 1024;
pub const STATE_MAX_BYTES: usize = 64 * 1024;
pub const SUMMARY_MAX_CHARS: usize = 500;
/// The largest document a connected server's app may have: such apps
/// carry their SDK and framework inline.
pub const SERVER_HTML_MAX_BYTES: usize = 2 * 1024 * 1024;
/// The most of a server app's call (its arguments and result together)
/// kept with it, to tell the app what showed it.
pub const SERVER_CALL_MAX_BYTES: usize = 256 * 1024;

/// The `data` of an `app` artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct App {
    pub title: String,
    /// Shown beside the frame, always: what the app does, in words.
    pub summary: String,
    /// One self-contained HTML document (at most 256 KB).
    pub html: String,
    /// The app's own state (get_state / set_state), at most 64 KB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::wire::any_value")]
    pub state: Option<Value>,
    /// Where an app a connected MCP server made came from: its calls go
    /// back to that server. Only lattice's runner, inside a run, puts one
    /// in the log (`checks::ServerApps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerApp>,
}

/// The origin of a connected server's app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerApp {
    /// The server's name (its switch key is `mcp:<name>`).
    pub name: String,
    /// Its `ui://` resource.
    pub uri: String,
    /// The tool whose result showed it.
    pub tool: String,
    /// The server's `_meta.ui` for the document (its CSP wishes, border,
    /// domain), as declared: honoured only as far as the deployment allows.
    #[serde(default)]
    #[schemars(schema_with = "crate::wire::any_value")]
    pub ui: Value,
    /// The call that showed it, told to the app
    /// (`ui/notifications/tool-input`, `ui/notifications/tool-result`).
    #[schemars(schema_with = "crate::wire::any_value")]
    pub input: Value,
    #[schemars(schema_with = "crate::wire::any_value")]
    pub result: Value,
}

/// The `data` of the app artifact a connected server's tool result shows.
#[allow(clippy::too_many_arguments)]
pub fn server_app(server: &str, tool: &str, about: Option<&str>, uri: &str, html: String, ui: Value, input: &Value, result: &Value) -> Value {
    let summary: String =
        about.map_or_else(|| format!("An app of the {server} server, shown by its {tool} tool."), |a| a.chars().take(SUMMARY_MAX_CHARS).collect());
    // What was said to the model stays in the run; the app is told the
    // call without the result's `_meta` (another app's capability, a
    // server's private hints).
    let mut result = result.clone();
    if let Some(map) = result.as_object_mut() {
        map.remove("_meta");
    }
    serde_json::json!({
        "title": format!("{tool} ({server})"),
        "summary": summary,
        "html": html,
        "server": {"name": server, "uri": uri, "tool": tool, "ui": ui, "input": input, "result": result},
    })
}

impl App {
    pub fn check(&self) -> Result<(), Error> {
        let mut errors = Vec::new();
        if self.title.trim().is_empty() {
            errors.push(FieldError::new("title", "minLength", "must not be empty"));
        }
        if self.summary.trim().is_empty() {
            errors.push(FieldError::new("summary", "minLength", "an app needs a summary in words"));
        } else if self.summary.chars().count() > SUMMARY_MAX_CHARS {
            errors.push(FieldError::new(
                "summary",
                "maxLength",
                format!("{} characters exceed the limit {SUMMARY_MAX_CHARS}", self.summary.chars().count()),
            ));
        }
        let html_max = if self.server.is_some() { SERVER_HTML_MAX_BYTES } else { HTML_MAX_BYTES };
        if self.html.len() > html_max {
            return Err(Error::too_large(lattice_core::Code::DocumentTooLarge, html_max as u64, self.html.len() as u64));
        }
        if let Some(server) = &self.server {
            let size =
                lattice_core::document::size(&server.input) + lattice_core::document::size(&server.result) + lattice_core::document::size(&server.ui);
            if size > SERVER_CALL_MAX_BYTES {
                return Err(Error::too_large(lattice_core::Code::DocumentTooLarge, SERVER_CALL_MAX_BYTES as u64, size as u64));
            }
            if lattice_core::ServerKey::check_name(&server.name).is_err() {
                errors.push(FieldError::new("server.name", "pattern", "not a server's name"));
            }
            if !server.uri.starts_with("ui://") {
                errors.push(FieldError::new("server.uri", "format", "an app's resource is a ui:// URI"));
            }
        }
        if let Some(state) = &self.state {
            let size = serde_json::to_vec(state).map(|v| v.len()).unwrap_or(usize::MAX);
            if size > STATE_MAX_BYTES {
                return Err(Error::too_large(lattice_core::Code::DocumentTooLarge, STATE_MAX_BYTES as u64, size as u64));
            }
        }
        // An agent's app is told early that it cannot reach the network; a
        // server's app is refused only what its markup would load (its
        // inline framework names addresses it never loads).
        let found = if self.server.is_some() { external_load(&self.html) } else { external_reference(&self.html) };
        if let Some(found) = found {
            errors.push(FieldError::new(
                "html",
                "externalUrl",
                format!("the HTML names an external address ({found}); an app is one self-contained file with no network"),
            ));
        }
        Error::invalid(errors)
    }
}

pub use crate::external::{external_load, external_reference};

/// The policy of the document an app runs in: no network at all.
pub const INNER_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
     img-src data:; font-src data:; media-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'; \
     frame-src 'none'; worker-src 'none'; object-src 'none'; manifest-src 'none'";

/// What an app's document starts with, wherever it runs (lattice's sandbox
/// proxy, another MCP host): its policy, then a script that takes WebRTC
/// away, which no policy directive governs, and keeps the capability its
/// host's tool result carries (`_meta.lattice.capability`, which an MCP
/// host gives the view and never the model) as `window.lattice.capability`:
/// app-only tools called over MCP need it.
pub fn prelude() -> String {
    prelude_with(INNER_POLICY)
}

/// The prelude under `policy` (a server's app granted origins its
/// server declared: `crate::app_domains::policy`).
pub fn prelude_with(policy: &str) -> String {
    format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\
         <script>(()=>{{for(const n of ['RTCPeerConnection','webkitRTCPeerConnection','RTCDataChannel',\
         'RTCIceCandidate','RTCSessionDescription','RTCRtpSender','RTCRtpReceiver','RTCRtpTransceiver']){{\
         try{{Object.defineProperty(window,n,{{value:undefined,writable:false,configurable:false}})}}catch(e){{}}}}\
         const l={{capability:null}};try{{Object.defineProperty(window,'lattice',{{value:l,writable:false,configurable:false}})}}catch(e){{}}\
         addEventListener('message',e=>{{const m=e.data,c=m&&m.method==='ui/notifications/tool-result'&&m.params&&\
         m.params._meta&&m.params._meta.lattice&&m.params._meta.lattice.capability;if(typeof c==='string')l.capability=c}})}})()</script>"
    )
}

/// Follows the inlined SDK: its `callServerTool` passes the capability the
/// prelude kept, so an app written against the SDK needs nothing of its own.
const SDK_CAPABILITY: &str = "<script>(()=>{const A=window.ExtApps&&window.ExtApps.App;if(!A)return;\
     const call=A.prototype.callServerTool;A.prototype.callServerTool=function(p,...r){const c=window.lattice&&window.lattice.capability;\
     if(c&&p)p={...p,arguments:{...(p.arguments||{}),capability:c}};return call.call(this,p,...r)}})()</script>";

/// The element an app puts where it wants the MCP Apps SDK inlined.
pub const SDK_MARKER: &str = "<script data-lattice-sdk=\"ext-apps\"></script>";

/// An app's document as it runs: the prelude first (after a doctype, which
/// keeps standards mode), and the SDK inlined where the app asks for it.
pub fn document(html: &str, sdk: Option<&str>) -> String {
    let body = match sdk {
        Some(sdk) if html.contains(SDK_MARKER) => {
            let safe = sdk.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT");
            html.replacen(SDK_MARKER, &format!("<script>{safe}</script>{SDK_CAPABILITY}"), 1)
        }
        _ => html.to_owned(),
    };
    let trimmed = body.trim_start();
    let doctype_end = trimmed.get(..9).filter(|s| s.eq_ignore_ascii_case("<!doctype")).and_then(|_| trimmed.find('>'));
    match doctype_end {
        Some(end) => format!("{}{}{}", &trimmed[..=end], prelude(), &trimmed[end + 1..]),
        None => format!("{}{body}", prelude()),
    }
}

/// An app's `set_state` patch made a patch of its artifact: every path (and
/// `from`) put under `/state`, so an app changes its own state and nothing
/// else of itself.
pub fn state_patch(arguments: &Value) -> Result<Vec<Value>, String> {
    let ops = arguments.get("patch").and_then(Value::as_array).ok_or("set_state takes {\"patch\": [RFC 6902 operations]}")?;
    let mut rewritten = Vec::with_capacity(ops.len());
    for op in ops {
        let mut op = op.clone();
        let obj = op.as_object_mut().ok_or("each operation is an object")?;
        for key in ["path", "from"] {
            if let Some(Value::String(p)) = obj.get(key) {
                if !(p.is_empty() || p.starts_with('/')) {
                    return Err("a path is a JSON Pointer (it starts with /)".into());
                }
                let prefixed = format!("/state{p}");
                obj.insert(key.into(), Value::String(prefixed));
            }
        }
        rewritten.push(op);
    }
    Ok(rewritten)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{INNER_POLICY, document, state_patch};

    #[test]
    fn a_state_patch_stays_under_state() {
        let ops = state_patch(&json!({"patch": [{"op": "add", "path": "/n", "value": 1}, {"op": "move", "from": "/a", "path": ""}]})).unwrap();
        assert_eq!(ops, vec![json!({"op": "add", "path": "/state/n", "value": 1}), json!({"op": "move", "from": "/state/a", "path": "/state"})]);
        assert!(state_patch(&json!({"patch": [{"op": "add", "path": "html", "value": 1}]})).unwrap_err().contains("JSON Pointer"));
        assert!(state_patch(&json!({"patch": {}})).unwrap_err().contains("RFC 6902"));
        assert!(state_patch(&json!({"patch": [1]})).unwrap_err().contains("object"));
    }

    #[test]
    fn a_document_starts_with_its_policy_and_gets_the_sdk_where_asked() {
        let doc = document("<!DOCTYPE html><p>hi</p><script data-lattice-sdk=\"ext-apps\"></script>", Some("var a='</script>';"));
        assert!(doc.starts_with("<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\""), "{doc}");
        assert!(doc.contains("<script>var a='<\\/script>';</script><script>(()=>{const A=window.ExtApps"), "{doc}");
        let bare = document("<p>hi</p>", None);
        assert!(bare.starts_with("<meta http-equiv") && bare.ends_with("<p>hi</p>"));
        for directive in ["default-src 'none'", "connect-src 'none'", "form-action 'none'", "base-uri 'none'", "frame-src 'none'"] {
            assert!(INNER_POLICY.contains(directive), "{directive}");
        }
    }
}
