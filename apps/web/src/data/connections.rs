//! A person's own sign-ins to connected servers (docs/MCP.md, "Signing in
//! to a server"): the servers they sign in to and whether they have,
//! beginning a sign-in (the browser goes to the server's authorization
//! server, and this tab remembers where to come back to), finishing one
//! with what the server's callback put in `/settings/connections`'
//! fragment, and ending one. Only the chunks of the sign-in card and of
//! the connections page call these: none of it is in the first load.

use lattice_wire::{BeginConnection, ConnectionFinished, ConnectionStarted, FinishConnection, ServerConnection};

use crate::data::api_client;
use crate::data::request::Result;

/// Where this tab keeps the address to come back to while the person is
/// away at a server's sign-in (a path of this origin).
const RETURN: &str = "lattice.connect.return";

fn session_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok()?
}

fn connection_path(server: &str) -> String {
    format!("/v1/me/connections/{}", api_client::query(server))
}

/// The servers the person signs in to, and whether they have.
pub async fn list() -> Result<Vec<ServerConnection>> {
    api_client::get("/v1/me/connections").await
}

/// Whether the person is signed in to `server` now.
pub async fn connected(server: &str) -> Result<bool> {
    Ok(list().await?.iter().any(|c| c.server == server && c.connected))
}

/// Begins the person's sign-in to `server` (asking for `scope` too, when a
/// call was refused for it) and sends the browser to the server's sign-in.
/// With `come_back`, this tab notes the page it is on (path and query), for
/// the connections page to return to once the sign-in is finished;
/// without, a note left by an abandoned sign-in is dropped, so the person
/// lands back on the connections page.
pub async fn begin(server: &str, scope: Option<String>, come_back: bool) -> std::result::Result<(), String> {
    let started: ConnectionStarted = api_client::post(&connection_path(server), &BeginConnection { scope }).await.map_err(|e| e.message())?;
    // An address of the web, never a `javascript:` one.
    if !started.url.starts_with("https://") && !started.url.starts_with("http://") {
        return Err(format!("the server's sign-in is not at an address of the web: {}", started.url));
    }
    let window = web_sys::window().ok_or("no window")?;
    let location = window.location();
    if let Some(storage) = session_storage() {
        let _ = if come_back {
            let here = format!("{}{}", location.pathname().unwrap_or_default(), location.search().unwrap_or_default());
            storage.set_item(RETURN, &here)
        } else {
            storage.remove_item(RETURN)
        };
    }
    location.assign(&started.url).map_err(|_| "the browser did not go to the server's sign-in".to_owned())
}

/// Where to go back to after a sign-in, noted by [`begin`]: taken (a
/// second read finds nothing), and only a path of this origin.
pub fn take_return() -> Option<String> {
    let storage = session_storage()?;
    let to = storage.get_item(RETURN).ok().flatten();
    let _ = storage.remove_item(RETURN);
    to.filter(|to| to.starts_with('/') && !to.starts_with("//"))
}

/// What the server's callback handed the connections page in its
/// fragment.
pub enum Came {
    /// The authorization server's answer, to be finished with the person's token.
    Answer(FinishConnection),
    /// Why the sign-in did not finish, in words (its description, or its code).
    Error(String),
}

/// Takes `#state=…&code=…&iss=…` or `#error=…&error_description=…` from the
/// address, and drops it from there at once: a code is used once, and
/// nothing of it is left in the history.
pub fn take_from_url() -> Option<Came> {
    let window = web_sys::window()?;
    let location = window.location();
    let hash = location.hash().ok()?;
    let fields: Vec<(String, String)> = hash
        .trim_start_matches('#')
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        // Form-encoded by the server: a space is a `+`.
        .filter_map(|(k, v)| Some((k.to_owned(), js_sys::decode_uri_component(&v.replace('+', " ")).ok()?.as_string()?)))
        .collect();
    let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).filter(|v| !v.is_empty());
    let came = match (field("state"), field("code"), field("error")) {
        (_, _, Some(error)) => Came::Error(field("error_description").unwrap_or(error)),
        (Some(state), Some(code), None) => Came::Answer(FinishConnection { state, code, iss: field("iss") }),
        _ => return None,
    };
    let here = format!("{}{}", location.pathname().unwrap_or_default(), location.search().unwrap_or_default());
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&here));
    }
    Some(came)
}

/// Finishes a sign-in with the person's own token: answers the server it
/// was to.
pub async fn finish(answer: &FinishConnection) -> Result<String> {
    api_client::post::<ConnectionFinished>("/v1/connections/finish", answer).await.map(|f| f.server)
}

/// Ends the person's sign-in to `server`.
pub async fn disconnect(server: &str) -> Result<()> {
    api_client::delete_no_content(&connection_path(server)).await
}
